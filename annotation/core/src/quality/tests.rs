use super::*;
use crate::spelling::Speller;
use crate::test_support::step;

fn good() -> Step {
    step(
        "I opened the shop's home page and the search bar is now focused.",
        "I can see the 'Search' field, but no query is typed yet. I need to search for kettles.",
        "I should type 'kettle' into the 'Search' field so that matching products appear.",
    )
}

fn part(q: &StepQuality, label: &str) -> u8 {
    q.parts.iter().find(|p| p.label == label).unwrap().score
}

#[test]
fn a_good_step_scores_high_and_an_empty_one_zero() {
    let q = step_quality(&good(), false, 0);
    assert_eq!(
        q.parts.iter().map(|p| p.label).collect::<Vec<_>>(),
        ["Structure", "Visible elements", "Readability", "Language"]
    );
    assert_eq!(q.parts.iter().map(|p| u32::from(p.weight)).sum::<u32>(), 100);
    assert_eq!(part(&q, "Structure"), 100);
    assert_eq!(part(&q, "Visible elements"), 100);
    assert_eq!(part(&q, "Readability"), 100);
    assert_eq!(part(&q, "Language"), 100);
    assert_eq!(q.score, 100);
    let empty = step_quality(&Step::default(), true, 0);
    assert_eq!(empty.score, 0);
    assert!(empty.parts.iter().all(|p| p.score == 0), "{empty:?}");
}

#[test]
fn text_issues_lower_the_language_part() {
    let s = good();
    let clean = step_quality(&s, false, 0);
    let some = step_quality(&s, false, 2);
    let many = step_quality(&s, false, 1000);
    assert!(part(&some, "Language") < 100 && part(&some, "Language") > 0);
    assert_eq!(part(&many, "Language"), 0);
    assert!(clean.score > some.score && some.score > many.score);
}

#[test]
fn readability_punishes_run_on_sentences_and_long_words() {
    let long = format!("I see {}.", "the page ".repeat(40));
    let q = step_quality(&step(&long, &long, &long), false, 0);
    assert!(part(&q, "Readability") < 50, "{q:?}");
    let wordy = "Internationalization considerations notwithstanding, extraordinarily.";
    let q = step_quality(&step(wordy, wordy, wordy), false, 0);
    assert!(part(&q, "Readability") < 50, "{q:?}");
    let choppy = "Go. Go. Go. Go.";
    let q = step_quality(&step(choppy, choppy, choppy), false, 0);
    assert!(part(&q, "Readability") < 60, "{q:?}");
}

#[test]
fn visible_elements_are_graded() {
    let none = step_quality(&step("I waited.", "Nothing happened yet.", "I wait."), false, 0);
    assert_eq!(part(&none, "Visible elements"), 0);
    let one = step_quality(&step("I waited.", "The button is grey.", "I wait."), false, 0);
    assert_eq!(part(&one, "Visible elements"), 75);
}

/// A speller that knows every word of `texts` and nothing else.
fn speller_knowing(texts: &[&str]) -> Speller {
    let mut speller = Speller::new("SET UTF-8\n", "1\nI\n").unwrap();
    let words: Vec<&str> =
        texts.iter().flat_map(|t| crate::lint::words(t)).map(|w| w.text).collect();
    speller.add_words(&words);
    speller
}

fn thoughts(step: &Step) -> [&str; 3] {
    [&step.thoughts.thought1, &step.thoughts.thought2, &step.thoughts.thought3]
}

fn misspelled_step() -> Step {
    step(
        "I opened the shop's home page and the serch bar is now focused.",
        "I can see the 'Search' feild, but no query is typed yet. I need to search for kettles.",
        "I should tipe 'kettle' into the 'Search' field so that matching products appear.",
    )
}

#[test]
fn a_run_is_scored_with_every_steps_misspellings() {
    let speller = speller_knowing(&thoughts(&good()));
    let (clean, typos) = (good(), misspelled_step());
    assert_eq!(misspelled(&clean, &speller), 0);
    assert_eq!(misspelled(&typos, &speller), 3, "one in each thought");
    let both = [clean.clone(), typos.clone()];
    let spelled_right = score(&[clean.clone(), clean.clone()], &speller, &[]);
    assert_eq!(spelled_right, run_quality_counted(&[clean.clone(), clean], &[0, 0]));
    let with_typos = score(&both, &speller, &[]);
    assert_eq!(with_typos, run_quality_counted(&both, &[0, 3]));
    assert!(with_typos < spelled_right, "{with_typos} < {spelled_right}");
    // Whatever the run's position in a list or its header says, the same steps score the same.
    assert_eq!(score(&both, &speller, &[]), with_typos);
    assert_eq!(score(&[], &speller, &[]), 0);
}

#[test]
fn grammar_issues_count_on_the_step_they_were_found_in() {
    let speller = speller_knowing(&thoughts(&good()));
    let mut steps = [good(), misspelled_step()];
    steps[1].index = 1;
    let spelling_only = score(&steps, &speller, &[]);
    let with_grammar = score(&steps, &speller, &[(0, 2), (1, 1), (7, 40)]);
    assert_eq!(with_grammar, run_quality_counted(&steps, &[2, 4]), "step 7 is not in the run");
    assert!(with_grammar < spelling_only);
}

#[test]
fn a_step_scores_alike_when_its_thoughts_and_outcome_are_the_same() {
    let a = good();
    let mut b = a.clone();
    b.verified = true;
    b.server_version = Some(4);
    b.last_edited_by = "someone".into();
    assert!(scores_alike(&a, &b), "what the score does not read");
    b.thoughts.thought3.push('!');
    assert!(!scores_alike(&a, &b));
    let mut c = a.clone();
    c.outcome = "failed".into();
    assert!(!scores_alike(&a, &c), "a failed step is judged on its error label");
}

#[test]
fn run_quality_is_the_mean_with_the_last_step_final() {
    let run_quality = |steps: &[Step]| run_quality_counted(steps, &[]);
    assert_eq!(run_quality(&[]), 0);
    let a = good();
    let single = run_quality(std::slice::from_ref(&a));
    // Alone, it is the final step, and it does not return: not full marks.
    assert_eq!(single, step_quality(&a, true, 0).score);
    assert!(single < 100);
    let runs = [a.clone(), Step::default()];
    // The empty second step scores 0.
    let mean = f64::from(step_quality(&a, false, 0).score) / 2.0;
    assert_eq!(run_quality(&runs), mean.round() as u8);
}

#[test]
fn a_misspelled_step_lowers_the_run_score() {
    let steps = [good(), good()];
    let clean = run_quality_counted(&steps, &[0, 0]);
    assert_eq!(clean, run_quality_counted(&steps, &[]));
    let misspelled = run_quality_counted(&steps, &[0, 2]);
    assert!(misspelled < clean, "{misspelled} < {clean}");
    assert_eq!(run_quality_counted(&steps, &[0]), clean, "a missing count is no issue");
}

/// Prints the time only: timed checks belong in `cargo xtask bench`, not in tests.
#[test]
fn run_quality_scores_many_runs() {
    let steps: Vec<Step> = (0..20).map(|_| good()).collect();
    let started = std::time::Instant::now();
    let mut total = 0u64;
    for _ in 0..1000 {
        total += u64::from(run_quality_counted(&steps, &[]));
    }
    let took = started.elapsed();
    eprintln!("run_quality over 1,000 runs of 20 steps: {took:?}");
    assert_eq!(total, 1000 * u64::from(run_quality_counted(&steps, &[])));
}

#[test]
fn annotator_stats_group_and_sort() {
    let run = |annotator: Option<&str>, status| Run {
        id: "r".into(),
        annotator: annotator.map(str::to_string),
        status,
        ..Run::default()
    };
    let runs = [
        run(Some("zoe"), ReviewStatus::Approved),
        run(None, ReviewStatus::Draft),
        run(Some("amy"), ReviewStatus::InReview),
        run(Some("zoe"), ReviewStatus::Rejected),
        run(Some("zoe"), ReviewStatus::InReview),
    ];
    let input: Vec<(&Run, u8, usize, usize)> = vec![
        (&runs[0], 90, 10, 10),
        (&runs[1], 0, 3, 0),
        (&runs[2], 55, 4, 2),
        (&runs[3], 41, 6, 6),
        (&runs[4], 50, 2, 1),
    ];
    let stats = annotator_stats(&input);
    let names: Vec<&str> = stats.iter().map(|s| s.annotator.as_str()).collect();
    assert_eq!(names, ["amy", "unassigned", "zoe"]);
    let zoe = &stats[2];
    assert_eq!(
        *zoe,
        AnnotatorStats {
            annotator: "zoe".into(),
            runs: 3,
            steps: 18,
            steps_done: 17,
            average_quality: 60,
            approved: 1,
            rejected: 1,
            in_review: 1,
        }
    );
    assert_eq!(stats[0].in_review, 1);
    assert!(annotator_stats(&[]).is_empty());
}

#[test]
fn odd_input_never_panics() {
    let long = "é😀 ".repeat(10_000);
    for t in ["", ".", "...", "?!", "😀", "a.b.c", &long] {
        let q = step_quality(&step(t, t, t), true, usize::MAX);
        assert!(q.score <= 100);
    }
}

#[test]
fn the_navigators_notes_count_their_misspellings_too() {
    let speller = speller_knowing(&thoughts(&good()));
    let mut noted = good();
    noted.navigator = Some(run_records::NavigatorNotes {
        evaluation_previous_goal: String::new(),
        memory: "the serch bar".into(),
        next_goal: String::new(),
    });
    assert_eq!(misspelled(&noted, &speller), 1, "serch, in the memory");
    assert!(!scores_alike(&noted, &good()), "a note edit changes the score");
}
