// Instantiates the annotation page's wasm; its start function mounts the Yew app on <body>.
import init from "./annotation/annotation_page.js";
init();
