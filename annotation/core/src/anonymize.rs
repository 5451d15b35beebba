//! Anonymized exports (seed §7.D "Anonymize", issue 13): what identifies a person is
//! replaced before any format is written.
//!
//! - **People it knows**: the values of the fields that name someone (`createdBy`,
//!   `reviewedBy`, `annotator`, `lastEditedBy`, and in fields this crate does not know any
//!   key such as `userId`, `created_by`, `flaggedBy`, `owner`). Those fields are emptied or
//!   dropped, and wherever their values appear in text they become `[person N]`. The
//!   engine's own author, `agent`, is nobody.
//! - **What was typed or chosen**: a step's typed text (`type`, `web_search`) becomes
//!   `[typed text]` and an option chosen in a list `[selected option]`, in the action and
//!   wherever else the export repeats it (the action's result, thoughts, the prompt, other
//!   runs), as whole words, ignoring case. The engine's `[secret]` (a password, card or code
//!   field's value, masked when captured) stays as it is.
//! - **E-mail addresses** become `[email N]`, **phone numbers** `[phone N]`: international
//!   (`+44 20 7946 0958`, `0049 30 1234567`), North American (`(415) 555-2671`) and national
//!   forms with a trunk `0` (`020 7946 0958`, `06 12 34 56 78`). Other digits stay: prices,
//!   dates, step numbers, ids.
//! - **URLs** (`http:`, `https:`, or starting `www.`) keep scheme, host, port and path; a
//!   user name and password, the query string and the fragment go, and a path segment that looks like a token (16 or more letters and
//!   digits mixed, between `-`, `_`, `.` or `~`) becomes `[token]`.
//! - **Times**: every timestamp field is emptied or dropped.
//!
//! Placeholders are numbered per [`Anonymizer`]: one export uses one, so the same address or
//! person is the same placeholder in every run and format of it.
//!
//! What it cannot do: find a name it was never told (a person named only in a prompt or a
//! thought) or other personal details written as prose (a street address, a birthday), nor
//! anything inside a screenshot; anonymized ZIP exports therefore leave the images out (see
//! `export::zip_options`).

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::record::{Run, Step};

pub const TYPED: &str = "[typed text]";
pub const SELECTED: &str = "[selected option]";
pub const TOKEN: &str = "[token]";
/// What the engine stores instead of a secret field's value; kept as it is.
pub const SECRET: &str = "[secret]";
/// What an anonymized export removes or replaces, one item a line, as the export dialog and
/// an anonymized ZIP's README say it.
pub const REMOVES: [&str; 6] = [
    "who created, annotated, reviewed or edited a run, and any field naming a user (userId, \
     created_by…); where text repeats their names: [person 1], [person 2]…",
    "e-mail addresses and phone numbers: [email 1], [phone 1]…, one placeholder per address or \
     number across the export",
    "in URLs: query strings, fragments, user names and passwords, and token-like path parts \
     ([token]); the site and path stay",
    "what a step typed or chose in a list, wherever it appears, even in the prompt: [typed \
     text], [selected option] (a password or card field's value is already [secret])",
    "every timestamp",
    "screenshots, from ZIP files",
];

/// What an anonymized export cannot remove, as the export dialog and the README say it.
pub const CANNOT: &str = "It cannot find a name it was never given (a person named only in a \
     prompt or a thought), other personal details written as prose (a street address, a \
     birthday), or text inside screenshots; JSON, JSONL, CSV and Markdown still name each \
     step's screenshot by its key unless you leave screenshots out. Model prompts and answers \
     (traces) are never exported. Read the file before sharing it.";

/// Who the engine records as the author of what it captured: not a person.
const ENGINE_AUTHOR: &str = "agent";
/// Shorter names and values would match inside too much ordinary text.
const MIN_PHRASE_CHARS: usize = 3;

/// Whether a key names a time: `timestamp`, `at`, a camelCase `…At` or a snake_case `…_at`.
fn time_key(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    matches!(lower.as_str(), "timestamp" | "at" | "date" | "time")
        || key.ends_with("At")
        || lower.ends_with("_at")
}

/// Whether a key names a person or their contact: `author`, `user…`, `email`, `phone`,
/// `annotator`, `reviewer`, `owner`, `assignee`, a camelCase `…By` or a snake_case `…_by`.
fn person_key(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    matches!(lower.as_str(), "by" | "annotator" | "reviewer" | "owner" | "assignee" | "ip")
        || lower.starts_with("user")
        || ["email", "author", "phone", "ipaddress", "ip_address"].iter().any(|w| lower.contains(w))
        || key.ends_with("By")
        || lower.ends_with("_by")
}

/// Whether `key`'s value is left out of an anonymized export.
pub fn personal_key(key: &str) -> bool {
    time_key(key) || person_key(key)
}

/// Placeholders handed out in order of first sight.
#[derive(Debug, Default)]
struct Numbered {
    seen: HashMap<String, usize>,
}

impl Numbered {
    fn placeholder(&mut self, kind: &str, key: String) -> String {
        let next = self.seen.len() + 1;
        let n = *self.seen.entry(key).or_insert(next);
        format!("[{kind} {n}]")
    }
}

/// What a known phrase is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Person,
    Typed,
    Selected,
}

/// Known phrases (names, typed and chosen values), found in text as whole words ignoring
/// case: a trie of their lowercased characters, so a text is read once however many are
/// known.
#[derive(Debug)]
struct Phrases {
    /// Lowercased phrase → its index in `kinds`.
    known: HashMap<String, usize>,
    kinds: Vec<(String, Kind)>,
    /// `nodes[0]` is the root; a node's children by character, and the phrase ending there.
    nodes: Vec<Node>,
}

#[derive(Debug, Default)]
struct Node {
    children: Vec<(char, usize)>,
    phrase: Option<usize>,
}

impl Default for Phrases {
    fn default() -> Self {
        Phrases { known: HashMap::new(), kinds: Vec::new(), nodes: vec![Node::default()] }
    }
}

impl Phrases {
    fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// Learns `phrase` as `kind`; a person stays a person if also typed.
    fn learn(&mut self, phrase: &str, kind: Kind) {
        if phrase.contains(SECRET) {
            return;
        }
        let phrase = phrase.trim_matches(|c: char| !is_word(c));
        if phrase.chars().count() < MIN_PHRASE_CHARS || phrase.eq_ignore_ascii_case(ENGINE_AUTHOR) {
            return;
        }
        // Char by char, as `at` lowers the text it compares.
        let lower: String = phrase.chars().flat_map(text_case::lowercase_chars).collect();
        if let Some(&i) = self.known.get(&lower) {
            if kind == Kind::Person {
                self.kinds[i].1 = Kind::Person;
            }
            return;
        }
        let mut node = 0;
        for c in lower.chars() {
            node = match self.nodes[node].children.iter().find(|(k, _)| *k == c) {
                Some(&(_, next)) => next,
                None => {
                    self.nodes.push(Node::default());
                    let next = self.nodes.len() - 1;
                    self.nodes[node].children.push((c, next));
                    next
                }
            };
        }
        self.nodes[node].phrase = Some(self.kinds.len());
        self.known.insert(lower.clone(), self.kinds.len());
        self.kinds.push((lower, kind));
    }

    /// The longest known phrase that starts at `at` (a word's start) and ends at a word's
    /// end: its end and which it is.
    fn at(&self, text: &str, at: usize) -> Option<(usize, &(String, Kind))> {
        let mut node = 0;
        let mut found = None;
        let mut chars = text[at..].char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            for lower in text_case::lowercase_chars(c) {
                match self.nodes[node].children.iter().find(|(k, _)| *k == lower) {
                    Some(&(_, next)) => node = next,
                    None => return found,
                }
            }
            if let Some(phrase) = self.nodes[node].phrase
                && !chars.peek().is_some_and(|&(_, next)| is_word(next))
            {
                found = Some((at + i + c.len_utf8(), &self.kinds[phrase]));
            }
        }
        found
    }
}

/// One export's anonymization: the people and values it knows and the placeholders it has
/// handed out.
#[derive(Debug, Default)]
pub struct Anonymizer {
    phrases: Phrases,
    people: Numbered,
    emails: Numbered,
    phones: Numbered,
}

impl Anonymizer {
    pub fn new() -> Self {
        Self::default()
    }

    /// Learns `name` as a person's.
    pub fn know(&mut self, name: &str) {
        self.phrases.learn(name, Kind::Person);
    }

    fn know_in(&mut self, value: &Value) {
        match value {
            Value::Object(map) => {
                for (key, value) in map {
                    self.know_field(key, value);
                }
            }
            Value::Array(items) => items.iter().for_each(|v| self.know_in(v)),
            _ => {}
        }
    }

    fn know_field(&mut self, key: &str, value: &Value) {
        if person_key(key)
            && let Some(name) = value.as_str()
        {
            self.know(name);
        }
        self.know_in(value);
    }

    /// Learns the people `run` names in its person fields and the values its steps typed or
    /// chose. Learning every run of an export before writing any replaces a reviewer of run 9
    /// named in a thought of run 1 too.
    pub fn learn(&mut self, run: &Run, steps: &[Step]) {
        let named = [Some(&run.created_by), run.reviewed_by.as_ref(), run.annotator.as_ref()];
        for name in named.into_iter().flatten() {
            self.know(name);
        }
        run.extra.iter().for_each(|(k, v)| self.know_field(k, v));
        for step in steps {
            self.know(&step.last_edited_by);
            step.extra.iter().for_each(|(k, v)| self.know_field(k, v));
            step.issues.iter().chain(&step.actions).for_each(|v| self.know_in(v));
            if let (Some(kind), Some(value)) =
                (typed(step.action.kind.as_str()), &step.action.value)
            {
                self.phrases.learn(value, kind);
            }
            for action in &step.actions {
                for (kind, value) in typed_fields(action) {
                    if let Some(value) = value.as_str() {
                        self.phrases.learn(value, kind);
                    }
                }
            }
        }
    }

    /// Anonymizes `run` and its steps in place (learning them first).
    pub fn apply(&mut self, run: &mut Run, steps: &mut [Step]) {
        self.learn(run, steps);
        run.created_by.clear();
        run.reviewed_by = None;
        run.annotator = None;
        run.created_at.clear();
        run.updated_at.clear();
        for text in [&mut run.task_prompt, &mut run.start_url]
            .into_iter()
            .chain(run.final_answer.as_mut())
            .chain(&mut run.follow_ups)
            .chain(&mut run.tags)
            .chain(&mut run.collections)
        {
            *text = self.text(text);
        }
        for subtask in &mut run.subtasks {
            subtask.title = self.text(&subtask.title);
            subtask.description = self.text(&subtask.description);
        }
        self.value(&mut run.models);
        self.map(&mut run.extra);
        // The log quotes the user's steering and answers, and the agents' questions.
        for entry in &mut run.telemetry.log {
            entry.at = 0.0;
            entry.message = self.text(&entry.message);
        }
        for step in steps {
            self.step(step);
        }
    }

    fn step(&mut self, step: &mut Step) {
        step.last_edited_by.clear();
        step.last_edited_at.clear();
        if let Some(shot) = &mut step.screenshot {
            shot.timestamp.clear();
        }
        let action = &mut step.action;
        if let Some(value) = action.value.as_mut().filter(|v| !v.is_empty() && *v != SECRET) {
            *value = match typed(action.kind.as_str()) {
                Some(kind) => placeholder(kind).to_owned(),
                None => self.text(value),
            };
        }
        action.target = self.text(&action.target);
        for text in [&mut step.url, &mut step.title, &mut step.outcome]
            .into_iter()
            .chain(&mut step.extended_thoughts)
        {
            *text = self.text(text);
        }
        for which in crate::record::Thought::ALL {
            let thought = step.thoughts.get_mut(which);
            *thought = self.text(thought);
        }
        // The Navigator's memory holds what it found on pages: names, addresses, values.
        if let Some(notes) = &mut step.navigator {
            for which in crate::record::NavigatorNote::ALL {
                let note = notes.get_mut(which);
                *note = self.text(note);
            }
        }
        for action in &mut step.actions {
            for (kind, value) in typed_fields_mut(action) {
                if value.as_str().is_some_and(|v| v != SECRET) {
                    *value = Value::String(placeholder(kind).into());
                }
            }
            self.value(action);
        }
        step.issues.iter_mut().for_each(|v| self.value(v));
        self.map(&mut step.extra);
    }

    fn map(&mut self, map: &mut Map<String, Value>) {
        map.retain(|k, _| !personal_key(k));
        map.values_mut().for_each(|v| self.value(v));
    }

    fn value(&mut self, value: &mut Value) {
        match value {
            Value::Object(map) => self.map(map),
            Value::Array(items) => items.iter_mut().for_each(|v| self.value(v)),
            Value::String(text) => *text = self.text(text),
            _ => {}
        }
    }

    /// `text` with URLs trimmed, and e-mail addresses, known names, typed and chosen values
    /// and phone numbers replaced by placeholders.
    pub fn text(&mut self, text: &str) -> String {
        if text.is_empty() {
            return String::new();
        }
        // URLs first: a placeholder put inside one would end it before its query string.
        let text = urls(text);
        let text = self.emails(&text);
        let text = self.phrases(&text);
        self.phones(&text)
    }

    fn phrases(&mut self, text: &str) -> String {
        if self.phrases.is_empty() {
            return text.to_owned();
        }
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        let mut previous: Option<char> = None;
        let mut chars = text.char_indices();
        while let Some((at, c)) = chars.next() {
            let starts_word = is_word(c) && !previous.is_some_and(is_word);
            previous = Some(c);
            // The engine's mask is kept whole, even if someone typed the word "secret".
            if !starts_word || (text[..at].ends_with('[') && text[at - 1..].starts_with(SECRET)) {
                continue;
            }
            if let Some((end, (phrase, kind))) = self.phrases.at(text, at) {
                out.push_str(&text[copied..at]);
                let replacement = match kind {
                    Kind::Person => self.people.placeholder("person", phrase.clone()),
                    kind => placeholder(*kind).to_owned(),
                };
                out.push_str(&replacement);
                copied = end;
                // Go on after the phrase, which ends at a word's end.
                while chars.offset() < end {
                    previous = chars.next().map(|(_, c)| c);
                }
            }
        }
        out.push_str(&text[copied..]);
        out
    }

    fn emails(&mut self, text: &str) -> String {
        if !text.contains('@') {
            return text.to_owned();
        }
        replace_spans(text, email_at, |address| {
            self.emails.placeholder("email", address.to_ascii_lowercase())
        })
    }

    fn phones(&mut self, text: &str) -> String {
        if !text.bytes().any(|b| b.is_ascii_digit()) {
            return text.to_owned();
        }
        replace_spans(text, phone_at, |number| {
            let digits: String = number.chars().filter(char::is_ascii_digit).collect();
            self.phones.placeholder("phone", digits)
        })
    }
}

fn placeholder(kind: Kind) -> &'static str {
    match kind {
        Kind::Person => "[person]",
        Kind::Typed => TYPED,
        Kind::Selected => SELECTED,
    }
}

/// What an action of kind `kind` typed or chose, if anything.
fn typed(kind: &str) -> Option<Kind> {
    match kind.to_ascii_lowercase().as_str() {
        "type" | "type_text" | "fill" | "input" | "web_search" => Some(Kind::Typed),
        "select" | "select_option" => Some(Kind::Selected),
        _ => None,
    }
}

/// The fields of one of a step's `actions` that hold what it typed or chose. The engine
/// writes `{"action": {"action": "type", "text": …}, "target", "ok", "message"}`; a bare
/// action (`{"action": "type", "text": …}`) is read too.
fn typed_fields(action: &Value) -> Vec<(Kind, &Value)> {
    let inner = match action.get("action") {
        Some(inner @ Value::Object(_)) => inner,
        _ => action,
    };
    let Some(kind) = inner.get("action").and_then(Value::as_str).and_then(typed) else {
        return Vec::new();
    };
    ["text", "option", "value", "query"]
        .iter()
        .filter_map(|f| inner.get(*f))
        .map(|v| (kind, v))
        .collect()
}

fn typed_fields_mut(action: &mut Value) -> Vec<(Kind, &mut Value)> {
    let nested = matches!(action.get("action"), Some(Value::Object(_)));
    let inner = if nested { &mut action["action"] } else { action };
    let Some(kind) = inner.get("action").and_then(Value::as_str).and_then(typed) else {
        return Vec::new();
    };
    let Value::Object(map) = inner else { return Vec::new() };
    map.iter_mut()
        .filter(|(key, _)| matches!(key.as_str(), "text" | "option" | "value" | "query"))
        .map(|(_, v)| (kind, v))
        .collect()
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `text` with every span `find` reports (from a byte offset: the span's start and end)
/// replaced by what `with` makes of it.
fn replace_spans(
    text: &str,
    find: fn(&str, usize) -> Option<(usize, usize)>,
    mut with: impl FnMut(&str) -> String,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut at = 0;
    while at < text.len() {
        match find(text, at) {
            Some((start, end)) => {
                out.push_str(&text[copied..start]);
                out.push_str(&with(&text[start..end]));
                copied = end;
                at = end;
            }
            None => at += text[at..].chars().next().map_or(1, char::len_utf8),
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// An e-mail address whose `@` is at `at`: the span around it, if the parts are an address.
fn email_at(text: &str, at: usize) -> Option<(usize, usize)> {
    if text.as_bytes()[at] != b'@' {
        return None;
    }
    let local = |c: u8| c.is_ascii_alphanumeric() || b"._%+-'".contains(&c);
    let domain = |c: u8| c.is_ascii_alphanumeric() || c == b'-' || c == b'.';
    let bytes = text.as_bytes();
    let start = bytes[..at].iter().rposition(|&c| !local(c)).map_or(0, |p| p + 1);
    let mut end =
        at + 1 + bytes[at + 1..].iter().position(|&c| !domain(c)).unwrap_or(bytes.len() - at - 1);
    // A sentence's full stop is not part of the domain.
    while end > at + 1 && bytes[end - 1] == b'.' {
        end -= 1;
    }
    let host = &text[at + 1..end];
    let tld = host.rsplit('.').next().unwrap_or("");
    let well_formed = start < at
        && host.contains('.')
        && !host.starts_with(['.', '-'])
        && tld.len() >= 2
        && tld.bytes().all(|c| c.is_ascii_alphabetic());
    well_formed.then_some((start, end))
}

/// A phone number starting at `at`: the span, if the characters from there read as one.
fn phone_at(text: &str, at: usize) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let first = bytes[at];
    if !(first.is_ascii_digit() || first == b'+' || first == b'(') {
        return None;
    }
    // Inside a word, a number or an id ("run-0123-4567", "v2.0.0 …") it is not a phone.
    if text[..at]
        .chars()
        .next_back()
        .is_some_and(|c| c.is_alphanumeric() || "-./_+#$€£¥%".contains(c))
    {
        return None;
    }
    let allowed = |c: u8| c.is_ascii_digit() || b" -.()+".contains(&c);
    let mut end = at + bytes[at..].iter().position(|&c| !allowed(c)).unwrap_or(bytes.len() - at);
    // Trailing separators belong to the sentence.
    while end > at && !bytes[end - 1].is_ascii_digit() {
        end -= 1;
    }
    let mut candidate = &text[at..end];
    // Shrink to the longest prefix that reads as a phone ("+44 20 7946 0958 and 3 more").
    loop {
        if text[at + candidate.len()..].chars().next().is_some_and(char::is_alphanumeric) {
            return None;
        }
        if is_phone(candidate) {
            return Some((at, at + candidate.len()));
        }
        let cut = candidate.trim_end_matches(|c: char| c.is_ascii_digit());
        let cut = cut.trim_end_matches(|c: char| !c.is_ascii_digit());
        if cut.is_empty() {
            return None;
        }
        candidate = cut;
    }
}

/// Whether `s` (digits, spaces, `-`, `.`, `(`, `)`, `+`; starting and ending with a digit,
/// `+` or `(`) is written as a phone number.
fn is_phone(s: &str) -> bool {
    let digits = s.chars().filter(char::is_ascii_digit).count();
    // Separators are single and of one kind besides the parentheses, as people write them.
    let seps: Vec<char> = s.chars().filter(|c| matches!(c, ' ' | '-' | '.')).collect();
    if s.contains("  ") || s.contains("--") || s.contains("..") || s.matches('+').count() > 1 {
        return false;
    }
    if s.contains('+') && !s.starts_with('+') {
        return false;
    }
    if let Some(rest) = s.strip_prefix('+').or_else(|| s.strip_prefix("00")) {
        // International: a country code, then the rest, 8 to 15 digits in all. After "00"
        // only when spaced as a number is dialled, else it may be an id with leading zeros.
        return (8..=15).contains(&digits)
            && !rest.starts_with(['0', ' '])
            && balanced(s)
            && (s.starts_with('+') || !seps.is_empty());
    }
    let groups: Vec<&str> =
        s.split(|c: char| !c.is_ascii_digit()).filter(|g| !g.is_empty()).collect();
    let one_kind = seps.windows(2).all(|w| w[0] == w[1]);
    if !balanced(s) {
        return false;
    }
    // North American: (415) 555-2671, 415-555-2671, 415.555.2671, 415 555 2671.
    let sizes: Vec<usize> = groups.iter().map(|g| g.len()).collect();
    if sizes == [3, 3, 4] && (one_kind || s.starts_with('(')) {
        return true;
    }
    // National with a trunk 0: 020 7946 0958, 06 12 34 56 78, 0151-12345678, (030) 1234567.
    let trunk = s.trim_start_matches('(').starts_with('0');
    trunk
        && (9..=12).contains(&digits)
        && groups.len() >= 2
        && sizes.iter().all(|&n| n >= 2)
        && (one_kind || s.starts_with('('))
}

fn balanced(s: &str) -> bool {
    match (s.find('('), s.find(')')) {
        (None, None) => true,
        (Some(open), Some(close)) => open < close && s.matches('(').count() == 1,
        _ => false,
    }
}

/// `text` with every http(s) URL, and every address starting `www.`, trimmed (see the module
/// doc).
fn urls(text: &str) -> String {
    let www = |w: &[u8]| w.eq_ignore_ascii_case(b"www.");
    if !text.contains("://") && !text.as_bytes().windows(4).any(www) {
        return text.to_owned();
    }
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut from = 0;
    let next = |from: usize| {
        let http = lower[from..].find("http");
        let www = lower[from..].find("www.");
        http.into_iter().chain(www).min().map(|i| from + i)
    };
    while let Some(found) = next(from) {
        let rest = &lower[found..];
        let after_word = lower[..found]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || ".-/@".contains(c));
        let scheme = if rest.starts_with("https://") {
            8
        } else if rest.starts_with("http://") {
            7
        } else if rest.starts_with("www.") && !after_word {
            0
        } else {
            from = found + 1;
            continue;
        };
        let end = found
            + text[found..]
                .find(|c: char| c.is_whitespace() || "\"'<>`".contains(c))
                .unwrap_or(text.len() - found);
        // Sentence punctuation after a URL is not part of it.
        let end =
            found + text[found..end].trim_end_matches(['.', ',', ';', ':', '!', ')', ']']).len();
        out.push_str(&text[copied..found]);
        out.push_str(&url(&text[found..end], scheme));
        copied = end;
        from = end.max(found + scheme.max(4));
    }
    out.push_str(&text[copied..]);
    out
}

/// One URL (its scheme `scheme_len` bytes long) without credentials, query, fragment and
/// token-like path segments.
fn url(url: &str, scheme_len: usize) -> String {
    let (scheme, rest) = url.split_at(scheme_len);
    let rest = rest.split(['?', '#']).next().unwrap_or("");
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let host = authority.rsplit('@').next().unwrap_or("");
    let path: Vec<&str> =
        path.split('/').map(|segment| if token_like(segment) { TOKEN } else { segment }).collect();
    format!("{scheme}{host}{}", path.join("/"))
}

/// A path segment with a piece of 16 or more characters mixing letters and digits: a session
/// id, a key, a signed token. Words and numbers between separators are left alone.
fn token_like(segment: &str) -> bool {
    segment.split(['-', '_', '.', '~', '=']).any(|piece| {
        piece.len() >= 16
            && piece.bytes().any(|c| c.is_ascii_digit())
            && piece.bytes().any(|c| c.is_ascii_alphabetic())
            && piece.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'%')
    })
}

#[cfg(test)]
mod tests;
