use super::*;

#[test]
fn escaping_is_idempotent_and_counts_changes() {
    let text = r#"I typed {"q": "kettle"} in the box"#;
    assert!(needs_escaping(text));
    let once = escape(text);
    assert_eq!(once, r#"I typed \{"q": "kettle"\} in the box"#);
    assert!(!needs_escaping(&once));
    assert_eq!(escape(&once), once);
    assert_eq!(unescape(&once), text);
    assert_eq!(preview(text).changes, 2);
    assert_eq!(preview(&once).changes, 0);
}

#[test]
fn backslash_runs_decide_what_is_escaped() {
    // `\\{`: the backslashes escape each other, the brace is bare.
    assert!(needs_escaping(r"a \\{"));
    assert_eq!(escape(r"a \\{"), r"a \\\{");
    assert_eq!(unescape(r"a \\\{"), r"a \\{");
    assert!(!needs_escaping(r"\{ \}"));
    assert_eq!(unescape(r"\{ \} \\{ \x"), r"{ } \\{ \x");
    assert!(!needs_escaping("no braces, just \\ and é"));
    assert_eq!(escape(""), "");
    assert_eq!(escape("😀{😀}"), "😀\\{😀\\}");
}

#[test]
fn json_blobs_are_found_escaped_or_not() {
    let text = r#"Sent {"a": [1, 2], "b": {"c": "}"}} and [12] and {name} then ["x"]"#;
    let blobs = json_blobs(text);
    let spans: Vec<&str> = blobs.iter().map(|b| &text[b.start..b.end]).collect();
    assert_eq!(spans, [r#"{"a": [1, 2], "b": {"c": "}"}}"#, r#"["x"]"#]);
    assert!(blobs.iter().all(|b| b.valid && b.error.is_none()));

    let escaped = escape(text);
    let blobs = json_blobs(&escaped);
    let spans: Vec<&str> = blobs.iter().map(|b| &escaped[b.start..b.end]).collect();
    assert_eq!(spans, [r#"\{"a": [1, 2], "b": \{"c": "\}"\}\}"#, r#"["x"]"#]);
    assert!(blobs.iter().all(|b| b.valid));
}

#[test]
fn invalid_json_is_explained_in_plain_words() {
    let cases = [
        (r#"{"a": 1,}"#, "comma before a closing bracket"),
        (r#"{a: 1}"#, "key is not in double quotes"),
        (r#"{"a" 1}"#, "not followed by a colon"),
        (r#"{"a": 1 "b": 2}"#, "comma is missing"),
        (r#"{"a": x}"#, "not a JSON value"),
        (r#"{"a": [1, 2}"#, "Not valid JSON"),
    ];
    for (json, said) in cases {
        let blobs = json_blobs(json);
        assert_eq!(blobs.len(), 1, "{json}");
        let b = &blobs[0];
        assert!(!b.valid);
        let error = b.error.as_deref().unwrap();
        assert!(error.contains(said), "{json}: {error}");
        assert!(error.contains("line 1, column"), "{error}");
    }
    // Never closed: a blob to the end.
    let text = r#"oops {"a": "b"#;
    let blobs = json_blobs(text);
    assert_eq!((blobs[0].start, blobs[0].end), (5, text.len()));
    assert!(blobs[0].error.as_deref().unwrap().contains("ends before"));
}

#[test]
fn preview_validates_before_and_after() {
    let text = r#"Payload: {"ok": true}"#;
    let p = preview(text);
    assert_eq!(p.escaped, r#"Payload: \{"ok": true\}"#);
    assert_eq!(p.changes, 2);
    assert_eq!(p.before.len(), 1);
    assert_eq!(p.after.len(), 1);
    assert!(p.before[0].valid && p.after[0].valid);
    assert!(p.round_trips);
    // A text that already held an escaped brace does not round-trip.
    assert!(!preview(r"half \{ done }").round_trips);
    assert!(preview("").round_trips);
}

#[test]
fn format_json_pretty_prints_in_place_keeping_order() {
    let text = r#"Got {"z": 1, "a": [1, {"b": null}], "e": {}, "s": "x, {y}: z"} ok"#;
    assert_eq!(
        format_json(text),
        "Got {\n  \"z\": 1,\n  \"a\": [\n    1,\n    {\n      \"b\": null\n    }\n  ],\n  \"e\": {},\n  \"s\": \"x, {y}: z\"\n} ok"
    );
    // Escaped stays escaped; invalid stays as it was.
    let escaped = r#"\{"a":1\} and {"b": }"#;
    assert_eq!(format_json(escaped), "\\{\n  \"a\": 1\n\\} and {\"b\": }");
    assert_eq!(format_json("plain"), "plain");
    // Formatting again changes nothing.
    let once = format_json(text);
    assert_eq!(format_json(&once), once);
}

#[test]
fn odd_input_never_panics() {
    let deep = "[".repeat(5000) + "\"" + &"]".repeat(5000);
    for t in ["{", "}", "\\", "\\{", "[\"", "{\"\\", "é{\"é\":\"😀\"}é", "]]]{{{", &deep] {
        let _ = preview(t);
        let _ = format_json(t);
        for b in json_blobs(t) {
            assert!(b.start <= b.end && b.end <= t.len());
            assert!(t.is_char_boundary(b.start) && t.is_char_boundary(b.end));
        }
    }
}
