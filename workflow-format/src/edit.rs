//! Edit: the Workflow editor's changes as data, applied by one pure function, so the page's
//! reducer only calls [`apply`] then [`Workflow::validate`] (live) and saves a new version.
//!
//! Steps stay grouped in subtask order after every edit: replay reads a subtask's steps in
//! list order, and the fast path checks an action against the step recorded after it.

use serde::Serialize;

use super::schema::{Param, Workflow, WorkflowStep, WorkflowSubtask, fill, placeholders};

#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::TaggedDeserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Edit {
    AddParam {
        param: Param,
    },
    /// Renaming rewrites every `{old}` to `{new}`.
    UpdateParam {
        index: usize,
        param: Param,
    },
    DeleteParam {
        index: usize,
    },
    AddSubtask {
        at: usize,
        subtask: WorkflowSubtask,
    },
    UpdateSubtask {
        index: usize,
        text: String,
        expected_outcome: String,
    },
    /// Deletes the subtask's steps with it.
    DeleteSubtask {
        index: usize,
    },
    MoveSubtask {
        from: usize,
        to: usize,
    },
    SetDependencies {
        index: usize,
        depends_on: Vec<String>,
    },
    /// Replaces step `index` (intent, action fields…); its subtask is kept.
    UpdateStep {
        index: usize,
        step: Box<WorkflowStep>,
    },
    /// Moves step `from` into subtask `to_subtask`, as its `position`-th step.
    MoveStep {
        from: usize,
        to_subtask: String,
        position: usize,
    },
    DeleteStep {
        index: usize,
    },
}

/// `workflow` with `edit` applied, or why it cannot be (an index out of range, an unknown
/// subtask). What makes the result invalid is for [`Workflow::validate`] to say.
pub fn apply(workflow: &Workflow, edit: &Edit) -> Result<Workflow, String> {
    let mut w = workflow.clone();
    let check = |index: usize, len: usize, what: &str| {
        if index < len { Ok(()) } else { Err(format!("There is no {what} {}.", index + 1)) }
    };
    match edit {
        Edit::AddParam { param } => w.params.push(param.clone()),
        Edit::UpdateParam { index, param } => {
            check(*index, w.params.len(), "parameter")?;
            let old = std::mem::replace(&mut w.params[*index], param.clone()).name;
            if old != param.name {
                rename_placeholder(&mut w, &old, &param.name);
            }
        }
        Edit::DeleteParam { index } => {
            check(*index, w.params.len(), "parameter")?;
            w.params.remove(*index);
        }
        Edit::AddSubtask { at, subtask } => {
            w.subtasks.insert((*at).min(w.subtasks.len()), subtask.clone());
        }
        Edit::UpdateSubtask { index, text, expected_outcome } => {
            check(*index, w.subtasks.len(), "subtask")?;
            w.subtasks[*index].text = text.clone();
            w.subtasks[*index].expected_outcome = expected_outcome.clone();
        }
        Edit::DeleteSubtask { index } => {
            check(*index, w.subtasks.len(), "subtask")?;
            let gone = w.subtasks.remove(*index);
            w.steps.retain(|s| s.subtask != gone.id);
        }
        Edit::MoveSubtask { from, to } => {
            check(*from, w.subtasks.len(), "subtask")?;
            let subtask = w.subtasks.remove(*from);
            w.subtasks.insert((*to).min(w.subtasks.len()), subtask);
        }
        Edit::SetDependencies { index, depends_on } => {
            check(*index, w.subtasks.len(), "subtask")?;
            w.subtasks[*index].depends_on = depends_on.clone();
        }
        Edit::UpdateStep { index, step } => {
            check(*index, w.steps.len(), "step")?;
            let subtask = w.steps[*index].subtask.clone();
            w.steps[*index] = WorkflowStep { subtask, ..(**step).clone() };
        }
        Edit::MoveStep { from, to_subtask, position } => {
            check(*from, w.steps.len(), "step")?;
            if !w.subtasks.iter().any(|s| &s.id == to_subtask) {
                return Err(format!("There is no subtask {to_subtask:?}."));
            }
            let mut step = w.steps.remove(*from);
            step.subtask = to_subtask.clone();
            let at = w
                .steps
                .iter()
                .enumerate()
                .filter(|(_, s)| &s.subtask == to_subtask)
                .map(|(i, _)| i)
                .nth(*position)
                .unwrap_or(w.steps.len());
            w.steps.insert(at, step);
        }
        Edit::DeleteStep { index } => {
            check(*index, w.steps.len(), "step")?;
            w.steps.remove(*index);
        }
    }
    group_steps(&mut w);
    Ok(w)
}

/// Sorts steps by their subtask's position, keeping their order within a subtask; steps
/// of an unknown subtask go last, where validation points at them.
fn group_steps(w: &mut Workflow) {
    let position = |id: &str| w.subtasks.iter().position(|s| s.id == id).unwrap_or(usize::MAX);
    let mut keyed: Vec<(usize, WorkflowStep)> =
        w.steps.drain(..).map(|s| (position(&s.subtask), s)).collect();
    lean::sort_by_key(&mut keyed, |(at, _)| *at);
    w.steps = keyed.into_iter().map(|(_, s)| s).collect();
}

fn rename_placeholder(w: &mut Workflow, old: &str, new: &str) {
    let values = [(old.to_owned(), format!("{{{new}}}"))].into_iter().collect();
    let rename = |text: &mut String| {
        if placeholders(text).contains(&old) {
            *text = fill(text, &values);
        }
    };
    rename(&mut w.description);
    for subtask in &mut w.subtasks {
        rename(&mut subtask.text);
        rename(&mut subtask.expected_outcome);
    }
    for step in &mut w.steps {
        rename(&mut step.intent);
        if let Some(value) = &mut step.action.value {
            rename(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::tests::example;

    #[test]
    fn renaming_a_parameter_rewrites_its_uses_and_deleting_it_is_caught() {
        let w = example();
        let renamed = Param { name: "track".into(), ..w.params[0].clone() };
        let w = apply(&w, &Edit::UpdateParam { index: 0, param: renamed }).unwrap();
        assert_eq!(w.steps[0].action.value.as_deref(), Some("{track}"));
        assert_eq!(w.subtasks[0].expected_outcome, "{track} is playing");
        assert_eq!(w.validate(), []);
        let w = apply(&w, &Edit::DeleteParam { index: 0 }).unwrap();
        assert!(w.validate().iter().any(|p| p.message.contains("{track} is not a parameter")));
    }

    #[test]
    fn moving_a_subtask_above_its_dependency_is_caught_and_steps_follow_their_subtask() {
        let w = apply(&example(), &Edit::MoveSubtask { from: 1, to: 0 }).unwrap();
        assert_eq!(w.steps[0].subtask, "album", "steps stay grouped in subtask order");
        let problems = w.validate();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].path, "/subtasks/0/dependsOn/0");
        assert!(problems[0].message.contains("not upstream"));
    }

    #[test]
    fn steps_move_between_subtasks_and_an_emptied_subtask_is_reported() {
        let w = example();
        let w =
            apply(&w, &Edit::MoveStep { from: 3, to_subtask: "play".into(), position: 0 }).unwrap();
        assert_eq!(w.steps[0].intent, "Open the album");
        assert!(w.steps.iter().all(|s| s.subtask == "play"));
        assert!(w.validate().iter().any(|p| p.path == "/subtasks/1"));
        let w = apply(&w, &Edit::DeleteSubtask { index: 1 }).unwrap();
        assert_eq!(w.validate(), []);
        assert!(apply(&w, &Edit::DeleteStep { index: 9 }).unwrap_err().contains("no step 10"));
        let unknown = Edit::MoveStep { from: 0, to_subtask: "nope".into(), position: 0 };
        assert!(apply(&w, &unknown).is_err());
    }

    #[test]
    fn edits_are_data_for_the_page() {
        let edit = Edit::SetDependencies { index: 1, depends_on: vec!["album".into()] };
        let json = serde_json::to_value(&edit).unwrap();
        assert_eq!(json["op"], "set_dependencies");
        assert_eq!(serde_json::from_value::<Edit>(json).unwrap(), edit);
    }
}
