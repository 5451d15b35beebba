//! The worker's IndexedDB access for workflows: stopped recordings and their screenshots
//! (read), workflow versions (reflection writes version 1), and the state of a replay
//! (written after every step, so a stopped worker loses nothing). The layout is
//! `capture-db`'s; runs, steps and traces go through [`crate::store::Store`] like a task's.

use std::collections::BTreeMap;

use agent_engine::jobs::stored::{StoredReplay, UnreadableJob, read_replay};
use agent_engine::workflow::recording::Recording;
use agent_engine::workflow::schema::Workflow;
use capture_db::{RECORDINGS, REPLAYS, SCREENSHOTS, STEPS, WORKFLOWS};
use indexed_db_futures::database::Database;
use indexed_db_futures::prelude::*;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::store::{Cause, Store, decode};

pub struct WorkflowDb {
    db: Database,
}

fn failed(what: &str) -> impl FnOnce(Cause) -> String + '_ {
    move |cause| format!("IndexedDB: could not {what}: {cause}")
}

impl WorkflowDb {
    /// On the worker's one connection ([`Store::database`]).
    pub fn new(store: &Store) -> WorkflowDb {
        WorkflowDb { db: store.database() }
    }

    /// A stopped recording, or why it cannot be reflected.
    pub async fn stopped_recording(&self, id: &str) -> Result<Recording, String> {
        let value = capture_db::get(&self.db, RECORDINGS, id)
            .await
            .map_err(failed("read the recording"))?;
        let value = value.ok_or_else(|| format!("There is no recording {id:?}."))?;
        let json: serde_json::Value = capture_db::decode(value)?;
        if json.get("status").and_then(|s| s.as_str()) == Some("recording") {
            return Err("That recording is still going: stop it first.".into());
        }
        serde_json::from_value(json).map_err(|e| format!("The recording cannot be read: {e}"))
    }

    /// The screenshots under `keys` as base64 JPEGs; missing ones are left out (the
    /// recorded page states stand in for them).
    pub async fn screenshots_base64(&self, keys: &[String]) -> BTreeMap<String, String> {
        let mut found = BTreeMap::new();
        for key in keys {
            if found.contains_key(key) {
                continue;
            }
            let read = async {
                let tx = self.db.transaction(SCREENSHOTS).build()?;
                let value =
                    tx.object_store(SCREENSHOTS)?.get::<JsValue, _, _>(key.as_str()).await?;
                Ok::<_, Cause>(value)
            };
            let Ok(Some(value)) = read.await else { continue };
            let Ok(blob) = value.dyn_into::<web_sys::Blob>() else { continue };
            let Ok(buffer) = JsFuture::from(blob.array_buffer()).await else { continue };
            let bytes = js_sys::Uint8Array::new(&buffer).to_vec();
            use base64::Engine;
            found.insert(key.clone(), base64::engine::general_purpose::STANDARD.encode(bytes));
        }
        found
    }

    /// Every stored version of workflow `id`, oldest first.
    pub async fn workflow_versions(&self, id: &str) -> Result<Vec<Workflow>, String> {
        let read = async {
            let values = capture_db::all_where(&self.db, WORKFLOWS, "id", id).await?;
            values.into_iter().map(decode::<Workflow>).collect::<Result<Vec<_>, Cause>>()
        };
        let mut versions = read.await.map_err(failed("read the workflow"))?;
        lean::sort_by_key(&mut versions, |w| w.version);
        Ok(versions)
    }

    pub async fn workflow(&self, id: &str, version: u32) -> Result<Workflow, String> {
        self.workflow_versions(id)
            .await?
            .into_iter()
            .find(|w| w.version == version)
            .ok_or_else(|| format!("Workflow {id:?} has no version {version}."))
    }

    /// The newest version of every workflow; unreadable versions are logged and left out.
    pub async fn latest_workflows(&self) -> Result<Vec<Workflow>, String> {
        let read = async {
            let mut latest: lean::SortedMap<String, Workflow> = lean::SortedMap::new();
            for value in capture_db::all(&self.db, WORKFLOWS).await? {
                match decode::<Workflow>(value) {
                    Ok(w) if latest.get(&w.id).is_none_or(|l| l.version < w.version) => {
                        latest.insert(w.id.clone(), w);
                    }
                    Ok(_) => {}
                    Err(error) => crate::chrome::log(&format!("an unreadable workflow: {error}")),
                }
            }
            Ok::<_, Cause>(latest.into_values().collect())
        };
        read.await.map_err(failed("read the workflows"))
    }

    pub async fn put_workflow(&self, workflow: &Workflow) -> Result<(), String> {
        capture_db::put(&self.db, WORKFLOWS, None, workflow)
            .await
            .map_err(failed("store the workflow"))
    }

    /// Every stored replay row (running, paused or ended), upgraded to the current format;
    /// one that cannot be read comes back as such, saying why.
    pub async fn replays(&self) -> Result<Vec<Result<StoredReplay, UnreadableJob>>, String> {
        let read = async {
            let mut rows = Vec::new();
            for (n, value) in capture_db::all(&self.db, REPLAYS).await?.into_iter().enumerate() {
                let key = format!("replay-row-{n}");
                rows.push(match decode::<serde_json::Value>(value) {
                    Ok(value) => {
                        let found = value.pointer("/state/run/id").and_then(|v| v.as_str());
                        let key = found.map_or(key, str::to_owned);
                        read_replay(&key, value)
                    }
                    Err(error) => Err(UnreadableJob {
                        key,
                        kind: protocol::jobs::JobKind::Replay,
                        reason: error.to_string(),
                        title: None,
                    }),
                });
            }
            Ok::<_, Cause>(rows)
        };
        read.await.map_err(failed("read the replays"))
    }

    pub async fn put_replay(&self, run_id: &str, row: &StoredReplay) -> Result<(), String> {
        capture_db::put(&self.db, REPLAYS, Some(run_id), row)
            .await
            .map_err(failed("store the replay"))
    }

    /// How many steps of `run_id` are stored (they are numbered from 0).
    pub async fn step_count(&self, run_id: &str) -> Result<u32, String> {
        let read = async {
            let tx = self.db.transaction(STEPS).build()?;
            let store = tx.object_store(STEPS)?;
            let count = store.index("runId")?.count().with_query(run_id).await?;
            Ok::<_, Cause>(count)
        };
        read.await.map_err(failed("count the replay's steps"))
    }
}
