//! The fine-tuning export: the annotated runs as chat-format training data for the
//! Navigator, one example per step.
//!
//! An example is one JSON line, `{"messages": [system, user, assistant]}`:
//!
//! - **system**: the Navigator's prompt as it was sent for that step's call. The trace keeps
//!   it (`prompt.system`, with redacted variables reading `[redacted]`); a trace written
//!   before it did is rendered again from its recorded variables. When the text hashes to
//!   the SHA-256 the trace recorded the example is *exact*, and the dataset card counts how
//!   many are.
//! - **user**: the turn the Navigator was sent after it, and, with screenshots chosen, the
//!   step's screenshot as an image part (a `data:image/jpeg;base64,…` URL).
//! - **assistant** (the target): the Navigator's answer in its own schema
//!   (`prompts/navigator/schema.json`): the annotated thoughts as `thought_changed`,
//!   `thought_state` and `thought_next`, the annotated extended thoughts, the actions the step
//!   carried out (those that fit `run_contract::action::SHAPES`), the Navigator's notes (evaluation, memory, next
//!   goal) as annotated on the step (`Step::navigator`; as the model answered them for steps
//!   captured before the step kept them), and the decision as the model answered it.
//!
//! Steps whose thoughts a model drafted (`Step::drafted_thoughts`) are named in
//! `provenance.jsonl` beside the splits, or left out when chosen.
//!
//! Without screenshots every `content` is a string; with them every `content` is a list of
//! parts (`{"type": "text", "text": …}`, and `{"type": "image_url", "image_url": {"url":
//! …}}` in the user turn only), so each file has one shape and loads as a table. Steps
//! without a recorded Navigator call (runs imported, or synced from another browser, carry
//! no traces) or without an action in the schema are left out, and the card says how many
//! and why. Runs are split into train, validation and test whole, by a seeded shuffle;
//! runs with open issues or steps not marked complete can be left out.
//!
//! Secrets: the engine already writes `[secret]` for what was typed into secret fields and
//! `***` for keys; [`mask`] also replaces every secret the caller knows (API keys, the sync
//! token) wherever it appears.

use lean::SortedMap;

use serde::Serialize;
use serde_json::{Value, json};

use crate::record::{NavigatorNote, ReviewStatus, Run, Step};

/// What stands in for a secret in the export.
pub const MASK: &str = "[secret]";
/// The Navigator's answer allows at most this many actions, and this many extended
/// thoughts (its schema's `maxItems`).
pub const MAX_ACTIONS: usize = 5;
pub const MAX_EXTENDED_THOUGHTS: usize = 5;

#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct Options {
    /// Runs in these review statuses go in.
    pub statuses: Vec<ReviewStatus>,
    /// The step's screenshot as an image part of the user turn.
    pub screenshots: bool,
    /// Share of the runs (0–50 %) set aside for validation.
    pub validation_percent: u8,
    /// Share of the runs (0–50 %) set aside for test (seed 000's third split).
    #[serde(default)]
    pub test_percent: u8,
    pub seed: u64,
    /// Leave out runs with open issues or steps not marked complete.
    #[serde(default)]
    pub only_finished: bool,
    /// Leave out steps whose thoughts a model drafted (seed §7.G).
    #[serde(default)]
    pub leave_out_drafted: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            statuses: vec![ReviewStatus::Approved],
            screenshots: false,
            validation_percent: 10,
            test_percent: 0,
            seed: 42,
            only_finished: false,
            leave_out_drafted: false,
        }
    }
}

/// The Navigator's model call at a step, as its trace recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct NavigatorCall {
    pub step: u32,
    pub prompt_id: String,
    pub variant: String,
    /// SHA-256 of the prompt as rendered for the call.
    pub prompt_hash: String,
    /// SHA-256 over the prompt file and shared rules it was rendered from.
    pub revision_hash: String,
    /// The prompt's variables.
    pub params: Value,
    /// The system and user messages as sent, when the trace kept them.
    pub sent: Option<(String, String)>,
    /// The answer the call accepted, as the model wrote it.
    pub answer: Option<String>,
}

/// The Navigator's call of each step of a run, from its traces (`LlmTrace` records, read
/// leniently): the last call of a step that did not fail.
pub fn navigator_calls(traces: &[Value]) -> SortedMap<u32, NavigatorCall> {
    let mut calls = SortedMap::new();
    let mut ordered: Vec<&Value> = traces
        .iter()
        .filter(|t| t["role"] == "navigator" && t["promptId"] == "navigator")
        .filter(|t| t["error"].is_null())
        .collect();
    lean::sort_by(&mut ordered, |a, b| a["startedAt"].as_str().cmp(&b["startedAt"].as_str()));
    for trace in ordered {
        let Some(step) = trace["step"].as_u64().and_then(|s| u32::try_from(s).ok()) else {
            continue;
        };
        let text = |key: &str| trace[key].as_str().unwrap_or_default().to_owned();
        let sent = match (trace["prompt"]["system"].as_str(), trace["prompt"]["user"].as_str()) {
            (Some(system), Some(user)) if !system.is_empty() => {
                Some((system.to_owned(), user.to_owned()))
            }
            _ => None,
        };
        let accepted = trace["attempts"].as_array().and_then(|attempts| {
            attempts.iter().rev().find(|a| a["problems"].as_array().is_none_or(Vec::is_empty))
        });
        calls.insert(
            step,
            NavigatorCall {
                step,
                prompt_id: text("promptId"),
                variant: text("variant"),
                prompt_hash: text("promptHash"),
                revision_hash: text("revisionHash"),
                params: trace["params"].clone(),
                sent,
                answer: accepted.and_then(|a| a["raw"].as_str()).map(str::to_owned),
            },
        );
    }
    calls
}

/// Why a step gave no example.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Skip {
    /// No Navigator call recorded for it (imported, or synced from another browser).
    NoPrompt,
    /// Its prompt could not be rendered again (a prompt file changed shape since).
    PromptFailed,
    /// It carried out no action the Navigator's schema knows.
    NoAction,
    /// A model drafted its thoughts, and such steps were left out.
    Drafted,
}

impl Skip {
    pub fn describe(self) -> &'static str {
        match self {
            Skip::NoPrompt => {
                "no Navigator call recorded (imported, or synced from another browser)"
            }
            Skip::PromptFailed => "its prompt could not be rendered again",
            Skip::NoAction => "no action in the Navigator's schema",
            Skip::Drafted => "its thoughts were drafted by a model (left out as chosen)",
        }
    }
}

/// The target: the Navigator's answer in its schema, from the annotated thoughts and the
/// actions the step carried out (at most [`MAX_ACTIONS`]); `answered` is the model's own
/// answer, when recorded, for the fields annotators do not edit.
pub fn target(step: &Step, answered: Option<&Value>) -> Result<Value, Skip> {
    let actions: Vec<Value> = step
        .actions
        .iter()
        .filter_map(|executed| run_contract::action::conforming(&executed["action"]))
        .take(MAX_ACTIONS)
        .collect();
    if actions.is_empty() {
        return Err(Skip::NoAction);
    }
    let said = |key: &str| answered.and_then(|a| a["current_state"][key].as_str());
    // The notes as annotated, where the step carries them; else as the model answered.
    let note = |which: NavigatorNote| {
        step.navigator.as_ref().map(|n| n.get(which)).or_else(|| said(which.answer_key()))
    };
    let thoughts = &step.thoughts;
    let decision = said("decision").filter(|d| ["proceed", "retry", "abort"].contains(d));
    Ok(json!({
        "current_state": {
            "evaluation_previous_goal": note(NavigatorNote::Evaluation).unwrap_or(&thoughts.thought1),
            "thought_changed": thoughts.thought1,
            "thought_state": thoughts.thought2,
            "thought_next": thoughts.thought3,
            "extended_thoughts": step.extended_thoughts.iter().take(MAX_EXTENDED_THOUGHTS).collect::<Vec<_>>(),
            "decision": decision.unwrap_or("proceed"),
            "memory": note(NavigatorNote::Memory).unwrap_or_default(),
            "next_goal": note(NavigatorNote::NextGoal).unwrap_or(&thoughts.thought3),
        },
        // The step acted, so it asked nothing.
        "ask_user": "",
        "actions": actions,
    }))
}

/// One example: the prompt the Navigator saw (`system`, then `user` with the screenshot
/// as an image part when given) and the target.
pub fn example(
    system: &str,
    user: &str,
    image: Option<&str>,
    target: &Value,
    parts: bool,
) -> Value {
    let answer = target.to_string();
    if !parts {
        return json!({"messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
            {"role": "assistant", "content": answer},
        ]});
    }
    let text = |t: &str| json!({"type": "text", "text": t});
    let mut turn = vec![text(user)];
    if let Some(url) = image {
        turn.push(json!({"type": "image_url", "image_url": {"url": url}}));
    }
    json!({"messages": [
        {"role": "system", "content": [text(system)]},
        {"role": "user", "content": turn},
        {"role": "assistant", "content": [text(&answer)]},
    ]})
}

/// Replaces every occurrence of each secret (of 8 characters or more) in the strings of
/// `value` with [`MASK`].
pub fn mask(value: &mut Value, secrets: &[String]) {
    match value {
        Value::String(text) => {
            for secret in secrets.iter().filter(|s| s.chars().count() >= 8) {
                if text.contains(secret.as_str()) {
                    *text = text.replace(secret.as_str(), MASK);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| mask(v, secrets)),
        Value::Object(map) => map.values_mut().for_each(|v| mask(v, secrets)),
        _ => {}
    }
}

/// A stable 64-bit hash (FNV-1a), so the same seed splits the same runs on every machine.
fn fnv(seed: u64, text: &str) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64 ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// The runs set aside for validation and for test: `validation` and `test` percent of
/// them (each at most 50, rounded, at least one when asked for while runs are left, and
/// never every run: train keeps one), chosen by a shuffle seeded with `seed`.
pub fn held_out(
    run_ids: &[String],
    validation: u8,
    test: u8,
    seed: u64,
) -> (Vec<String>, Vec<String>) {
    let mut shuffled: Vec<&String> = run_ids.iter().collect();
    lean::sort_by_key(&mut shuffled, |id| (fnv(seed, id), (*id).clone()));
    let mut left = run_ids.len().saturating_sub(1);
    let mut take = |percent: u8| {
        let percent = usize::from(percent.min(50));
        if percent == 0 || left == 0 {
            return 0;
        }
        let count = ((run_ids.len() * percent + 50) / 100).clamp(1, left);
        left -= count;
        count
    };
    let (v, t) = (take(validation), take(test));
    let pick = |range: std::ops::Range<usize>| {
        let mut chosen: Vec<String> = shuffled[range].iter().map(|id| (*id).clone()).collect();
        lean::sort(&mut chosen);
        chosen
    };
    (pick(0..v), pick(v..v + t))
}

/// Which runs go in: those whose status was chosen, and with [`Options::only_finished`]
/// only those a person finished (every step complete, no open issue).
pub fn chosen(run: &Run, steps: &[Step], options: &Options) -> bool {
    let finished = || crate::review::ApprovalCheck::of(steps, &[]).doubts().is_none();
    options.statuses.contains(&run.status) && (!options.only_finished || finished())
}

/// How a run's steps become examples.
pub struct Build<'a> {
    pub options: &'a Options,
    /// The turn the Navigator is sent after its prompt, for traces that did not keep it.
    pub user_turn: &'a str,
    /// Secrets to mask wherever they appear.
    pub secrets: &'a [String],
    /// Renders a recorded call's prompt again (traces that did not keep what was sent).
    pub render: &'a dyn Fn(&NavigatorCall) -> Result<String, String>,
    /// Reads a model's answer as the engine does (leniently: fences, prose around it).
    pub parse_answer: &'a dyn Fn(&str) -> Option<Value>,
    /// A step's screenshot as a data URL, when screenshots are chosen and it has one.
    pub image: &'a dyn Fn(&Step) -> Option<String>,
}

/// One run's examples, before the split.
#[derive(Debug, Clone, PartialEq)]
pub struct RunExamples {
    pub run_id: String,
    /// JSON lines, each ending in a newline.
    pub lines: String,
    pub count: usize,
    /// Per line: the step's index and its model-drafted thoughts (`thought1`…).
    pub steps: Vec<(u32, Vec<&'static str>)>,
}

/// The examples of one run's steps; steps left out, the prompts used and the images are
/// counted in `tally`.
pub fn run_examples(
    run: &Run,
    steps: &[Step],
    calls: &SortedMap<u32, NavigatorCall>,
    build: &Build,
    tally: &mut Tally,
) -> RunExamples {
    let mut out =
        RunExamples { run_id: run.id.clone(), lines: String::new(), count: 0, steps: Vec::new() };
    for step in steps {
        let made = (|| {
            if build.options.leave_out_drafted && !step.drafted_thoughts.is_empty() {
                return Err(Skip::Drafted);
            }
            let call = calls.get(&step.index).ok_or(Skip::NoPrompt)?;
            let answered = call.answer.as_deref().and_then(build.parse_answer);
            let target = target(step, answered.as_ref())?;
            let (system, user) = match &call.sent {
                Some((system, user)) => (system.clone(), user.as_str()),
                None => {
                    let system = (build.render)(call).map_err(|_| Skip::PromptFailed)?;
                    (system, build.user_turn)
                }
            };
            let exact = run_contract::digest::sha256_hex(system.as_bytes()) == call.prompt_hash;
            let image = if build.options.screenshots { (build.image)(step) } else { None };
            let parts = build.options.screenshots;
            let mut line = example(&system, user, image.as_deref(), &target, parts);
            mask(&mut line, build.secrets);
            let key = (call.prompt_id.clone(), call.variant.clone(), call.revision_hash.clone());
            let entry = tally.prompts.entry_or_default(key);
            entry.0 += 1;
            entry.1 += usize::from(exact);
            tally.images += usize::from(image.is_some());
            Ok::<_, Skip>(line)
        })();
        match made {
            Ok(line) => {
                out.lines.push_str(&line.to_string());
                out.lines.push('\n');
                out.count += 1;
                let marks = crate::drafting::marks(step);
                tally.drafted += usize::from(!marks.is_empty());
                out.steps.push((step.index, marks));
            }
            Err(why) => *tally.skipped.entry_or_default(why) += 1,
        }
    }
    out
}

/// The three splits as JSON lines.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Splits {
    pub train: String,
    pub validation: String,
    pub test: String,
    /// `provenance.jsonl`: per example, its split and line, run, step and model-drafted
    /// thoughts, so training can leave drafted steps out or weight them (the examples
    /// themselves keep the chat format's one key, `messages`).
    pub provenance: String,
}

/// Splits the runs that gave examples into train, validation and test (see [`held_out`])
/// and counts each.
pub fn split(runs: Vec<RunExamples>, options: &Options, tally: &mut Tally) -> Splits {
    let ids: Vec<String> = runs.iter().filter(|r| r.count > 0).map(|r| r.run_id.clone()).collect();
    let (validation, test) =
        held_out(&ids, options.validation_percent, options.test_percent, options.seed);
    let mut out = Splits::default();
    for run in runs.into_iter().filter(|r| r.count > 0) {
        let (lines, runs, examples) = if validation.contains(&run.run_id) {
            (&mut out.validation, &mut tally.validation_runs, &mut tally.validation_examples)
        } else if test.contains(&run.run_id) {
            (&mut out.test, &mut tally.test_runs, &mut tally.test_examples)
        } else {
            (&mut out.train, &mut tally.train_runs, &mut tally.train_examples)
        };
        let name = if validation.contains(&run.run_id) {
            "validation"
        } else if test.contains(&run.run_id) {
            "test"
        } else {
            "train"
        };
        for (step, drafted) in &run.steps {
            let entry = json!({"split": name, "line": *examples, "run_id": run.run_id,
                "step": step, "drafted_thoughts": drafted});
            out.provenance.push_str(&entry.to_string());
            out.provenance.push('\n');
            *examples += 1;
        }
        *runs += 1;
        lines.push_str(&run.lines);
    }
    out
}

/// What the dataset card reports.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Tally {
    /// Runs and examples per split.
    pub train_runs: usize,
    pub train_examples: usize,
    pub validation_runs: usize,
    pub validation_examples: usize,
    pub test_runs: usize,
    pub test_examples: usize,
    /// Steps left out, by why.
    pub skipped: SortedMap<Skip, usize>,
    /// Per (prompt id, variant, revision hash): examples, and how many rendered exactly as
    /// the Navigator saw them.
    pub prompts: SortedMap<(String, String, String), (usize, usize)>,
    /// Examples with a screenshot.
    pub images: usize,
    /// Examples whose thoughts a model drafted.
    pub drafted: usize,
}

impl Tally {
    pub fn examples(&self) -> usize {
        self.train_examples + self.validation_examples + self.test_examples
    }

    pub fn runs(&self) -> usize {
        self.train_runs + self.validation_runs + self.test_runs
    }
}

/// Facts about the export for its card.
pub struct CardFacts<'a> {
    pub exported_at: &'a str,
    /// The runs list's filter, in words.
    pub filter: &'a str,
    pub options: &'a Options,
}

/// The dataset card (`README.md`): YAML front matter naming the splits for the Hugging Face
/// `datasets` loader, then counts, the selection, the prompts with their hashes, what was
/// left out, and the format.
pub fn card(tally: &Tally, facts: &CardFacts) -> String {
    let options = facts.options;
    let mut out = String::from("---\npretty_name: AlphaScout Navigator steps\n");
    out.push_str("tags:\n- browser-agent\n- chain-of-thought\n- alphascout\n");
    out.push_str("configs:\n- config_name: default\n  data_files:\n");
    if tally.train_examples > 0 {
        out.push_str("  - split: train\n    path: train.jsonl\n");
    }
    if tally.validation_examples > 0 {
        out.push_str("  - split: validation\n    path: validation.jsonl\n");
    }
    if tally.test_examples > 0 {
        out.push_str("  - split: test\n    path: test.jsonl\n");
    }
    out.push_str("---\n\n# AlphaScout Navigator fine-tuning data\n\n");
    out.push_str(&format!(
        "Annotated steps of the AlphaScout browser agent, one chat example per step: the \
         Navigator's prompt as it saw it, and its answer with the annotated chain of thought. \
         Exported {}.\n\n",
        facts.exported_at
    ));
    out.push_str("## Counts\n\n| split | runs | examples |\n|---|---|---|\n");
    out.push_str(&format!("| train | {} | {} |\n", tally.train_runs, tally.train_examples));
    out.push_str(&format!(
        "| validation | {} | {} |\n",
        tally.validation_runs, tally.validation_examples
    ));
    out.push_str(&format!("| test | {} | {} |\n", tally.test_runs, tally.test_examples));
    out.push_str(&format!("| all | {} | {} |\n\n", tally.runs(), tally.examples()));
    let statuses: Vec<&str> = options.statuses.iter().map(|s| s.as_str()).collect();
    out.push_str("## Selection\n\n");
    out.push_str(&format!("- Run statuses: {}\n", statuses.join(", ")));
    out.push_str(&format!("- Runs list filter: {}\n", facts.filter));
    out.push_str(&format!(
        "- Screenshots: {}\n",
        if options.screenshots {
            format!("in the user turn as image parts ({} examples have one)", tally.images)
        } else {
            "not included".to_owned()
        }
    ));
    out.push_str(&if options.leave_out_drafted {
        "- Steps whose thoughts a model drafted: left out\n".to_owned()
    } else {
        format!(
            "- Steps whose thoughts a model drafted: {} examples, marked in `provenance.jsonl` \
             (`drafted_thoughts`)\n",
            tally.drafted
        )
    });
    if options.only_finished {
        out.push_str("- Only runs a person finished: every step complete, no open issue\n");
    }
    out.push_str(&format!(
        "- Split: {} % of the runs to validation and {} % to test, whole runs, seed {}\n\n",
        options.validation_percent.min(50),
        options.test_percent.min(50),
        options.seed
    ));
    out.push_str("## Prompts\n\n| prompt | variant | revision hash | examples | exact |\n|---|---|---|---|---|\n");
    for ((id, variant, revision), (examples, exact)) in &tally.prompts {
        out.push_str(&format!("| {id} | {variant} | `{revision}` | {examples} | {exact} |\n"));
    }
    out.push_str(
        "\n*Exact*: the system message hashes to the SHA-256 the step's trace recorded for \
         the prompt the Navigator was sent. Others differ from it (a field redacted in the \
         trace, or a prompt file changed since).\n\n",
    );
    out.push_str("## Left out\n\n");
    if tally.skipped.is_empty() {
        out.push_str("No step was left out.\n\n");
    } else {
        out.push_str("| why | steps |\n|---|---|\n");
        for (why, count) in &tally.skipped {
            out.push_str(&format!("| {} | {count} |\n", why.describe()));
        }
        out.push('\n');
    }
    out.push_str(
        "## Format\n\nJSON Lines, one example per line: `{\"messages\": [system, user, \
         assistant]}`. The assistant's content is the Navigator's answer as a JSON string: \
         `{\"current_state\": {\"evaluation_previous_goal\", \"thought_changed\", \
         \"thought_state\", \"thought_next\", \"extended_thoughts\", \"decision\", \"memory\", \
         \"next_goal\"}, \"ask_user\": \"\", \"actions\": [...]}`: thoughts 1–3 (what changed, the \
         state, the next action) and the extended thoughts as annotated, the actions carried out, \
         and the evaluation, memory and next goal as annotated (the model's own where the step \
         has none). `provenance.jsonl` names each example's split, line (from 0), run, step \
         and the thoughts a model drafted. ",
    );
    out.push_str(if options.screenshots {
        "Every `content` is a list of parts; the user turn's image is a `data:image/jpeg;base64` URL.\n"
    } else {
        "Every `content` is a string.\n"
    });
    out.push_str(
        "\nSecrets: text typed into password and other secret fields is `[secret]`, and API \
         keys and the sync token are masked wherever they appeared.\n",
    );
    out
}

#[cfg(test)]
mod tests;
