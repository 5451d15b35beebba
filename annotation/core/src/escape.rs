//! JSON bracket escaping (seed §5.B): thoughts that quote JSON must write `\{` and `\}` so the
//! training pipeline's templating does not read them as fields. The page shows a preview with
//! the JSON validated before and after, and converts only when the annotator confirms.
//!
//! A brace is escaped when an odd number of backslashes comes right before it (`\{`); after an
//! even number (`\\{`) the backslashes escape each other and the brace is bare.

use serde::Serialize;

/// Whether the brace at byte `at` is escaped (an odd run of backslashes before it).
fn escaped_at(bytes: &[u8], at: usize) -> bool {
    bytes[..at].iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 1
}

/// Whether `text` has a `{` or `}` that is not escaped.
pub fn needs_escaping(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().any(|(i, &b)| (b == b'{' || b == b'}') && !escaped_at(bytes, i))
}

/// `text` with every bare `{` and `}` escaped; escaped ones stay as they are, so this is
/// idempotent.
pub fn escape(text: &str) -> String {
    escape_counting(text).0
}

fn escape_counting(text: &str) -> (String, usize) {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 8);
    let mut changes = 0;
    let mut copied = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if (b == b'{' || b == b'}') && !escaped_at(bytes, i) {
            // Braces are ASCII, so `i` is a char boundary.
            out.push_str(&text[copied..i]);
            out.push('\\');
            copied = i;
            changes += 1;
        }
    }
    out.push_str(&text[copied..]);
    (out, changes)
}

/// `text` with the escaping backslash of every escaped brace removed.
pub fn unescape(text: &str) -> String {
    unescape_mapped(text).0
}

/// The unescaped text, and for each of its bytes (plus its end) the offset in `text`.
fn unescape_mapped(text: &str) -> (String, Vec<usize>) {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut map = Vec::with_capacity(text.len() + 1);
    let mut copied = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\\' && matches!(bytes.get(i + 1), Some(b'{' | b'}')) && escaped_at(bytes, i + 1) {
            out.push_str(&text[copied..i]);
            map.extend(copied..i);
            // The brace maps to its backslash, so a span shown in `text` covers both.
            out.push(char::from(bytes[i + 1]));
            map.push(i);
            copied = i + 2;
        }
    }
    out.push_str(&text[copied..]);
    map.extend(copied..text.len());
    map.push(text.len());
    (out, map)
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JsonBlob {
    /// Byte range in the text it was found in (an escaped opening brace's backslash included).
    pub start: usize,
    pub end: usize,
    pub valid: bool,
    /// Why it is not valid JSON, in plain words.
    pub error: Option<String>,
}

/// Where a bracket opened at `open` closes: its matching bracket, the first bracket that does
/// not match (the blob is broken there), or the end of the text. Brackets inside JSON strings
/// do not count.
fn span_end(u: &[u8], open: usize) -> usize {
    let mut stack = vec![u[open]];
    let mut in_string = false;
    let mut i = open + 1;
    while i < u.len() {
        let b = u[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => stack.push(b),
                b'}' | b']' => {
                    let want = if b == b'}' { b'{' } else { b'[' };
                    if stack.pop() != Some(want) || stack.is_empty() {
                        return i + 1;
                    }
                }
                _ => {}
            }
        }
        i += 1;
    }
    u.len()
}

/// The JSON-looking spans of `text`, escaped or not: balanced `{…}` or `[…]` holding a quote or
/// a colon (so "[12]" and "{name}" are not JSON), each parsed after unescaping. An opening
/// bracket that never closes makes a blob to the end of the text, reported invalid.
pub fn json_blobs(text: &str) -> Vec<JsonBlob> {
    let (u, map) = unescape_mapped(text);
    let bytes = u.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !matches!(bytes[i], b'{' | b'[') {
            i += 1;
            continue;
        }
        let end = span_end(bytes, i);
        let candidate = &u[i..end];
        if !candidate.contains(['"', ':']) {
            i += 1;
            continue;
        }
        let (valid, error) = match serde_json::from_str::<serde_json::Value>(candidate) {
            Ok(_) => (true, None),
            Err(e) => (false, Some(plain_error(&e))),
        };
        out.push(JsonBlob { start: map[i], end: map[end], valid, error });
        i = end;
    }
    out
}

/// serde_json's error in words an annotator knows.
fn plain_error(e: &serde_json::Error) -> String {
    let full = e.to_string();
    let what = full.split(" at line ").next().unwrap_or(&full);
    let said = if what.starts_with("EOF while parsing") {
        "it ends before every bracket or quote is closed".to_string()
    } else if what == "trailing comma" {
        "there is a comma before a closing bracket".to_string()
    } else if what == "key must be a string" {
        "a key is not in double quotes".to_string()
    } else if what == "expected value" {
        "something here is not a JSON value (text must be in double quotes)".to_string()
    } else if what == "trailing characters" {
        "there is more after the JSON ends".to_string()
    } else if what.starts_with("expected `:`") {
        "a key is not followed by a colon".to_string()
    } else if what.starts_with("expected `,` or") {
        "a comma is missing between two items".to_string()
    } else if what.starts_with("invalid escape") {
        "a backslash in a string starts no valid escape".to_string()
    } else {
        what.to_string()
    };
    format!("Not valid JSON: {said} (line {}, column {}).", e.line(), e.column())
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Preview {
    pub escaped: String,
    /// How many braces were escaped.
    pub changes: usize,
    pub before: Vec<JsonBlob>,
    pub after: Vec<JsonBlob>,
    /// Whether unescaping the result gives the text back; false when it already held escaped
    /// braces, which unescaping would also undo.
    pub round_trips: bool,
}

/// What escaping `text` would do, for the confirmation dialog.
pub fn preview(text: &str) -> Preview {
    let (escaped, changes) = escape_counting(text);
    let before = json_blobs(text);
    let after = json_blobs(&escaped);
    let round_trips = unescape(&escaped) == text;
    Preview { escaped, changes, before, after, round_trips }
}

/// `text` with each valid JSON blob pretty-printed in place (2-space indent, keys in their
/// order, numbers and strings as written); escaped blobs stay escaped, invalid ones untouched.
pub fn format_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    let mut copied = 0;
    for blob in json_blobs(text) {
        if !blob.valid || blob.start < copied {
            continue;
        }
        let original = &text[blob.start..blob.end];
        let was_escaped = original.starts_with('\\');
        let pretty = pretty(&unescape(original));
        out.push_str(&text[copied..blob.start]);
        out.push_str(&if was_escaped { escape(&pretty) } else { pretty });
        copied = blob.end;
    }
    out.push_str(&text[copied..]);
    out
}

/// Re-indents valid JSON without re-serializing it.
fn pretty(json: &str) -> String {
    let mut out = String::with_capacity(json.len() * 2);
    let mut depth = 0usize;
    let mut chars = json.chars().peekable();
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                out.push('"');
                while let Some(s) = chars.next() {
                    out.push(s);
                    if s == '\\' {
                        if let Some(escaped) = chars.next() {
                            out.push(escaped);
                        }
                    } else if s == '"' {
                        break;
                    }
                }
            }
            '{' | '[' => {
                while chars.peek().is_some_and(|c| c.is_whitespace()) {
                    chars.next();
                }
                out.push(c);
                if matches!(chars.peek(), Some('}' | ']')) {
                    out.push(chars.next().unwrap_or(if c == '{' { '}' } else { ']' }));
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(',');
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            c if c.is_whitespace() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;
