//! One workflow being edited: a draft changed only through the engine's `edit::apply`,
//! its problems (`Workflow::validate`) recomputed after every change, so they show live next
//! to the field they are about.

use workflow_format::edit::{Edit, apply};
use workflow_format::schema::{Problem, Workflow};

#[derive(Debug, Clone, PartialEq)]
pub struct Editor {
    /// The version the draft started from.
    pub base: Workflow,
    pub draft: Workflow,
    pub problems: Vec<Problem>,
    /// Why the last edit could not be applied.
    pub refused: Option<String>,
}

impl Editor {
    pub fn open(workflow: Workflow) -> Editor {
        let problems = workflow.validate();
        Editor { base: workflow.clone(), draft: workflow, problems, refused: None }
    }

    pub fn edit(&mut self, edit: &Edit) {
        match apply(&self.draft, edit) {
            Ok(draft) => {
                self.draft = draft;
                self.refused = None;
                self.problems = self.draft.validate();
            }
            Err(why) => self.refused = Some(why),
        }
    }

    /// A change the edit list does not name (the workflow's name and description).
    pub fn change(&mut self, change: impl FnOnce(&mut Workflow)) {
        change(&mut self.draft);
        self.problems = self.draft.validate();
    }

    /// Unsaved changes.
    pub fn dirty(&self) -> bool {
        self.draft != self.base
    }

    /// Only a workflow without problems is saved: a saved version can always be replayed.
    pub fn can_save(&self) -> bool {
        self.dirty() && self.problems.is_empty()
    }

    /// The problems at JSON Pointer `path` or below it (`/subtasks/1` also takes
    /// `/subtasks/1/text`).
    pub fn problems_at(&self, path: &str) -> Vec<&Problem> {
        self.problems
            .iter()
            .filter(|p| {
                p.path == path
                    || p.path.strip_prefix(path).is_some_and(|rest| rest.starts_with('/'))
            })
            .collect()
    }

    /// The extract variables defined in subtasks before `index`: what it may depend on.
    pub fn upstream_variables(&self, index: usize) -> Vec<String> {
        let earlier: Vec<&str> =
            self.draft.subtasks.iter().take(index).map(|s| s.id.as_str()).collect();
        self.draft
            .steps
            .iter()
            .filter(|s| earlier.contains(&s.subtask.as_str()))
            .filter_map(|s| s.action.variable.clone())
            .collect()
    }
}
