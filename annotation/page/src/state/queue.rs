//! Moving through a queue of runs (Label Studio and Potato move on after submit): the
//! list's order is kept as the run opens, and "next run" follows it.

use annotation_core::record::ReviewStatus;

use super::{Effect, Leave, Studio};

impl Studio {
    /// The list's order as shown now, when the open run is in it (or nothing is kept yet).
    pub(super) fn keep_queue(&mut self) {
        let Some(run_id) = self.editor.as_ref().map(|e| e.run.id.clone()) else { return };
        // "My queue" is the server's order of what is assigned to the person.
        if self.team.show_queue && self.team.queue_loaded {
            let queue: Vec<String> = self.team.queue.iter().map(|q| q.run_id.clone()).collect();
            if queue.contains(&run_id) || !self.run_queue.contains(&run_id) {
                self.run_queue = queue;
            }
            return;
        }
        if !self.list.loaded || self.run_queue.contains(&run_id) {
            return;
        }
        self.run_queue = self.list.shown().map(|s| s.run_id.clone()).collect();
    }

    /// The list arrived: a run opened by its URL now has a queue, and a "next run" asked
    /// for before the list was read goes on.
    pub(super) fn list_arrived(&mut self) {
        self.keep_queue();
        if std::mem::take(&mut self.next_after_load) {
            self.next_run();
        }
    }

    /// The run after the open one in the kept order; the first other run when the open one
    /// is not in it.
    fn next_in_queue(&self) -> Option<String> {
        let current = &self.editor.as_ref()?.run.id;
        let after = match self.run_queue.iter().position(|id| id == current) {
            Some(at) => self.run_queue.get(at + 1),
            None => self.run_queue.iter().find(|id| *id != current),
        };
        after.cloned()
    }

    pub(super) fn next_run(&mut self) {
        let Some((qa, dirty)) = self.editor.as_ref().map(|e| (e.qa, e.dirty())) else {
            // From the list: its first run (the queue's, on "My queue").
            let first = match self.team.show_queue {
                true => self.team.queue.first().map(|q| q.run_id.clone()),
                false => self.list.shown().next().map(|s| s.run_id.clone()),
            };
            if let Some(first) = first {
                self.open_run(first, false);
            }
            return;
        };
        if !self.list.loaded {
            self.next_after_load = true;
            self.queue(Effect::LoadList);
            return;
        }
        self.keep_queue();
        match self.next_in_queue() {
            Some(run_id) if dirty => self.ask_to_leave(Leave::Run { run_id, qa }, false),
            Some(run_id) => self.leave(Leave::Run { run_id, qa }),
            None => self.notify(true, "That was the last run in the list."),
        }
    }

    /// Submit for review, then on to the next run once it is stored. Only where "Submit
    /// for review" is offered.
    pub(super) fn submit_and_next(&mut self) {
        let Some(editor) = &mut self.editor else { return };
        if !editor.targets().contains(&ReviewStatus::InReview) {
            let status = editor.merged_run().status.label().to_ascii_lowercase();
            return self.notify(false, format!("This run cannot be submitted: it is {status}."));
        }
        self.next_after_save = true;
        editor.transition(ReviewStatus::InReview);
        self.take_command();
    }
}
