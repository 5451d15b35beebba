// Imports the spell checker, a wasm module of its own (dist/spelling/), when the page loads
// the dictionary: the page's own bundle carries no spelling engine.
export async function load_spell_checker(aff, dic) {
  const spelling = await import("/spelling/annotation_spelling.js");
  await spelling.default();
  return new spelling.SpellChecker(aff, dic);
}
