//! The records the page and the sync with the server both write: reviews, collections,
//! the queue of changes for the server with its marks, and what the server sent. The page's
//! own writes (saves, versions, drafts, templates) stay in the page.

use std::collections::HashMap;

use annotation_core::quality;
use annotation_core::record::{Run, Step};
use annotation_core::review::{Comment, Suggestion};
use annotation_core::sync::{Pending, PullMark};
use capture_db::*;
use indexed_db_futures::object_store::ObjectStore;
use indexed_db_futures::prelude::*;
use indexed_db_futures::transaction::{Transaction, TransactionMode};
use serde::Serialize;
use wasm_bindgen::JsValue;

use crate::{Store, all_in, decode, failed, new_id, sorted};

/// The last pull's cursor from the server (`annotation_core::sync::PullMark`). The key
/// `pulledAt` that held this browser's clock before is no longer read.
const PULL_MARK_KEY: &str = "pullMark";
const PULL_OWED_KEY: &str = "pullOwed";
const METRICS_MARKS_KEY: &str = "metricsMarks";
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

/// The stored copy of the run `run_id`, if any and readable, read in the caller's
/// transaction: a save and a pull both keep what only the stored copy knows.
pub async fn stored_run(store: &ObjectStore<'_>, run_id: &str) -> Result<Option<Run>, Cause> {
    let value = store.get::<JsValue, _, _>(run_id).await?;
    Ok(value.and_then(|v| capture_db::decode(v).ok()))
}

/// Queue entries, stamped `at`, for the `changes` not in `queued` already: a save and a
/// sync round never queue the same change twice.
pub fn unqueued<'q>(
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

impl Store {
    pub fn writer(&self, stores: &[&str]) -> indexed_db_futures::Result<Transaction<'_>> {
        self.database().transaction(stores).with_mode(TransactionMode::Readwrite).build()
    }

    pub async fn put_keyed(
        &self,
        store: &str,
        key: &str,
        value: &impl Serialize,
    ) -> Result<(), Cause> {
        let tx = self.writer(&[store])?;
        tx.object_store(store)?.put(encode(value)?).with_key(key).await?;
        tx.commit().await?;
        Ok(())
    }

    pub async fn put(&self, store: &str, value: &impl Serialize) -> Result<(), Cause> {
        let tx = self.writer(&[store])?;
        tx.object_store(store)?.put(encode(value)?).await?;
        tx.commit().await?;
        Ok(())
    }

    pub async fn delete(&self, store: &str, key: &str) -> Result<(), Cause> {
        let tx = self.writer(&[store])?;
        tx.object_store(store)?.delete(key).await?;
        tx.commit().await?;
        Ok(())
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
        let read = async {
            let Some(value) = self.get(RUNS, run_id).await? else {
                return Ok(None);
            };
            let run: Run = capture_db::decode(value)?;
            let steps = sorted(decode(self.of_run(STEPS, run_id).await?, "step"));
            Ok::<_, Cause>(Some((run, steps)))
        };
        read.await.map_err(failed("read the run"))
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
}
