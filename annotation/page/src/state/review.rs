//! Review on the open run: suggestions written, accepted or rejected (here or on the
//! server), and comments. Decided here; stored by the effects queued.

use annotation_core::review::{self, Comment, CommentKind, Suggestion, SuggestionState};

use super::{Effect, Studio};

impl Studio {
    /// Sends the suggestion being written, as `text`; one that changes nothing is refused.
    pub(super) fn submit_suggestion(&mut self, id: String, text: String, at: String) {
        let Some(editor) = &self.editor else { return };
        let (Some((field, _)), Some(step)) = (&editor.suggesting, editor.current()) else {
            return;
        };
        let passage = editor.suggest_passage.clone().filter(|p| p.field == *field);
        // A passage suggestion replaces its quote; any other, the whole thought.
        let before = match &passage {
            Some(p) => p.quote.clone(),
            None => step.thoughts.get(*field).to_owned(),
        };
        if text == before {
            self.notify(false, "The suggestion is the same as the current text; change it first.");
            return;
        }
        let suggestion = Suggestion {
            id,
            run_id: editor.run.id.clone(),
            step_index: step.index,
            field: *field,
            before,
            after: text,
            author: editor.user.name.clone(),
            note: String::new(),
            state: SuggestionState::Pending,
            created_at: at,
            resolved_by: None,
            resolved_at: None,
            server_id: None,
            passage,
        };
        let notice = "Suggestion sent to the run's author.".to_owned();
        self.queue(Effect::PutSuggestion { suggestion: Box::new(suggestion), notice, sent: true });
    }

    /// The author's decision: on the server when it holds the suggestion and sync is on
    /// (the server applies it), here otherwise.
    pub(super) fn resolve(&mut self, suggestion: Suggestion, accept: bool, at: String) {
        let settings = &self.sync.settings;
        if review::decided_on_server(&suggestion, settings.enabled()) {
            let settings = settings.clone();
            let suggestion = Box::new(suggestion);
            self.queue(Effect::DecideOnServer { suggestion, accept, settings, at });
            return;
        }
        let Some(editor) = &self.editor else { return };
        let Some(mut scratch) =
            editor.merged_steps().into_iter().find(|s| s.index == suggestion.step_index)
        else {
            return;
        };
        let mut decided = suggestion;
        let user = editor.user.name.clone();
        let result = if accept {
            review::accept(&mut decided, &mut scratch, &user, &at)
        } else {
            review::reject(&mut decided, &user, &at)
        };
        match result {
            Ok(()) => self.decided(decided, accept, at),
            Err(why) => self.notify(false, why.to_string()),
        }
    }

    /// A decided suggestion: an accepted text goes in as an edit and is saved as a version,
    /// and the decision is stored.
    pub(super) fn decided(&mut self, decided: Suggestion, accept: bool, at: String) {
        let Some(editor) = &mut self.editor else { return };
        if accept {
            let user = editor.user.name.clone();
            let position = editor.steps.iter().position(|s| s.index == decided.step_index);
            if let Some(position) = position {
                let mut changed = editor.merged_steps().swap_remove(position);
                let current = changed.thoughts.get(decided.field).to_owned();
                let text = review::applied(&decided, &current).unwrap_or(current);
                *changed.thoughts.get_mut(decided.field) = text;
                changed.last_edited_by = user;
                changed.last_edited_at = at;
                editor.replace_step_at(position, changed);
                editor.save_now();
            }
        }
        let notice = if accept { "Suggestion accepted." } else { "Suggestion rejected." };
        self.queue(Effect::PutSuggestion {
            suggestion: Box::new(decided),
            notice: notice.to_owned(),
            sent: false,
        });
    }

    /// A comment on the selected step, or a reply in the thread `reply_to`.
    pub(super) fn post_comment(
        &mut self,
        id: String,
        text: String,
        kind: CommentKind,
        reply_to: Option<String>,
        at: String,
    ) {
        let Some(editor) = &self.editor else { return };
        let Some(step) = editor.current() else { return };
        if text.trim().is_empty() {
            return;
        }
        let reply_to_none = reply_to.is_none();
        let comment = Comment {
            id,
            run_id: editor.run.id.clone(),
            step_index: Some(step.index),
            parent_id: reply_to,
            author: editor.user.name.clone(),
            text: text.trim().to_owned(),
            kind,
            resolved: false,
            created_at: at,
            server_id: None,
            // A thread's first comment takes the passage picked for it; a reply is in its
            // thread's place.
            passage: if reply_to_none { editor.passage.clone() } else { None },
        };
        if let Some(editor) = &mut self.editor {
            editor.passage = None;
        }
        self.queue(Effect::PutComment(comment));
    }

    pub(super) fn toggle_resolved(&mut self, mut comment: Comment) {
        comment.resolved = !comment.resolved;
        self.queue(Effect::PutComment(comment));
    }
}
