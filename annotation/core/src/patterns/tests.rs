use super::*;
use crate::test_support::step;

fn ids(step: &Step) -> Vec<(&'static str, Thought)> {
    detect(step).into_iter().map(|m| (m.id, m.thought)).collect()
}

fn miss(step: &Step, id: &str, thought: Thought) -> Miss {
    detect(step)
        .into_iter()
        .find(|m| m.id == id && m.thought == thought)
        .unwrap_or_else(|| panic!("no {id} miss in {thought:?}"))
}

/// Checks the miss's fix, then applies it as [`fixed`] does.
fn fixes_to(s: Step, id: &str, thought: Thought, fix: &str) -> Step {
    assert_eq!(miss(&s, id, thought).fix, fix, "{id} in {:?}", s.thoughts.get(thought));
    fixed(s, id, thought)
}

/// Applies the miss and checks that it is gone and stays gone.
fn fixed(mut s: Step, id: &str, thought: Thought) -> Step {
    let m = miss(&s, id, thought);
    apply(&mut s, &m);
    assert_eq!(s.thoughts.get(thought), m.fix);
    assert!(!ids(&s).contains(&(id, thought)), "{id} still reported after its fix: {}", m.fix);
    let again = s.clone();
    apply(&mut s, &m);
    assert_eq!(s, again, "applying {id} twice changed the text");
    s
}

#[test]
fn a_complete_step_has_no_misses() {
    let s = step(
        "I opened the search page.",
        "I can see the 'Search' field, but it is empty. I need to search for kettles.",
        "I should type 'kettle' into the 'Search' field so that results appear.",
    );
    assert_eq!(ids(&s), vec![]);
}

#[test]
fn i_need_takes_its_goal_from_thought_3() {
    let s = step(
        "",
        "I can see the form, but the email is missing",
        "I should click the 'Email' field so that I can type.",
    );
    fixes_to(
        s,
        "i-need",
        Thought::Two,
        "I can see the form, but the email is missing. I need to click the 'Email' field.",
    );

    let s = step("", "", "Click 'Go', then wait.");
    assert_eq!(miss(&s, "i-need", Thought::Two).fix, "I need to click 'Go'.");
    let s = step("", "I can see a page, but nothing else!", "Hmm.");
    fixes_to(s, "i-need", Thought::Two, "I can see a page, but nothing else! I need to <goal>.");
}

#[test]
fn but_adds_a_contrast() {
    let s = step("", "I can see the cart. I need to check out.", "");
    fixes_to(
        s,
        "but",
        Thought::Two,
        "I can see the cart. I need to check out, but <what is preventing progress>.",
    );
    let s = step("", "", "");
    assert_eq!(
        miss(&s, "but", Thought::Two).fix,
        "<current state>, but <what is preventing progress>."
    );
    // "however" is a contrast too.
    let s = step("", "I can see it; however, I need to wait.", "");
    assert!(!ids(&s).contains(&("but", Thought::Two)));
}

#[test]
fn i_can_see_uses_a_plain_target_or_a_placeholder() {
    let mut s = step("", "The results are loaded, but I need to sort them.", "");
    assert_eq!(
        miss(&s, "i-can-see", Thought::Two).fix,
        "I can see <visible element>. The results are loaded, but I need to sort them."
    );
    s.action.target = "Sort by price dropdown".into();
    assert_eq!(
        miss(&s, "i-can-see", Thought::Two).fix,
        "I can see the Sort by price dropdown. The results are loaded, but I need to sort them."
    );
    s.action.target = "#sort > option[2]".into();
    assert!(miss(&s, "i-can-see", Thought::Two).fix.starts_with("I can see <visible element>."));
    fixed(s, "i-can-see", Thought::Two);
}

#[test]
fn i_should_rewrites_imperatives() {
    let cases = [
        ("Click the 'Go' button to see results.", "I should click the 'Go' button to see results."),
        (
            "Next, type 'kettle' so that it searches.",
            "Next, I should type 'kettle' so that it searches.",
        ),
        ("The menu is next.", "I should <action>. The menu is next."),
        ("", "I should <action> so that <expected result>."),
        ("Scroll down.", "I should scroll down."),
    ];
    for (before, after) in cases {
        let s = step("", "", before);
        fixes_to(s, "i-should", Thought::Three, after);
    }
    for fine in ["I will click 'Go'.", "I'll click.", "I’m going to wait.", "I should wait."] {
        assert!(!ids(&step("", "", fine)).contains(&("i-should", Thought::Three)), "{fine}");
    }
    // "We should" is the voice miss's, not this one's.
    let s = step("", "", "We should click 'Go'.");
    assert_eq!(
        ids(&s),
        vec![
            ("i-can-see", Thought::Two),
            ("i-need", Thought::Two),
            ("but", Thought::Two),
            ("voice", Thought::Three)
        ]
    );
}

#[test]
fn voice_rewrites_other_subjects_to_i() {
    let cases = [
        ("We are on the home page.", "I am on the home page."),
        ("The agent clicks the 'Go' button.", "I click the 'Go' button."),
        ("The agent's cart is empty and we've waited.", "My cart is empty and I've waited."),
        ("You should press Enter.", "I should press Enter."),
        ("It clicked the link, then we were done.", "I clicked the link, then I was done."),
        ("Our search worked for us in the US.", "My search worked for me in the US."),
        ("the model has typed the query", "I have typed the query"),
    ];
    for (before, after) in cases {
        let s = step(before, "", "");
        fixes_to(s, "voice", Thought::One, after);
    }
    let m = miss(&step("We see that we are stuck.", "", ""), "voice", Thought::One);
    assert_eq!(m.message, "Thought 1 speaks as “We”, “we” instead of “I”.");
    // Quoted labels and plain "you"/"it" stay.
    for fine in [
        "I see the 'Are you sure we should delete?' dialog.",
        "The page asks you to log in.",
        "It is loading.",
        "The agency page.",
    ] {
        assert!(!ids(&step(fine, "", "")).contains(&("voice", Thought::One)), "{fine}");
    }
}

#[test]
fn fixing_every_miss_in_turn_ends_with_none() {
    let mut s = step("We clicked.", "The page loaded.", "Click 'Next'.");
    for _ in 0..10 {
        let Some(m) = detect(&s).into_iter().next() else { break };
        apply(&mut s, &m);
    }
    assert_eq!(ids(&s), vec![]);
    assert_eq!(s.thoughts.thought1, "I clicked.");
    assert_eq!(
        s.thoughts.thought2,
        "I can see <visible element>. The page loaded. I need to click 'Next', but <what is preventing progress>."
    );
    assert_eq!(s.thoughts.thought3, "I should click 'Next'.");
}

#[test]
fn apply_recomputes_a_stale_miss_and_ignores_a_gone_one() {
    let mut s = step("", "The page loaded.", "");
    let all = detect(&s);
    // Apply all three thought-2 misses from one detection: none undoes another.
    for m in &all {
        apply(&mut s, m);
    }
    let t2 = s.thoughts.thought2.clone();
    assert!(t2.contains("I can see") && t2.contains("I need") && t2.contains(", but"), "{t2}");
    let before = s.clone();
    for m in &all {
        apply(&mut s, m);
    }
    assert_eq!(s, before);
}

#[test]
fn odd_input_never_panics() {
    let long = "we ".repeat(10_000);
    for t in ["", "'", "😀 we 😀", "ÉCRIRE we", "we", "the", "the agent", "it", &long] {
        let mut s = step(t, t, t);
        for m in detect(&s) {
            apply(&mut s, &m);
        }
    }
}
