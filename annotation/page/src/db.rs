//! The page's IndexedDB shell: reads the runs the worker captured and writes the
//! annotators' work back, each change in one transaction. What to write is decided in
//! `annotation-core`; this module only moves records (`capture-db` has the stores).

use std::collections::HashMap;
use std::error::Error;

use annotation_core::history::{self, Version};
use annotation_core::query::{self, RunSummary};
use annotation_core::record::{Run, Step};
use annotation_core::roles::User;
use annotation_core::sync::{self, SyncSettings};
use annotation_core::templates::Template;
use annotation_store::{
    QueuedChange, SYNC_KEY, Store, all_in, decode, failed, of_run_in, sorted, stored_run, unqueued,
    with_steps,
};
use capture_db::*;
use indexed_db_futures::prelude::*;

use crate::language::Scorer;
use crate::state::drafts::{self, StoredDraft};
use crate::state::editor::RunData;
use wasm_bindgen::JsValue;

type Cause = Box<dyn Error>;

const USER_KEY: &str = "user";
const GRAMMAR_KEY: &str = "grammar";

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

    pub async fn user(&self) -> Option<User> {
        self.setting(USER_KEY).await
    }

    pub async fn put_user(&self, user: &User) -> Result<(), String> {
        self.put_keyed(ANNOTATION, USER_KEY, user).await.map_err(failed("store who you are"))
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
        // Each put goes out when built; waiting for each answer in turn was most of a first
        // open's time. A failed put aborts the transaction, and the commit says so.
        for summary in &out {
            let text =
                SearchText { run_id: summary.run_id.clone(), text: summary.search_text.clone() };
            rows.put(encode(&RunSummary { search_text: String::new(), ..summary.clone() })?)
                .build()?;
            texts.put(encode(&text)?).build()?;
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
                // Sent as built, not each awaited: the commit reports a failed one.
                run_store.put(encode(&run)?).build()?;
                for step in steps {
                    step_store.put(encode(step)?).build()?;
                }
                version_store.put(encode(&version)?).build()?;
            }
            tx.commit().await?;
            Ok::<_, Cause>(())
        };
        write.await.map_err(failed("import"))
    }
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
}
