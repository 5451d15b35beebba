//! Optional grammar checking through a LanguageTool-compatible server (seed §5.A): the request
//! body the page POSTs to `<server>/v2/check`, and the answer turned into [`TextIssue`]s.
//!
//! LanguageTool counts `offset` and `length` in UTF-16 code units (Java chars), so an emoji
//! counts two; they are converted here to byte offsets on char boundaries. Offsets past the
//! text are clamped, and one inside a surrogate pair is moved to the start of its char.

use serde_json::Value;

use crate::lint::{IssueKind, TextIssue};
use crate::record::Thought;

/// The check endpoint's path on a LanguageTool server.
pub const CHECK_PATH: &str = "/v2/check";

/// How many replacements an issue offers at most (LanguageTool may send dozens).
pub const MAX_REPLACEMENTS: usize = 5;

/// The check URL for a server's base address ("http://localhost:8081" or with a trailing `/`).
pub fn check_url(server: &str) -> String {
    format!("{}{CHECK_PATH}", server.trim().trim_end_matches('/'))
}

/// LanguageTool reads its body as an HTML form sends it: spaces as `+`.
pub use run_contract::url::form_encode;

/// The form body of a check request: `text=…&language=…`.
pub fn request_body(text: &str, language: &str) -> String {
    format!("text={}&language={}", form_encode(text), form_encode(language))
}

/// Maps UTF-16 offsets of `text` to byte offsets.
struct Utf16Map {
    /// (UTF-16 offset, byte offset) at the start of each char, then the end.
    starts: Vec<(usize, usize)>,
}

impl Utf16Map {
    fn new(text: &str) -> Utf16Map {
        let mut starts = Vec::with_capacity(text.len() + 1);
        let mut units = 0;
        for (byte, c) in text.char_indices() {
            starts.push((units, byte));
            units += c.len_utf16();
        }
        starts.push((units, text.len()));
        Utf16Map { starts }
    }

    /// The byte offset of the char holding UTF-16 unit `units` (the text's end past it).
    fn byte(&self, units: usize) -> usize {
        match self.starts.binary_search_by_key(&units, |&(u, _)| u) {
            Ok(i) => self.starts[i].1,
            Err(0) => 0,
            Err(i) if i >= self.starts.len() => self.starts[self.starts.len() - 1].1,
            // Inside a surrogate pair: the char it belongs to.
            Err(i) => self.starts[i - 1].1,
        }
    }
}

fn kind_of(issue_type: &str) -> IssueKind {
    match issue_type {
        "misspelling" => IssueKind::Spelling,
        "style" | "register" | "locale-violation" => IssueKind::Style,
        _ => IssueKind::Grammar,
    }
}

fn number(m: &Value, key: &str, index: usize) -> Result<usize, String> {
    m.get(key)
        .and_then(Value::as_u64)
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
        .ok_or_else(|| format!("The grammar server's match {} has no “{key}” number.", index + 1))
}

/// The issues of a LanguageTool answer about `text` (one thought's text).
pub fn parse_response(thought: Thought, text: &str, json: &str) -> Result<Vec<TextIssue>, String> {
    let answer: Value = serde_json::from_str(json)
        .map_err(|e| format!("The grammar server's answer is not JSON: {e}."))?;
    let matches = answer
        .get("matches")
        .and_then(Value::as_array)
        .ok_or("The grammar server's answer has no “matches” list.")?;
    let map = Utf16Map::new(text);
    let mut out = Vec::with_capacity(matches.len());
    for (index, m) in matches.iter().enumerate() {
        if !m.is_object() {
            return Err(format!("The grammar server's match {} is not an object.", index + 1));
        }
        let offset = number(m, "offset", index)?;
        let length = number(m, "length", index)?;
        let start = map.byte(offset);
        let end = map.byte(offset.saturating_add(length)).max(start);
        let rule = m.get("rule");
        let issue_type = rule.and_then(|r| r.get("issueType")).and_then(Value::as_str);
        let message = m
            .get("message")
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .or_else(|| rule.and_then(|r| r.get("description")).and_then(Value::as_str))
            .unwrap_or("Possible grammar problem.")
            .to_string();
        let replacements = m
            .get("replacements")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(|r| r.get("value").and_then(Value::as_str))
                    .take(MAX_REPLACEMENTS)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        out.push(TextIssue {
            thought,
            start,
            end,
            kind: kind_of(issue_type.unwrap_or("")),
            message,
            replacements,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint;

    #[test]
    fn form_encoding_is_percent_encoded_utf8() {
        assert_eq!(form_encode("a b&c=d+e"), "a+b%26c%3Dd%2Be");
        assert_eq!(form_encode("Café 😀"), "Caf%C3%A9+%F0%9F%98%80");
        assert_eq!(form_encode("x*-._~/?#%"), "x*-._%7E%2F%3F%23%25");
        assert_eq!(form_encode(""), "");
        assert_eq!(
            request_body("I has a apple.\nOk", "en-US"),
            "text=I+has+a+apple.%0AOk&language=en-US"
        );
        assert_eq!(check_url("http://localhost:8081/ "), "http://localhost:8081/v2/check");
    }

    fn answer(matches: &str) -> String {
        format!(r#"{{"software": {{"name": "LanguageTool"}}, "matches": {matches}}}"#)
    }

    #[test]
    fn matches_become_issues() {
        let text = "I has a apple.";
        let json = answer(
            r#"[
            {"message": "Possible agreement error.", "offset": 2, "length": 3,
             "replacements": [{"value": "have"}, {"value": "had"}],
             "rule": {"id": "HAVE_PART_AGREEMENT", "issueType": "grammar"}},
            {"message": "", "offset": 6, "length": 1,
             "replacements": [{"value": "an"}],
             "rule": {"id": "EN_A_VS_AN", "description": "Use of a vs an", "issueType": "misspelling"}},
            {"message": "Wordy.", "offset": 0, "length": 1, "rule": {"issueType": "style"}}
        ]"#,
        );
        let issues = parse_response(Thought::Two, text, &json).unwrap();
        assert_eq!(issues.len(), 3);
        assert_eq!(&text[issues[0].start..issues[0].end], "has");
        assert_eq!(issues[0].kind, IssueKind::Grammar);
        assert_eq!(issues[0].replacements, ["have", "had"]);
        assert_eq!(issues[0].message, "Possible agreement error.");
        assert_eq!(issues[0].thought, Thought::Two);
        assert_eq!(issues[1].kind, IssueKind::Spelling);
        assert_eq!(issues[1].message, "Use of a vs an");
        assert_eq!(issues[2].kind, IssueKind::Style);
        assert!(issues[2].replacements.is_empty());
        assert_eq!(lint::apply(text, &issues[0], "have"), "I have a apple.");
    }

    #[test]
    fn utf16_offsets_become_byte_offsets() {
        // "😀" is two UTF-16 units and four bytes; "é" one unit and two bytes.
        let text = "😀 é teh end";
        let json = answer(r#"[{"message": "typo", "offset": 5, "length": 3}]"#);
        let issues = parse_response(Thought::One, text, &json).unwrap();
        assert_eq!(&text[issues[0].start..issues[0].end], "teh");
        // Inside the surrogate pair, and past the end: snapped and clamped.
        let json = answer(
            r#"[{"message": "m", "offset": 1, "length": 1},
                {"message": "m", "offset": 40, "length": 9},
                {"message": "m", "offset": 9, "length": 100}]"#,
        );
        let issues = parse_response(Thought::One, text, &json).unwrap();
        // Starting inside the emoji: the whole emoji.
        assert_eq!((issues[0].start, issues[0].end), (0, 4));
        assert_eq!((issues[1].start, issues[1].end), (text.len(), text.len()));
        assert_eq!(&text[issues[2].start..issues[2].end], "end");
        for i in &issues {
            assert!(text.is_char_boundary(i.start) && text.is_char_boundary(i.end));
        }
        assert!(parse_response(Thought::One, "", &answer("[]")).unwrap().is_empty());
    }

    #[test]
    fn malformed_answers_are_explained() {
        let cases = [
            ("<html>502</html>", "not JSON"),
            ("{}", "no “matches” list"),
            (r#"{"matches": {}}"#, "no “matches” list"),
            (r#"{"matches": [1]}"#, "match 1 is not an object"),
            (
                r#"{"matches": [{"offset": 1, "length": 1}, {"length": 2}]}"#,
                "match 2 has no “offset”",
            ),
            (r#"{"matches": [{"offset": 1, "length": -2}]}"#, "match 1 has no “length”"),
        ];
        for (json, said) in cases {
            let err = parse_response(Thought::One, "text", json).unwrap_err();
            assert!(err.contains(said), "{json}: {err}");
        }
        // Defaults for what a match may leave out.
        let issues =
            parse_response(Thought::One, "text", r#"{"matches": [{"offset": 0, "length": 4}]}"#)
                .unwrap();
        assert_eq!(issues[0].message, "Possible grammar problem.");
        assert_eq!(issues[0].kind, IssueKind::Grammar);
    }

    #[test]
    fn replacements_are_capped() {
        let many: Vec<String> = (0..20).map(|i| format!(r#"{{"value": "r{i}"}}"#)).collect();
        let json = answer(&format!(
            r#"[{{"message": "m", "offset": 0, "length": 1, "replacements": [{}]}}]"#,
            many.join(",")
        ));
        let issues = parse_response(Thought::One, "x", &json).unwrap();
        assert_eq!(issues[0].replacements.len(), MAX_REPLACEMENTS);
    }
}
