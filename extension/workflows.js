// Instantiates the Workflows page's wasm; its start function mounts the Yew app on <body>.
import init from "./workflows/workflows_page.js";
init();
