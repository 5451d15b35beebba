// Instantiates the Prompt Studio's wasm; its start function mounts the Yew app on <body>.
import init from "./studio/prompt_studio.js";
init();
