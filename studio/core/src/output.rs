//! A model's answer laid out as lines of pretty JSON, each knowing the JSON Pointer of the
//! value it starts, so the page can mark the lines a schema violation points at.

use prompt_files::structured::Problem;
use serde_json::Value;

/// One line of the pretty-printed answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub indent: usize,
    pub text: String,
    /// The pointer of the value this line shows.
    pub pointer: String,
    /// The violations at exactly this value.
    pub violations: Vec<String>,
}

/// `value` as lines; a violation whose pointer names no line (a missing property) is put
/// on its parent's line.
pub fn lines(value: &Value, violations: &[Problem]) -> Vec<Line> {
    let mut out = Vec::new();
    walk(value, None, "", 0, true, &mut out);
    for violation in violations {
        let mut pointer = violation.path.as_str();
        loop {
            if let Some(line) = out.iter_mut().find(|l| l.pointer == pointer) {
                line.violations.push(violation.message.clone());
                break;
            }
            match pointer.rfind('/') {
                Some(at) => pointer = &pointer[..at],
                None => break,
            }
        }
    }
    out
}

fn walk(
    value: &Value,
    key: Option<&str>,
    pointer: &str,
    indent: usize,
    last: bool,
    out: &mut Vec<Line>,
) {
    let label = key.map(|k| format!("{}: ", Value::String(k.to_owned()))).unwrap_or_default();
    let comma = if last { "" } else { "," };
    let line =
        |text: String| Line { indent, text, pointer: pointer.to_owned(), violations: vec![] };
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push(line(format!("{label}{{")));
            let count = map.len();
            for (n, (k, v)) in map.iter().enumerate() {
                let child = run_contract::problem::pointer(pointer, k);
                walk(v, Some(k), &child, indent + 1, n + 1 == count, out);
            }
            out.push(Line { pointer: format!("{pointer}#end"), ..line(format!("}}{comma}")) });
        }
        Value::Array(items) if !items.is_empty() => {
            out.push(line(format!("{label}[")));
            let count = items.len();
            for (n, v) in items.iter().enumerate() {
                walk(v, None, &format!("{pointer}/{n}"), indent + 1, n + 1 == count, out);
            }
            out.push(Line { pointer: format!("{pointer}#end"), ..line(format!("]{comma}")) });
        }
        other => out.push(line(format!("{label}{other}{comma}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prompt_files::structured::{Schema, check_answer};
    use serde_json::json;

    fn schema() -> Schema {
        Schema::compile(json!({"type": "object", "required": ["actions", "memory"],
            "properties": {"memory": {"type": "string"},
                "actions": {"type": "array", "items": {"type": "object",
                    "required": ["action"], "properties": {"action": {"enum": ["click", "done"]}}}}}}))
        .unwrap()
    }

    #[test]
    fn violations_land_on_the_lines_of_the_values_they_name() {
        let raw = "```json\n{\"actions\": [{\"action\": \"jump\"}], \"note\": 1}\n```";
        let (value, violations) = check_answer(raw, &schema());
        let value = value.unwrap();
        assert_eq!(violations.len(), 2, "{violations:?}");
        let lines = lines(&value, &violations);
        let bad = lines.iter().find(|l| l.text.contains("\"jump\"")).unwrap();
        assert_eq!(bad.pointer, "/actions/0/action");
        assert_eq!(bad.violations.len(), 1);
        // The missing "memory" is reported on the object that lacks it.
        let top = &lines[0];
        assert_eq!((top.text.as_str(), top.pointer.as_str()), ("{", ""));
        assert!(top.violations[0].contains("memory"), "{:?}", top.violations);
        assert!(lines.iter().filter(|l| l.text.contains("note")).all(|l| l.violations.is_empty()));
    }

    #[test]
    fn an_answer_without_json_is_one_violation_at_the_top() {
        let (value, violations) = check_answer("I think I should click.", &schema());
        assert_eq!(value, None);
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].path, "");
    }
}
