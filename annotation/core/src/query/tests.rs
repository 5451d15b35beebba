use std::time::Instant;

use super::*;
use crate::record::{StepAction, Thoughts};

fn run(id: &str, created: &str, status: ReviewStatus, quality: Option<u8>) -> Run {
    Run {
        id: id.into(),
        task_id: format!("task-{id}"),
        task_prompt: format!("Find a kettle for {id}"),
        status,
        created_at: created.into(),
        quality,
        ..Run::default()
    }
}

fn step(index: u32, kind: &str, thought: &str) -> Step {
    Step {
        run_id: "x".into(),
        index,
        action: StepAction {
            kind: kind.into(),
            target: "Search box".into(),
            value: Some("Red Kettle".into()),
        },
        thoughts: Thoughts {
            thought1: thought.into(),
            thought2: "I see the page.".into(),
            thought3: String::new(),
        },
        ..Step::default()
    }
}

fn sample() -> Vec<RunSummary> {
    let mut a = run("a", "2026-11-01T09:00:00Z", ReviewStatus::Approved, Some(85));
    a.tags = vec!["shop".into(), "e-commerce".into()];
    a.annotator = Some("Ann".into());
    a.collections = vec!["batch 1".into()];
    let mut a_steps =
        vec![step(0, "click", "The NATIVE dropdown is open."), step(1, "select", "Chose size.")];
    a_steps[0].verified = true;
    a_steps[1].issues = vec![serde_json::json!({"type": "logic"})];
    let mut b = run("b", "2026-11-05T09:00:00Z", ReviewStatus::Draft, None);
    b.tags = vec!["saas".into()];
    b.annotator = Some("bob".into());
    b.final_answer = Some("The plan costs 20 dollars".into());
    let mut c = run("c", "2026-10-20T23:59:59Z", ReviewStatus::Approved, Some(60));
    c.driven_by = Some("Claude Desktop".into());
    vec![
        summarize(&a, &a_steps),
        summarize(&b, &[step(0, "type", "I typed the query.")]),
        summarize(&c, &[step(0, "navigate", "Opened the site.")]),
    ]
}

fn ids(summaries: &[RunSummary], picked: Vec<usize>) -> Vec<&str> {
    picked.into_iter().map(|i| summaries[i].run_id.as_str()).collect()
}

#[test]
fn summaries_count_steps_and_gather_text() {
    let s = &sample()[0];
    assert_eq!((s.steps, s.done, s.flagged), (2, 1, 1));
    assert_eq!(s.action_types, ["click", "select"]);
    assert!(s.search_text.contains("native dropdown"));
    assert!(s.search_text.contains("red kettle"), "action values are searchable");
    assert!(s.search_text.contains("find a kettle for a"));
    assert!(s.search_text.contains("e-commerce"));
    assert_eq!(s.search_text, s.search_text.to_lowercase());
}

#[test]
fn terms_split_words_and_keep_phrases() {
    assert_eq!(terms("  Kettle  \"native Dropdown\" red "), ["kettle", "native dropdown", "red"]);
    assert_eq!(terms("\"unclosed phrase"), ["unclosed phrase"]);
    assert_eq!(terms("\"\" a"), ["a"]);
    assert!(terms("   ").is_empty());
}

#[test]
fn text_search_needs_every_term() {
    let all = sample();
    let find = |text: &str| {
        ids(&all, select(&all, &Filter { text: text.into(), ..Filter::default() }, Sort::Newest))
    };
    assert_eq!(find("kettle"), ["b", "a", "c"]);
    assert_eq!(find("\"native dropdown\""), ["a"]);
    assert_eq!(find("dropdown native"), ["a"]);
    assert!(find("\"dropdown native\"").is_empty());
    assert_eq!(find("20 DOLLARS"), ["b"]);
    // A run an MCP client drove is found by the client's name.
    assert_eq!(find("\"claude desktop\""), ["c"]);
    assert_eq!(all[2].driven_by.as_deref(), Some("Claude Desktop"));
    assert!(find("kettle zebra").is_empty());
    assert_eq!(find(""), ["b", "a", "c"]);
}

#[test]
fn runs_are_filtered_by_the_mcp_client_that_drove_them() {
    let all = sample();
    let pick = |driven: &str| {
        let filter = Filter { driven_by: Some(driven.into()), ..Filter::default() };
        ids(&all, select(&all, &filter, Sort::Newest))
    };
    assert_eq!(pick("Claude Desktop"), ["c"]);
    assert_eq!(pick("claude desktop"), ["c"], "the client's name in any case");
    assert_eq!(pick(NOT_DRIVEN), ["b", "a"], "runs started in the side panel");
    assert!(pick("Cursor").is_empty());
    assert_eq!(pick("  "), ["b", "a", "c"], "a blank choice filters nothing");
    assert_eq!(facets(&all).drivers, ["Claude Desktop"]);
    let described =
        |driven: &str| describe(&Filter { driven_by: Some(driven.into()), ..Filter::default() });
    assert_eq!(described("Claude Desktop"), "driven by Claude Desktop");
    assert_eq!(described(NOT_DRIVEN), "not driven by an MCP client");
}

#[test]
fn filters_combine() {
    let all = sample();
    let pick = |f: Filter| ids(&all, select(&all, &f, Sort::Newest));
    assert_eq!(
        pick(Filter { statuses: vec![ReviewStatus::Approved], ..Filter::default() }),
        ["a", "c"]
    );
    assert_eq!(pick(Filter { min_quality: Some(80), ..Filter::default() }), ["a"]);
    assert_eq!(
        pick(Filter { max_quality: Some(80), ..Filter::default() }),
        ["c"],
        "unscored runs match no range"
    );
    assert_eq!(
        pick(Filter {
            from: Some("2026-10-20".into()),
            to: Some("2026-11-01".into()),
            ..Filter::default()
        }),
        ["a", "c"]
    );
    assert_eq!(pick(Filter { from: Some("2026-11-02".into()), ..Filter::default() }), ["b"]);
    assert_eq!(
        pick(Filter { to: Some("2026-10-20".into()), ..Filter::default() }),
        ["c"],
        "the last day is included"
    );
    assert_eq!(pick(Filter { annotator: Some("ann".into()), ..Filter::default() }), ["a"]);
    assert_eq!(
        pick(Filter { tags: vec!["shop".into(), "e-commerce".into()], ..Filter::default() }),
        ["a"]
    );
    assert!(
        pick(Filter { tags: vec!["shop".into(), "saas".into()], ..Filter::default() }).is_empty()
    );
    assert_eq!(pick(Filter { action_type: Some("type".into()), ..Filter::default() }), ["b"]);
    assert_eq!(pick(Filter { collection: Some("batch 1".into()), ..Filter::default() }), ["a"]);
    let curator = Filter {
        statuses: vec![ReviewStatus::Approved],
        min_quality: Some(80),
        tags: vec!["shop".into()],
        ..Filter::default()
    };
    assert_eq!(pick(curator.clone()), ["a"]);
    assert!(matches(&all[0], &curator));
    assert!(!matches(&all[2], &curator));
}

#[test]
fn a_quality_bound_passes_scored_runs_only_and_counts_the_unscored_it_holds_back() {
    let all = sample();
    let pick = |f: &Filter| ids(&all, select(&all, f, Sort::Newest));
    let at_least = |min| Filter { min_quality: Some(min), ..Filter::default() };
    // "b" has no score: not even "≥ 0" takes it, and the list says so.
    assert_eq!(pick(&at_least(0)), ["a", "c"]);
    assert_eq!(unscored_hidden(&all, &at_least(0)), 1);
    assert_eq!(unscored_hidden(&all, &Filter { max_quality: Some(100), ..Filter::default() }), 1);
    // Without a bound nothing is hidden for want of a score.
    assert_eq!(pick(&Filter::default()), ["b", "a", "c"]);
    assert_eq!(unscored_hidden(&all, &Filter::default()), 0);
    // Only runs the other conditions let through are counted.
    let approved = Filter { statuses: vec![ReviewStatus::Approved], ..at_least(0) };
    assert_eq!(unscored_hidden(&all, &approved), 0);
    let saas = Filter { tags: vec!["saas".into()], ..at_least(90) };
    assert_eq!((pick(&saas).len(), unscored_hidden(&all, &saas)), (0, 1));
}

#[test]
fn sorts() {
    let all = sample();
    let order = |sort| ids(&all, select(&all, &Filter::default(), sort));
    assert_eq!(order(Sort::Newest), ["b", "a", "c"]);
    assert_eq!(order(Sort::Oldest), ["c", "a", "b"]);
    assert_eq!(order(Sort::QualityHigh), ["a", "c", "b"]);
    assert_eq!(order(Sort::QualityLow), ["c", "a", "b"]);
    assert_eq!(order(Sort::Status), ["b", "a", "c"]);
}

#[test]
fn facets_list_what_there_is() {
    let f = facets(&sample());
    assert_eq!(f.annotators, ["Ann", "bob"]);
    assert_eq!(f.tags, ["e-commerce", "saas", "shop"]);
    assert_eq!(f.collections, ["batch 1"]);
    assert_eq!(f.action_types, ["click", "navigate", "select", "type"]);
    assert_eq!(f.statuses[0], (ReviewStatus::Draft, 1));
    assert_eq!(f.statuses[2], (ReviewStatus::Approved, 2));
    assert_eq!(f.total, 3);
}

#[test]
fn describe_reads_as_a_line() {
    assert_eq!(describe(&Filter::default()), "all runs");
    let f = Filter {
        statuses: vec![ReviewStatus::Approved],
        min_quality: Some(80),
        tags: vec!["shop".into()],
        ..Filter::default()
    };
    assert_eq!(describe(&f), "approved · quality ≥ 80 · tag shop");
    let f = Filter {
        text: "kettle \"red one\"".into(),
        from: Some("2026-01-01".into()),
        to: Some("2026-02-01".into()),
        annotator: Some("ann".into()),
        min_quality: Some(50),
        max_quality: Some(90),
        action_type: Some("click".into()),
        collection: Some("c".into()),
        statuses: vec![ReviewStatus::Approved, ReviewStatus::InReview],
        ..Filter::default()
    };
    assert_eq!(
        describe(&f),
        "text “kettle” “red one” · approved or in-review · created 2026-01-01 to 2026-02-01 · annotator ann · quality 50–90 · action click · collection c"
    );
}

#[test]
fn filters_round_trip_as_json() {
    let f = Filter {
        min_quality: Some(80),
        statuses: vec![ReviewStatus::InReview],
        ..Filter::default()
    };
    let json = serde_json::to_string(&f).unwrap();
    assert!(json.contains("\"minQuality\":80") && json.contains("in-review"), "{json}");
    assert_eq!(serde_json::from_str::<Filter>(&json).unwrap(), f);
    assert_eq!(serde_json::from_str::<Filter>("{}").unwrap(), Filter::default());
}

#[test]
fn a_thousand_runs_filter_quickly() {
    let thought =
        "I can see the product listing with a native dropdown for sizes and a search box. "
            .repeat(4);
    let started = Instant::now();
    let summaries: Vec<RunSummary> = (0..1000)
        .map(|i| {
            let mut r = run(
                &format!("run-{i}"),
                &format!("2026-11-{:02}T10:00:00Z", i % 28 + 1),
                ReviewStatus::ALL[i % 5],
                Some((i % 101) as u8),
            );
            r.tags = vec![format!("tag{}", i % 7)];
            let steps: Vec<Step> =
                (0..20).map(|j| step(j, "click", &format!("{thought} step {j} of {i}"))).collect();
            summarize(&r, &steps)
        })
        .collect();
    eprintln!("summarized 1,000 runs × 20 steps in {:?}", started.elapsed());
    let started = Instant::now();
    let filter = Filter {
        text: "dropdown \"step 7 of 96\"".into(),
        statuses: vec![ReviewStatus::InReview],
        ..Filter::default()
    };
    let picked = select(&summaries, &filter, Sort::QualityHigh);
    eprintln!("filtered 1,000 runs in {:?}", started.elapsed());
    assert!(picked.iter().all(|&i| summaries[i].status == ReviewStatus::InReview));
    assert!(picked.iter().any(|&i| summaries[i].run_id == "run-96"));
}
