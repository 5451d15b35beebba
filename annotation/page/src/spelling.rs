//! The spell checker, a wasm module of its own (`annotation-spelling`, in `dist/spelling/`),
//! imported when the dictionary is loaded (`crate::modules`) and reached through
//! [`SpellCheck`]: the page's bundle carries no spelling engine. Only byte ranges and words
//! cross between the modules.

use annotation_core::spelling::SpellCheck;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
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
    let args = js_sys::Array::of2(&JsValue::from_str(aff), &JsValue::from_str(dic));
    let checker =
        crate::modules::construct(crate::modules::SPELLING, "SpellChecker", &args).await?;
    Ok(ModuleSpeller(checker.unchecked_into()))
}
