//! Auto-detection of missing patterns with one-click fixes (seed §7.B).
//!
//! | id | thought | missing | fix |
//! |---|---|---|---|
//! | `voice` | any | speaks as "we", "the agent", "you should", "it clicked" | rewrites those to "I" (with "am"/"have"/"was" agreeing); quoted text is left alone |
//! | `i-can-see` | 2 | "I can see" / "I see" | prepends "I can see <visible element>. " |
//! | `i-need` | 2 | "I need" | appends "I need to <goal>.", the goal taken from thought 3's action when it has one |
//! | `but` | 2 | a contrast ("but", "however", "although", "though") | appends ", but <what is preventing progress>." |
//! | `i-should` | 3 | "I should" (or "I will", "I'll", "I'm going to") | turns a leading "Click X" into "I should click X", else prepends "I should <action>. " |
//!
//! Each fix adds exactly what its detection looks for, so after a fix the same miss is not
//! reported again. Fixes write `<placeholder>` fields where nothing can be derived; the
//! template tools ([`crate::templates::unfilled`]) list them.

use serde::Serialize;

use crate::checklist::action_verb;
use crate::lint::{self, Word};
use crate::record::{Step, Thought};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Miss {
    pub id: &'static str,
    pub thought: Thought,
    pub message: String,
    /// The whole new text of that thought after the fix.
    pub fix: String,
}

/// The pattern misses of `step`, by thought, then in the order of the table above.
pub fn detect(step: &Step) -> Vec<Miss> {
    let t = &step.thoughts;
    let mut out = Vec::new();
    for which in Thought::ALL {
        let text = t.get(which);
        let (fixed, found) = fix_voice(text);
        if !found.is_empty() {
            let listed: Vec<String> = found.iter().map(|f| format!("“{f}”")).collect();
            out.push(Miss {
                id: "voice",
                thought: which,
                message: format!(
                    "Thought {} speaks as {} instead of “I”.",
                    which.number(),
                    listed.join(", ")
                ),
                fix: fixed,
            });
        }
        if which == Thought::Two {
            out.extend(thought2(step));
        }
    }
    if let Some(miss) = i_should(&t.thought3) {
        out.push(miss);
    }
    out
}

/// Applies the fix of `miss` to `step`.
///
/// The fix is recomputed from the thought as it is now, so applying several misses of one
/// [`detect`] in a row does not undo the earlier ones; when the thought has not changed since,
/// that is exactly `miss.fix`. A miss that no longer applies changes nothing.
pub fn apply(step: &mut Step, miss: &Miss) {
    let current = detect(step).into_iter().find(|m| m.id == miss.id && m.thought == miss.thought);
    if let Some(m) = current {
        *step.thoughts.get_mut(miss.thought) = m.fix;
    }
}

fn phrase_text(text: &str) -> String {
    let mut s = String::from(" ");
    for w in lint::words(text) {
        s.push_str(&lint::normalize_word(w.text));
        s.push(' ');
    }
    s
}

fn has_phrase(joined: &str, phrase: &str) -> bool {
    joined.contains(&format!(" {phrase} "))
}

/// Joins a sentence onto `text`, with a space and a full stop where needed.
fn append_sentence(text: &str, sentence: &str) -> String {
    let trimmed = text.trim_end();
    if trimmed.is_empty() {
        return sentence.to_string();
    }
    let ends = trimmed.ends_with(['.', '!', '?', ':', ';']);
    format!("{trimmed}{} {sentence}", if ends { "" } else { "." })
}

fn thought2(step: &Step) -> Vec<Miss> {
    let text = step.thoughts.thought2.as_str();
    let joined = phrase_text(text);
    let mut out = Vec::new();
    if !has_phrase(&joined, "i can see") && !has_phrase(&joined, "i see") {
        let element = visible_target(&step.action.target)
            .map(|t| format!("the {t}"))
            .unwrap_or_else(|| "<visible element>".into());
        let first = format!("I can see {element}.");
        let trimmed = text.trim_start();
        out.push(Miss {
            id: "i-can-see",
            thought: Thought::Two,
            message: "Thought 2 has no “I can see …” observation of the screen.".into(),
            fix: if trimmed.is_empty() { first } else { format!("{first} {trimmed}") },
        });
    }
    if !has_phrase(&joined, "i need") {
        let goal = goal_of(&step.thoughts.thought3).unwrap_or_else(|| "<goal>".into());
        out.push(Miss {
            id: "i-need",
            thought: Thought::Two,
            message: "Thought 2 does not say what I need to do (“I need to …”).".into(),
            fix: append_sentence(text, &format!("I need to {goal}.")),
        });
    }
    if !["but", "however", "although", "though"].iter().any(|w| has_phrase(&joined, w)) {
        let trimmed = text.trim_end().trim_end_matches(['.', '!', '?', ';', ',', ':']);
        let fix = if trimmed.trim().is_empty() {
            "<current state>, but <what is preventing progress>.".to_string()
        } else {
            format!("{trimmed}, but <what is preventing progress>.")
        };
        out.push(Miss {
            id: "but",
            thought: Thought::Two,
            message: "Thought 2 has no “but …” contrast saying what stands in the way.".into(),
            fix,
        });
    }
    out
}

/// The action target as words a person would write ("Search button"), if it is plain enough.
fn visible_target(target: &str) -> Option<String> {
    let t = target.trim();
    let plain = !t.is_empty()
        && t.len() <= 60
        && t.chars().any(char::is_alphabetic)
        && t.chars().all(|c| c.is_alphanumeric() || " '-\"“”‘’".contains(c));
    plain.then(|| t.to_string())
}

/// What thought 3 sets out to do, as a verb phrase ("click the 'Go' button").
fn goal_of(thought3: &str) -> Option<String> {
    let text = thought3.trim();
    let words = lint::words(text);
    let lower: Vec<String> = words.iter().map(|w| lint::normalize_word(w.text)).collect();
    // After "I should" / "I will" / "I'll" / "I need to", or at a leading imperative.
    let start = (0..words.len()).find_map(|i| match lower[i].as_str() {
        "should" | "will" | "must" if i > 0 && lower[i - 1] == "i" => words.get(i + 1),
        "i'll" => words.get(i + 1),
        "to" if i > 1 && lower[i - 1] == "need" && lower[i - 2] == "i" => words.get(i + 1),
        _ => None,
    });
    let start = start.or_else(|| {
        let first = lower.first()?;
        action_verb(first).filter(|v| v == first).and(words.first())
    })?;
    let rest = &text[start.start..];
    // Stop at the expected result or the sentence's end.
    let cut = [" so that", " so I", " to see", " which ", ", ", ". ", " in order to", " and then"]
        .iter()
        .filter_map(|m| rest.find(m))
        .min()
        .unwrap_or(rest.len());
    let goal = rest[..cut].trim().trim_end_matches(['.', '!', '?', ',', ';', ':']);
    if goal.is_empty() {
        return None;
    }
    Some(lowercase_first(goal))
}

fn lowercase_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        // "I" and acronyms ("URL") keep their case.
        Some(c) if c.is_uppercase() && !chars.clone().next().is_some_and(char::is_uppercase) => {
            let is_i = c == 'I' && !chars.clone().next().is_some_and(char::is_alphanumeric);
            if is_i { s.to_string() } else { text_case::lower_first(s) }
        }
        _ => s.to_string(),
    }
}

const FILLERS: &[&str] = &["now", "next", "then", "first", "finally", "so"];

fn i_should(text: &str) -> Option<Miss> {
    // Voice problems are the `voice` miss's to fix; judge the text as it will read after.
    let (voiced, _) = fix_voice(text);
    let joined = phrase_text(&voiced);
    if ["i should", "i will", "i'll", "i'm going to", "i am going to"]
        .iter()
        .any(|p| has_phrase(&joined, p))
    {
        return None;
    }
    let words = lint::words(text);
    let mut i = 0;
    if words.first().is_some_and(|w| FILLERS.contains(&lint::normalize_word(w.text).as_str())) {
        i = 1;
    }
    let imperative = words.get(i).filter(|w| {
        let lower = lint::normalize_word(w.text);
        action_verb(&lower).is_some_and(|v| v == lower)
    });
    let fix = match imperative {
        Some(verb) => {
            let before = &text[..verb.start];
            format!("{before}I should {}", lowercase_first(&text[verb.start..]))
        }
        None if text.trim().is_empty() => "I should <action> so that <expected result>.".into(),
        None => format!("I should <action>. {}", text.trim_start()),
    };
    Some(Miss {
        id: "i-should",
        thought: Thought::Three,
        message: "Thought 3 has no “I should …” action phrase.".into(),
        fix,
    })
}

/// Verbs that change after "I" ("we are" → "I am").
fn agree(lower: &str) -> Option<String> {
    let fixed = match lower {
        "are" | "is" => "am",
        "were" => "was",
        "has" => "have",
        "does" => "do",
        "needs" => "need",
        "wants" => "want",
        "sees" => "see",
        "tries" => "try",
        "goes" => "go",
        "isn't" | "aren't" => "am not",
        "doesn't" => "don't",
        "hasn't" => "haven't",
        "weren't" => "wasn't",
        _ => {
            // "clicks" → "click", "presses" → "press"; past tense stays.
            let stem = lower.strip_suffix("es").filter(|s| action_verb(s) == Some(*s));
            let stem =
                stem.or_else(|| lower.strip_suffix('s').filter(|s| action_verb(s) == Some(*s)));
            return stem.map(str::to_string);
        }
    };
    Some(fixed.to_string())
}

fn capitalized(word: &str) -> bool {
    word.chars().next().is_some_and(char::is_uppercase)
}

fn cased(word_was: &str, lower: &str) -> String {
    if capitalized(word_was) { text_case::upper_first(lower) } else { lower.to_string() }
}

const OTHER_SUBJECT_NOUNS: &[&str] = &["agent", "model", "assistant", "bot", "ai"];
const MODALS: &[&str] = &[
    "should", "need", "can", "will", "must", "have", "could", "would", "may", "might", "want",
    "shall",
];

/// `text` speaking as "I", and the forms it replaced (as written).
pub(crate) fn fix_voice(text: &str) -> (String, Vec<String>) {
    let words: Vec<Word<'_>> = lint::words(text);
    let quotes = lint::quoted(text);
    let lower: Vec<String> = words.iter().map(|w| lint::normalize_word(w.text)).collect();
    // Words separated only by spaces form one phrase ("the agent", "we are").
    let adjacent = |i: usize| {
        words.get(i + 1).is_some_and(|n| text[words[i].end..n.start].chars().all(|c| c == ' '))
    };
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let mut found: Vec<String> = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        if lint::inside(&quotes, w.start) {
            i += 1;
            continue;
        }
        let l = lower[i].as_str();
        let next = lower.get(i + 1).map(String::as_str).filter(|_| adjacent(i));
        // (words consumed, replacement, whether a verb after it must agree)
        let hit: Option<(usize, String, bool)> = match l {
            "the" if next.is_some_and(|n| OTHER_SUBJECT_NOUNS.contains(&n)) => {
                Some((2, "I".into(), true))
            }
            "the"
                if next.is_some_and(|n| {
                    n.strip_suffix("'s").is_some_and(|s| OTHER_SUBJECT_NOUNS.contains(&s))
                }) =>
            {
                Some((2, cased(w.text, "my"), false))
            }
            "we" => Some((1, "I".into(), true)),
            "we're" => Some((1, "I'm".into(), false)),
            "we've" => Some((1, "I've".into(), false)),
            "we'll" => Some((1, "I'll".into(), false)),
            "we'd" => Some((1, "I'd".into(), false)),
            "our" => Some((1, cased(w.text, "my"), false)),
            "ours" => Some((1, cased(w.text, "mine"), false)),
            "ourselves" => Some((1, cased(w.text, "myself"), false)),
            // "US" is a country; only the lowercase pronoun.
            "us" if w.text == "us" => Some((1, "me".into(), false)),
            "you" if next.is_some_and(|n| MODALS.contains(&n)) => Some((1, "I".into(), false)),
            "you're" => Some((1, "I'm".into(), false)),
            "you'll" => Some((1, "I'll".into(), false)),
            "it" if next.is_some_and(|n| n.ends_with("ed") && action_verb(n).is_some()) => {
                Some((1, "I".into(), false))
            }
            _ => None,
        };
        let Some((taken, replacement, verb_agrees)) = hit else {
            i += 1;
            continue;
        };
        let last = i + taken - 1;
        found.push(text[w.start..words[last].end].to_string());
        edits.push((w.start, words[last].end, replacement));
        i += taken;
        if verb_agrees
            && i > 0
            && adjacent(i - 1)
            && let Some(fixed) = lower.get(i).and_then(|v| agree(v))
        {
            edits.push((words[i].start, words[i].end, fixed));
            i += 1;
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (s, e, r) in edits {
        out.push_str(&text[at..s]);
        out.push_str(&r);
        at = e;
    }
    out.push_str(&text[at..]);
    let mut seen = Vec::new();
    found.retain(|f| {
        let fresh = !seen.contains(f);
        seen.push(f.clone());
        fresh
    });
    (out, found)
}

#[cfg(test)]
mod tests;
