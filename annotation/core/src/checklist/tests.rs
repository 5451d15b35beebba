use super::*;
use crate::test_support::step;

fn good() -> Step {
    step(
        "I opened the shop's home page and the search bar is now focused.",
        "I can see the 'Search' field with my cursor in it, but no query is typed yet.",
        "I should type 'kettle' into the 'Search' field so that matching products appear.",
    )
}

fn by_id<'a>(checks: &'a [Check], id: &str) -> &'a Check {
    checks.iter().find(|c| c.id == id).unwrap()
}

/// The check `id` of `step`, which fails and points at `thought`.
fn failed_at(step: &Step, id: &str, thought: Thought) -> Check {
    let c = check(step, false).into_iter().find(|c| c.id == id).unwrap();
    assert!(!c.ok, "{id} passed");
    assert_eq!(c.thought, Some(thought), "{id}");
    c
}

#[test]
fn ids_come_in_the_documented_order() {
    let ids: Vec<&str> = check(&good(), false).iter().map(|c| c.id).collect();
    assert_eq!(
        ids,
        [
            "structure",
            "first-person",
            "state",
            "action-expectation",
            "final-return",
            "ambiguous",
            "visible-element",
            "exact-error"
        ]
    );
}

#[test]
fn a_well_written_step_passes_everything_that_applies() {
    let checks = check(&good(), false);
    for c in &checks {
        // "it" inside the thought is ambiguous; everything else passes.
        if c.id != "ambiguous" {
            assert!(c.ok, "{}: {}", c.id, c.detail);
        }
    }
    assert!(!by_id(&checks, "ambiguous").ok);
    assert!(!by_id(&checks, "final-return").applies);
    assert!(!by_id(&checks, "exact-error").applies);
    assert_eq!(passed(&checks), (5, 6));
}

#[test]
fn structure_names_short_and_empty_thoughts() {
    let s = failed_at(&step("I clicked it", "", "Go"), "structure", Thought::Two);
    assert_eq!(s.detail, "Thought 2 is empty. Thought 3 has only 1 word.");
}

#[test]
fn first_person_and_state() {
    let c = check(&step("The page changed a lot.", "Nothing here.", ""), false);
    assert!(!by_id(&c, "first-person").ok);
    assert!(!by_id(&c, "state").ok);
    let c = check(&step("I’m on the results page now.", "The page shows ten results.", ""), false);
    assert!(by_id(&c, "first-person").ok);
    assert!(by_id(&c, "state").ok);
    // "I" must be a word, not a letter inside one.
    let c = check(&step("Items in view changed.", "", ""), false);
    assert!(!by_id(&c, "first-person").ok);
}

#[test]
fn action_needs_a_verb_and_an_expected_result() {
    let verb_only = check(&step("", "", "I should click the 'Go' button."), false);
    let c = by_id(&verb_only, "action-expectation");
    assert!(!c.ok);
    assert!(c.detail.contains("not what should happen"), "{}", c.detail);
    let result_only = check(&step("", "", "The results should appear."), false);
    assert!(!by_id(&result_only, "action-expectation").ok);
    for ok in [
        "I should click the 'Go' button to see the results.",
        "Scrolling down will reveal the reviews.",
        "I'll press Enter so that the form is submitted.",
        "I should wait for the spinner, which should disappear.",
        "Typing the address should show suggestions.",
        "I should go to the cart and expect the total to update.",
    ] {
        let c = check(&step("", "", ok), false);
        assert!(by_id(&c, "action-expectation").ok, "{ok}");
    }
    assert_eq!(action_verb("typing"), Some("type"));
    assert_eq!(action_verb("tapped"), Some("tap"));
    assert_eq!(action_verb("scrolled"), Some("scroll"));
    assert_eq!(action_verb("presses"), Some("press"));
    assert_eq!(action_verb("cat"), None);
    assert_eq!(action_verb("s"), None);
}

#[test]
fn final_return_applies_only_to_the_last_step() {
    let s = step("I see the price.", "The price is shown.", "I should stop here.");
    assert!(!by_id(&check(&s, false), "final-return").applies);
    let f = check(&s, true);
    let c = by_id(&f, "final-return");
    assert!(c.applies && !c.ok);
    for ok in [
        "I should return the price, $20, as the answer.",
        "The answer is $20 so I will report it.",
        "I cannot continue because the site failed to load.",
    ] {
        let s = step("I see the price.", "", ok);
        assert!(by_id(&check(&s, true), "final-return").ok, "{ok}");
    }
}

#[test]
fn ambiguous_words_are_listed_but_quotes_are_skipped() {
    let s = step(
        "I clicked it.",
        "Something changed and the 'Do it now' button is gone.",
        "I should find the thing.",
    );
    let a = failed_at(&s, "ambiguous", Thought::One);
    assert_eq!(
        a.detail,
        "Name the element instead of “it” in thought 1, “Something” in thought 2, “thing” in thought 3."
    );
    // "items", "its own" words that merely contain "it" are fine; "It's" is not.
    let s = step("Items and edits.", "It's here.", "");
    assert_eq!(ambiguous_words(&s), vec![(Thought::Two, "It's".to_string())]);
}

#[test]
fn visible_elements_are_labels_or_ui_words() {
    let waited = step("I waited.", "Nothing changed yet.", "I should wait more.");
    failed_at(&waited, "visible-element", Thought::Two);
    let s = step("I see “Add to cart”.", "There are two links and a drop-down.", "");
    let c = check(&s, false);
    let v = by_id(&c, "visible-element");
    assert!(v.ok);
    assert_eq!(v.detail, "Refers to “Add to cart”, link, dropdown.");
    // Quotes with nothing in them are not labels.
    let s = step("I see '...'", "", "");
    assert!(!by_id(&check(&s, false), "visible-element").ok);
}

#[test]
fn exact_error_applies_to_failures_and_error_mentions() {
    let mut s = step("I clicked submit.", "The form shows an error.", "I should retry.");
    let c = check(&s, false);
    let e = by_id(&c, "exact-error");
    assert!(e.applies && !e.ok);
    assert_eq!(e.thought, Some(Thought::Two));
    s.thoughts.thought2 = "The form shows the error \"Invalid email address\".".into();
    let c = check(&s, false);
    let e = by_id(&c, "exact-error");
    assert!(e.ok);
    assert_eq!(e.detail, "The error is quoted: “Invalid email address”.");
    let mut quiet = step("I clicked.", "All good.", "Next.");
    assert!(!by_id(&check(&quiet, false), "exact-error").applies);
    quiet.outcome = "failed".into();
    assert!(by_id(&check(&quiet, false), "exact-error").applies);
}

#[test]
fn odd_input_never_panics() {
    let long = "word ".repeat(20_000);
    for t in ["", " ", "'", "\"", "“", "😀😀 it", "é'", "''''", &long] {
        let s = step(t, t, t);
        let c = check(&s, true);
        assert_eq!(c.len(), 8);
        let (ok, total) = passed(&c);
        assert!(ok <= total && total <= 8);
    }
    assert_eq!(passed(&[]), (0, 0));
}

#[test]
fn the_lexicon_is_sorted_for_binary_search() {
    for pair in LEXICON.windows(2) {
        assert!(pair[0].0 < pair[1].0, "{:?} before {:?}", pair[0].0, pair[1].0);
    }
    assert!(UI_WORDS.len() < 255);
    assert_eq!(lookup(b"button") >> 8 & 0xFF, 1);
    assert_eq!(plural_ui(b"links"), UI_WORDS.iter().position(|u| *u == "link"));
    assert_eq!(lookup(b"zzz"), 0);
}
