// Imports one of the page's own wasm modules (dist/spelling/, dist/transfer/) the first time
// a feature needs it; importing it again returns the module already set up.
export async function load_module(path) {
  const module = await import(path);
  await module.default();
  return module;
}
