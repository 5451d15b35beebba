//! Search and filters over the runs list (seed §7.E, §8).
//!
//! The list must open and filter fast for a thousand runs of twenty steps, so each run is
//! reduced once (on load and on save) to a [`RunSummary`] holding everything a filter reads,
//! its searchable text already lowercased; a filter then is a few comparisons and substring
//! searches per run.

use run_contract::ActionKind;
use serde::Serialize;

use crate::record::{ReviewStatus, Run, Step, StepState};

/// A run as the list shows and filters it.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSummary {
    pub run_id: String,
    pub task_id: String,
    pub task_prompt: String,
    /// A replay's values and fast-path share (`ReplayOrigin::describe`), shown by its title.
    #[serde(default)]
    pub replay: Option<String>,
    /// The MCP client that started the run, when one did.
    #[serde(default)]
    pub driven_by: Option<String>,
    pub status: ReviewStatus,
    pub agent_status: String,
    pub created_at: String,
    pub updated_at: String,
    pub annotator: Option<String>,
    pub tags: Vec<String>,
    pub collections: Vec<String>,
    pub quality: Option<u8>,
    pub steps: u32,
    /// Steps marked complete.
    pub done: u32,
    /// Steps flagged for review.
    pub flagged: u32,
    /// Issues still open, and resolved, over every step (seed §2 Issue Tracker, §7.H).
    #[serde(default)]
    pub open_issues: u32,
    #[serde(default)]
    pub resolved_issues: u32,
    /// Kinds of the open issues (`logic`, `missing-context`, …), sorted.
    #[serde(default)]
    pub issue_kinds: Vec<String>,
    /// Time spent annotating (ms) and times submitted for review (seed §7.H).
    #[serde(default)]
    pub active_ms: u64,
    #[serde(default)]
    pub review_rounds: u32,
    /// Which summary shape this is; a stored summary of an older shape is made again.
    #[serde(default)]
    pub format: u32,
    /// Distinct, sorted.
    pub action_types: Vec<String>,
    /// Lowercased: ids, prompt, follow-ups, final answer, every step's thoughts, extended
    /// thoughts and action targets and values, tags.
    pub search_text: String,
    pub version: u32,
}

/// The summary shape [`summarize`] makes now (1: issues and per-run metrics; 2: what tells
/// replays apart; 3: the MCP client that drove the run).
pub const SUMMARY_FORMAT: u32 = 3;

/// Reduces a run to what the list needs.
pub fn summarize(run: &Run, steps: &[Step]) -> RunSummary {
    let mut text = String::with_capacity(
        run.task_prompt.len()
            + steps
                .iter()
                .map(|s| {
                    s.thoughts.thought1.len()
                        + s.thoughts.thought2.len()
                        + s.thoughts.thought3.len()
                })
                .sum::<usize>()
            + 64 * (steps.len() + 1),
    );
    let mut add = |piece: &str| {
        if !piece.is_empty() {
            text.push_str(piece);
            // A separator no term can span: searching "kettle I" must not match across fields.
            text.push('\n');
        }
    };
    add(&run.id);
    add(&run.task_id);
    add(&run.task_prompt);
    // A replay is found by the values it ran with.
    run.replay.iter().flat_map(|r| r.params.values()).for_each(|v| add(v));
    // A run an MCP client drove is found by the client's name.
    add(run.driven_by.as_deref().unwrap_or(""));
    run.follow_ups.iter().for_each(|f| add(f));
    add(run.final_answer.as_deref().unwrap_or(""));
    run.tags.iter().for_each(|t| add(t));
    let mut action_types = lean::SortedSet::new();
    let (mut done, mut flagged) = (0, 0);
    for step in steps {
        add(&step.thoughts.thought1);
        add(&step.thoughts.thought2);
        add(&step.thoughts.thought3);
        step.extended_thoughts.iter().for_each(|t| add(t));
        add(&step.action.target);
        add(step.action.value.as_deref().unwrap_or(""));
        if step.action.kind != ActionKind::None {
            action_types.insert(step.action.kind.as_str().to_owned());
        }
        match step.state() {
            StepState::Done => done += 1,
            StepState::Flagged => flagged += 1,
            StepState::NeedsAnnotation => {}
        }
    }
    let tally = crate::issues::tally(steps);
    RunSummary {
        run_id: run.id.clone(),
        task_id: run.task_id.clone(),
        task_prompt: run.task_prompt.clone(),
        replay: run.replay.as_ref().map(run_records::ReplayOrigin::describe),
        driven_by: run.driven_by.clone(),
        status: run.status,
        agent_status: run.agent_status.clone(),
        created_at: run.created_at.clone(),
        updated_at: run.updated_at.clone(),
        annotator: run.annotator.clone(),
        tags: run.tags.clone(),
        collections: run.collections.clone(),
        quality: run.quality,
        steps: steps.len() as u32,
        done,
        flagged,
        open_issues: tally.open,
        resolved_issues: tally.resolved,
        issue_kinds: tally.open_kinds.iter().map(|k| k.as_str().to_owned()).collect(),
        active_ms: run.active_ms,
        review_rounds: run.review_rounds,
        format: SUMMARY_FORMAT,
        action_types: action_types.into_iter().collect(),
        search_text: text_case::lowercase(&text),
        version: run.version,
    }
}

/// What the list shows: every condition set must hold.
#[derive(Debug, Clone, PartialEq, Default, Serialize, tagged_de::FieldsDeserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Filter {
    /// Words and "quoted phrases", each of which must occur (case-insensitive).
    pub text: String,
    /// Empty: any status.
    pub statuses: Vec<ReviewStatus>,
    /// YYYY-MM-DD, inclusive, on the UTC date of `created_at`.
    pub from: Option<String>,
    pub to: Option<String>,
    pub annotator: Option<String>,
    pub min_quality: Option<u8>,
    pub max_quality: Option<u8>,
    /// All must be on the run.
    pub tags: Vec<String>,
    pub action_type: Option<String>,
    pub collection: Option<String>,
    /// `open`: runs with an open issue; an issue type (`logic`, …): an open issue of it.
    pub issue: Option<String>,
    /// The MCP client that drove the run (case-insensitive), or [`NOT_DRIVEN`].
    pub driven_by: Option<String>,
}

/// The filter's value for runs no MCP client drove (started from the side panel).
pub const NOT_DRIVEN: &str = "(none)";

/// The filter's value for runs with any open issue.
pub const OPEN_ISSUES: &str = "open";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, tagged_de::UnitDeserialize)]
pub enum Sort {
    #[default]
    Newest,
    Oldest,
    QualityHigh,
    QualityLow,
    Status,
}

impl Sort {
    pub const ALL: [Sort; 5] =
        [Sort::Newest, Sort::Oldest, Sort::QualityHigh, Sort::QualityLow, Sort::Status];

    pub fn label(self) -> &'static str {
        match self {
            Sort::Newest => "Newest first",
            Sort::Oldest => "Oldest first",
            Sort::QualityHigh => "Highest quality",
            Sort::QualityLow => "Lowest quality",
            Sort::Status => "Status",
        }
    }
}

/// The search terms of `text`, lowercased: whitespace-separated words, and "quoted phrases"
/// as one term (an unclosed quote runs to the end).
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        let Some(first) = rest.chars().next() else { break };
        let (term, tail) = if first == '"' {
            let inner = &rest[1..];
            match inner.find('"') {
                Some(end) => (&inner[..end], &inner[end + 1..]),
                None => (inner, ""),
            }
        } else {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            (&rest[..end], &rest[end..])
        };
        let term = text_case::lowercase(term.trim());
        if !term.is_empty() {
            out.push(term);
        }
        rest = tail;
    }
    out
}

/// A filter with its text split and lowercased once, for matching many runs.
struct Compiled<'a> {
    filter: &'a Filter,
    terms: Vec<String>,
    annotator: Option<String>,
    tags: Vec<String>,
}

impl<'a> Compiled<'a> {
    fn new(filter: &'a Filter) -> Self {
        Compiled {
            filter,
            terms: terms(&filter.text),
            annotator: filter
                .annotator
                .as_deref()
                .map(str::trim)
                .filter(|a| !a.is_empty())
                .map(text_case::lowercase),
            tags: filter
                .tags
                .iter()
                .map(|t| text_case::lowercase(t.trim()))
                .filter(|t| !t.is_empty())
                .collect(),
        }
    }

    fn matches(&self, s: &RunSummary) -> bool {
        self.quality_passes(s) && self.passes_apart_from_quality(s)
    }

    /// A quality bound passes only runs with a score: one not scored yet may be anything,
    /// and an export of "quality ≥ 80" must not take it in. [`unscored_hidden`] says how many
    /// it holds back.
    fn quality_passes(&self, s: &RunSummary) -> bool {
        let f = self.filter;
        if f.min_quality.is_none() && f.max_quality.is_none() {
            return true;
        }
        s.quality.is_some_and(|q| {
            f.min_quality.is_none_or(|min| q >= min) && f.max_quality.is_none_or(|max| q <= max)
        })
    }

    fn passes_apart_from_quality(&self, s: &RunSummary) -> bool {
        let f = self.filter;
        if !f.statuses.is_empty() && !f.statuses.contains(&s.status) {
            return false;
        }
        // ISO 8601 dates compare as text; a run without a date matches no range.
        let day = s.created_at.get(..10).unwrap_or("");
        if let Some(from) = f.from.as_deref().filter(|d| !d.is_empty())
            && (day.is_empty() || day < from)
        {
            return false;
        }
        if let Some(to) = f.to.as_deref().filter(|d| !d.is_empty())
            && (day.is_empty() || day > to)
        {
            return false;
        }
        if let Some(annotator) = &self.annotator
            && s.annotator.as_deref().is_none_or(|a| text_case::lowercase(a) != *annotator)
        {
            return false;
        }
        if !self.tags.iter().all(|t| s.tags.iter().any(|have| text_case::lowercase(have) == *t)) {
            return false;
        }
        if let Some(kind) = f.action_type.as_deref().filter(|k| !k.is_empty())
            && !s.action_types.iter().any(|a| a == kind)
        {
            return false;
        }
        if let Some(collection) = f.collection.as_deref().filter(|c| !c.is_empty())
            && !s.collections.iter().any(|c| c == collection)
        {
            return false;
        }
        match f.driven_by.as_deref().map(str::trim).filter(|d| !d.is_empty()) {
            Some(NOT_DRIVEN) if s.driven_by.is_some() => return false,
            Some(NOT_DRIVEN) | None => {}
            Some(client)
                if s.driven_by.as_deref().is_none_or(|d| !d.eq_ignore_ascii_case(client)) =>
            {
                return false;
            }
            Some(_) => {}
        }
        match f.issue.as_deref().filter(|i| !i.is_empty()) {
            Some(OPEN_ISSUES) if s.open_issues == 0 => return false,
            Some(OPEN_ISSUES) | None => {}
            Some(kind) if !s.issue_kinds.iter().any(|k| k == kind) => return false,
            Some(_) => {}
        }
        self.terms.iter().all(|term| s.search_text.contains(term.as_str()))
    }
}

/// Whether the run passes every condition of `filter`.
pub fn matches(summary: &RunSummary, filter: &Filter) -> bool {
    Compiled::new(filter).matches(summary)
}

/// How many runs `filter` hides only because they have no score yet (never saved, opened or
/// imported here): they pass every other condition, but a quality bound passes scored runs
/// only. 0 without a quality bound.
pub fn unscored_hidden(summaries: &[RunSummary], filter: &Filter) -> usize {
    if filter.min_quality.is_none() && filter.max_quality.is_none() {
        return 0;
    }
    let compiled = Compiled::new(filter);
    summaries
        .iter()
        .filter(|s| s.quality.is_none() && compiled.passes_apart_from_quality(s))
        .count()
}

/// The indexes of the summaries that pass `filter`, in `sort` order (ties: newest first,
/// then by id, so the order is stable across reloads).
pub fn select(summaries: &[RunSummary], filter: &Filter, sort: Sort) -> Vec<usize> {
    let compiled = Compiled::new(filter);
    let mut picked: Vec<usize> =
        (0..summaries.len()).filter(|&i| compiled.matches(&summaries[i])).collect();
    let newest = |a: &RunSummary, b: &RunSummary| {
        b.created_at.cmp(&a.created_at).then_with(|| a.run_id.cmp(&b.run_id))
    };
    lean::sort_by(&mut picked, |&i, &j| {
        let (a, b) = (&summaries[i], &summaries[j]);
        match sort {
            Sort::Newest => newest(a, b),
            Sort::Oldest => a.created_at.cmp(&b.created_at).then_with(|| a.run_id.cmp(&b.run_id)),
            // Unscored runs last either way.
            Sort::QualityHigh => b
                .quality
                .map(i16::from)
                .unwrap_or(-1)
                .cmp(&a.quality.map(i16::from).unwrap_or(-1))
                .then_with(|| newest(a, b)),
            Sort::QualityLow => a
                .quality
                .map(i16::from)
                .unwrap_or(256)
                .cmp(&b.quality.map(i16::from).unwrap_or(256))
                .then_with(|| newest(a, b)),
            Sort::Status => a.status.cmp(&b.status).then_with(|| newest(a, b)),
        }
    });
    picked
}

/// The values the filter dropdowns offer.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Facets {
    pub annotators: Vec<String>,
    pub tags: Vec<String>,
    pub collections: Vec<String>,
    pub action_types: Vec<String>,
    /// The MCP clients that drove runs.
    pub drivers: Vec<String>,
    /// Every status in flow order, with how many runs have it.
    pub statuses: Vec<(ReviewStatus, usize)>,
    pub total: usize,
}

pub fn facets(summaries: &[RunSummary]) -> Facets {
    let mut annotators = lean::SortedSet::new();
    let mut tags = lean::SortedSet::new();
    let mut collections = lean::SortedSet::new();
    let mut action_types = lean::SortedSet::new();
    let mut drivers = lean::SortedSet::new();
    let mut statuses: Vec<(ReviewStatus, usize)> =
        ReviewStatus::ALL.iter().map(|s| (*s, 0)).collect();
    for s in summaries {
        annotators.extend(s.annotator.iter().filter(|a| !a.is_empty()));
        tags.extend(s.tags.iter());
        collections.extend(s.collections.iter());
        action_types.extend(s.action_types.iter());
        drivers.extend(s.driven_by.iter().filter(|d| !d.is_empty()));
        if let Some(entry) = statuses.iter_mut().find(|(status, _)| *status == s.status) {
            entry.1 += 1;
        }
    }
    let owned = |set: lean::SortedSet<&String>| set.into_iter().cloned().collect();
    Facets {
        annotators: owned(annotators),
        tags: owned(tags),
        collections: owned(collections),
        action_types: owned(action_types),
        drivers: owned(drivers),
        statuses,
        total: summaries.len(),
    }
}

/// The filter in a line, for export headers: "approved · quality ≥ 80 · tag shop".
pub fn describe(filter: &Filter) -> String {
    let mut parts = Vec::new();
    let terms = terms(&filter.text);
    if !terms.is_empty() {
        let quoted: Vec<String> = terms.iter().map(|t| format!("\u{201c}{t}\u{201d}")).collect();
        parts.push(format!("text {}", quoted.join(" ")));
    }
    if !filter.statuses.is_empty() {
        let names: Vec<&str> = filter.statuses.iter().map(|s| s.as_str()).collect();
        parts.push(names.join(" or "));
    }
    let nonempty = |v: &Option<String>| {
        v.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned)
    };
    match (nonempty(&filter.from), nonempty(&filter.to)) {
        (Some(from), Some(to)) => parts.push(format!("created {from} to {to}")),
        (Some(from), None) => parts.push(format!("created from {from}")),
        (None, Some(to)) => parts.push(format!("created until {to}")),
        (None, None) => {}
    }
    if let Some(a) = nonempty(&filter.annotator) {
        parts.push(format!("annotator {a}"));
    }
    match (filter.min_quality, filter.max_quality) {
        (Some(min), Some(max)) => parts.push(format!("quality {min}–{max}")),
        (Some(min), None) => parts.push(format!("quality ≥ {min}")),
        (None, Some(max)) => parts.push(format!("quality ≤ {max}")),
        (None, None) => {}
    }
    for tag in filter.tags.iter().map(|t| t.trim()).filter(|t| !t.is_empty()) {
        parts.push(format!("tag {tag}"));
    }
    if let Some(a) = nonempty(&filter.action_type) {
        parts.push(format!("action {a}"));
    }
    if let Some(c) = nonempty(&filter.collection) {
        parts.push(format!("collection {c}"));
    }
    match nonempty(&filter.driven_by).as_deref() {
        Some(NOT_DRIVEN) => parts.push("not driven by an MCP client".into()),
        Some(client) => parts.push(format!("driven by {client}")),
        None => {}
    }
    match nonempty(&filter.issue).as_deref() {
        Some(OPEN_ISSUES) => parts.push("open issues".into()),
        Some(kind) => parts.push(format!("open {kind} issues")),
        None => {}
    }
    if parts.is_empty() { "all runs".into() } else { parts.join(" · ") }
}

#[cfg(test)]
mod tests;

/// One annotator's line in the analytics view (seed §7.H "metrics per annotator").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnnotatorRow {
    pub annotator: String,
    pub runs: usize,
    pub steps: u32,
    pub done: u32,
    pub flagged: u32,
    /// Mean quality of the runs that have a score.
    pub average_quality: Option<u8>,
    /// Runs per status, in `ReviewStatus::ALL` order.
    pub by_status: [usize; 5],
}

/// Per annotator (unassigned runs under "unassigned"), by name.
pub fn by_annotator(summaries: &[RunSummary]) -> Vec<AnnotatorRow> {
    let mut rows: lean::SortedMap<String, (AnnotatorRow, u64, u64)> = Default::default();
    for s in summaries {
        let name = s.annotator.clone().unwrap_or_else(|| "unassigned".into());
        let (row, sum, scored) = rows.entry_or_insert_with(name.clone(), || {
            (
                AnnotatorRow {
                    annotator: name,
                    runs: 0,
                    steps: 0,
                    done: 0,
                    flagged: 0,
                    average_quality: None,
                    by_status: [0; 5],
                },
                0,
                0,
            )
        });
        row.runs += 1;
        row.steps += s.steps;
        row.done += s.done;
        row.flagged += s.flagged;
        if let Some(q) = s.quality {
            *sum += u64::from(q);
            *scored += 1;
        }
        let status = ReviewStatus::ALL.iter().position(|x| *x == s.status).unwrap_or(0);
        row.by_status[status] += 1;
    }
    rows.into_values()
        .map(|(mut row, sum, scored)| {
            row.average_quality = (scored > 0).then(|| (sum / scored) as u8);
            row
        })
        .collect()
}

/// How many runs score 0–9, 10–19, … 90–100; runs without a score are left out.
pub fn quality_histogram(summaries: &[RunSummary]) -> [usize; 10] {
    let mut bins = [0; 10];
    for q in summaries.iter().filter_map(|s| s.quality) {
        bins[usize::from(q / 10).min(9)] += 1;
    }
    bins
}

#[cfg(test)]
mod analytics_tests {
    use super::*;

    fn summary(annotator: Option<&str>, quality: Option<u8>, status: ReviewStatus) -> RunSummary {
        RunSummary {
            run_id: String::new(),
            task_id: String::new(),
            task_prompt: String::new(),
            replay: None,
            driven_by: None,
            status,
            agent_status: String::new(),
            created_at: String::new(),
            updated_at: String::new(),
            annotator: annotator.map(Into::into),
            tags: vec![],
            collections: vec![],
            quality,
            steps: 10,
            done: 4,
            flagged: 1,
            open_issues: 0,
            resolved_issues: 0,
            issue_kinds: vec![],
            active_ms: 0,
            review_rounds: 0,
            format: SUMMARY_FORMAT,
            action_types: vec![],
            search_text: String::new(),
            version: 0,
        }
    }

    #[test]
    fn annotators_are_summed_and_averaged_over_scored_runs() {
        let rows = by_annotator(&[
            summary(Some("ann"), Some(80), ReviewStatus::Approved),
            summary(Some("ann"), Some(60), ReviewStatus::Draft),
            summary(Some("ann"), None, ReviewStatus::Draft),
            summary(None, Some(100), ReviewStatus::InReview),
        ]);
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (rows[0].annotator.as_str(), rows[0].runs, rows[0].average_quality),
            ("ann", 3, Some(70))
        );
        assert_eq!(rows[0].by_status, [2, 0, 1, 0, 0]);
        assert_eq!((rows[0].steps, rows[0].done, rows[0].flagged), (30, 12, 3));
        assert_eq!(rows[1].annotator, "unassigned");
        let bins = quality_histogram(&[
            summary(None, Some(100), ReviewStatus::Draft),
            summary(None, Some(5), ReviewStatus::Draft),
        ]);
        assert_eq!((bins[9], bins[0]), (1, 1));
    }
}
