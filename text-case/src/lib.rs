//! Upper and lower case of text by Unicode's rules. Rust's `str::to_lowercase` and
//! `to_uppercase` link the standard library's case tables, 10 KiB of every gzipped bundle;
//! the browser already has them. In a wasm build these functions hand text with anything
//! beyond ASCII to the JavaScript engine's `toLowerCase`/`toUpperCase` (the same Unicode
//! rules, final sigma included); natively, and for ASCII text, they are Rust's own.
//!
//! Text a person or a page wrote goes through here. Text the product wrote (labels, enum
//! names, field names) is ASCII: `to_ascii_lowercase` says so and needs no crate.

/// `text` in lower case.
pub fn lowercase(text: &str) -> String {
    if text.is_ascii() {
        return text.to_ascii_lowercase();
    }
    unicode_lowercase(text)
}

/// `text` in upper case.
pub fn uppercase(text: &str) -> String {
    if text.is_ascii() {
        return text.to_ascii_uppercase();
    }
    unicode_uppercase(text)
}

/// `text` with its first letter in upper case ("étape" → "Étape").
pub fn upper_first(text: &str) -> String {
    with_first(text, uppercase)
}

/// `text` with its first letter in lower case.
pub fn lower_first(text: &str) -> String {
    with_first(text, lowercase)
}

/// `c` in lower case, a character at a time: one, or more ("İ" → "i̇"). For walks over
/// text that compare as they go; [`lowercase`] of a whole text differs only in the
/// final sigma.
pub fn lowercase_chars(c: char) -> LowerChars {
    if c.is_ascii() {
        LowerChars { ascii: Some(c.to_ascii_lowercase()), other: Vec::new().into_iter() }
    } else {
        let mut buffer = [0; 4];
        let lower = unicode_lowercase(c.encode_utf8(&mut buffer));
        LowerChars { ascii: None, other: lower.chars().collect::<Vec<_>>().into_iter() }
    }
}

/// The characters of one character in lower case ([`lowercase_chars`]).
pub struct LowerChars {
    ascii: Option<char>,
    other: std::vec::IntoIter<char>,
}

impl Iterator for LowerChars {
    type Item = char;

    fn next(&mut self) -> Option<char> {
        self.ascii.take().or_else(|| self.other.next())
    }
}

fn with_first(text: &str, case: fn(&str) -> String) -> String {
    let Some(first) = text.chars().next() else { return String::new() };
    let (head, rest) = text.split_at(first.len_utf8());
    case(head) + rest
}

#[cfg(target_arch = "wasm32")]
fn unicode_lowercase(text: &str) -> String {
    js_sys::JsString::from(text).to_lower_case().into()
}

#[cfg(target_arch = "wasm32")]
fn unicode_uppercase(text: &str) -> String {
    js_sys::JsString::from(text).to_upper_case().into()
}

#[cfg(not(target_arch = "wasm32"))]
fn unicode_lowercase(text: &str) -> String {
    text.to_lowercase()
}

#[cfg(not(target_arch = "wasm32"))]
fn unicode_uppercase(text: &str) -> String {
    text.to_uppercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_ascii_and_beyond_as_unicode_does() {
        assert_eq!(lowercase("Hello, World"), "hello, world");
        assert_eq!(lowercase("ÉTAPE Ünïcode ΣΟΦΟΣ"), "étape ünïcode σοφος");
        assert_eq!(uppercase("straße"), "STRASSE");
        assert_eq!(upper_first("étape un"), "Étape un");
        assert_eq!(upper_first("ß"), "SS");
        assert_eq!(lower_first("URL"), "uRL");
        assert_eq!(upper_first(""), "");
        let lowered = |c| lowercase_chars(c).collect::<String>();
        assert_eq!(lowered('A'), "a");
        assert_eq!(lowered('Ü'), "ü");
        assert_eq!(lowered('İ'), "i\u{307}");
    }
}
