//! The spell checker, a wasm module of its own (`annotation-spelling`, in `dist/spelling/`),
//! imported when the dictionary is loaded and reached through [`SpellCheck`]: the page's
//! bundle carries no spelling engine. Only byte ranges and words cross between the modules.

use annotation_core::spelling::SpellCheck;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/spelling.js")]
extern "C" {
    #[wasm_bindgen(catch)]
    async fn load_spell_checker(aff: &str, dic: &str) -> Result<JsValue, JsValue>;

    type SpellChecker;

    #[wasm_bindgen(method)]
    fn misspelled(this: &SpellChecker, text: &str) -> Vec<u32>;

    #[wasm_bindgen(method)]
    fn suggest(this: &SpellChecker, word: &str) -> Vec<String>;
}

/// The spelling module's checker over one dictionary.
pub struct ModuleSpeller(SpellChecker);

impl SpellCheck for ModuleSpeller {
    fn misspelled(&self, text: &str) -> Vec<(usize, usize)> {
        let flat = self.0.misspelled(text);
        // The module read the same UTF-8; a range that is not a slice of it is dropped,
        // not trusted.
        let ranges = flat.chunks_exact(2).map(|p| (p[0] as usize, p[1] as usize));
        ranges.filter(|(start, end)| text.get(*start..*end).is_some()).collect()
    }

    fn suggest(&self, word: &str) -> Vec<String> {
        self.0.suggest(word)
    }
}

/// Imports the spelling module and builds its checker over a Hunspell `.aff` and `.dic`.
pub async fn load(aff: &str, dic: &str) -> Result<ModuleSpeller, String> {
    let checker = load_spell_checker(aff, dic).await.map_err(|error| {
        error.as_string().unwrap_or_else(|| format!("The spell checker did not load: {error:?}"))
    })?;
    Ok(ModuleSpeller(checker.unchecked_into()))
}
