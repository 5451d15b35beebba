//! The annotation page's spell checker as a module of its own (`dist/spelling/`). The page
//! imports it when it loads the dictionary, after its first render: the Hunspell engine
//! (spellbook) was a fifteenth of the page's bundle, and nothing else on the page needs it.
//!
//! The page calls it through `annotation_core::spelling::SpellCheck`, so what it checks and
//! suggests is `annotation-core`'s [`Speller`], tested there natively. Only byte ranges and
//! words cross between the two modules.

use annotation_core::spelling::{SpellCheck, Speller};
use wasm_bindgen::prelude::wasm_bindgen;

#[wasm_bindgen]
pub struct SpellChecker(Speller);

#[wasm_bindgen]
impl SpellChecker {
    /// A speller over a Hunspell `.aff` and `.dic` text; refused with the reason.
    #[wasm_bindgen(constructor)]
    pub fn new(aff: &str, dic: &str) -> Result<SpellChecker, String> {
        Speller::new(aff, dic).map(SpellChecker)
    }

    /// The misspelled words of `text` as UTF-8 byte ranges, flattened: start, end, start, …
    pub fn misspelled(&self, text: &str) -> Vec<u32> {
        let found = self.0.misspelled(text);
        found.into_iter().flat_map(|(start, end)| [start as u32, end as u32]).collect()
    }

    /// Up to five replacements for `word`, best first.
    pub fn suggest(&self, word: &str) -> Vec<String> {
        self.0.suggest(word)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_come_flattened_in_bytes_and_suggestions_best_first() {
        let aff = "SET UTF-8\nTRY esianrtolcdugmfphbyvkw\n";
        let checker = SpellChecker::new(aff, "3\nI\nsee\naddress\n").unwrap();
        let text = "I see “adress”";
        let found = checker.misspelled(text);
        assert_eq!(found.len(), 2);
        assert_eq!(&text[found[0] as usize..found[1] as usize], "adress");
        assert_eq!(checker.suggest("adress").first().map(String::as_str), Some("address"));
        assert!(SpellChecker::new("FLAG bogus\n", "1\nx/ab\n").is_err());
    }
}
