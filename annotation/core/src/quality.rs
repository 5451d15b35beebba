//! Quality scores (seed §7.H): per step, per run, and per annotator.
//!
//! A step's score (0–100) is the weighted mean of four parts:
//!
//! | part | weight | 100 when | 0 when |
//! |---|---|---|---|
//! | Structure | 40 | every applicable checklist row passes | none does |
//! | Visible elements | 20 | two or more quoted labels or UI words | none (one scores 75) |
//! | Readability | 20 | sentences of 4–20 words, words of ≤ 6 letters on average | very long sentences or very long words |
//! | Language | 20 | no spelling or grammar issues | 10 or more per 100 words |
//!
//! An empty step scores 0 on every part. The run score is the mean of its steps' scores,
//! the last step judged as final.
//!
//! A run is scored one way only, [`score`]: every step's misspellings against the dictionary,
//! plus the grammar issues the page knows of, lower its Language part. There is no way to
//! score a run without a speller ([`SpellCheck`]), so no save, status move, rollback or import can store a
//! score that missed the spelling; a page without its dictionary stores no score at all, and
//! the run shows as not scored yet.
//!
//! Speed: the runs list scores many runs, so scoring reads each thought once without
//! allocating ([`crate::checklist`]'s scan) and skips the checklist's wording. 1,000 runs of 20
//! steps took about 60 ms in the workspace's size-optimised release build on a shared machine.

use serde::Serialize;

use crate::checklist::{self, Analysis};
use crate::record::{ReviewStatus, Run, Step, Thought};
use crate::spelling::SpellCheck;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Part {
    pub label: &'static str,
    /// 0–100.
    pub score: u8,
    pub weight: u8,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepQuality {
    pub score: u8,
    pub parts: Vec<Part>,
}

fn clamp(score: f64) -> u8 {
    if score.is_nan() { 0 } else { score.round().clamp(0.0, 100.0) as u8 }
}

/// The step's quality; `text_issues` is how many spelling and grammar issues its thoughts have.
pub fn step_quality(step: &Step, is_final: bool, text_issues: usize) -> StepQuality {
    let a = Analysis::new(step);
    let verdicts = checklist::verdicts(step, is_final, &a);
    let applicable = verdicts.iter().filter(|(applies, _)| *applies).count();
    let ok = verdicts.iter().filter(|(applies, ok)| *applies && *ok).count();
    let words = a.words();

    // Rows like "no ambiguous words" pass on an empty step; an empty step has no structure.
    let structure = if applicable == 0 || words == 0 {
        0
    } else {
        clamp(ok as f64 * 100.0 / applicable as f64)
    };
    let visible = match a.visible_count() {
        0 => 0,
        1 => 75,
        _ => 100,
    };
    let readability = if words == 0 { 0 } else { readability(&a, words) };
    let language = if words == 0 {
        0
    } else {
        clamp(100.0 - text_issues as f64 * 100.0 / words as f64 * 10.0)
    };
    let parts = vec![
        Part { label: "Structure", score: structure, weight: 40 },
        Part { label: "Visible elements", score: visible, weight: 20 },
        Part { label: "Readability", score: readability, weight: 20 },
        Part { label: "Language", score: language, weight: 20 },
    ];
    let total: u32 = parts.iter().map(|p| u32::from(p.weight)).sum();
    let weighted: u32 = parts.iter().map(|p| u32::from(p.score) * u32::from(p.weight)).sum();
    StepQuality { score: clamp(f64::from(weighted) / f64::from(total)), parts }
}

/// Sentence and word length against plain-writing norms.
fn readability(a: &Analysis, words: usize) -> u8 {
    let sentences: usize = a.scans.iter().map(|s| s.sentences).sum();
    let letters: usize = a.scans.iter().map(|s| s.letters).sum();
    let per_sentence = words as f64 / sentences.max(1) as f64;
    let per_word = letters as f64 / words as f64;
    let mut score = 100.0;
    if per_sentence > 20.0 {
        score -= (per_sentence - 20.0) * 4.0;
    } else if per_sentence < 4.0 {
        score -= (4.0 - per_sentence) * 15.0;
    }
    if per_word > 6.0 {
        score -= (per_word - 6.0) * 30.0;
    }
    clamp(score)
}

/// The run's score: [`step_quality`] of each step counting its misspelled words
/// ([`misspelled`]) and `grammar`'s issues for it (step index, count), averaged; the last
/// step is judged as final, and a run without steps scores 0. Every score a run stores is
/// this one.
pub fn score(steps: &[Step], speller: &dyn SpellCheck, grammar: &[(u32, usize)]) -> u8 {
    let issues: Vec<usize> = steps
        .iter()
        .map(|step| {
            let found = grammar.iter().filter(|(index, _)| *index == step.index);
            misspelled(step, speller) + found.map(|(_, n)| n).sum::<usize>()
        })
        .collect();
    run_quality_counted(steps, &issues)
}

/// How many misspelled words the step's three thoughts hold: what its Language part counts
/// besides grammar, as the editor counts it while one types and as [`score`] does.
pub fn misspelled(step: &Step, speller: &dyn SpellCheck) -> usize {
    let thoughts: usize = Thought::ALL
        .iter()
        .map(|which| speller.check_only(*which, step.thoughts.get(*which)).len())
        .sum();
    // The Navigator's notes go into the training target too, so they are checked alike.
    let notes: usize = step.navigator.as_ref().map_or(0, |notes| {
        run_records::NavigatorNote::ALL
            .iter()
            .map(|which| speller.check_only(Thought::One, notes.get(*which)).len())
            .sum()
    });
    thoughts + notes
}

/// Whether a step scores as `other` does: the same thoughts and outcome, which is all that
/// [`step_quality`] reads of it. A step changed otherwise (synced, re-verified) keeps the
/// run's score true.
pub fn scores_alike(step: &Step, other: &Step) -> bool {
    step.thoughts == other.thoughts
        && step.navigator == other.navigator
        && step.outcome == other.outcome
}

/// The run's quality with `text_issues[i]` spelling and grammar issues in step `i` (missing
/// entries count none). Private: a run's score is [`score`]'s, which counts the spelling.
fn run_quality_counted(steps: &[Step], text_issues: &[usize]) -> u8 {
    if steps.is_empty() {
        return 0;
    }
    let last = steps.len() - 1;
    let sum: u64 = steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let issues = text_issues.get(i).copied().unwrap_or(0);
            u64::from(step_quality(s, i == last, issues).score)
        })
        .sum();
    clamp(sum as f64 / steps.len() as f64)
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnnotatorStats {
    pub annotator: String,
    pub runs: usize,
    pub steps: usize,
    pub steps_done: usize,
    pub average_quality: u8,
    pub approved: usize,
    pub rejected: usize,
    pub in_review: usize,
}

/// Who annotates a run without an annotator.
pub const UNASSIGNED: &str = "unassigned";

/// Per-annotator figures from (run, its quality, its steps, its steps done), sorted by name.
pub fn annotator_stats(runs: &[(&Run, u8, usize, usize)]) -> Vec<AnnotatorStats> {
    let mut groups: lean::SortedMap<&str, (AnnotatorStats, u64)> = lean::SortedMap::new();
    for &(run, quality, steps, done) in runs {
        let name = run.annotator.as_deref().unwrap_or(UNASSIGNED);
        let (stats, quality_sum) = groups.entry_or_insert_with(name, || {
            (
                AnnotatorStats {
                    annotator: name.to_string(),
                    runs: 0,
                    steps: 0,
                    steps_done: 0,
                    average_quality: 0,
                    approved: 0,
                    rejected: 0,
                    in_review: 0,
                },
                0,
            )
        });
        stats.runs += 1;
        stats.steps += steps;
        stats.steps_done += done;
        *quality_sum += u64::from(quality);
        match run.status {
            ReviewStatus::Approved => stats.approved += 1,
            ReviewStatus::Rejected => stats.rejected += 1,
            ReviewStatus::InReview => stats.in_review += 1,
            ReviewStatus::Draft | ReviewStatus::Archived => {}
        }
    }
    groups
        .into_values()
        .map(|(mut stats, sum)| {
            stats.average_quality = clamp(sum as f64 / stats.runs as f64);
            stats
        })
        .collect()
}

#[cfg(test)]
mod tests;
