//! The page's IndexedDB shell: reads the runs the worker captured and writes the
//! annotators' work back, each change in one transaction. What to write is decided in
//! `annotation-core`; this module only moves records (`capture-db` has the stores).

use std::collections::HashMap;
use std::error::Error;

use annotation_core::history::{self, Version};
use annotation_core::quality;
use annotation_core::query::{self, RunSummary};
use annotation_core::record::{Run, Step};
use annotation_core::review::{Comment, Suggestion};
use annotation_core::roles::User;
use annotation_core::sync::{self, Pending, PullMark, SyncSettings};
use annotation_core::templates::Template;
use annotation_store::{SYNC_KEY, Store, all_in, decode, failed, of_run_in, sorted, with_steps};
use capture_db::*;
use indexed_db_futures::object_store::ObjectStore;
use indexed_db_futures::prelude::*;
use indexed_db_futures::transaction::{Transaction, TransactionMode};
use serde::Serialize;

use crate::language::Scorer;
use crate::state::drafts::{self, StoredDraft};
use crate::state::editor::RunData;
use crate::util::new_id;
use wasm_bindgen::JsValue;

type Cause = Box<dyn Error>;

const USER_KEY: &str = "user";
/// The last pull's cursor from the server (`annotation_core::sync::PullMark`). The key
/// `pulledAt` that held this browser's clock before is no longer read.
const PULL_MARK_KEY: &str = "pullMark";
const PULL_OWED_KEY: &str = "pullOwed";
const METRICS_MARKS_KEY: &str = "metricsMarks";
const GRAMMAR_KEY: &str = "grammar";
const COLLECTIONS_KEY: &str = "collections";
/// The overlap runs annotated here in a version of one's own (`team::OwnVersion`).
const OWN_VERSIONS_KEY: &str = "ownVersions";

/// A change waiting for the server, with the id that makes a replay harmless.
#[derive(Debug, Clone, PartialEq, serde::Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueuedChange {
    pub mutation_id: String,
    pub pending: Pending,
    pub queued_at: String,
}

/// The page's IndexedDB: [`Store`]'s reads, and the page's writes.
pub struct Db {
    store: Store,
}

/// A run's text for full-text search, stored apart from its summary.
#[derive(serde::Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
struct SearchText {
    run_id: String,
    text: String,
}

/// What an edit of a run's header decided.
pub enum Edit {
    Save,
    /// Leave the run as it is, and why.
    Skip(String),
}

/// What a save wrote.
pub struct SaveResult {
    pub run: Run,
    pub steps: Vec<Step>,
    /// The versions written, oldest first: none when nothing had changed; on a run's first
    /// save, the run as captured and then the save.
    pub versions: Vec<Version>,
}

impl std::ops::Deref for Db {
    type Target = Store;

    fn deref(&self) -> &Store {
        &self.store
    }
}

impl Db {
    pub async fn open() -> Result<Db, String> {
        Ok(Db { store: Store::open().await? })
    }

    fn writer(&self, stores: &[&str]) -> indexed_db_futures::Result<Transaction<'_>> {
        self.database().transaction(stores).with_mode(TransactionMode::Readwrite).build()
    }

    pub async fn user(&self) -> Option<User> {
        self.setting(USER_KEY).await
    }

    pub async fn put_user(&self, user: &User) -> Result<(), String> {
        self.put_keyed(ANNOTATION, USER_KEY, user).await.map_err(failed("store who you are"))
    }

    async fn put_keyed(&self, store: &str, key: &str, value: &impl Serialize) -> Result<(), Cause> {
        let tx = self.writer(&[store])?;
        tx.object_store(store)?.put(encode(value)?).with_key(key).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn put(&self, store: &str, value: &impl Serialize) -> Result<(), Cause> {
        let tx = self.writer(&[store])?;
        tx.object_store(store)?.put(encode(value)?).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn delete(&self, store: &str, key: &str) -> Result<(), Cause> {
        let tx = self.writer(&[store])?;
        tx.object_store(store)?.delete(key).await?;
        tx.commit().await?;
        Ok(())
    }

    /// The stored summaries as they are, when there is one per run (a count, not a read, of
    /// the runs): the list can show these at once and check them for staleness after.
    pub async fn stored_summaries(&self) -> Option<Vec<RunSummary>> {
        let read = async {
            let tx = self.database().transaction([RUNS, SUMMARIES]).build()?;
            let runs = tx.object_store(RUNS)?.count().await?;
            let summaries: Vec<RunSummary> =
                decode(all_in(&tx.object_store(SUMMARIES)?).await?, "summary");
            // Summaries of an older shape lack what the list now shows: not shown as they are.
            let current = summaries.iter().all(|s| s.format == query::SUMMARY_FORMAT);
            Ok::<_, Cause>(
                (runs as usize == summaries.len() && runs > 0 && current).then_some(summaries),
            )
        };
        read.await.ok().flatten()
    }

    /// Every run's summary for the list. Summaries are kept in their own store; a run the
    /// worker changed since (or one never summarized) is summarized again from its steps.
    pub async fn summaries(&self) -> Result<Vec<RunSummary>, String> {
        let read = async {
            let runs: Vec<Run> = decode(self.all(RUNS).await?, "run");
            let mut stored: HashMap<String, RunSummary> =
                decode::<RunSummary>(self.all(SUMMARIES).await?, "summary")
                    .into_iter()
                    .map(|s| (s.run_id.clone(), s))
                    .collect();
            let mut out = Vec::with_capacity(runs.len());
            let mut stale = Vec::new();
            for run in runs {
                match stored.remove(&run.id) {
                    Some(s)
                        if s.updated_at == run.updated_at
                            && s.version == run.version
                            && s.format == query::SUMMARY_FORMAT =>
                    {
                        out.push(s)
                    }
                    _ => stale.push(run),
                }
            }
            if !stale.is_empty() {
                let fresh = self.summarize(stale).await?;
                out.extend(fresh);
            }
            Ok::<_, Cause>(out)
        };
        read.await.map_err(failed("read the runs"))
    }

    async fn summarize(&self, runs: Vec<Run>) -> Result<Vec<RunSummary>, Cause> {
        let mut out = Vec::with_capacity(runs.len());
        // A few runs read their own steps; many read every step once, which beats a
        // transaction per run by far (the first open of a large database).
        if runs.len() > 20 {
            for (run, own) in with_steps(runs, decode(self.all(STEPS).await?, "step")) {
                out.push(query::summarize(&run, &own));
            }
        } else {
            for run in runs {
                let steps: Vec<Step> = sorted(decode(self.of_run(STEPS, &run.id).await?, "step"));
                out.push(query::summarize(&run, &steps));
            }
        }
        let tx = self.writer(&[SUMMARIES, SEARCH])?;
        let (rows, texts) = (tx.object_store(SUMMARIES)?, tx.object_store(SEARCH)?);
        for summary in &out {
            let text =
                SearchText { run_id: summary.run_id.clone(), text: summary.search_text.clone() };
            rows.put(encode(&RunSummary { search_text: String::new(), ..summary.clone() })?)
                .await?;
            texts.put(encode(&text)?).await?;
        }
        drop((rows, texts));
        tx.commit().await?;
        Ok(out)
    }

    /// Every run's search text, by run id; read after the list is on screen.
    pub async fn search_texts(&self) -> Result<HashMap<String, String>, String> {
        let read = async {
            let texts: Vec<SearchText> = decode(self.all(SEARCH).await?, "search text");
            Ok::<_, Cause>(texts.into_iter().map(|t| (t.run_id, t.text)).collect())
        };
        read.await.map_err(failed("read the search index"))
    }

    pub async fn run(&self, run_id: &str) -> Result<Option<RunData>, String> {
        let read = async {
            let Some(value) = self.get(RUNS, run_id).await? else {
                return Ok(None);
            };
            let run: Run = capture_db::decode(value)?;
            let steps = sorted(decode(self.of_run(STEPS, run_id).await?, "step"));
            let mut versions: Vec<Version> =
                decode(self.of_run(VERSIONS, run_id).await?, "version");
            lean::sort_by_key(&mut versions, |v| v.number);
            let comments = decode(self.of_run(COMMENTS, run_id).await?, "comment");
            let suggestions = decode(self.of_run(SUGGESTIONS, run_id).await?, "suggestion");
            Ok::<_, Cause>(Some(RunData { run, steps, versions, comments, suggestions }))
        };
        read.await.map_err(failed("read the run"))
    }

    /// Saves `run` and `steps` as the next version, by `author` at `now`, scored by `scorer`
    /// with `grammar`'s issues (step index, count), whatever the save changed: a status
    /// move scores the spelling as an edit does. The first save also records the run as
    /// captured (version 1), so the agent's own words can always be rolled back to.
    pub async fn save(
        &self,
        before: (&Run, &[Step]),
        latest: Option<&Version>,
        mut run: Run,
        mut steps: Vec<Step>,
        (author, now): (&str, &str),
        (scorer, grammar): (&Scorer, &[(u32, usize)]),
    ) -> Result<SaveResult, String> {
        let write = async {
            let mut first = None;
            let latest = match latest {
                Some(v) => Some(v.clone()),
                None => {
                    let captured = history::next_version(
                        None,
                        before.0,
                        before.1,
                        "capture",
                        &before.0.updated_at,
                    );
                    first = captured.clone();
                    captured
                }
            };
            // Who edited which step: only steps that really changed get a new name and time.
            for step in steps.iter_mut() {
                let old = before.1.iter().find(|s| s.index == step.index);
                if old != Some(step) {
                    step.last_edited_by = author.to_owned();
                    step.last_edited_at = now.to_owned();
                }
            }
            let Some(version) = history::next_version(latest.as_ref(), &run, &steps, author, now)
            else {
                return Ok::<_, Cause>(SaveResult {
                    run: before.0.clone(),
                    steps: before.1.to_vec(),
                    versions: Vec::new(),
                });
            };
            run.version = version.number;
            run.updated_at = now.to_owned();
            run.quality = scorer.score(&steps, grammar);
            self.write_run(&run, &steps, before.1, first.iter().chain([&version])).await?;
            Ok(SaveResult { run, steps, versions: first.into_iter().chain([version]).collect() })
        };
        write.await.map_err(failed("save the run"))
    }

    /// Writes the run, the steps that differ from `before`, the versions and the summary in
    /// ONE transaction: a failure leaves everything as it was.
    async fn write_run<'v>(
        &self,
        run: &Run,
        steps: &[Step],
        before: &[Step],
        versions: impl Iterator<Item = &'v Version>,
    ) -> Result<(), Cause> {
        // The run's summary goes stale with its new version and is rebuilt when the list opens.
        let tx = self.writer(&[RUNS, STEPS, VERSIONS, OUTBOX])?;
        // Which server version each record was last synced at belongs to the stored copy,
        // which sync updates behind the editor's back: carry it over, never the editor's.
        let run_store = tx.object_store(RUNS)?;
        let stored_run = stored_run(&run_store, &run.id).await?;
        let mut run = run.clone();
        run.server_version = stored_run.and_then(|r| r.server_version);
        let step_store = tx.object_store(STEPS)?;
        let stored_steps: Vec<Step> = decode(of_run_in(&step_store, &run.id).await?, "step");
        let synced_at = |index: u32| {
            stored_steps.iter().find(|s| s.index == index).and_then(|s| s.server_version)
        };
        let steps: Vec<Step> = steps
            .iter()
            .map(|s| Step { server_version: synced_at(s.index), ..s.clone() })
            .collect();
        let before: Vec<Step> = before
            .iter()
            .map(|s| Step { server_version: synced_at(s.index), ..s.clone() })
            .collect();
        let (run, steps, before) = (&run, &steps[..], &before[..]);
        run_store.put(encode(run)?).await?;
        for step in steps {
            if before.iter().find(|s| s.index == step.index) != Some(step) {
                step_store.put(encode(step)?).await?;
            }
        }
        let version_store = tx.object_store(VERSIONS)?;
        for version in versions {
            version_store.put(encode(version)?).await?;
        }
        drop(step_store);
        drop(version_store);
        // The same transaction queues the change for the server: a save is never saved
        // locally yet forgotten by sync.
        let changes = sync::changes(run, before, steps);
        let outbox = tx.object_store(OUTBOX)?;
        let queued: Vec<QueuedChange> = decode(all_in(&outbox).await?, "queued change");
        for entry in unqueued(changes, queued.iter(), &run.updated_at) {
            outbox.put(encode(&entry)?).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Changes one stored run's header with `edit` and saves it as a version (batch actions
    /// on the runs list, which have no editor open), scored by `scorer` as every save is.
    pub async fn edit_run(
        &self,
        run_id: &str,
        (author, now): (&str, &str),
        scorer: &Scorer,
        edit: impl FnOnce(&mut Run) -> Edit,
    ) -> Result<Edit, String> {
        let data = self.run(run_id).await?.ok_or_else(|| format!("run {run_id} is gone"))?;
        let mut run = data.run.clone();
        match edit(&mut run) {
            Edit::Save => {
                let before = (&data.run, &data.steps[..]);
                let (latest, steps) = (data.versions.last(), data.steps.clone());
                self.save(before, latest, run, steps, (author, now), (scorer, &[])).await?;
                Ok(Edit::Save)
            }
            skip => Ok(skip),
        }
    }

    /// Puts the run back as it was at `target`, as a new version scored by `scorer`.
    pub async fn rollback(
        &self,
        current: (&Run, &[Step]),
        (target, latest): (&Version, &Version),
        (author, now): (&str, &str),
        scorer: &Scorer,
    ) -> Result<SaveResult, String> {
        let write = async {
            let mut version = history::rollback(target, latest, author, now);
            let mut run = version.run.clone();
            run.version = version.number;
            run.updated_at = now.to_owned();
            // Sync state is the copy's, not the content's: keep what the current copy knows.
            run.server_version = current.0.server_version;
            run.quality = scorer.score(&version.steps, &[]);
            version.run = run.clone();
            let steps = version.steps.clone();
            self.write_run(&run, &steps, current.1, [&version].into_iter()).await?;
            Ok::<_, Cause>(SaveResult { run, steps, versions: vec![version] })
        };
        write.await.map_err(failed("roll back"))
    }

    /// Scores the run `run_id` with `scorer` if it has no score yet (captured and never
    /// saved, or synced from elsewhere), reading and writing it in one transaction, and
    /// notes the score in its stored summary too: the list shows it without summarizing the
    /// run again. Returns the score written, if any.
    pub async fn score_unscored(
        &self,
        run_id: &str,
        scorer: &Scorer,
    ) -> Result<Option<u8>, String> {
        let write = async {
            let tx = self.writer(&[RUNS, STEPS, SUMMARIES])?;
            let runs = tx.object_store(RUNS)?;
            let Some(mut run) = stored_run(&runs, run_id).await?.filter(|r| r.quality.is_none())
            else {
                return Ok(None);
            };
            let steps: Vec<Step> =
                sorted(decode(of_run_in(&tx.object_store(STEPS)?, run_id).await?, "step"));
            let Some(score) = scorer.score(&steps, &[]) else { return Ok(None) };
            run.quality = Some(score);
            runs.put(encode(&run)?).await?;
            let summaries = tx.object_store(SUMMARIES)?;
            let summary = summaries.get::<JsValue, _, _>(run_id).await?;
            if let Some(mut summary) =
                summary.and_then(|v| capture_db::decode::<RunSummary>(v).ok())
            {
                summary.quality = Some(score);
                summaries.put(encode(&summary)?).await?;
            }
            drop((runs, summaries));
            tx.commit().await?;
            Ok::<_, Cause>(Some(score))
        };
        write.await.map_err(failed("store the run's score"))
    }

    pub async fn put_comment(&self, comment: &Comment) -> Result<(), String> {
        self.put(COMMENTS, comment).await.map_err(failed("store the comment"))
    }

    pub async fn put_suggestion(&self, suggestion: &Suggestion) -> Result<(), String> {
        self.put(SUGGESTIONS, suggestion).await.map_err(failed("store the suggestion"))
    }

    pub async fn review(&self, run_id: &str) -> Result<(Vec<Comment>, Vec<Suggestion>), String> {
        let read = async {
            let comments = decode(self.of_run(COMMENTS, run_id).await?, "comment");
            let suggestions = decode(self.of_run(SUGGESTIONS, run_id).await?, "suggestion");
            Ok::<_, Cause>((comments, suggestions))
        };
        read.await.map_err(failed("read the comments"))
    }

    /// Stores comments and suggestions as the server has them, in one transaction.
    pub async fn put_review(
        &self,
        comments: &[Comment],
        suggestions: &[Suggestion],
    ) -> Result<(), String> {
        let write = async {
            let tx = self.writer(&[COMMENTS, SUGGESTIONS])?;
            let (comment_store, suggestion_store) =
                (tx.object_store(COMMENTS)?, tx.object_store(SUGGESTIONS)?);
            for comment in comments {
                comment_store.put(encode(comment)?).await?;
            }
            for suggestion in suggestions {
                suggestion_store.put(encode(suggestion)?).await?;
            }
            drop((comment_store, suggestion_store));
            tx.commit().await?;
            Ok::<_, Cause>(())
        };
        write.await.map_err(failed("store the server's comments"))
    }

    /// What is said of each collection (`annotation` store, key `collections`).
    pub async fn collections(&self) -> Vec<annotation_core::collections::Collection> {
        self.setting(COLLECTIONS_KEY).await.unwrap_or_default()
    }

    pub async fn put_collections(
        &self,
        collections: &[annotation_core::collections::Collection],
    ) -> Result<(), String> {
        self.put_keyed(ANNOTATION, COLLECTIONS_KEY, &collections)
            .await
            .map_err(failed("store the collection"))
    }

    /// The run's stored unsaved edits, if any and readable.
    pub async fn draft(&self, run_id: &str) -> Option<StoredDraft> {
        self.setting(&drafts::key(run_id)).await
    }

    pub async fn put_draft(&self, draft: &StoredDraft) -> Result<(), String> {
        self.put_keyed(ANNOTATION, &drafts::key(&draft.run_id), draft)
            .await
            .map_err(failed("keep your unsaved edits"))
    }

    pub async fn delete_draft(&self, run_id: &str) -> Result<(), String> {
        self.delete(ANNOTATION, &drafts::key(run_id))
            .await
            .map_err(failed("drop the saved edits' draft"))
    }

    pub async fn starred(&self) -> Vec<Template> {
        match self.all(TEMPLATES).await {
            Ok(values) => decode(values, "template"),
            Err(_) => Vec::new(),
        }
    }

    pub async fn put_template(&self, template: &Template) -> Result<(), String> {
        self.put(TEMPLATES, template).await.map_err(failed("store the template"))
    }

    pub async fn delete_template(&self, id: &str) -> Result<(), String> {
        self.delete(TEMPLATES, id).await.map_err(failed("delete the template"))
    }

    /// Every run's record, without steps (what a sync round reports of each).
    pub async fn runs(&self) -> Result<Vec<Run>, String> {
        let read = async { Ok::<_, Cause>(decode(self.all(RUNS).await?, "run")) };
        read.await.map_err(failed("read the runs"))
    }

    /// Gives runs the collections the server says they are in (`collections::sync::
    /// memberships`), in one transaction. A run whose names changed since the round read
    /// them (`read`) keeps them: that change goes up on the next round. Answers the runs
    /// changed.
    pub async fn take_memberships(
        &self,
        read: &HashMap<String, Vec<String>>,
        merged: &[annotation_core::collections::Collection],
        on_server: &std::collections::BTreeSet<String>,
        kept: &std::collections::BTreeSet<String>,
    ) -> Result<Vec<String>, String> {
        use annotation_core::collections::sync::memberships;
        self.rename_collections(|id, names| {
            if read.get(id).is_none_or(|read| read.as_slice() != names) {
                return None;
            }
            memberships([(id, names)], merged, on_server, kept).pop().map(|(_, now)| now)
        })
        .await
    }

    /// Changes the collections runs name, where `change` gives new names, in one
    /// transaction. Not a version and not queued: membership is the collection's, synced
    /// on its own. Answers the runs changed.
    pub async fn rename_collections(
        &self,
        change: impl Fn(&str, &[String]) -> Option<Vec<String>>,
    ) -> Result<Vec<String>, String> {
        let write = async {
            let tx = self.writer(&[RUNS, SUMMARIES])?;
            let runs = tx.object_store(RUNS)?;
            let mut changed = Vec::new();
            for mut run in decode::<Run>(all_in(&runs).await?, "run") {
                if let Some(names) = change(&run.id, &run.collections) {
                    run.collections = names;
                    runs.put(encode(&run)?).await?;
                    changed.push(run.id);
                }
            }
            drop(runs);
            let summaries = tx.object_store(SUMMARIES)?;
            for run_id in &changed {
                summaries.delete(run_id.as_str()).await?;
            }
            drop(summaries);
            tx.commit().await?;
            Ok::<_, Cause>(changed)
        };
        write.await.map_err(failed("store the collections' runs"))
    }

    pub async fn run_ids(&self) -> Result<Vec<String>, String> {
        let read = async {
            let tx = self.database().transaction(RUNS).build()?;
            let keys = tx.object_store(RUNS)?.get_all_keys::<JsValue>().await?;
            Ok::<_, Cause>(keys.filter_map(|k| k.ok()?.as_string()).collect())
        };
        read.await.map_err(failed("list the runs"))
    }

    /// Stores imported runs, all or none: one transaction, each run with a first version
    /// saying where it came from, and scored by `scorer` (a score in the file is not
    /// taken: it may have been counted otherwise, or edited).
    pub async fn import(
        &self,
        runs: &[(Run, Vec<Step>)],
        (author, now): (&str, &str),
        scorer: &Scorer,
    ) -> Result<(), String> {
        let write = async {
            let tx = self.writer(&[RUNS, STEPS, VERSIONS])?;
            let (run_store, step_store) = (tx.object_store(RUNS)?, tx.object_store(STEPS)?);
            let version_store = tx.object_store(VERSIONS)?;
            for (run, steps) in runs {
                let mut run = run.clone();
                run.quality = scorer.score(steps, &[]);
                let mut version = history::next_version(None, &run, steps, author, now)
                    .ok_or("an imported run made no version")?;
                version.summary = format!("Imported by {author}");
                run.version = version.number;
                version.run.version = version.number;
                run_store.put(encode(&run)?).await?;
                for step in steps {
                    step_store.put(encode(step)?).await?;
                }
                version_store.put(encode(&version)?).await?;
            }
            tx.commit().await?;
            Ok::<_, Cause>(())
        };
        write.await.map_err(failed("import"))
    }
}

/// The stored copy of the run `run_id`, if any and readable, read in the caller's
/// transaction: a save and a pull both keep what only the stored copy knows.
async fn stored_run(store: &ObjectStore<'_>, run_id: &str) -> Result<Option<Run>, Cause> {
    let value = store.get::<JsValue, _, _>(run_id).await?;
    Ok(value.and_then(|v| capture_db::decode(v).ok()))
}

/// Queue entries, stamped `at`, for the `changes` not in `queued` already: a save and a
/// sync round never queue the same change twice.
fn unqueued<'q>(
    changes: Vec<Pending>,
    queued: impl Iterator<Item = &'q QueuedChange> + Clone,
    at: &str,
) -> Vec<QueuedChange> {
    changes
        .into_iter()
        .filter(|pending| !queued.clone().any(|q| q.pending == *pending))
        .map(|pending| QueuedChange { mutation_id: new_id(), pending, queued_at: at.to_owned() })
        .collect()
}

/// What sync needs from storage.
impl Db {
    pub async fn put_sync_settings(&self, settings: &SyncSettings) -> Result<(), String> {
        self.put_keyed(ANNOTATION, SYNC_KEY, settings)
            .await
            .map_err(failed("store the sync settings"))
    }

    /// The LanguageTool-compatible server's address, or empty when grammar checking is off.
    pub async fn grammar_endpoint(&self) -> String {
        self.setting(GRAMMAR_KEY).await.unwrap_or_default()
    }

    pub async fn put_grammar_endpoint(&self, endpoint: &str) -> Result<(), String> {
        self.put_keyed(ANNOTATION, GRAMMAR_KEY, &endpoint)
            .await
            .map_err(failed("store the grammar server"))
    }

    pub async fn own_versions(&self) -> Vec<annotation_core::team::OwnVersion> {
        self.setting(OWN_VERSIONS_KEY).await.unwrap_or_default()
    }

    pub async fn put_own_versions(
        &self,
        own: &[annotation_core::team::OwnVersion],
    ) -> Result<(), String> {
        self.put_keyed(ANNOTATION, OWN_VERSIONS_KEY, &own)
            .await
            .map_err(failed("store the versions annotated here"))
    }

    pub async fn pull_mark(&self) -> Option<PullMark> {
        self.setting(PULL_MARK_KEY).await
    }

    pub async fn put_pull_mark(&self, mark: &PullMark) -> Result<(), String> {
        self.put_keyed(ANNOTATION, PULL_MARK_KEY, mark).await.map_err(failed("store the pull mark"))
    }

    /// Runs a pull passed over while they had changes queued here: the cursor moves on past
    /// them, so they are read by id once their queue is empty.
    pub async fn pull_owed(&self) -> Vec<String> {
        self.setting(PULL_OWED_KEY).await.unwrap_or_default()
    }

    pub async fn put_pull_owed(&self, ids: &[String]) -> Result<(), String> {
        self.put_keyed(ANNOTATION, PULL_OWED_KEY, &ids)
            .await
            .map_err(failed("store the runs a pull owes"))
    }

    /// What this browser reported of each run's quality and time to the server.
    pub async fn metrics_marks(&self) -> annotation_core::metrics_sync::Marks {
        self.setting(METRICS_MARKS_KEY).await.unwrap_or_default()
    }

    pub async fn put_metrics_marks(
        &self,
        marks: &annotation_core::metrics_sync::Marks,
    ) -> Result<(), String> {
        self.put_keyed(ANNOTATION, METRICS_MARKS_KEY, marks)
            .await
            .map_err(failed("store what was reported of quality and time"))
    }

    /// The queue, oldest first, with each entry's key.
    pub async fn queued(&self) -> Result<Vec<(JsValue, QueuedChange)>, String> {
        let read = async {
            let tx = self.database().transaction(OUTBOX).build()?;
            let store = tx.object_store(OUTBOX)?;
            let keys = store.get_all_keys::<JsValue>().await?.collect::<Result<Vec<_>, _>>()?;
            let values = all_in(&store).await?;
            let mut out = Vec::new();
            for (key, value) in keys.into_iter().zip(values) {
                if let Ok(entry) = capture_db::decode(value) {
                    out.push((key, entry));
                }
            }
            Ok::<_, Cause>(out)
        };
        read.await.map_err(failed("read the sync queue"))
    }

    /// Queues changes (skipping ones already queued).
    pub async fn enqueue(&self, changes: Vec<Pending>, at: &str) -> Result<(), String> {
        let queued = self.queued().await?;
        let write = async {
            let tx = self.writer(&[OUTBOX])?;
            let store = tx.object_store(OUTBOX)?;
            for entry in unqueued(changes, queued.iter().map(|(_, q)| q), at) {
                store.put(encode(&entry)?).await?;
            }
            tx.commit().await?;
            Ok::<_, Cause>(())
        };
        write.await.map_err(failed("queue changes for the server"))
    }

    pub async fn dequeue(&self, keys: &[JsValue]) -> Result<(), String> {
        let write = async {
            let tx = self.writer(&[OUTBOX])?;
            let store = tx.object_store(OUTBOX)?;
            for key in keys {
                store.delete(key.clone()).await?;
            }
            tx.commit().await?;
            Ok::<_, Cause>(())
        };
        write.await.map_err(failed("clear sent changes"))
    }

    /// Runs never sent to the server, for the first push.
    pub async fn unsynced_runs(&self) -> Result<Vec<(Run, Vec<Step>)>, String> {
        let read = async {
            let runs: Vec<Run> = decode(self.all(RUNS).await?, "run");
            let mut out = Vec::new();
            for run in runs.into_iter().filter(|r| r.server_version.is_none()) {
                let steps = sorted(decode(self.of_run(STEPS, &run.id).await?, "step"));
                out.push((run, steps));
            }
            Ok::<_, Cause>(out)
        };
        read.await.map_err(failed("find runs to send"))
    }

    pub async fn run_and_steps(&self, run_id: &str) -> Result<Option<(Run, Vec<Step>)>, String> {
        Ok(self.run(run_id).await?.map(|d| (d.run, d.steps)))
    }

    /// Writes records as the server has them (a pull, or the version after a push), without
    /// a version of their own: they are the server's history, not a local edit. Steps whose
    /// text changed leave their run unscored (scored again when it is next opened): a score
    /// is never kept for text it did not read.
    pub async fn put_synced(&self, run: Option<&Run>, steps: &[Step]) -> Result<(), String> {
        let write = async {
            let tx = self.writer(&[RUNS, STEPS, SUMMARIES])?;
            let store = tx.object_store(STEPS)?;
            let mut rescore = false;
            for step in steps {
                let key = (step.run_id.as_str(), step.index);
                let stored: Option<Step> = store
                    .get::<JsValue, _, _>(encode(&key)?)
                    .await?
                    .and_then(|v| capture_db::decode(v).ok());
                rescore |= stored.is_none_or(|stored| !quality::scores_alike(&stored, step));
                store.put(encode(step)?).await?;
            }
            drop(store);
            let runs = tx.object_store(RUNS)?;
            let run_id = run.map(|r| r.id.as_str()).or(steps.first().map(|s| s.run_id.as_str()));
            let stored = match run_id {
                Some(id) => stored_run(&runs, id).await?,
                None => None,
            };
            let written = match (run, stored) {
                (Some(run), Some(stored)) => {
                    // What only this browser keeps of a run (collections, the quality it
                    // scored, time spent, review rounds) is not the server's to replace.
                    let mut run = run.clone();
                    if run.collections.is_empty() {
                        run.collections = stored.collections;
                    }
                    run.quality = run.quality.or(stored.quality);
                    run.active_ms = run.active_ms.max(stored.active_ms);
                    run.review_rounds = run.review_rounds.max(stored.review_rounds);
                    Some(run)
                }
                (Some(run), None) => Some(run.clone()),
                (None, Some(stored)) if rescore && stored.quality.is_some() => Some(stored),
                (None, _) => None,
            };
            if let Some(mut run) = written {
                if rescore {
                    run.quality = None;
                }
                runs.put(encode(&run)?).await?;
            }
            drop(runs);
            // What the list shows of the run may have changed: its summary is rebuilt.
            if let Some(run_id) =
                run.map(|r| r.id.as_str()).or(steps.first().map(|s| s.run_id.as_str()))
            {
                tx.object_store(SUMMARIES)?.delete(run_id).await?;
            }
            tx.commit().await?;
            Ok::<_, Cause>(())
        };
        write.await.map_err(failed("store what the server sent"))?;
        // The summary is rebuilt from storage the next time the list opens.
        Ok(())
    }

    pub async fn has_screenshot(&self, key: &str) -> bool {
        let read = async {
            let tx = self.database().transaction(SCREENSHOTS).build()?;
            let count = tx.object_store(SCREENSHOTS)?.count().with_query(key).await?;
            Ok::<_, Cause>(count > 0)
        };
        read.await.unwrap_or(false)
    }

    pub async fn put_screenshot(&self, key: &str, blob: &web_sys::Blob) -> Result<(), String> {
        let write = async {
            let tx = self.writer(&[SCREENSHOTS])?;
            tx.object_store(SCREENSHOTS)?.put(JsValue::from(blob.clone())).with_key(key).await?;
            tx.commit().await?;
            Ok::<_, Cause>(())
        };
        write.await.map_err(failed("store a screenshot from the server"))
    }
}
