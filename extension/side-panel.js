// Instantiates the side panel's wasm; its start function mounts the Yew app on <body>.
import init from "./side-panel/side_panel.js";
init();
