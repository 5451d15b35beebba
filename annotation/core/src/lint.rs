//! Issues found in a thought's text (spelling, grammar, style), applying a fix in one place or
//! in every step, and splitting a text into highlighted runs for rendering.
//!
//! Also the small text helpers the checks share: words with their byte ranges, and the spans
//! inside quotes (a quoted label is the annotator's exact copy of what the page shows, so some
//! checks leave it alone).
//!
//! Offsets are byte offsets into one thought's text, always on char boundaries. Functions here
//! clamp and snap odd offsets instead of panicking: an issue may be stale by the time it is
//! applied.

use serde::Serialize;

use crate::record::{Step, Thought};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum IssueKind {
    Spelling,
    Grammar,
    Style,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TextIssue {
    pub thought: Thought,
    /// Byte offsets into that thought's text, on char boundaries.
    pub start: usize,
    pub end: usize,
    pub kind: IssueKind,
    pub message: String,
    /// Best first; may be empty.
    pub replacements: Vec<String>,
}

/// The largest char boundary of `text` at or before `at` (clamped to the text).
pub fn floor_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The issue's range in `text`, clamped and snapped so that slicing cannot panic.
fn range(text: &str, start: usize, end: usize) -> (usize, usize) {
    let start = floor_boundary(text, start);
    let end = floor_boundary(text, end).max(start);
    (start, end)
}

/// `text` with the issue's range replaced by `replacement`.
pub fn apply(text: &str, issue: &TextIssue, replacement: &str) -> String {
    let (start, end) = range(text, issue.start, issue.end);
    let mut out = String::with_capacity(text.len() + replacement.len());
    out.push_str(&text[..start]);
    out.push_str(replacement);
    out.push_str(&text[end..]);
    out
}

/// Letters, digits and `_` make words; an apostrophe between two of them belongs to the word
/// ("don't", "I’m").
pub fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn is_apostrophe(c: char) -> bool {
    c == '\'' || c == '\u{2019}'
}

/// One word of a text with its byte range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Word<'a> {
    pub start: usize,
    pub end: usize,
    pub text: &'a str,
}

/// The words of `text` in order.
pub fn words(text: &str) -> Vec<Word<'_>> {
    word_iter(text).collect()
}

/// The words of `text` in order, without allocating.
pub fn word_iter(text: &str) -> WordIter<'_> {
    WordIter { text, at: 0 }
}

pub struct WordIter<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Iterator for WordIter<'a> {
    type Item = Word<'a>;

    fn next(&mut self) -> Option<Word<'a>> {
        let text = self.text;
        let rest = text.get(self.at..)?;
        let offset = rest.find(is_word_char)?;
        let start = self.at + offset;
        let mut end = start;
        let mut chars = text[start..].chars().peekable();
        while let Some(c) = chars.next() {
            let inside = is_word_char(c)
                || (is_apostrophe(c) && chars.peek().is_some_and(|&n| is_word_char(n)));
            if !inside {
                break;
            }
            end += c.len_utf8();
        }
        self.at = end;
        Some(Word { start, end, text: &text[start..end] })
    }
}

/// Lowercase, with curly apostrophes made straight, so word lists can be compared.
pub fn normalize_word(word: &str) -> String {
    text_case::lowercase(&word.replace('\u{2019}', "'"))
}

/// The byte ranges of the contents of quotes in `text`: "…", “…”, '…', ‘…’ and `…`.
///
/// A single quote opens only where a word cannot be going on (start, or after a non-letter) and
/// closes only before a non-letter, so the apostrophes of "don't" and "user's" are not quotes.
/// A quote that never closes quotes nothing, nor does a single quote that has not closed
/// within 300 bytes.
pub fn quoted(text: &str) -> Vec<(usize, usize)> {
    const MAX_SINGLE_QUOTED: usize = 300;
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        // Only quote characters matter; everything else is skipped a byte at a time.
        let (open_len, close) = match bytes[i] {
            b'"' => (1, "\""),
            b'`' => (1, "`"),
            b'\'' => (1, "'"),
            0xE2 if text[i..].starts_with('\u{201C}') => (3, "\u{201D}"),
            0xE2 if text[i..].starts_with('\u{2018}') => (3, "\u{2019}"),
            _ => {
                i += 1;
                continue;
            }
        };
        let from = i + open_len;
        let single = close == "'" || close == "\u{2019}";
        if single {
            let prev = text[..i].chars().next_back();
            let next = text[from..].chars().next();
            if prev.is_some_and(char::is_alphanumeric) || next.is_none_or(char::is_whitespace) {
                i = from;
                continue;
            }
        }
        let mut found = None;
        let mut search = from;
        while let Some(k) = text[search..].find(close) {
            let j = search + k;
            // Single-quoted labels are short; a cap keeps stray apostrophes linear.
            if single && j - from > MAX_SINGLE_QUOTED {
                break;
            }
            let after = j + close.len();
            if !single
                || (!text[..j].chars().next_back().is_some_and(char::is_whitespace)
                    && !text[after..].chars().next().is_some_and(char::is_alphanumeric))
            {
                found = Some(j);
                break;
            }
            search = after;
        }
        match found {
            Some(j) => {
                out.push((from, j));
                i = j + close.len();
            }
            None => i = from,
        }
    }
    out
}

/// Whether byte offset `at` lies inside one of `spans`.
pub fn inside(spans: &[(usize, usize)], at: usize) -> bool {
    spans.iter().any(|&(s, e)| s <= at && at < e)
}

/// Replaces every whole-word, case-sensitive occurrence of `from` by `to` in all three thoughts
/// of all steps ("fix across all steps"); returns how many it replaced.
///
/// Whole word: an occurrence is skipped where a word character touches it on a side where
/// `from` itself starts or ends with one ("cat" is not replaced in "concatenate").
pub fn replace_everywhere(steps: &mut [Step], from: &str, to: &str) -> usize {
    if from.is_empty() {
        return 0;
    }
    let mut count = 0;
    for step in steps {
        for which in Thought::ALL {
            let text = step.thoughts.get_mut(which);
            let (new, n) = replace_words(text, from, to);
            if n > 0 {
                *text = new;
                count += n;
            }
        }
    }
    count
}

/// `text` with whole-word occurrences of `from` replaced, and how many.
pub fn replace_words(text: &str, from: &str, to: &str) -> (String, usize) {
    if from.is_empty() {
        return (text.to_string(), 0);
    }
    let check_before = from.chars().next().is_some_and(is_word_char);
    let check_after = from.chars().next_back().is_some_and(is_word_char);
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut count = 0;
    for (at, _) in text.match_indices(from) {
        if at < copied {
            continue;
        }
        let end = at + from.len();
        let before_ok = !check_before || !text[..at].chars().next_back().is_some_and(is_word_char);
        let after_ok = !check_after || !text[end..].chars().next().is_some_and(is_word_char);
        if before_ok && after_ok {
            out.push_str(&text[copied..at]);
            out.push_str(to);
            copied = end;
            count += 1;
        }
    }
    out.push_str(&text[copied..]);
    (out, count)
}

/// `text` split into runs for rendering: each run with the index (into `issues`) of the issue
/// that highlights it, or `None`. Where issues overlap the earlier one in `issues` wins and the
/// later one is not shown; empty and out-of-range issues are ignored. The runs concatenate to
/// `text`.
pub fn segments(text: &str, issues: &[TextIssue]) -> Vec<(String, Option<usize>)> {
    let mut claimed: Vec<(usize, usize, usize)> = Vec::new();
    for (index, issue) in issues.iter().enumerate() {
        let (start, end) = range(text, issue.start, issue.end);
        if start == end || claimed.iter().any(|&(s, e, _)| start < e && s < end) {
            continue;
        }
        claimed.push((start, end, index));
    }
    lean::sort(&mut claimed);
    let mut out = Vec::with_capacity(claimed.len() * 2 + 1);
    let mut at = 0;
    for (start, end, index) in claimed {
        if at < start {
            out.push((text[at..start].to_string(), None));
        }
        out.push((text[start..end].to_string(), Some(index)));
        at = end;
    }
    if at < text.len() {
        out.push((text[at..].to_string(), None));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::step;

    fn issue(start: usize, end: usize) -> TextIssue {
        TextIssue {
            thought: Thought::One,
            start,
            end,
            kind: IssueKind::Spelling,
            message: "m".into(),
            replacements: vec![],
        }
    }

    #[test]
    fn apply_replaces_the_range_and_survives_bad_offsets() {
        assert_eq!(apply("I see teh page", &issue(6, 9), "the"), "I see the page");
        assert_eq!(apply("abc", &issue(5, 9), "X"), "abcX");
        assert_eq!(apply("abc", &issue(2, 1), "X"), "abXc");
        // Inside a multi-byte char: snapped back to its start.
        assert_eq!(apply("é!", &issue(1, 2), "e"), "e!");
        assert_eq!(apply("", &issue(0, 0), "x"), "x");
    }

    #[test]
    fn words_keep_inner_apostrophes_and_byte_ranges() {
        let text = "I'm on the ‘Café’ page, don’t 'quote' 42x";
        let w: Vec<&str> = words(text).iter().map(|w| w.text).collect();
        assert_eq!(w, ["I'm", "on", "the", "Café", "page", "don’t", "quote", "42x"]);
        for word in words(text) {
            assert_eq!(&text[word.start..word.end], word.text);
        }
        assert!(words("").is_empty());
        assert_eq!(words("🙂 ok").len(), 1);
        assert_eq!(normalize_word("Don’T"), "don't");
    }

    #[test]
    fn quoted_finds_labels_but_not_apostrophes() {
        let text = r#"I click "Add to cart" and 'Search', the user's “Go” `x`"#;
        let spans: Vec<&str> = quoted(text).iter().map(|&(s, e)| &text[s..e]).collect();
        assert_eq!(spans, ["Add to cart", "Search", "Go", "x"]);
        assert!(quoted("don't won't can't").is_empty());
        assert!(quoted("an \"open quote").is_empty());
        let curly = "the ‘Sign in’ link isn’t here";
        let spans: Vec<&str> = quoted(curly).iter().map(|&(s, e)| &curly[s..e]).collect();
        assert_eq!(spans, ["Sign in"]);
        assert!(inside(&quoted(text), text.find("Add").unwrap()));
    }

    #[test]
    fn replace_everywhere_is_whole_word_and_case_sensitive() {
        let mut steps =
            vec![step("I see teh page", "teh Teh tehx", "xteh teh."), step("", "nothing", "teh")];
        assert_eq!(replace_everywhere(&mut steps, "teh", "the"), 4);
        assert_eq!(steps[0].thoughts.thought1, "I see the page");
        assert_eq!(steps[0].thoughts.thought2, "the Teh tehx");
        assert_eq!(steps[0].thoughts.thought3, "xteh the.");
        assert_eq!(steps[1].thoughts.thought3, "the");
        assert_eq!(replace_everywhere(&mut steps, "", "x"), 0);
        // Phrases and punctuation edges.
        assert_eq!(replace_words("a serch bar, serch barn", "serch bar", "search bar").1, 1);
        assert_eq!(replace_words("x {y} {y}", "{y}", "z"), ("x z z".to_string(), 2));
        // Overlapping occurrences count once.
        assert_eq!(replace_words("aa aaa", "aa", "b"), ("b aaa".to_string(), 1));
        assert_eq!(replace_words("é é", "é", "e"), ("e e".to_string(), 2));
    }

    #[test]
    fn segments_cover_the_text_and_first_issue_wins() {
        let text = "one two three";
        let issues = [issue(4, 7), issue(5, 13), issue(0, 3), issue(20, 30), issue(2, 2)];
        let segs = segments(text, &issues);
        assert_eq!(
            segs,
            vec![
                ("one".to_string(), Some(2)),
                (" ".to_string(), None),
                ("two".to_string(), Some(0)),
                (" three".to_string(), None),
            ]
        );
        let joined: String = segs.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(joined, text);
        assert!(segments("", &issues).is_empty());
        assert_eq!(segments("ab", &[]), vec![("ab".to_string(), None)]);
        // Non-ASCII with a range ending mid-char.
        let segs = segments("é😀x", &[issue(2, 4)]);
        assert_eq!(segs.iter().map(|(s, _)| s.as_str()).collect::<String>(), "é😀x");
    }
}
