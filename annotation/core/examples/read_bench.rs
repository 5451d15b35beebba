//! `cargo xtask bench read`: how fast a large run's steps are read from JSON text with the
//! readers `tagged-de` derives, against the floor of parsing the same text into a
//! `serde_json::Value` (which every read through a `Value` does first). Native, release.

use std::time::Instant;

use annotation_core::record::{ActionKind, Step, StepAction, Thoughts};
use serde_json::{Value, json};

/// Steps shaped as captured ones: three thoughts, an action, a few carried-out actions and an
/// open issue, about 600 bytes of JSON each.
fn steps(count: u32) -> Vec<Step> {
    (0..count)
        .map(|index| Step {
            run_id: "bench-run".into(),
            index,
            url: format!("https://shop.example/products/{index}?page=2"),
            title: format!("Kettles · page {index}"),
            action: StepAction {
                kind: ActionKind::Click,
                target: format!("the Add to cart button of kettle {index}"),
                value: None,
            },
            actions: vec![json!({"click": {"id": index, "xpath": "/html/body/div[2]/button"}})],
            thoughts: Thoughts {
                thought1: format!("I am on page {index} of the kettle list, sorted by price."),
                thought2: "I see a steel kettle at 24.99 € with an Add to cart button.".into(),
                thought3: "I should add it to the cart, then check the total.".into(),
            },
            extended_thoughts: vec!["The cheapest kettle is first.".into()],
            issues: vec![json!({"kind": "wrong-thought", "severity": "minor", "open": true})],
            last_edited_by: "ann".into(),
            last_edited_at: "2026-11-27T10:00:00.000Z".into(),
            outcome: "ok".into(),
            trace_ids: vec![format!("t{index}")],
            duration_ms: 812.5,
            ..Step::default()
        })
        .collect()
}

/// The best of `rounds` timings of `read`, in milliseconds.
fn best_ms(rounds: u32, mut read: impl FnMut()) -> f64 {
    (0..rounds)
        .map(|_| {
            let started = Instant::now();
            read();
            started.elapsed().as_secs_f64() * 1000.0
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let count = 5000;
    let written = steps(count);
    let text = serde_json::to_string(&written).expect("steps serialize");
    let floor = best_ms(5, || {
        let value: Value = serde_json::from_str(&text).expect("valid JSON");
        std::hint::black_box(value);
    });
    let derived = best_ms(5, || {
        let read: Vec<Step> = lean::read_json(&text).expect("the steps read back");
        std::hint::black_box(read);
    });
    let read: Vec<Step> = lean::read_json(&text).expect("the steps read back");
    assert_eq!(read, written, "the steps read back as written");
    println!("bench read: {count} steps, {:.1} MB of JSON (best of 5)", text.len() as f64 / 1e6);
    println!("  parse into a Value (floor)   {floor:>7.1} ms");
    println!(
        "  read as Vec<Step> (derived)  {derived:>7.1} ms   {:.2}× the floor",
        derived / floor
    );
}
