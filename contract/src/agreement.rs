//! How far annotators who annotated the same run independently agree (overlap, issue 29):
//! the sync server computes it for reviewers and for its per-annotator figures, and the
//! annotation page may compute it again on what it holds; both call these functions.
//!
//! - A thought's agreement between two annotators is the token F1 of their texts over
//!   [`tokens`]: lowercased, split on anything that is not a letter or a digit. Two empty
//!   texts agree fully (1); an empty and a non-empty one not at all (0).
//! - A step's action agreement is whether every annotator's action is the same JSON value.
//! - With more than two annotators each figure is the mean over every pair.
//! - A step's score is the mean of its action agreement (1 or 0) and its three thoughts'
//!   scores; a run's is the mean of its steps'.

use std::collections::HashMap;

use serde_json::Value;

/// The normalised tokens of a text: lowercased, split on every character that is not
/// alphanumeric (so punctuation and spacing never count).
pub fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(text_case::lowercase)
        .collect()
}

/// Token F1 of two texts: the harmonic mean of precision and recall of `b`'s tokens
/// against `a`'s, counting repeated tokens as often as they appear in both.
pub fn token_f1(a: &str, b: &str) -> f64 {
    let (a, b) = (tokens(a), tokens(b));
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for token in &a {
        *counts.entry(token).or_default() += 1;
    }
    let mut common = 0usize;
    for token in &b {
        if let Some(n) = counts.get_mut(token.as_str())
            && *n > 0
        {
            *n -= 1;
            common += 1;
        }
    }
    if common == 0 {
        return 0.0;
    }
    let precision = common as f64 / b.len() as f64;
    let recall = common as f64 / a.len() as f64;
    2.0 * precision * recall / (precision + recall)
}

/// One annotator's version of one step: what agreement compares.
#[derive(Debug, Clone, PartialEq)]
pub struct StepText {
    /// The step's action as its JSON value (compared whole).
    pub action: Value,
    pub thoughts: [String; 3],
}

/// How the annotators of one step agree.
#[derive(Debug, Clone, PartialEq)]
pub struct StepAgreement {
    pub action_equal: bool,
    /// Each thought's mean pairwise token F1.
    pub thoughts: [f64; 3],
    /// The mean of the action's agreement (1 or 0) and the three thoughts'.
    pub score: f64,
}

/// The agreement of the versions of one step; `None` with fewer than two versions.
pub fn step_agreement(versions: &[&StepText]) -> Option<StepAgreement> {
    if versions.len() < 2 {
        return None;
    }
    let action_equal = versions.iter().all(|v| v.action == versions[0].action);
    let mut thoughts = [0.0; 3];
    let mut pairs = 0usize;
    for (i, a) in versions.iter().enumerate() {
        for b in &versions[i + 1..] {
            for (k, score) in thoughts.iter_mut().enumerate() {
                *score += token_f1(&a.thoughts[k], &b.thoughts[k]);
            }
            pairs += 1;
        }
    }
    for score in &mut thoughts {
        *score /= pairs as f64;
    }
    let action = if action_equal { 1.0 } else { 0.0 };
    let score = (action + thoughts.iter().sum::<f64>()) / 4.0;
    Some(StepAgreement { action_equal, thoughts, score })
}

/// A run's agreement: the mean of its steps' scores; `None` without any step compared.
pub fn run_score(steps: &[StepAgreement]) -> Option<f64> {
    mean(steps.iter().map(|s| s.score))
}

/// The agreement of two annotators' versions of a run, step by step (`a[i]` and `b[i]`
/// are the same step): the mean of the steps' scores, the figure an annotator's agreement
/// with a peer is built from.
pub fn pair_score(a: &[StepText], b: &[StepText]) -> Option<f64> {
    let steps: Vec<StepAgreement> =
        a.iter().zip(b).filter_map(|(a, b)| step_agreement(&[a, b])).collect();
    run_score(&steps)
}

/// The mean of some figures; `None` for none.
pub fn mean(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.into_iter().fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

/// The population standard deviation of some figures; `None` for fewer than two.
pub fn std_dev(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let m = mean(values.iter().copied())?;
    let var = values.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / values.len() as f64;
    Some(var.sqrt())
}

/// The Monday (UTC) of the week a timestamp (`2026-11-22T06:37:49.123Z`) falls in, as
/// `YYYY-MM-DD`: the bucket of agreement over time. `None` if it is not a timestamp.
pub fn week_start(timestamp: &str) -> Option<String> {
    let ms = crate::time::parse_ms(timestamp)?;
    let days = ms.div_euclid(86_400_000);
    // 1970-01-01 was a Thursday: day 0 is 3 days after a Monday.
    let monday = days - (days + 3).rem_euclid(7);
    Some(crate::time::format_ms(monday * 86_400_000)[..10].to_owned())
}

/// Points of a series bucketed by week: each week's start, how many points fell in it, and
/// their mean, oldest week first.
pub fn by_week(points: &[(String, f64)]) -> Vec<(String, usize, f64)> {
    let mut weeks: Vec<(String, usize, f64)> = Vec::new();
    for (at, value) in points {
        let Some(week) = week_start(at) else { continue };
        match weeks.iter_mut().find(|(w, _, _)| *w == week) {
            Some((_, n, sum)) => {
                *n += 1;
                *sum += value;
            }
            None => weeks.push((week, 1, *value)),
        }
    }
    lean::sort_by(&mut weeks, |a, b| a.0.cmp(&b.0));
    weeks.into_iter().map(|(w, n, sum)| (w, n, sum / n as f64)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn step(action: Value, t: [&str; 3]) -> StepText {
        StepText { action, thoughts: t.map(str::to_owned) }
    }

    #[test]
    fn tokens_are_lowercased_words_and_numbers() {
        assert_eq!(
            tokens("The Kettle's price: £24.99!"),
            ["the", "kettle", "s", "price", "24", "99"]
        );
        assert_eq!(tokens("  ,;  "), Vec::<String>::new());
        assert_eq!(tokens("Ünïcode Straße"), ["ünïcode", "straße"]);
    }

    #[test]
    fn token_f1_counts_shared_tokens_as_often_as_both_have_them() {
        assert_eq!(token_f1("", ""), 1.0);
        assert_eq!(token_f1("a", ""), 0.0);
        assert_eq!(token_f1("I click Search.", "i CLICK search"), 1.0);
        assert_eq!(token_f1("red car", "blue bike"), 0.0);
        // a: the the cat (3); b: the cat sat (3); common: the, cat = 2 → p = r = 2/3.
        let f = token_f1("the the cat", "the cat sat");
        assert!((f - 2.0 / 3.0).abs() < 1e-12, "{f}");
        // Symmetric.
        assert_eq!(token_f1("a b c d", "a b"), token_f1("a b", "a b c d"));
        assert!((token_f1("a b c d", "a b") - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn a_step_scores_its_action_and_thoughts_over_every_pair() {
        let click = json!({"type": "click", "target": "Search"});
        let a = step(click.clone(), ["on the home page", "search is empty", "I type kettle"]);
        let b = step(click.clone(), ["on the home page", "the search is empty", "type kettle"]);
        let s = step_agreement(&[&a, &b]).unwrap();
        assert!(s.action_equal);
        assert_eq!(s.thoughts[0], 1.0);
        assert!((s.thoughts[1] - token_f1("search is empty", "the search is empty")).abs() < 1e-12);
        assert!((s.score - (1.0 + s.thoughts.iter().sum::<f64>()) / 4.0).abs() < 1e-12);

        let c = step(json!({"type": "type", "target": "Search"}), ["x", "y", "z"]);
        let three = step_agreement(&[&a, &b, &c]).unwrap();
        assert!(!three.action_equal);
        // thought1: (a,b)=1, (a,c)=0, (b,c)=0 → 1/3.
        assert!((three.thoughts[0] - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(step_agreement(&[&a]), None);
    }

    #[test]
    fn runs_and_pairs_average_their_steps() {
        let a = vec![step(json!(1), ["a", "b", "c"]), step(json!(2), ["d", "e", "f"])];
        let b = vec![step(json!(1), ["a", "b", "c"]), step(json!(3), ["x", "y", "z"])];
        // Step 0 agrees fully (1), step 1 not at all (0).
        assert_eq!(pair_score(&a, &b), Some(0.5));
        assert_eq!(pair_score(&[], &[]), None);
        assert_eq!(mean([]), None);
        assert_eq!(std_dev(&[80.0]), None);
        assert_eq!(std_dev(&[70.0, 90.0]), Some(10.0));
    }

    #[test]
    fn weeks_start_on_monday_utc() {
        // 2026-11-22 is a Sunday; its week began on Monday 2026-11-16.
        assert_eq!(week_start("2026-11-22T23:59:59.999Z").as_deref(), Some("2026-11-16"));
        assert_eq!(week_start("2026-11-23T00:00:00.000Z").as_deref(), Some("2026-11-23"));
        assert_eq!(week_start("1970-01-01T00:00:00.000Z").as_deref(), Some("1969-12-29"));
        assert_eq!(week_start("yesterday"), None);
        let points = vec![
            ("2026-11-24T10:00:00.000Z".to_owned(), 0.5),
            ("2026-11-17T10:00:00.000Z".to_owned(), 1.0),
            ("2026-11-25T10:00:00.000Z".to_owned(), 0.7),
        ];
        let weeks = by_week(&points);
        assert_eq!(weeks.len(), 2);
        assert_eq!((weeks[0].0.as_str(), weeks[0].1, weeks[0].2), ("2026-11-16", 1, 1.0));
        assert_eq!((weeks[1].0.as_str(), weeks[1].1), ("2026-11-23", 2));
        assert!((weeks[1].2 - 0.6).abs() < 1e-12);
    }
}
