//! AI-drafted thoughts on the open run (seed §7.G): asking the worker for a draft of one
//! step or of every step without thoughts (k of N, stoppable), and the annotator's decision
//! on each drafted thought. A draft is a suggestion: accepting puts it (as edited) into the
//! step's unsaved edits, marked drafted, and the save stays the person's; rejecting leaves
//! the step as it was. One draft is asked at a time.

use std::collections::VecDeque;

use annotation_core::drafting::{self, Draft};
use annotation_core::record::{Run, Step, Thought, Thoughts};
use protocol::drafting::{DraftInput, DraftedThoughts};

use super::{Effect, Notice, Studio};

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Drafting {
    /// Drafts waiting for a decision, by step index.
    pub pending: lean::SortedMap<u32, Draft>,
    /// The step whose draft was asked and not answered yet.
    pub asking: Option<u32>,
    /// A batch: the steps still to ask, and how far it is.
    pub queue: VecDeque<u32>,
    pub batch: Option<Batch>,
}

/// "Draft thoughts for N steps without thoughts": `done` of `total` answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Batch {
    pub done: usize,
    pub total: usize,
    pub stopped: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum DraftAction {
    /// Draft the selected step.
    Ask,
    /// Draft every step without thoughts, one after another.
    Batch,
    /// Ask no more of the batch (the draft under way still arrives).
    Stop,
    Answered {
        run_id: String,
        step_index: u32,
        result: Result<DraftedThoughts, String>,
    },
    /// The worker's port closed with a draft under way.
    Lost,
    Edit {
        step_index: u32,
        which: Thought,
        text: String,
    },
    Accept {
        step_index: u32,
        which: Thought,
    },
    Reject {
        step_index: u32,
        which: Thought,
    },
    AcceptAll {
        step_index: u32,
    },
    RejectAll {
        step_index: u32,
    },
}

/// A step's action in words, for the prompt.
pub fn action_words(step: &Step) -> String {
    let action = &step.action;
    let mut words = action.kind.as_str().to_owned();
    if !action.target.is_empty() {
        words.push_str(&format!(" on '{}'", action.target));
    }
    if let Some(value) = action.value.as_deref().filter(|v| !v.is_empty()) {
        words.push_str(&format!(" with '{value}'"));
    }
    words
}

/// What the draft prompt reads of the step at `position` of `steps` (the screenshot and
/// the page state are the effect layer's to add).
pub fn input(run: &Run, steps: &[Step], position: usize) -> Option<DraftInput> {
    let step = steps.get(position)?;
    let message = step.actions.first().and_then(|a| a["message"].as_str()).unwrap_or_default();
    let outcome = match (step.outcome.as_str(), message) {
        ("", "") => "not recorded".to_owned(),
        (outcome, "") => outcome.to_owned(),
        ("", message) => message.to_owned(),
        (outcome, message) => format!("{outcome}: {message}"),
    };
    Some(DraftInput {
        run_id: run.id.clone(),
        step_index: step.index,
        task: run.task_prompt.clone(),
        step_count: steps.len() as u32,
        url: step.url.clone(),
        title: step.title.clone(),
        action: action_words(step),
        outcome,
        previous_action: position
            .checked_sub(1)
            .map(|p| action_words(&steps[p]))
            .unwrap_or_default(),
        page_state: String::new(),
        screenshot: None,
    })
}

impl Studio {
    pub(super) fn drafting(&mut self, action: DraftAction) {
        let Some(editor) = &mut self.editor else { return };
        if !editor.permissions().edit
            && !matches!(action, DraftAction::Answered { .. } | DraftAction::Lost)
        {
            return;
        }
        let steps = matches!(action, DraftAction::Batch).then(|| editor.merged_steps());
        let state = &mut editor.drafting;
        match action {
            DraftAction::Ask => {
                if state.asking.is_none()
                    && state.batch.is_none()
                    && let Some(step) = editor.current()
                {
                    let index = step.index;
                    self.ask_draft(index);
                }
            }
            DraftAction::Batch => {
                if state.asking.is_some() || state.batch.is_some() {
                    return;
                }
                let wanted: VecDeque<u32> = drafting::without_thoughts(&steps.unwrap_or_default())
                    .into_iter()
                    .filter(|index| !state.pending.contains_key(index))
                    .collect();
                if wanted.is_empty() {
                    return self.notify(true, "Every step has thoughts or a draft already.");
                }
                state.batch = Some(Batch { done: 0, total: wanted.len(), stopped: false });
                state.queue = wanted;
                self.next_in_batch();
            }
            DraftAction::Stop => {
                state.queue.clear();
                if let Some(batch) = &mut state.batch {
                    batch.stopped = true;
                    if state.asking.is_none() {
                        self.end_batch();
                    }
                }
            }
            DraftAction::Answered { run_id, step_index, result } => {
                if run_id != editor.run.id || state.asking != Some(step_index) {
                    return;
                }
                state.asking = None;
                if let Some(batch) = &mut state.batch {
                    batch.done += 1;
                }
                match result {
                    Ok(drafted) => {
                        let thoughts = Thoughts {
                            thought1: drafted.thought1,
                            thought2: drafted.thought2,
                            thought3: drafted.thought3,
                        };
                        let draft = Draft::new(step_index, &thoughts);
                        if !draft.is_empty() {
                            state.pending.insert(step_index, draft);
                        }
                        if state.batch.is_some() {
                            self.next_in_batch();
                        }
                    }
                    Err(why) => {
                        // The next steps would fail alike (no key, no model): the batch stops.
                        state.queue.clear();
                        let batch = state.batch.take();
                        let done =
                            batch.map(|b| format!(" ({} of {} answered)", b.done - 1, b.total));
                        let text =
                            format!("Step {}: {why}{}", step_index + 1, done.unwrap_or_default());
                        self.notice = Some(Notice { ok: false, text });
                    }
                }
            }
            DraftAction::Lost => {
                if let Some(step_index) = state.asking.take() {
                    state.queue.clear();
                    state.batch = None;
                    let text = format!(
                        "Step {}: the extension's worker stopped before the draft came; ask again.",
                        step_index + 1
                    );
                    self.notice = Some(Notice { ok: false, text });
                }
            }
            DraftAction::Edit { step_index, which, text } => {
                if let Some(draft) = state.pending.get_mut(&step_index) {
                    draft.edit(which, text);
                }
            }
            DraftAction::Accept { step_index, which } => {
                self.decide_draft(step_index, &[which], true)
            }
            DraftAction::Reject { step_index, which } => {
                self.decide_draft(step_index, &[which], false)
            }
            DraftAction::AcceptAll { step_index } => {
                self.decide_draft(step_index, &Thought::ALL, true)
            }
            DraftAction::RejectAll { step_index } => {
                self.decide_draft(step_index, &Thought::ALL, false)
            }
        }
    }

    /// Asks the worker for a draft of step `index`.
    fn ask_draft(&mut self, index: u32) {
        let Some(editor) = &mut self.editor else { return };
        let steps = editor.merged_steps();
        let Some(position) = steps.iter().position(|s| s.index == index) else { return };
        let Some(input) = input(editor.merged_run(), &steps, position) else { return };
        let step = &steps[position];
        let effect = Effect::DraftThoughts {
            input: Box::new(input),
            screenshot_key: step.screenshot.as_ref().map(|s| s.key.clone()),
            trace_ids: step.trace_ids.clone(),
        };
        editor.drafting.asking = Some(index);
        self.queue(effect);
    }

    fn next_in_batch(&mut self) {
        let Some(editor) = &mut self.editor else { return };
        match editor.drafting.queue.pop_front() {
            Some(index) => self.ask_draft(index),
            None => self.end_batch(),
        }
    }

    fn end_batch(&mut self) {
        let Some(editor) = &mut self.editor else { return };
        let Some(batch) = editor.drafting.batch.take() else { return };
        let text = if batch.stopped {
            format!("Drafting stopped: {} of {} steps drafted.", batch.done, batch.total)
        } else {
            format!(
                "Drafted {} of {} steps: accept, edit or reject each draft.",
                batch.done, batch.total
            )
        };
        self.notice = Some(Notice { ok: true, text });
    }

    /// Accepts (as edited) or rejects the drafted `thoughts` of step `index`.
    fn decide_draft(&mut self, index: u32, thoughts: &[Thought], accept: bool) {
        let Some(editor) = &mut self.editor else { return };
        let Some(position) = editor.steps.iter().position(|s| s.index == index) else { return };
        let Some(draft) = editor.drafting.pending.get_mut(&index) else { return };
        let taken: Vec<(Thought, String)> =
            thoughts.iter().filter_map(|t| Some((*t, draft.take(*t)?))).collect();
        if draft.is_empty() {
            editor.drafting.pending.remove(&index);
        }
        if accept {
            editor.edit_step_at(position, |step| {
                for (which, text) in &taken {
                    drafting::accept(step, *which, text);
                }
            });
        }
    }
}

#[cfg(test)]
#[path = "drafting_tests.rs"]
mod tests;
