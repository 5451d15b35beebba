//! Model-drafted thoughts (seed §7.G): a draft is a suggestion the annotator accepts, edits
//! or rejects, and a step whose thought holds accepted draft text is marked
//! (`Step::drafted_thoughts`) in the record, in sync and in every export, so training can
//! leave it out or weight it.
//!
//! The mark stays through edits: a corrected draft is still the model's wording. It goes
//! only when one edit replaces the whole thought (cleared, or selected and typed over), as
//! no word of the text before is left; what the person then writes is their own.

use crate::lint::words;
use crate::record::{Step, Thought, Thoughts};

/// The steps that want a draft: those with no thought written at all.
pub fn without_thoughts(steps: &[Step]) -> Vec<u32> {
    steps
        .iter()
        .filter(|s| Thought::ALL.iter().all(|t| s.thoughts.get(*t).trim().is_empty()))
        .map(|s| s.index)
        .collect()
}

/// Whether a drafted thought keeps its mark after an edit from `before` to `after`: yes
/// unless no word of `before` is left in `after`.
pub fn keeps_mark(before: &str, after: &str) -> bool {
    let kept: Vec<String> = words(after).iter().map(|w| text_case::lowercase(w.text)).collect();
    words(before).iter().any(|w| kept.contains(&text_case::lowercase(w.text)))
}

/// Sets one thought of `step` to `text`, keeping its drafted mark only per [`keeps_mark`].
pub fn set_thought(step: &mut Step, which: Thought, text: String) {
    if step.drafted_thoughts.contains(&which) && !keeps_mark(step.thoughts.get(which), &text) {
        step.drafted_thoughts.retain(|t| *t != which);
    }
    *step.thoughts.get_mut(which) = text;
}

/// After any edit of a step (a template, a fix in every step, a replaced copy): each
/// drafted thought of `after` keeps its mark only per [`keeps_mark`] against `before`.
pub fn carry_marks(before: &Step, after: &mut Step) {
    let thoughts = after.thoughts.clone();
    after.drafted_thoughts.retain(|t| keeps_mark(before.thoughts.get(*t), thoughts.get(*t)));
}

/// Accepts a draft of one thought, as the annotator left it (edited or not): the thought
/// takes the text and is marked drafted. An empty text accepts nothing.
pub fn accept(step: &mut Step, which: Thought, text: &str) {
    if text.trim().is_empty() {
        return;
    }
    *step.thoughts.get_mut(which) = text.to_owned();
    if !step.drafted_thoughts.contains(&which) {
        step.drafted_thoughts.push(which);
        lean::sort(&mut step.drafted_thoughts);
    }
}

/// The drafted thoughts by key, for exports (`thought1;thought3`).
pub fn marks(step: &Step) -> Vec<&'static str> {
    step.drafted_thoughts.iter().map(|t| t.key()).collect()
}

/// A model's draft of one step's three thoughts, pending the annotator's decision.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Draft {
    pub step_index: u32,
    /// The drafted text per thought; a thought decided (accepted or rejected) is removed.
    pub thoughts: Vec<(Thought, String)>,
}

impl Draft {
    /// A draft of `thoughts` for the step at `step_index`; empty drafted thoughts are left out.
    pub fn new(step_index: u32, thoughts: &Thoughts) -> Draft {
        let thoughts = Thought::ALL
            .into_iter()
            .map(|t| (t, thoughts.get(t).trim().to_owned()))
            .filter(|(_, text)| !text.is_empty())
            .collect();
        Draft { step_index, thoughts }
    }

    pub fn get(&self, which: Thought) -> Option<&str> {
        self.thoughts.iter().find(|(t, _)| *t == which).map(|(_, text)| text.as_str())
    }

    /// Edits the pending text of one thought.
    pub fn edit(&mut self, which: Thought, text: String) {
        if let Some(entry) = self.thoughts.iter_mut().find(|(t, _)| *t == which) {
            entry.1 = text;
        }
    }

    /// Takes one thought out of the draft (decided), returning its text.
    pub fn take(&mut self, which: Thought) -> Option<String> {
        let at = self.thoughts.iter().position(|(t, _)| *t == which)?;
        Some(self.thoughts.remove(at).1)
    }

    pub fn is_empty(&self) -> bool {
        self.thoughts.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(texts: [&str; 3]) -> Step {
        Step {
            thoughts: Thoughts {
                thought1: texts[0].into(),
                thought2: texts[1].into(),
                thought3: texts[2].into(),
            },
            ..Step::default()
        }
    }

    #[test]
    fn steps_without_any_thought_want_a_draft() {
        let mut steps = vec![step(["", " ", ""]), step(["I start.", "", ""])];
        steps[1].index = 1;
        assert_eq!(without_thoughts(&steps), [0]);
    }

    #[test]
    fn an_accepted_draft_is_marked_and_keeps_its_mark_through_corrections() {
        let mut s = step(["", "", ""]);
        accept(&mut s, Thought::Two, "I can see the serch box.");
        assert_eq!(s.thoughts.thought2, "I can see the serch box.");
        assert_eq!(s.drafted_thoughts, [Thought::Two]);
        set_thought(&mut s, Thought::Two, "I can see the search box at the top.".into());
        assert_eq!(s.drafted_thoughts, [Thought::Two], "a correction keeps the mark");
        set_thought(&mut s, Thought::Two, "".into());
        assert!(s.drafted_thoughts.is_empty(), "cleared: what is typed next is the person's");
        accept(&mut s, Thought::One, "I start on the home page.");
        set_thought(&mut s, Thought::One, "Nothing changed yet".into());
        assert!(s.drafted_thoughts.is_empty(), "typed over whole");
        accept(&mut s, Thought::Three, "  ");
        assert!(s.drafted_thoughts.is_empty() && s.thoughts.thought3.is_empty());
    }

    #[test]
    fn a_template_over_a_drafted_thought_takes_its_mark_and_a_fix_keeps_it() {
        let mut before = step(["I start here.", "I can see the serch box.", ""]);
        before.drafted_thoughts = vec![Thought::One, Thought::Two];
        let mut after = before.clone();
        after.thoughts.thought1 = "Nothing has changed yet.".into();
        after.thoughts.thought2 = "I can see the search box.".into();
        carry_marks(&before, &mut after);
        assert_eq!(after.drafted_thoughts, [Thought::Two]);
    }

    #[test]
    fn a_draft_is_decided_a_thought_at_a_time() {
        let mut draft = Draft::new(
            4,
            &Thoughts { thought1: "I start.".into(), thought2: " ".into(), thought3: "Go.".into() },
        );
        assert_eq!(draft.thoughts.len(), 2, "an empty drafted thought is no suggestion");
        draft.edit(Thought::Three, "I click Go.".into());
        assert_eq!(draft.take(Thought::Three).as_deref(), Some("I click Go."));
        assert_eq!(draft.get(Thought::One), Some("I start."));
        assert_eq!(draft.take(Thought::One).as_deref(), Some("I start."));
        assert!(draft.is_empty());
    }
}
