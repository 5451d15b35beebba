//! Sync rounds as the page schedules them: one at a time, another after it when something
//! new came up meanwhile, and what a finished round changes on screen.

pub use annotation_sync::{RoundDone, TeamRound};

use annotation_core::sync::SyncState;

use super::{Effect, Screen, Studio};

impl Studio {
    /// Something new to send: a round now, or after the one under way (started by
    /// [`Studio::start_round`] at the end of the action).
    pub(super) fn kick_sync(&mut self) {
        self.sync.kick += 1;
    }

    pub(super) fn start_round(&mut self) {
        // A version being written waits for its round: the page already shows it (a move
        // to "In review", say), so a round that read the store before the write landed
        // would end "synced" without it. The ask stays and goes once the write is done.
        if self.sync.running || self.sync.kick <= self.sync.started {
            return;
        }
        // Said from the ask on, so "synced" always means a round that ended after it.
        if self.sync.settings.enabled() {
            self.sync.state = SyncState::Syncing;
        }
        if self.editor.as_ref().is_some_and(|e| e.saving) {
            return;
        }
        self.sync.started = self.sync.kick;
        self.sync.running = true;
        self.queue(Effect::SyncRound {
            settings: self.sync.settings.clone(),
            failures: self.sync.failures,
            open_run: self.editor.as_ref().map(|e| e.run.id.clone()),
        });
    }

    /// What the round brought shows at once, unless it would drop edits; what is on screen
    /// now may differ from when the round started.
    pub(super) fn round_done(&mut self, round: RoundDone) {
        let open = self.editor.as_ref().map(|e| (e.run.id.clone(), e.qa, e.dirty()));
        if let (Some((mut comments, mut suggestions)), Some(editor)) =
            (round.review, &mut self.editor)
            && round.open_run.as_ref() == Some(&editor.run.id)
        {
            // Written here while the round ran (not sent yet, so not in what it read): kept.
            let unsent_c = editor.comments.iter().filter(|c| c.server_id.is_none());
            let new_c: Vec<_> =
                unsent_c.filter(|c| !comments.iter().any(|k| k.id == c.id)).cloned().collect();
            comments.extend(new_c);
            let unsent_s = editor.suggestions.iter().filter(|s| s.server_id.is_none());
            let new_s: Vec<_> =
                unsent_s.filter(|s| !suggestions.iter().any(|k| k.id == s.id)).cloned().collect();
            suggestions.extend(new_s);
            editor.comments = comments;
            editor.suggestions = suggestions;
        }
        if let Some(me) = round.user.filter(|me| *me != self.user) {
            self.set_user(me.clone());
            self.queue(Effect::PutUser(me));
        }
        match open {
            Some((run_id, qa, false)) if round.pulled.contains(&run_id) => {
                self.open_run(run_id, qa)
            }
            None if self.screen == Screen::List && !round.pulled.is_empty() => {
                self.queue(Effect::LoadList)
            }
            // The run the URL asked for was not here: the pull brought it.
            None if matches!(&self.screen, Screen::Missing(id) if round.pulled.contains(id)) => {
                if let Some((run_id, qa)) = self.wanted.clone() {
                    self.open_run(run_id, qa);
                }
            }
            _ => {}
        }
        if let Some(collections) = round.collections {
            self.collections = collections;
        }
        if let Some(editor) = &self.editor {
            self.team.metrics = round.metrics.filter(|m| m.run_id == editor.run.id);
        }
        if let Some(team) = round.team {
            self.team.project = team.project.or(self.team.project.take());
            self.team.unread = team.unread;
            // An annotator's list opens on "My queue" once the server has said what it is.
            if !self.team.queue_loaded && self.user.role == annotation_core::roles::Role::Annotator
            {
                self.team.show_queue = true;
            }
            self.team.queue = team.queue;
            self.team.queue_loaded = true;
            if let Some(editor) = &mut self.editor {
                editor.own_version = team.own.contains(&editor.run.id);
            }
            self.team.own = team.own;
        }
        self.sync.refused = round.refused;
        self.sync.failures = match round.state {
            SyncState::Offline { .. } | SyncState::Error { .. } => self.sync.failures + 1,
            _ => 0,
        };
        self.sync.running = false;
        self.sync.state = round.state;
        self.sync.conflicts = round.conflicts;
    }

    /// The sync dialog as typed: an empty token field keeps the stored token, for the same
    /// server only.
    pub(super) fn save_sync_settings(&mut self, endpoint: &str, token: &str, grammar: &str) {
        let settings = self.sync.settings.edited(endpoint, token);
        self.queue(Effect::SaveSettings { settings, grammar: grammar.trim().to_owned() });
    }
}
