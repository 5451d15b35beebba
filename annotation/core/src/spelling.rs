//! Offline spelling over a Hunspell dictionary (seed §5.A), with the `spellbook` crate.
//!
//! The page fetches Debian's `en_US.aff` and `en_US.dic` (bundled with the extension) and
//! builds one [`Speller`]; the annotator's own words are added on top.
//!
//! What is not checked, because it is not prose: URLs, e-mail addresses, domains and paths
//! ("example.com", "a/b"), anything inside `{…}`, JSON blobs, `` `code` `` and `<placeholders>`,
//! words with digits or `_`, ALL-CAPS acronyms, camelCase names, and single letters. Quoted
//! labels are checked: a typo in one is still a typo.
//!
//! Cost, measured natively on the en_US dictionary: building takes about 80 ms (more in wasm),
//! so build it once, off the typing path. Checking a word takes microseconds. Suggesting is
//! slow: about 30–50 ms a misspelled word, because spellbook's "ngram" pass walks the whole
//! word list. [`Speller::check`] suggests once per distinct misspelled word; a page that checks
//! while the annotator types can use [`SpellCheck::check_only`] and call
//! [`SpellCheck::suggest`] when an issue is opened.
//!
//! The annotation page does not link spellbook: its [`Speller`] lives in a module of its own
//! (`annotation-spelling`), loaded with the dictionary, and the page reaches it through
//! [`SpellCheck`], which [`Speller`] implements here too (the tests and the quality score
//! use it natively).
//!
//! Suggestions come from spellbook (Hunspell's algorithm), whose order favours the kind of
//! edit it tried first: for "adress" it offers "dress" (a letter too many) before "address"
//! (a letter missing). [`Speller::suggest`] ranks them again: fewest edits first
//! ([`distance`], where a swap of two letters or one letter missing counts one), then the
//! more common word (`spelling/common.txt`), then spellbook's order.

use std::collections::BTreeSet;

use spellbook::Dictionary;

use crate::lint::{self, IssueKind, TextIssue};
use crate::record::Thought;

/// How many replacements an issue offers at most.
pub const MAX_SUGGESTIONS: usize = 5;

/// What checks spelling: a [`Speller`], or a page's handle on one in another module.
pub trait SpellCheck {
    /// The byte ranges of the words of `text` that are not spelled right.
    fn misspelled(&self, text: &str) -> Vec<(usize, usize)>;

    /// Up to [`MAX_SUGGESTIONS`] replacements for `word`, best first.
    fn suggest(&self, word: &str) -> Vec<String>;

    /// The misspelled words of one thought's `text`, without replacements (finding those is
    /// the slow part: [`SpellCheck::suggest`] when an issue is shown).
    fn check_only(&self, thought: Thought, text: &str) -> Vec<TextIssue> {
        let found = self.misspelled(text);
        found.into_iter().map(|(start, end)| issue(thought, text, start, end, Vec::new())).collect()
    }
}

/// The issue for the misspelled word at `start..end` of `text`.
fn issue(
    thought: Thought,
    text: &str,
    start: usize,
    end: usize,
    replacements: Vec<String>,
) -> TextIssue {
    let word = &text[start..end];
    TextIssue {
        thought,
        start,
        end,
        kind: IssueKind::Spelling,
        message: format!("“{word}” is not in the dictionary"),
        replacements,
    }
}

pub struct Speller {
    dict: Dictionary,
    own: BTreeSet<String>,
}

impl std::fmt::Debug for Speller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Speller").field("own_words", &self.own.len()).finish_non_exhaustive()
    }
}

impl Speller {
    /// Builds a speller from a Hunspell `.aff` and `.dic` text.
    pub fn new(aff: &str, dic: &str) -> Result<Speller, String> {
        let dict = Dictionary::new(aff, dic)
            .map_err(|e| format!("The spelling dictionary could not be read: {e}"))?;
        Ok(Speller { dict, own: BTreeSet::new() })
    }

    /// Adds the user's own words; blank entries are ignored.
    pub fn add_words(&mut self, words: &[&str]) {
        for word in words {
            let word = word.trim();
            if word.is_empty() {
                continue;
            }
            self.own.insert(word.to_string());
            // The dictionary learns it too, so it can be suggested; a `/` would read as flags.
            if !word.contains('/') {
                let _ = self.dict.add(word);
            }
        }
    }

    /// Whether `word` is spelled right (in the dictionary or the user's words).
    pub fn check_word(&self, word: &str) -> bool {
        let word = word.trim();
        word.is_empty()
            || self.own.contains(word)
            || self.own.contains(&text_case::lowercase(word))
            || self.dict.check(word)
    }

    /// The misspelled words of one thought's `text`, each with its replacements.
    pub fn check(&self, thought: Thought, text: &str) -> Vec<TextIssue> {
        let mut cache: lean::SortedMap<&str, Vec<String>> = lean::SortedMap::new();
        let found = self.misspelled(text);
        found
            .into_iter()
            .map(|(start, end)| {
                let word = &text[start..end];
                let replacements = cache.entry_or_insert_with(word, || self.suggest(word)).clone();
                issue(thought, text, start, end, replacements)
            })
            .collect()
    }
}

impl SpellCheck for Speller {
    fn misspelled(&self, text: &str) -> Vec<(usize, usize)> {
        let mut found = words_to_check(text);
        found.retain(|(start, end)| !self.check_word(&text[*start..*end]));
        found
    }

    /// Best first, as [`rank`] orders spellbook's.
    fn suggest(&self, word: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.dict.suggest(word, &mut out);
        let mut out = rank(word, out);
        out.truncate(MAX_SUGGESTIONS);
        out
    }
}

/// The common words, most common first (`spelling/common.txt`, `#` lines are comments).
const COMMON: &str = include_str!("spelling/common.txt");

/// Where `word` (lowercase) stands among the common words; `usize::MAX` when not listed.
fn commonness(word: &str) -> usize {
    COMMON
        .lines()
        .filter(|line| !line.starts_with('#'))
        .flat_map(str::split_whitespace)
        .position(|common| common.eq_ignore_ascii_case(word))
        .unwrap_or(usize::MAX)
}

/// `candidates` for the misspelled `word`, best first: fewest edits from it ([`distance`],
/// ignoring case), then the more common word, then as given (the spell checker's order).
pub fn rank(word: &str, candidates: Vec<String>) -> Vec<String> {
    let word = text_case::lowercase(word);
    let mut keyed: Vec<((usize, usize), String)> = candidates
        .into_iter()
        .map(|candidate| {
            let lower = text_case::lowercase(&candidate);
            ((distance(&word, &lower), commonness(&lower)), candidate)
        })
        .collect();
    // Stable: ties keep the spell checker's order.
    lean::sort_by_key(&mut keyed, |(key, _)| *key);
    keyed.into_iter().map(|(_, candidate)| candidate).collect()
}

/// The Damerau–Levenshtein distance between `a` and `b`, in characters: how many
/// insertions, deletions, substitutions and swaps of two adjacent characters turn one into
/// the other ("adress" → "address" and "teh" → "the" are 1; "ca" → "abc" is 2, a swap and
/// then an insertion between the swapped letters, which the restricted variant counts 3).
pub fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let (n, m) = (a.len(), b.len());
    // `d` is (n + 2) × (m + 2): row and column 0 hold a bound no real path reaches, so a
    // swap with nothing before it is never taken; `d[i + 1][j + 1]` is the distance between
    // the first `i` characters of `a` and the first `j` of `b`.
    let width = m + 2;
    let never = n + m;
    let mut d = vec![0usize; (n + 2) * width];
    let at = |i: usize, j: usize| i * width + j;
    d[at(0, 0)] = never;
    for i in 0..=n {
        d[at(i + 1, 0)] = never;
        d[at(i + 1, 1)] = i;
    }
    for j in 0..=m {
        d[at(0, j + 1)] = never;
        d[at(1, j + 1)] = j;
    }
    // The last row of `a` where each character was seen.
    let mut last_row: lean::SortedMap<char, usize> = lean::SortedMap::new();
    for i in 1..=n {
        // The last column of `b` in this row where the characters matched.
        let mut last_match = 0;
        for j in 1..=m {
            let (k, l) = (last_row.get(&b[j - 1]).copied().unwrap_or(0), last_match);
            let cost = if a[i - 1] == b[j - 1] {
                last_match = j;
                0
            } else {
                1
            };
            let substitute = d[at(i, j)] + cost;
            let insert = d[at(i + 1, j)] + 1;
            let delete = d[at(i, j + 1)] + 1;
            // Swap a[k] and a[i] (which match b[j] and b[l]), with whatever lay between
            // deleted from `a` and inserted from `b`.
            let swap = d[at(k, l)] + (i - k - 1) + 1 + (j - l - 1);
            d[at(i + 1, j + 1)] = substitute.min(insert).min(delete).min(swap);
        }
        last_row.insert(a[i - 1], i);
    }
    d[at(n + 1, m + 1)]
}

/// The byte ranges of `text` that are not prose.
fn skipped_spans(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    // `{…}` (nested, or to the end when never closed).
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'{' {
            let mut depth = 0usize;
            let mut j = i;
            while j < bytes.len() {
                match bytes[j] {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            let end = (j + 1).min(bytes.len());
            spans.push((i, end));
            i = end;
        } else {
            i += 1;
        }
    }
    // `code`.
    let ticks: Vec<usize> = text.match_indices('`').map(|(i, _)| i).collect();
    for pair in ticks.chunks_exact(2) {
        spans.push((pair[0], pair[1] + 1));
    }
    spans.extend(crate::escape::json_blobs(text).into_iter().map(|b| (b.start, b.end)));
    spans.extend(crate::templates::placeholder_spans(text).into_iter().map(|(s, e, _)| (s, e)));
    spans
}

/// A whitespace-separated chunk that is an address, not words.
fn is_address(chunk: &str) -> bool {
    if chunk.contains("://")
        || chunk.contains('@')
        || chunk.to_ascii_lowercase().starts_with("www.")
    {
        return true;
    }
    // "example.com", "src/main.rs": a dot or slash with letters or digits on both sides.
    let chars: Vec<char> = chunk.chars().collect();
    chars
        .windows(3)
        .any(|w| (w[1] == '.' || w[1] == '/') && w[0].is_alphanumeric() && w[2].is_alphanumeric())
}

/// Whether a word is a name or code rather than prose.
fn is_identifier(word: &str) -> bool {
    let letters = word.chars().filter(|c| c.is_alphabetic()).count();
    let upper = word.chars().filter(|c| c.is_uppercase()).count();
    letters < 2
        || word.chars().any(|c| c.is_ascii_digit() || c.is_numeric() || c == '_')
        || (upper == letters)
        || word.chars().skip(1).any(char::is_uppercase)
}

/// The byte ranges of the words of `text` worth checking.
pub fn words_to_check(text: &str) -> Vec<(usize, usize)> {
    let skipped = skipped_spans(text);
    let mut out = Vec::new();
    let mut chunk_start: Option<usize> = None;
    let visit = |s: usize, e: usize, out: &mut Vec<(usize, usize)>| {
        let chunk = &text[s..e];
        if is_address(chunk) {
            return;
        }
        for w in lint::words(chunk) {
            let (ws, we) = (s + w.start, s + w.end);
            if !is_identifier(w.text) && !lint::inside(&skipped, ws) {
                out.push((ws, we));
            }
        }
    };
    for (i, c) in text.char_indices() {
        match (c.is_whitespace(), chunk_start) {
            (false, None) => chunk_start = Some(i),
            (true, Some(s)) => {
                visit(s, i, &mut out);
                chunk_start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = chunk_start {
        visit(s, text.len(), &mut out);
    }
    out
}

#[cfg(test)]
mod tests;
