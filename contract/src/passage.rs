//! A passage of a thought that a comment or a suggestion points at (issue 29): a range of
//! characters (Unicode scalar values, start inclusive, end exclusive) with the quoted text
//! and a little context either side, so it can be found again after the text is edited.
//! The sync server re-anchors every passage of a step when the step is saved; the page
//! may do the same on its drafts. Both call [`reanchor`].
//!
//! The rule: look for the quote in the new text. Where it appears once, that is the
//! passage; where it appears several times, the place whose text before and after best
//! matches the kept `prefix` and `suffix` wins (ties go to the place nearest the old
//! start). Where it does not appear at all, the passage is outdated.

/// How many characters of context are kept either side.
pub const CONTEXT_CHARS: usize = 32;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passage {
    pub start: usize,
    pub end: usize,
    pub quote: String,
    pub prefix: String,
    pub suffix: String,
}

impl Passage {
    /// The passage of `text` from `start` to `end` (characters), with its quote and context;
    /// `None` if the range is empty, reversed or past the end.
    pub fn capture(text: &str, start: usize, end: usize) -> Option<Passage> {
        let chars: Vec<char> = text.chars().collect();
        if start >= end || end > chars.len() {
            return None;
        }
        Some(Passage {
            start,
            end,
            quote: chars[start..end].iter().collect(),
            prefix: chars[start.saturating_sub(CONTEXT_CHARS)..start].iter().collect(),
            suffix: chars[end..(end + CONTEXT_CHARS).min(chars.len())].iter().collect(),
        })
    }

    /// Whether `text` holds the quote at the passage's range.
    pub fn holds(&self, text: &str) -> bool {
        slice(text, self.start, self.end).as_deref() == Some(self.quote.as_str())
    }
}

/// The characters `start..end` of `text`, if it has them.
pub fn slice(text: &str, start: usize, end: usize) -> Option<String> {
    if start > end {
        return None;
    }
    let chars: Vec<char> = text.chars().collect();
    chars.get(start..end).map(|c| c.iter().collect())
}

/// Where the passage is in `text` now, as a passage with its range and context read from
/// `text`; `None` if its quote is gone (the passage is outdated).
pub fn reanchor(passage: &Passage, text: &str) -> Option<Passage> {
    if passage.quote.is_empty() {
        return None;
    }
    let chars: Vec<char> = text.chars().collect();
    let quote_len = passage.quote.chars().count();
    let prefix: Vec<char> = passage.prefix.chars().collect();
    let suffix: Vec<char> = passage.suffix.chars().collect();
    // Byte offsets of every occurrence (overlapping ones too), turned into char offsets.
    let mut best: Option<(usize, usize, usize)> = None; // (score, distance, start)
    let mut from = 0;
    while let Some(found) = text[from..].find(&passage.quote) {
        let byte = from + found;
        let start = text[..byte].chars().count();
        let before = &chars[..start];
        let after = &chars[start + quote_len..];
        let score = common_suffix(&prefix, before) + common_prefix(&suffix, after);
        let distance = start.abs_diff(passage.start);
        let better = match best {
            None => true,
            Some((s, d, _)) => score > s || (score == s && distance < d),
        };
        if better {
            best = Some((score, distance, start));
        }
        // Step one character on, so overlapping occurrences are seen.
        from = byte + text[byte..].chars().next().map_or(1, char::len_utf8);
    }
    let (_, _, start) = best?;
    Passage::capture(text, start, start + quote_len)
}

/// `text` with the characters `start..end` replaced by `with`: a suggestion on a passage
/// changes that range and nothing else. `None` if the range is not in `text`.
pub fn replace(text: &str, start: usize, end: usize, with: &str) -> Option<String> {
    let chars: Vec<char> = text.chars().collect();
    if start > end || end > chars.len() {
        return None;
    }
    let mut out: String = chars[..start].iter().collect();
    out.push_str(with);
    out.extend(&chars[end..]);
    Some(out)
}

/// How many characters at the end of `a` and `b` agree.
fn common_suffix(a: &[char], b: &[char]) -> usize {
    a.iter().rev().zip(b.iter().rev()).take_while(|(x, y)| x == y).count()
}

/// How many characters at the start of `a` and `b` agree.
fn common_prefix(a: &[char], b: &[char]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "I see the search box. I type kettle into the search box and press Enter.";

    #[test]
    fn capture_keeps_the_quote_and_its_context() {
        let p = Passage::capture("héllo wörld", 6, 11).unwrap();
        assert_eq!(p.quote, "wörld");
        assert_eq!(p.prefix, "héllo ");
        assert_eq!(p.suffix, "");
        assert!(p.holds("héllo wörld"));
        assert_eq!(Passage::capture("abc", 2, 2), None);
        assert_eq!(Passage::capture("abc", 1, 4), None);
    }

    #[test]
    fn an_unrelated_edit_moves_the_range_with_the_passage() {
        let p = Passage::capture(TEXT, 22, 35).unwrap(); // "I type kettle"
        assert_eq!(p.quote, "I type kettle");
        let edited = format!("Now, on the front page: {TEXT}");
        let moved = reanchor(&p, &edited).unwrap();
        assert_eq!(moved.quote, "I type kettle");
        assert_eq!(moved.start, 22 + "Now, on the front page: ".chars().count());
        assert!(moved.holds(&edited));
        // Unchanged text: the same range.
        assert_eq!(reanchor(&p, TEXT).unwrap(), p);
    }

    #[test]
    fn the_context_chooses_between_repeated_quotes() {
        // "the search box" appears twice; the comment is on the second.
        let second = TEXT.rfind("the search box").unwrap();
        let start = TEXT[..second].chars().count();
        let p = Passage::capture(TEXT, start, start + 14).unwrap();
        // An edit at the front shifts both; the suffix " and press" picks the second.
        let edited = TEXT.replace("I see", "Looking at the page, I see");
        let found = reanchor(&p, &edited).unwrap();
        assert!(found.suffix.starts_with(" and press Enter"), "{found:?}");
        // Even when the second moves nearer the first's old place, context wins.
        let first_start = TEXT.find("the search box").unwrap();
        let p_first = Passage::capture(TEXT, first_start, first_start + 14).unwrap();
        let found = reanchor(&p_first, &edited).unwrap();
        assert_eq!(found.suffix.chars().next(), Some('.'));
    }

    #[test]
    fn a_deleted_quote_is_outdated() {
        let p = Passage::capture(TEXT, 22, 35).unwrap();
        assert_eq!(reanchor(&p, "I see the search box. I press Enter."), None);
        let empty = Passage { quote: String::new(), ..p };
        assert_eq!(reanchor(&empty, TEXT), None);
    }

    #[test]
    fn overlapping_occurrences_are_all_candidates() {
        let p = Passage {
            start: 2,
            end: 4,
            quote: "aa".into(),
            prefix: "aa".into(),
            suffix: "b".into(),
        };
        let found = reanchor(&p, "aaaab").unwrap();
        assert_eq!((found.start, found.end), (2, 4));
    }

    #[test]
    fn replacing_a_range_changes_only_that_range() {
        assert_eq!(replace("I type kettle.", 7, 13, "teapot").as_deref(), Some("I type teapot."));
        assert_eq!(replace("ünï", 1, 2, "X").as_deref(), Some("üXï"));
        assert_eq!(replace("abc", 2, 5, "x"), None);
        assert_eq!(slice("héllo", 1, 3).as_deref(), Some("él"));
    }
}
