use super::*;

fn script(a: &str, b: &str) -> Vec<(&'static str, String)> {
    let (a, b) = (tokens(a), tokens(b));
    edit_script(&a, &b).into_iter().map(|(e, t)| (e.name(), t.to_owned())).collect()
}

#[test]
fn tokens_are_words_space_runs_and_single_marks_and_join_back() {
    let text = "Click «Buy»,  then  wait_for it… 42x";
    let parts = tokens(text);
    assert_eq!(
        parts,
        [
            "Click", " ", "«", "Buy", "»", ",", "  ", "then", "  ", "wait_for", " ", "it", "…",
            " ", "42x"
        ]
    );
    assert_eq!(parts.concat(), text);
    assert!(tokens("").is_empty());
}

#[test]
fn the_script_keeps_the_common_words_and_removes_before_it_adds() {
    assert_eq!(
        script("the red kettle", "the blue kettle"),
        [
            ("same", "the".to_owned()),
            ("same", " ".into()),
            ("removed", "red".into()),
            ("added", "blue".into()),
            ("same", " ".into()),
            ("same", "kettle".into()),
        ]
    );
    assert_eq!(script("", "a"), [("added", "a".to_owned())]);
    assert_eq!(script("a", ""), [("removed", "a".to_owned())]);
    assert!(script("", "").is_empty());
}

#[test]
fn the_script_is_a_longest_common_subsequence_and_rebuilds_both_sides() {
    let (old, new) = ("a b c d e f g", "a x c d y f g z");
    let (a, b) = (tokens(old), tokens(new));
    let edits = edit_script(&a, &b);
    let side =
        |skip: Edit| edits.iter().filter(|(e, _)| *e != skip).map(|(_, t)| *t).collect::<String>();
    assert_eq!((side(Edit::Added), side(Edit::Removed)), (old.to_owned(), new.to_owned()));
    // a, c, d, f, g and the six spaces between them: 11 kept, nothing shorter.
    assert_eq!(edits.iter().filter(|(e, _)| *e == Edit::Same).count(), 11);
}

#[test]
fn past_the_table_limit_the_middle_is_one_removal_and_one_addition() {
    let old: Vec<String> = (0..2100).map(|n| format!("old{n}")).collect();
    let new: Vec<String> = (0..2100).map(|n| format!("new{n}")).collect();
    let (a, b): (Vec<&str>, Vec<&str>) =
        (old.iter().map(String::as_str).collect(), new.iter().map(String::as_str).collect());
    let edits = edit_script(&a, &b);
    assert_eq!(edits.len(), 4200);
    assert!(edits[..2100].iter().all(|(e, _)| *e == Edit::Removed));
    assert!(edits[2100..].iter().all(|(e, _)| *e == Edit::Added));
}
