use super::*;
use crate::checklist;
use crate::record::ActionKind;

const SAMPLE: &str = "---
name: Popup
family: popup
action: click
---

## Thought 1

I <previous action> and a
<popup type> popup appeared.

## Thought 2

I can see the '<popup title>' popup.

Second paragraph.

## Thought 3

I should click '<close label>' so that the popup closes.
";

#[test]
fn parse_reads_front_matter_and_sections() {
    let t = parse("templates/popup.md", SAMPLE).unwrap();
    assert_eq!(t.id, "popup");
    assert_eq!(t.name, "Popup");
    assert_eq!(t.family, "popup");
    assert_eq!(t.action_type.as_deref(), Some("click"));
    assert_eq!(t.thoughts.thought1, "I <previous action> and a <popup type> popup appeared.");
    assert_eq!(t.thoughts.thought2, "I can see the '<popup title>' popup.\n\nSecond paragraph.");
    assert_eq!(t.starred_from, None);
    // CRLF and a BOM read the same.
    let crlf = format!("\u{FEFF}{}", SAMPLE.replace('\n', "\r\n"));
    assert_eq!(parse("popup.md", &crlf).unwrap(), t);
}

#[test]
fn parse_errors_name_the_file_and_the_problem() {
    let cases = [
        ("x.md", "no front matter", "x.md: must start with a front matter block"),
        ("x.md", "---\nname: a\n", "x.md: the front matter is not closed"),
        ("x.md", "---\nname a\n---\n", "x.md, line 2: expected `key: value`"),
        ("x.md", "---\nname: a\ncolour: red\n---\n", "x.md, line 3: unknown key “colour”"),
        ("x.md", "---\nname: a\nname: b\n---\n", "x.md, line 3: “name” is given twice"),
        ("x.md", "---\nfamily: f\n---\n", "x.md: the front matter has no “name”"),
        ("x.md", "---\nname:\nfamily: f\n---\n", "x.md, line 2: “name” is empty"),
        ("x.md", "---\nname: a\nfamily: f\n---\nhello\n", "x.md, line 5: text outside"),
        (
            "x.md",
            "---\nname: a\nfamily: f\n---\n## Thought 2\n",
            "x.md, line 5: expected “## Thought 1”",
        ),
        (
            "x.md",
            "---\nname: a\nfamily: f\n---\n## Thought 1\nA b c.\n",
            "x.md: has no “## Thought 2”",
        ),
        (
            "x.md",
            "---\nname: a\nfamily: f\n---\n## Thought 1\nA\n## Thought 2\n\n## Thought 3\nC\n",
            "x.md: “## Thought 2” is empty",
        ),
        ("x.md", "---\nname: a\nfamily: f\nrun: r\n---\n", "x.md: the front matter has no “step”"),
        (
            "x.md",
            "---\nname: a\nfamily: f\nrun: r\nstep: two\n---\n",
            "“step” must be a step number",
        ),
        (".md", SAMPLE, ".md: the file name gives the template no id"),
    ];
    for (file, text, expected) in cases {
        let err = parse(file, text).unwrap_err();
        assert!(err.starts_with(expected) || err.contains(expected), "{err}\nwanted: {expected}");
    }
}

#[test]
fn every_bundled_file_parses_and_the_nine_families_are_there() {
    for (name, text) in bundle::BUNDLED {
        parse(name, text).unwrap_or_else(|e| panic!("{e}"));
    }
    let all = bundled();
    assert_eq!(all.len(), bundle::BUNDLED.len());
    assert!(all.len() >= 10, "seed §5.C asks for 10+ scenarios");
    for family in [
        "general-success",
        "general-failure",
        "native-dropdown",
        "external-failure",
        "wait-step",
        "scrolling",
        "popup",
        "model-memory",
        "higher-reasoning",
    ] {
        assert!(all.iter().any(|t| t.family == family), "no {family} template");
    }
}

/// Sample words for a placeholder; an action placeholder gets a verb.
fn sample(name: &str) -> String {
    if name.contains("action") {
        "click".into()
    } else {
        format!("the sample {}", name.replace('-', " "))
    }
}

#[test]
fn filled_bundled_templates_pass_the_checklist() {
    for t in bundled() {
        let names = placeholders_of(&t);
        assert!(!names.is_empty(), "{} has no placeholders", t.id);
        let values: BTreeMap<String, String> =
            names.iter().map(|n| (n.clone(), sample(n))).collect();
        let filled = fill_thoughts(&t.thoughts, &values);
        assert!(unfilled(&filled).is_empty(), "{}", t.id);
        let step = Step { thoughts: filled, ..Step::default() };
        let is_final = t.family == "final-answer";
        let checks = checklist::check(&step, is_final);
        for c in &checks {
            let must = ["structure", "first-person", "state", "action-expectation", "ambiguous"];
            if must.contains(&c.id) || (is_final && c.id == "final-return") {
                assert!(c.ok, "{}: {} failed: {}", t.id, c.id, c.detail);
            }
        }
        // The templates practise what the patterns preach.
        let misses: Vec<_> = crate::patterns::detect(&step).into_iter().map(|m| m.id).collect();
        assert!(
            !misses.contains(&"voice") && !misses.contains(&"i-should"),
            "{}: {misses:?}",
            t.id
        );
        // And rendering gives the same template back.
        assert_eq!(parse(&format!("{}.md", t.id), &render(&t)).unwrap(), t);
    }
}

#[test]
fn placeholders_are_lowercase_names_not_tags() {
    let text = "Click <element> then <expected result> and <element> again; \
                <div> </a> <Element> <a href=\"x\"> <two  spaces> <x-y> < spaced> 1 < 2 > 0 <ok>";
    assert_eq!(placeholders(text), ["element", "expected result", "x-y", "ok"]);
    assert_eq!(placeholders("<<name>>"), ["name"]);
    assert_eq!(placeholders("<unclosed"), Vec::<String>::new());
    assert_eq!(placeholders("<é>"), ["é"]);
    assert!(placeholders(&format!("<{}>", "a".repeat(41))).is_empty());
}

#[test]
fn fill_replaces_known_values_and_keeps_the_rest() {
    let values: BTreeMap<String, String> = [
        ("element".to_string(), "'Go' button".to_string()),
        ("blank".to_string(), "  ".to_string()),
    ]
    .into();
    assert_eq!(
        fill("Click the <element>, see <result> and <blank> <element>.", &values),
        "Click the 'Go' button, see <result> and <blank> 'Go' button."
    );
    // A value holding a placeholder is not filled again.
    let values: BTreeMap<String, String> =
        [("x".to_string(), "<y>".to_string()), ("y".to_string(), "z".to_string())].into();
    assert_eq!(fill("<x> <y>", &values), "<y> z");
    let thoughts =
        Thoughts { thought1: "<x> <y>".into(), thought2: "<z> <x>".into(), thought3: "".into() };
    assert_eq!(unfilled(&thoughts), ["x", "y", "z"]);
}

#[test]
fn star_turns_a_step_into_a_template() {
    let mut step = Step { run_id: "Run 7/x".into(), index: 3, ..Step::default() };
    step.action.kind = "click".into();
    step.thoughts.thought1 = "I opened the page.".into();
    let t = star(&step, " Nice popup close ", "ann", "2026-01-01T00:00:00Z");
    assert_eq!(t.id, "starred-run-7-x-3");
    assert_eq!(t.name, "Nice popup close");
    assert_eq!(t.family, "starred");
    assert_eq!(t.action_type.as_deref(), Some("click"));
    assert_eq!(t.thoughts, step.thoughts);
    let from = t.starred_from.clone().unwrap();
    assert_eq!(
        (from.run_id.as_str(), from.step_index, from.starred_by.as_str()),
        ("Run 7/x", 3, "ann")
    );
    // Serialized for IndexedDB in camelCase, and back.
    let json = serde_json::to_value(&t).unwrap();
    assert_eq!(json["starred_from"]["stepIndex"], 3);
    assert_eq!(serde_json::from_value::<Template>(json).unwrap(), t);
    // Rendered to a file and read back, origin included.
    let mut full = t.clone();
    full.thoughts.thought2 = "# not a heading".into();
    full.thoughts.thought3 = "x".into();
    let back = parse("starred-run-7-x-3.md", &render(&full)).unwrap();
    assert_eq!(back.starred_from, full.starred_from);
    assert_eq!(back.thoughts.thought2, "# not a heading");
    step.action.kind = ActionKind::None;
    let t = star(&step, "", "ann", "now");
    assert_eq!(t.action_type, None);
    assert_eq!(t.name, "Step 3 of Run 7/x");
}

#[test]
fn suggest_puts_the_step_action_first_and_keeps_order() {
    let t = |id: &str, action: Option<&str>| Template {
        id: id.into(),
        name: id.into(),
        family: "f".into(),
        action_type: action.map(str::to_string),
        thoughts: Thoughts::default(),
        starred_from: None,
    };
    let all = [t("a", None), t("b", Some("click")), t("c", Some("type")), t("d", Some("Click"))];
    let ids = |v: Vec<&Template>| v.iter().map(|t| t.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(suggest(&all, &"click".into())), ["b", "d", "a", "c"]);
    assert_eq!(ids(suggest(&all, &"".into())), ["a", "b", "c", "d"]);
    assert_eq!(ids(suggest(&all, &"scroll".into())), ["a", "b", "c", "d"]);
    assert!(suggest(&[], &ActionKind::Click).is_empty());
}
