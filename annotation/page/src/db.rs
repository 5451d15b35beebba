//! The page's IndexedDB shell: reads the runs the worker captured and writes the
//! annotators' work back, each change in one transaction. What to write is decided in
//! `annotation-core`; this module only moves records (`capture-db` has the stores).

use std::collections::{BTreeMap, HashMap};
use std::error::Error;

use annotation_core::history::{self, Version};
use annotation_core::query::{self, RunSummary};
use annotation_core::quality::run_quality;
use annotation_core::record::{Run, Step};
use annotation_core::review::{Comment, Suggestion};
use annotation_core::roles::User;
use annotation_core::templates::Template;
use capture_db::*;
use indexed_db_futures::database::Database;
use indexed_db_futures::prelude::*;
use indexed_db_futures::transaction::{Transaction, TransactionMode};
use serde::Serialize;
use serde::de::DeserializeOwned;
use wasm_bindgen::JsValue;

type Cause = Box<dyn Error>;

const USER_KEY: &str = "user";

pub struct Db {
    db: Database,
}

/// A run with everything the editor shows.
pub struct RunData {
    pub run: Run,
    pub steps: Vec<Step>,
    pub versions: Vec<Version>,
    pub comments: Vec<Comment>,
    pub suggestions: Vec<Suggestion>,
}

/// What a save wrote.
pub struct SaveResult {
    pub run: Run,
    pub steps: Vec<Step>,
    /// The versions written, oldest first: none when nothing had changed; on a run's first
    /// save, the run as captured and then the save.
    pub versions: Vec<Version>,
}

fn decode<T: DeserializeOwned>(values: Vec<JsValue>, what: &str) -> Vec<T> {
    values
        .into_iter()
        .filter_map(|value| match serde_wasm_bindgen::from_value(value) {
            Ok(record) => Some(record),
            Err(cause) => {
                // One odd row must not hide the rest; it stays stored as it is.
                web_sys::console::warn_1(&format!("skipped an unreadable {what}: {cause}").into());
                None
            }
        })
        .collect()
}

fn failed(what: &str) -> impl FnOnce(Cause) -> String + '_ {
    move |cause| format!("IndexedDB: could not {what}: {cause}")
}

impl Db {
    pub async fn open() -> Result<Db, String> {
        Ok(Db { db: capture_db::open().await? })
    }

    fn writer(&self, stores: &[&str]) -> indexed_db_futures::Result<Transaction<'_>> {
        self.db.transaction(stores).with_mode(TransactionMode::Readwrite).build()
    }

    async fn all(&self, store: &str) -> Result<Vec<JsValue>, Cause> {
        let tx = self.db.transaction(store).build()?;
        let values = tx.object_store(store)?.get_all::<JsValue>().await?;
        Ok(values.collect::<Result<Vec<_>, _>>()?)
    }

    async fn of_run(&self, store: &str, run_id: &str) -> Result<Vec<JsValue>, Cause> {
        let tx = self.db.transaction(store).build()?;
        let object_store = tx.object_store(store)?;
        let index = object_store.index("runId")?;
        let values = index.get_all::<JsValue>().with_query(run_id).await?;
        Ok(values.collect::<Result<Vec<_>, _>>()?)
    }

    pub async fn user(&self) -> Option<User> {
        let read = async {
            let tx = self.db.transaction(ANNOTATION).build()?;
            let value = tx.object_store(ANNOTATION)?.get::<JsValue, _, _>(USER_KEY).await?;
            Ok::<_, Cause>(value.and_then(|v| serde_wasm_bindgen::from_value(v).ok()))
        };
        read.await.ok().flatten()
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

    /// Every run's summary for the list. Summaries are kept in their own store; a run the
    /// worker changed since (or one never summarized) is summarized again from its steps.
    pub async fn summaries(&self) -> Result<Vec<RunSummary>, String> {
        let read = async {
            let runs: Vec<Run> = decode(self.all(RUNS).await?, "run");
            let mut stored: HashMap<String, RunSummary> = decode::<RunSummary>(
                self.all(SUMMARIES).await?,
                "summary",
            )
            .into_iter()
            .map(|s| (s.run_id.clone(), s))
            .collect();
            let mut out = Vec::with_capacity(runs.len());
            let mut stale = Vec::new();
            for run in runs {
                match stored.remove(&run.id) {
                    Some(s) if s.updated_at == run.updated_at && s.version == run.version => {
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
        for run in runs {
            let steps: Vec<Step> = sorted(decode(self.of_run(STEPS, &run.id).await?, "step"));
            out.push(query::summarize(&run, &steps));
        }
        let tx = self.writer(&[SUMMARIES])?;
        let store = tx.object_store(SUMMARIES)?;
        for summary in &out {
            store.put(encode(summary)?).await?;
        }
        tx.commit().await?;
        Ok(out)
    }

    pub async fn run(&self, run_id: &str) -> Result<Option<RunData>, String> {
        let read = async {
            let tx = self.db.transaction(RUNS).build()?;
            let Some(value) = tx.object_store(RUNS)?.get::<JsValue, _, _>(run_id).await? else {
                return Ok(None);
            };
            let run: Run = serde_wasm_bindgen::from_value(value)?;
            drop(tx);
            let steps = sorted(decode(self.of_run(STEPS, run_id).await?, "step"));
            let mut versions: Vec<Version> = decode(self.of_run(VERSIONS, run_id).await?, "version");
            versions.sort_by_key(|v| v.number);
            let comments = decode(self.of_run(COMMENTS, run_id).await?, "comment");
            let suggestions = decode(self.of_run(SUGGESTIONS, run_id).await?, "suggestion");
            Ok::<_, Cause>(Some(RunData { run, steps, versions, comments, suggestions }))
        };
        read.await.map_err(failed("read the run"))
    }

    /// Saves `run` and `steps` as the next version. The first save also records the run as
    /// captured (version 1), so the agent's own words can always be rolled back to.
    pub async fn save(
        &self,
        before: (&Run, &[Step]),
        latest: Option<&Version>,
        mut run: Run,
        mut steps: Vec<Step>,
        author: &str,
        now: &str,
    ) -> Result<SaveResult, String> {
        let write = async {
            let mut first = None;
            let latest = match latest {
                Some(v) => Some(v.clone()),
                None => {
                    let captured = history::next_version(None, before.0, before.1, "capture", &before.0.updated_at);
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
                return Ok::<_, Cause>(SaveResult { run: before.0.clone(), steps: before.1.to_vec(), versions: Vec::new() });
            };
            run.version = version.number;
            run.updated_at = now.to_owned();
            run.quality = Some(run_quality(&steps));
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
        let summary = query::summarize(run, steps);
        let tx = self.writer(&[RUNS, STEPS, VERSIONS, SUMMARIES])?;
        tx.object_store(RUNS)?.put(encode(run)?).await?;
        let step_store = tx.object_store(STEPS)?;
        for step in steps {
            if before.iter().find(|s| s.index == step.index) != Some(step) {
                step_store.put(encode(step)?).await?;
            }
        }
        let version_store = tx.object_store(VERSIONS)?;
        for version in versions {
            version_store.put(encode(version)?).await?;
        }
        tx.object_store(SUMMARIES)?.put(encode(&summary)?).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Puts the run back as it was at `target`, as a new version.
    pub async fn rollback(
        &self,
        current: (&Run, &[Step]),
        target: &Version,
        latest: &Version,
        author: &str,
        now: &str,
    ) -> Result<SaveResult, String> {
        let write = async {
            let mut version = history::rollback(target, latest, author, now);
            let mut run = version.run.clone();
            run.version = version.number;
            run.updated_at = now.to_owned();
            // Sync state is the copy's, not the content's: keep what the current copy knows.
            run.server_version = current.0.server_version;
            run.quality = Some(run_quality(&version.steps));
            version.run = run.clone();
            let steps = version.steps.clone();
            self.write_run(&run, &steps, current.1, [&version].into_iter()).await?;
            Ok::<_, Cause>(SaveResult { run, steps, versions: vec![version] })
        };
        write.await.map_err(failed("roll back"))
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

    pub async fn starred(&self) -> Vec<Template> {
        match self.all(TEMPLATES).await {
            Ok(values) => decode(values, "template"),
            Err(_) => Vec::new(),
        }
    }

    pub async fn put_template(&self, template: &Template) -> Result<(), String> {
        self.put(TEMPLATES, template).await.map_err(failed("star the step"))
    }

    /// The screenshot blob stored under `key`.
    pub async fn screenshot(&self, key: &str) -> Option<web_sys::Blob> {
        let read = async {
            let tx = self.db.transaction(SCREENSHOTS).build()?;
            let value = tx.object_store(SCREENSHOTS)?.get::<JsValue, _, _>(key).await?;
            Ok::<_, Cause>(value)
        };
        use wasm_bindgen::JsCast;
        read.await.ok().flatten().and_then(|v| v.dyn_into().ok())
    }

    /// Every run with its steps, for exports: two reads in all, grouped here.
    pub async fn everything(&self) -> Result<Vec<(Run, Vec<Step>)>, String> {
        let read = async {
            let runs: Vec<Run> = decode(self.all(RUNS).await?, "run");
            let mut steps: BTreeMap<String, Vec<Step>> = BTreeMap::new();
            for step in decode::<Step>(self.all(STEPS).await?, "step") {
                steps.entry(step.run_id.clone()).or_default().push(step);
            }
            Ok::<_, Cause>(
                runs.into_iter()
                    .map(|run| {
                        let own = sorted(steps.remove(&run.id).unwrap_or_default());
                        (run, own)
                    })
                    .collect(),
            )
        };
        read.await.map_err(failed("read the runs to export"))
    }

    pub async fn run_ids(&self) -> Result<Vec<String>, String> {
        let read = async {
            let tx = self.db.transaction(RUNS).build()?;
            let keys = tx.object_store(RUNS)?.get_all_keys::<JsValue>().await?;
            Ok::<_, Cause>(keys.filter_map(|k| k.ok()?.as_string()).collect())
        };
        read.await.map_err(failed("list the runs"))
    }

    /// Stores imported runs, all or none: one transaction, each run with a first version
    /// saying where it came from.
    pub async fn import(&self, runs: &[(Run, Vec<Step>)], author: &str, now: &str) -> Result<(), String> {
        let write = async {
            let tx = self.writer(&[RUNS, STEPS, VERSIONS, SUMMARIES])?;
            let (run_store, step_store) = (tx.object_store(RUNS)?, tx.object_store(STEPS)?);
            let (version_store, summary_store) = (tx.object_store(VERSIONS)?, tx.object_store(SUMMARIES)?);
            for (run, steps) in runs {
                let mut run = run.clone();
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
                summary_store.put(encode(&query::summarize(&run, steps))?).await?;
            }
            tx.commit().await?;
            Ok::<_, Cause>(())
        };
        write.await.map_err(failed("import"))
    }
}

fn sorted(mut steps: Vec<Step>) -> Vec<Step> {
    steps.sort_by_key(|s| s.index);
    steps
}
