//! The live structure checklist of seed §5.D: one row per guideline, recomputed on every edit.
//!
//! Every check is a plain word-list heuristic over the three thoughts: deterministic, cheap
//! (the quality score runs it over thousands of steps) and easy to explain in its `detail`.
//! Phrases are matched on whole words, case-insensitively, with curly apostrophes made
//! straight. Text inside quotes is the page's own wording, so the ambiguity check skips it.
//!
//! | id | passes when |
//! |---|---|
//! | `structure` | each thought has at least [`MIN_WORDS`] words |
//! | `first-person` | thought 1 says "I", "I'm", "my", "me"… |
//! | `state` | thought 2 describes what is there: "I can see", "shows", "currently", "is"/"are"… |
//! | `action-expectation` | thought 3 has an action verb (click, type, select…) and an expected result ("so that", "to see", "which should", "will"…) |
//! | `final-return` | final step only: thought 2 or 3 returns, reports or answers, or states an error |
//! | `ambiguous` | no "it", "something", "thing", "stuff"… outside quotes |
//! | `visible-element` | a quoted label ('Search', "Add to cart") or a UI word (button, link, field, menu…) |
//! | `exact-error` | only when the step failed or a thought mentions an error: some text is quoted |

use serde::Serialize;

use crate::lint;
use crate::record::{Step, Thought};

/// Fewer words than this in a thought is not yet a thought.
pub const MIN_WORDS: usize = 3;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    pub id: &'static str,
    pub label: &'static str,
    pub ok: bool,
    /// False: not relevant for this step (shown greyed, counted neither way).
    pub applies: bool,
    /// What is wrong, or why it is fine, for a person.
    pub detail: String,
    /// Which thought to look at.
    pub thought: Option<Thought>,
}

/// The action verbs in their base form ("-s", "-ed" and "-ing" forms count too). A `match`
/// rather than a list: the quality score calls this for every word of thousands of steps.
fn base_verb(w: &[u8]) -> Option<&'static str> {
    Some(match w {
        b"click" => "click",
        b"tap" => "tap",
        b"type" => "type",
        b"enter" => "enter",
        b"fill" => "fill",
        b"select" => "select",
        b"choose" => "choose",
        b"pick" => "pick",
        b"scroll" => "scroll",
        b"wait" => "wait",
        b"navigate" => "navigate",
        b"press" => "press",
        b"hit" => "hit",
        b"open" => "open",
        b"go" => "go",
        b"visit" => "visit",
        b"return" => "return",
        b"submit" => "submit",
        b"search" => "search",
        b"hover" => "hover",
        b"close" => "close",
        b"dismiss" => "dismiss",
        b"drag" => "drag",
        b"upload" => "upload",
        b"check" => "check",
        b"uncheck" => "uncheck",
        b"tick" => "tick",
        b"toggle" => "toggle",
        b"switch" => "switch",
        b"refresh" => "refresh",
        b"reload" => "reload",
        b"expand" => "expand",
        b"collapse" => "collapse",
        b"accept" => "accept",
        b"decline" => "decline",
        b"reject" => "reject",
        b"confirm" => "confirm",
        b"answer" => "answer",
        b"report" => "report",
        b"finish" => "finish",
        b"log" => "log",
        b"sign" => "sign",
        b"zoom" => "zoom",
        b"copy" => "copy",
        b"paste" => "paste",
        b"clear" => "clear",
        b"delete" => "delete",
        b"remove" => "remove",
        b"add" => "add",
        b"focus" => "focus",
        b"move" => "move",
        b"follow" => "follow",
        b"read" => "read",
        b"extract" => "extract",
        b"note" => "note",
        b"record" => "record",
        b"remember" => "remember",
        b"compare" => "compare",
        b"apply" => "apply",
        b"sort" => "sort",
        b"filter" => "filter",
        b"download" => "download",
        b"save" => "save",
        b"stop" => "stop",
        _ => return None,
    })
}

/// UI element words (singular; a plural "s" is accepted), each with its bit in a scan's set.
const UI_WORDS: &[&str] = &[
    "button",
    "link",
    "field",
    "bar",
    "searchbar",
    "dropdown",
    "menu",
    "tab",
    "checkbox",
    "icon",
    "header",
    "heading",
    "input",
    "page",
    "box",
    "form",
    "list",
    "option",
    "modal",
    "popup",
    "dialog",
    "banner",
    "toolbar",
    "sidebar",
    "panel",
    "card",
    "image",
    "label",
    "textbox",
    "radio",
    "toggle",
    "slider",
    "window",
    "table",
    "row",
    "column",
    "title",
    "logo",
    "navbar",
    "placeholder",
    "section",
    "tile",
    "thumbnail",
    "carousel",
    "overlay",
    "tooltip",
    "footer",
    "breadcrumb",
    "spinner",
    "message",
    "result",
];

/// What a word says, as bits of a `u64`: the checks' bits, the word's UI word (index + 1, in
/// bits 8–15), and its part in two-word phrases: `R_*` as the first word, `A_*` as the second.
const FIRST: u64 = 1;
const STATE: u64 = 1 << 1;
const EXPECT: u64 = 1 << 2;
const FINAL: u64 = 1 << 3;
const AMBIGUOUS: u64 = 1 << 4;
const ERROR: u64 = 1 << 5;
const CHECK_BITS: u64 = 0xFF;
const R_SO: u64 = 1 << 16;
const R_WTT: u64 = 1 << 17;
const R_OL: u64 = 1 << 18;
const R_TO: u64 = 1 << 19;
const R_SHOULD: u64 = 1 << 20;
const R_COULD: u64 = 1 << 21;
const R_NOT: u64 = 1 << 22;
const R_DONE: u64 = 1 << 23;
const R_DROP: u64 = 1 << 24;
const R_POP: u64 = 1 << 25;
const A_SO: u64 = 1 << 32;
const A_WTT: u64 = 1 << 33;
const A_OL: u64 = 1 << 34;
const A_TO: u64 = 1 << 35;
const A_SHOULD: u64 = 1 << 36;
const A_COULD: u64 = 1 << 37;
const A_NOT: u64 = 1 << 38;
const A_DONE: u64 = 1 << 39;
const A_DROP: u64 = 1 << 40;
const A_POP: u64 = 1 << 41;

const fn ui(index: u64) -> u64 {
    (index + 1) << 8
}

/// The word lists of the module table in one sorted table, so that the quality score, which
/// looks up every word of thousands of steps, pays one binary search a word. Two-word phrases:
/// "so that/i/the", "which/that/this should", "in order to", "leading to", "to see/open/…",
/// "should appear/open/…" (expectations); "could not", "not possible", "is/task complete/done"
/// (final); "drop down", "pop up" (UI words).
const LEXICON: &[(u128, u64)] = &[
    (key(b"access"), A_TO),
    (key(b"am"), STATE),
    (key(b"answer"), FINAL),
    (key(b"answers"), FINAL),
    (key(b"appear"), A_SHOULD),
    (key(b"appears"), STATE),
    (key(b"apply"), A_TO),
    (key(b"are"), STATE),
    (key(b"aren't"), STATE),
    (key(b"banner"), ui(21)),
    (key(b"bar"), ui(3)),
    (key(b"be"), A_SHOULD),
    (key(b"box"), ui(14)),
    (key(b"breadcrumb"), ui(47)),
    (key(b"bring"), A_SHOULD | A_TO),
    (key(b"button"), ui(0)),
    (key(b"can't"), FINAL),
    (key(b"cannot"), FINAL),
    (key(b"card"), ui(25)),
    (key(b"carousel"), ui(43)),
    (key(b"change"), A_SHOULD),
    (key(b"check"), A_TO),
    (key(b"checkbox"), ui(8)),
    (key(b"close"), A_SHOULD | A_TO),
    (key(b"column"), ui(35)),
    (key(b"complete"), A_DONE | A_SHOULD | A_TO),
    (key(b"confirm"), A_TO),
    (key(b"contains"), STATE),
    (key(b"continue"), A_TO),
    (key(b"could"), R_COULD),
    (key(b"couldn't"), FINAL),
    (key(b"currently"), STATE),
    (key(b"dialog"), ui(20)),
    (key(b"display"), A_SHOULD | A_TO),
    (key(b"displayed"), STATE),
    (key(b"displaying"), STATE),
    (key(b"displays"), STATE),
    (key(b"done"), A_DONE),
    (key(b"down"), A_DROP),
    (key(b"drop"), R_DROP),
    (key(b"dropdown"), ui(5)),
    (key(b"error"), ERROR | FINAL),
    (key(b"errors"), ERROR | FINAL),
    (key(b"exception"), ERROR),
    (key(b"expect"), EXPECT),
    (key(b"expected"), EXPECT),
    (key(b"expecting"), EXPECT),
    (key(b"fail"), ERROR | FINAL),
    (key(b"failed"), ERROR | FINAL),
    (key(b"fails"), ERROR | FINAL),
    (key(b"failure"), ERROR | FINAL),
    (key(b"field"), ui(2)),
    (key(b"filter"), A_TO),
    (key(b"find"), A_TO),
    (key(b"finish"), A_SHOULD | A_TO),
    (key(b"footer"), ui(46)),
    (key(b"form"), ui(15)),
    (key(b"get"), A_TO),
    (key(b"give"), A_SHOULD | A_TO),
    (key(b"has"), STATE),
    (key(b"hasn't"), STATE),
    (key(b"have"), STATE),
    (key(b"haven't"), STATE),
    (key(b"header"), ui(10)),
    (key(b"heading"), ui(11)),
    (key(b"hoping"), EXPECT),
    (key(b"i"), A_SO | FIRST),
    (key(b"i'd"), FIRST),
    (key(b"i'll"), EXPECT | FIRST),
    (key(b"i'm"), FIRST),
    (key(b"i've"), FIRST),
    (key(b"icon"), ui(9)),
    (key(b"image"), ui(26)),
    (key(b"impossible"), FINAL),
    (key(b"input"), ui(12)),
    (key(b"is"), R_DONE | STATE),
    (key(b"isn't"), STATE),
    (key(b"it"), AMBIGUOUS),
    (key(b"it's"), AMBIGUOUS),
    (key(b"label"), ui(27)),
    (key(b"lead"), A_SHOULD),
    (key(b"leading"), R_OL),
    (key(b"let"), A_SHOULD | A_TO),
    (key(b"link"), ui(1)),
    (key(b"list"), ui(16)),
    (key(b"load"), A_SHOULD | A_TO),
    (key(b"loaded"), STATE),
    (key(b"logo"), ui(37)),
    (key(b"make"), A_TO),
    (key(b"me"), FIRST),
    (key(b"menu"), ui(6)),
    (key(b"message"), ui(49)),
    (key(b"mine"), FIRST),
    (key(b"modal"), ui(18)),
    (key(b"my"), FIRST),
    (key(b"myself"), FIRST),
    (key(b"navbar"), ui(38)),
    (key(b"not"), A_COULD | R_NOT),
    (key(b"now"), STATE),
    (key(b"open"), A_SHOULD | A_TO),
    (key(b"option"), ui(17)),
    (key(b"order"), R_OL),
    (key(b"overlay"), ui(44)),
    (key(b"page"), ui(13)),
    (key(b"panel"), ui(24)),
    (key(b"placeholder"), ui(39)),
    (key(b"pop"), R_POP),
    (key(b"popup"), ui(19)),
    (key(b"possible"), A_NOT),
    (key(b"proceed"), A_TO),
    (key(b"radio"), ui(29)),
    (key(b"reach"), A_TO),
    (key(b"remains"), STATE),
    (key(b"report"), FINAL),
    (key(b"reporting"), FINAL),
    (key(b"reports"), FINAL),
    (key(b"result"), ui(50)),
    (key(b"resulting"), EXPECT),
    (key(b"return"), A_SHOULD | A_TO | FINAL),
    (key(b"returning"), FINAL),
    (key(b"returns"), FINAL),
    (key(b"reveal"), A_SHOULD | A_TO),
    (key(b"row"), ui(34)),
    (key(b"searchbar"), ui(4)),
    (key(b"section"), ui(40)),
    (key(b"see"), A_TO | STATE),
    (key(b"seems"), STATE),
    (key(b"should"), A_WTT | R_SHOULD),
    (key(b"show"), A_SHOULD | A_TO),
    (key(b"showing"), STATE),
    (key(b"shown"), STATE),
    (key(b"shows"), STATE),
    (key(b"sidebar"), ui(23)),
    (key(b"slider"), ui(31)),
    (key(b"so"), R_SO),
    (key(b"somehow"), AMBIGUOUS),
    (key(b"something"), AMBIGUOUS),
    (key(b"somewhere"), AMBIGUOUS),
    (key(b"spinner"), ui(48)),
    (key(b"start"), A_TO),
    (key(b"still"), STATE),
    (key(b"stuff"), AMBIGUOUS),
    (key(b"submit"), A_TO),
    (key(b"tab"), ui(7)),
    (key(b"table"), ui(33)),
    (key(b"take"), A_SHOULD),
    (key(b"task"), R_DONE),
    (key(b"textbox"), ui(28)),
    (key(b"that"), A_SO | R_WTT),
    (key(b"that'll"), EXPECT),
    (key(b"the"), A_SO),
    (key(b"then"), A_SHOULD | EXPECT),
    (key(b"there's"), STATE),
    (key(b"thing"), AMBIGUOUS),
    (key(b"things"), AMBIGUOUS),
    (key(b"this"), R_WTT),
    (key(b"thumbnail"), ui(42)),
    (key(b"tile"), ui(41)),
    (key(b"title"), ui(36)),
    (key(b"to"), A_OL | R_TO),
    (key(b"toggle"), ui(30)),
    (key(b"toolbar"), ui(22)),
    (key(b"tooltip"), ui(45)),
    (key(b"trigger"), A_TO),
    (key(b"unable"), FINAL),
    (key(b"up"), A_POP),
    (key(b"update"), A_SHOULD),
    (key(b"verify"), A_TO),
    (key(b"view"), A_TO),
    (key(b"visible"), STATE),
    (key(b"whatever"), AMBIGUOUS),
    (key(b"which"), R_WTT),
    (key(b"will"), EXPECT),
    (key(b"window"), ui(32)),
];

/// Up to 16 bytes packed big-endian, so that keys sort as the words do and compare as numbers.
const fn key(w: &[u8]) -> u128 {
    let mut k = 0u128;
    let mut i = 0;
    while i < 16 {
        k <<= 8;
        if i < w.len() {
            k |= w[i] as u128;
        }
        i += 1;
    }
    k
}

fn lookup(w: &[u8]) -> u64 {
    let mut buf = [0u8; 16];
    let Some(head) = buf.get_mut(..w.len()) else { return 0 };
    head.copy_from_slice(w);
    let k = u128::from_be_bytes(buf);
    LEXICON.binary_search_by_key(&k, |&(k, _)| k).map_or(0, |i| LEXICON[i].1)
}

/// The checks' bits and the UI word index of word `w` after word `prev` (their lexicon
/// entries).
fn meaning(prev: u64, w: u64) -> (u64, Option<usize>) {
    let mut bits = w & CHECK_BITS;
    let pairs = (prev >> 16) & (w >> 32) & 0x3FF;
    let expect_pairs = (R_SO | R_WTT | R_OL | R_TO | R_SHOULD) >> 16;
    let final_pairs = (R_COULD | R_NOT | R_DONE) >> 16;
    if pairs & expect_pairs != 0 {
        bits |= EXPECT;
    }
    if pairs & final_pairs != 0 {
        bits |= FINAL;
    }
    let ui = if pairs & (R_DROP >> 16) != 0 {
        UI_WORDS.iter().position(|u| *u == "dropdown")
    } else if pairs & (R_POP >> 16) != 0 {
        UI_WORDS.iter().position(|u| *u == "popup")
    } else {
        match (w >> 8) & 0xFF {
            0 => None,
            n => Some(n as usize - 1),
        }
    };
    (bits, ui)
}

/// The UI word index of a plural ("buttons" → "button").
fn plural_ui(w: &[u8]) -> Option<usize> {
    let stem = w.strip_suffix(b"s")?;
    match (lookup(stem) >> 8) & 0xFF {
        0 => None,
        n => Some(n as usize - 1),
    }
}

/// What a scan reports besides its counts, when asked to (the checklist's details).
pub(crate) enum Found<'a> {
    Ambiguous(&'a str),
    Ui(&'static str),
    Label(&'a str),
}

/// One thought, read once: the counts and facts every check and score needs.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Scan {
    pub words: usize,
    /// Letters and digits in words.
    pub letters: usize,
    /// Sentences: a `.`, `!` or `?` before a space closes one between two words; the last
    /// one counts closed or not.
    pub sentences: usize,
    pub bits: u64,
    /// The first action verb's base form (thought 3 only).
    pub action: Option<&'static str>,
    pub ambiguous: usize,
    /// UI words named, as a bit set over `UI_WORDS`.
    pub ui: u64,
    /// Quoted labels (with a letter or digit in them).
    pub labels: usize,
}

impl Scan {
    pub fn has(&self, bits: u64) -> bool {
        self.bits & bits != 0
    }
}

fn is_terminator(b: u8) -> bool {
    matches!(b, b'.' | b'!' | b'?')
}

/// The char at byte `at` of `raw` (a char boundary), if any.
fn char_at(raw: &str, at: usize) -> Option<char> {
    raw.get(at..).and_then(|r| r.chars().next())
}

/// Whether a word character starts at byte `at`.
fn word_char_at(raw: &str, at: usize) -> bool {
    match raw.as_bytes().get(at) {
        Some(&b) if b < 0x80 => b.is_ascii_alphanumeric() || b == b'_',
        Some(_) => char_at(raw, at).is_some_and(lint::is_word_char),
        None => false,
    }
}

const LOWER_MAX: usize = 24;

/// Reads `raw` once; with `found`, also lists ambiguous words, UI words and labels.
///
/// Words are those of [`lint::words`]; each is lowercased into a small buffer (curly
/// apostrophes made straight) and matched against the word lists. Words with other non-ASCII
/// letters or longer than 24 bytes are counted but match no list. The quality score runs this
/// over every step of every run, so it walks bytes and does not allocate.
pub(crate) fn scan<'a>(raw: &'a str, found: Option<&mut Vec<Found<'a>>>) -> Scan {
    scan_as(raw, true, found)
}

/// [`scan`], looking for an action verb only when `want_action` (only thought 3 needs one).
fn scan_as<'a>(raw: &'a str, want_action: bool, mut found: Option<&mut Vec<Found<'a>>>) -> Scan {
    let mut s = Scan::default();
    let bytes = raw.as_bytes();
    let has_quotes = bytes.iter().any(|&b| matches!(b, b'"' | b'\'' | b'`' | 0xE2));
    let quotes = if has_quotes { lint::quoted(raw) } else { Vec::new() };
    for &(start, end) in &quotes {
        let label = raw[start..end].trim();
        if label.chars().any(char::is_alphanumeric) {
            s.labels += 1;
            if let Some(f) = found.as_deref_mut() {
                f.push(Found::Label(label));
            }
        }
    }
    // The previous word's lexicon entry (0: none, or not a word the lists know).
    let mut prev = 0u64;
    let mut sentence_closed = false;
    let mut i = 0;
    while i < bytes.len() {
        if !word_char_at(raw, i) {
            let b = bytes[i];
            if is_terminator(b) && bytes.get(i + 1).is_some_and(u8::is_ascii_whitespace) {
                sentence_closed = true;
            }
            i += if b < 0x80 { 1 } else { char_at(raw, i).map_or(1, char::len_utf8) };
            continue;
        }
        if sentence_closed && s.words > 0 {
            s.sentences += 1;
        }
        sentence_closed = false;
        let start = i;
        let mut lower = [0u8; LOWER_MAX];
        let mut len = 0;
        let mut fits = true;
        while i < bytes.len() {
            let b = bytes[i];
            let (step, letter, as_lower) = if b < 0x80 {
                if b.is_ascii_alphanumeric() || b == b'_' {
                    (1, b.is_ascii_alphanumeric(), b.to_ascii_lowercase())
                } else if b == b'\'' && word_char_at(raw, i + 1) {
                    (1, false, b'\'')
                } else {
                    break;
                }
            } else {
                let Some(c) = char_at(raw, i) else { break };
                if lint::is_word_char(c) {
                    fits = false;
                    (c.len_utf8(), c.is_alphanumeric(), 0)
                } else if c == '\u{2019}' && word_char_at(raw, i + 3) {
                    (3, false, b'\'')
                } else {
                    break;
                }
            };
            s.letters += usize::from(letter);
            if fits && len < LOWER_MAX {
                lower[len] = as_lower;
                len += 1;
            } else {
                fits = false;
            }
            i += step;
        }
        s.words += 1;
        if !fits {
            prev = 0;
            continue;
        }
        let l = &lower[..len];
        let entry = lookup(l);
        let (mut bits, ui) = meaning(prev, entry);
        let ui = ui.or_else(|| if l.last() == Some(&b's') { plural_ui(l) } else { None });
        if bits & AMBIGUOUS != 0 && lint::inside(&quotes, start) {
            bits &= !AMBIGUOUS;
        }
        if bits & AMBIGUOUS != 0 {
            s.ambiguous += 1;
            if let Some(f) = found.as_deref_mut() {
                f.push(Found::Ambiguous(&raw[start..i]));
            }
        }
        s.bits |= bits;
        if want_action && s.action.is_none() {
            s.action = verb_of(l);
        }
        if let Some(k) = ui {
            if s.ui & (1 << k) == 0
                && let Some(f) = found.as_deref_mut()
            {
                f.push(Found::Ui(UI_WORDS[k]));
            }
            s.ui |= 1 << k;
        }
        prev = entry;
    }
    // The last sentence, closed or not.
    if s.words > 0 {
        s.sentences += 1;
    }
    s
}

/// The three thoughts of a step, scanned.
pub(crate) struct Analysis {
    pub scans: [Scan; 3],
}

impl Analysis {
    pub fn new(step: &Step) -> Analysis {
        Analysis {
            scans: [
                scan_as(&step.thoughts.thought1, false, None),
                scan_as(&step.thoughts.thought2, false, None),
                scan_as(&step.thoughts.thought3, true, None),
            ],
        }
    }

    pub fn get(&self, which: Thought) -> &Scan {
        &self.scans[usize::from(which.number() - 1)]
    }

    pub fn words(&self) -> usize {
        self.scans.iter().map(|s| s.words).sum()
    }

    /// How many distinct things on screen the thoughts refer to: UI words across thoughts,
    /// plus quoted labels.
    pub fn visible_count(&self) -> usize {
        let ui = self.scans.iter().fold(0u64, |acc, s| acc | s.ui).count_ones() as usize;
        ui + self.scans.iter().map(|s| s.labels).sum::<usize>()
    }
}

/// The visible-element references of `step`: quoted labels, then UI words, deduplicated.
pub fn visible_refs(step: &Step) -> Vec<String> {
    let mut labels: Vec<String> = Vec::new();
    let mut ui: Vec<String> = Vec::new();
    for which in Thought::ALL {
        let mut found = Vec::new();
        scan(step.thoughts.get(which), Some(&mut found));
        for f in found {
            let (list, item) = match f {
                Found::Label(l) => (&mut labels, format!("“{l}”")),
                Found::Ui(u) => (&mut ui, u.to_string()),
                Found::Ambiguous(_) => continue,
            };
            if !list.contains(&item) {
                list.push(item);
            }
        }
    }
    labels.extend(ui);
    labels
}

/// The base form of an action verb in any of its simple forms, if `word` (lowercase) is one.
pub(crate) fn action_verb(word: &str) -> Option<&'static str> {
    verb_of(word.as_bytes())
}

fn verb_of(word: &[u8]) -> Option<&'static str> {
    if let Some(v) = base_verb(word) {
        return Some(v);
    }
    for suffix in [&b"ing"[..], b"ed", b"es", b"s"] {
        let Some(stem) = word.strip_suffix(suffix) else { continue };
        if stem.len() < 2 {
            continue;
        }
        // typing → type, scrolling → scroll, tapped → tap.
        let undoubled = if stem[stem.len() - 1] == stem[stem.len() - 2] {
            &stem[..stem.len() - 1]
        } else {
            stem
        };
        if let Some(v) = base_verb(stem).or_else(|| base_verb(undoubled)) {
            return Some(v);
        }
        if suffix != b"s" {
            let mut with_e = [0u8; LOWER_MAX + 1];
            if let Some(buf) = with_e.get_mut(..=stem.len()) {
                buf[..stem.len()].copy_from_slice(stem);
                buf[stem.len()] = b'e';
                if let Some(v) = base_verb(buf) {
                    return Some(v);
                }
            }
        }
    }
    None
}

fn names(which: Thought) -> &'static str {
    match which {
        Thought::One => "Thought 1",
        Thought::Two => "Thought 2",
        Thought::Three => "Thought 3",
    }
}

/// The checklist for `step`, in display order; `is_final` for the run's last step.
pub fn check(step: &Step, is_final: bool) -> Vec<Check> {
    let a = Analysis::new(step);
    let v = verdicts(step, is_final, &a);
    let mut checks = vec![
        structure(&a),
        first_person(),
        state(),
        action_expectation(&a),
        final_return(),
        ambiguous(step),
        visible_element(step),
        exact_error(step, &a),
    ];
    for (c, &(applies, ok)) in checks.iter_mut().zip(&v) {
        c.applies = applies;
        c.ok = ok;
    }
    // Details depend on the verdicts; fill them in now they are known.
    for c in &mut checks {
        detail(c, is_final);
    }
    checks
}

/// (applies, ok) for each check in display order, without the words for a person: what the
/// quality score needs, and what [`check`] shows.
pub(crate) fn verdicts(step: &Step, is_final: bool, a: &Analysis) -> [(bool, bool); 8] {
    let [one, two, three] = &a.scans;
    let errors = a.scans.iter().any(|s| s.has(ERROR));
    let failed = step.outcome.eq_ignore_ascii_case("failed");
    [
        (true, a.scans.iter().all(|s| s.words >= MIN_WORDS)),
        (true, one.has(FIRST)),
        (true, two.has(STATE)),
        (true, three.action.is_some() && three.has(EXPECT)),
        (is_final, !is_final || two.has(FINAL) || three.has(FINAL)),
        (true, a.scans.iter().all(|s| s.ambiguous == 0)),
        (true, a.visible_count() > 0),
        (failed || errors, !(failed || errors) || a.scans.iter().any(|s| s.labels > 0)),
    ]
}

fn row(id: &'static str, label: &'static str) -> Check {
    Check { id, label, ok: true, applies: true, detail: String::new(), thought: None }
}

fn structure(a: &Analysis) -> Check {
    let mut c = row("structure", "Three substantive thoughts");
    let short: Vec<(Thought, usize)> = Thought::ALL
        .into_iter()
        .map(|t| (t, a.get(t).words))
        .filter(|&(_, n)| n < MIN_WORDS)
        .collect();
    match short.first() {
        None => c.detail = "All three thoughts are written out.".into(),
        Some(&(first, _)) => {
            c.thought = Some(first);
            c.detail = short
                .iter()
                .map(|&(t, n)| match n {
                    0 => format!("{} is empty.", names(t)),
                    1 => format!("{} has only 1 word.", names(t)),
                    n => format!("{} has only {n} words.", names(t)),
                })
                .collect::<Vec<_>>()
                .join(" ");
        }
    }
    c
}

fn first_person() -> Check {
    let mut c = row("first-person", "Thought 1 assesses the change in first person (“I”)");
    c.thought = Some(Thought::One);
    c
}

fn state() -> Check {
    let mut c = row("state", "Thought 2 describes the current state");
    c.thought = Some(Thought::Two);
    c
}

fn action_expectation(a: &Analysis) -> Check {
    let mut c = row("action-expectation", "Thought 3 names an action and its expected result");
    c.thought = Some(Thought::Three);
    let t = a.get(Thought::Three);
    c.detail = match (t.action, t.has(EXPECT)) {
        (Some(v), true) => format!("Thought 3 will “{v}” and says what should happen."),
        (Some(_), false) => {
            "Thought 3 names an action but not what should happen: add “so that …”, “to see …”, “which should …”.".into()
        }
        (None, true) => {
            "Thought 3 says what should happen but names no action (click, type, select, scroll, wait, …).".into()
        }
        (None, false) => {
            "Thought 3 should name an action (click, type, select, …) and its expected result (“so that …”).".into()
        }
    };
    c
}

fn final_return() -> Check {
    row("final-return", "Final step returns an answer or an error")
}

/// The ambiguous words outside quotes, with their thought.
pub fn ambiguous_words(step: &Step) -> Vec<(Thought, String)> {
    let mut out = Vec::new();
    for which in Thought::ALL {
        let mut found = Vec::new();
        scan(step.thoughts.get(which), Some(&mut found));
        for f in found {
            if let Found::Ambiguous(w) = f {
                out.push((which, w.to_string()));
            }
        }
    }
    out
}

fn ambiguous(step: &Step) -> Check {
    let mut c = row("ambiguous", "No ambiguous references (“it”, “something”)");
    let found = ambiguous_words(step);
    if let Some(&(first, _)) = found.first() {
        c.thought = Some(first);
        let listed: Vec<String> =
            found.iter().map(|(t, w)| format!("“{w}” in thought {}", t.number())).collect();
        c.detail = format!("Name the element instead of {}.", listed.join(", "));
    } else {
        c.detail = "Every reference names what it means.".into();
    }
    c
}

fn visible_element(step: &Step) -> Check {
    let mut c = row("visible-element", "References a visible UI element");
    let refs = visible_refs(step);
    if refs.is_empty() {
        c.thought = Some(Thought::Two);
        c.detail =
            "Name what is on screen: a quoted label ('Search') or an element (button, link, field, menu, …).".into();
    } else {
        let shown: Vec<&str> = refs.iter().take(3).map(String::as_str).collect();
        c.detail = format!("Refers to {}.", shown.join(", "));
    }
    c
}

fn exact_error(step: &Step, a: &Analysis) -> Check {
    let mut c = row("exact-error", "Error message quoted exactly");
    let mentions = Thought::ALL.into_iter().find(|&t| a.get(t).has(ERROR));
    let which = mentions.unwrap_or(Thought::Two);
    c.thought = Some(which);
    let label_in = |t: Thought| {
        let mut found = Vec::new();
        scan(step.thoughts.get(t), Some(&mut found));
        found.into_iter().find_map(|f| match f {
            Found::Label(l) => Some(l),
            _ => None,
        })
    };
    let quoted = label_in(which).or_else(|| Thought::ALL.into_iter().find_map(label_in));
    c.detail = match quoted {
        Some(q) => format!("The error is quoted: “{q}”."),
        None => {
            "Quote the error message exactly as the page shows it, e.g. \"Invalid email address\"."
                .into()
        }
    };
    c
}

/// The words for a person that depend only on the verdict.
fn detail(c: &mut Check, is_final: bool) {
    let fixed = match (c.id, c.applies, c.ok) {
        ("first-person", _, true) => "Thought 1 speaks as “I”.",
        ("first-person", _, false) => {
            "Thought 1 should say what changed in first person: “I …”, “my …”."
        }
        ("state", _, true) => "Thought 2 describes what is on the page now.",
        ("state", _, false) => {
            "Thought 2 should say what is there now: “I can see …”, “the page shows …”."
        }
        ("final-return", false, _) if !is_final => "Only the run's last step returns.",
        ("final-return", _, true) => "The last step returns an answer or states the error.",
        ("final-return", _, false) => {
            "The last step should return the answer (“I return …”, “the answer is …”) or state the error."
        }
        ("exact-error", false, _) => "No error in this step.",
        _ => return,
    };
    c.detail = fixed.into();
    match c.id {
        "final-return" if is_final => c.thought = Some(Thought::Three),
        "exact-error" if !c.applies => c.thought = None,
        _ => {}
    }
}

/// (passed among the applicable checks, applicable checks).
pub fn passed(checks: &[Check]) -> (usize, usize) {
    let applicable = checks.iter().filter(|c| c.applies);
    let total = applicable.clone().count();
    (applicable.filter(|c| c.ok).count(), total)
}

#[cfg(test)]
mod tests;
