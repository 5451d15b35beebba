//! The worker's IndexedDB store: what must survive Chrome stopping the worker.
//!
//! The database, its stores and keys are `capture-db`'s (its crate doc has the table).
//!
//! A chat session is its checkpoint: the History lists the checkpoints, and deleting a
//! conversation deletes its checkpoint only. Its runs, steps, screenshots and traces stay,
//! for annotators (the runs' `taskId` is the session id).
//!
//! Records are the engine's serde types as plain objects, written and read through JSON text
//! (`capture_db::encode`/`decode`), so DevTools and other pages read them as JSON. Screenshots are real
//! Blobs, which IndexedDB keeps as files, instead of base64 that would bloat every row.
//! API keys live apart from the settings so the settings row, like everything else that is
//! serialized, only ever holds `***`.

use std::collections::BTreeMap;

use agent_engine::executor::CaptureError;
use agent_engine::executor::{Checkpoint, Unreadable, read_checkpoint};
use agent_engine::run::{AgentRun, LlmTrace, StepRecord};
use agent_engine::session::{CheckpointStore, SessionRuns};
use indexed_db_futures::database::Database;
use indexed_db_futures::prelude::*;
use indexed_db_futures::transaction::{Transaction, TransactionMode};
use protocol::Favourite;
use protocol::settings::Settings;
use serde::Serialize;
use wasm_bindgen::{JsCast, JsValue};

use crate::chrome::{error_message, log};

use capture_db::{CHECKPOINTS, RUNS, SCREENSHOTS, SETTINGS, STEPS, TRACES, encode};

/// Keys in the `settings` store.
const SETTINGS_KEY: &str = "settings";
const KEYS_KEY: &str = "keys";
const FAVOURITES_KEY: &str = "favourites";

/// Whatever went wrong inside one operation; the public methods say which operation.
pub(crate) use capture_db::Cause;

/// The open `alphascout` database.
pub struct Store {
    db: Database,
}

impl Store {
    /// Opens the database, creating or upgrading its stores first if needed.
    pub async fn open() -> Result<Store, String> {
        let db = capture_db::open().await?;
        Ok(Store { db })
    }

    /// The worker's one connection, for the modules that keep their own stores (recordings,
    /// workflows, prompt versions, pipelines): IndexedDB is opened once per worker.
    pub fn database(&self) -> Database {
        self.db.clone()
    }

    pub async fn put_run(&self, run: &AgentRun) -> Result<(), CaptureError> {
        self.put(RUNS, None, run).await.map_err(not_captured(format!("store run {}", run.id)))
    }

    /// The step row and, when given, its screenshot blob under `step.screenshot.key`, in ONE
    /// readwrite transaction over both stores.
    pub async fn put_step(
        &self,
        step: &StepRecord,
        screenshot: Option<&[u8]>,
    ) -> Result<(), CaptureError> {
        let write = async {
            let row = encode(step)?;
            let blob = match screenshot {
                Some(bytes) => {
                    let key = step
                        .screenshot
                        .as_ref()
                        .ok_or("the step has a screenshot but no screenshot key")?;
                    Some((key.key.as_str(), jpeg(bytes)?))
                }
                None => None,
            };
            let tx = self.writer(&[STEPS, SCREENSHOTS])?;
            tx.object_store(STEPS)?.put(row).await?;
            if let Some((key, blob)) = blob {
                tx.object_store(SCREENSHOTS)?.put(JsValue::from(blob)).with_key(key).await?;
            }
            tx.commit().await?;
            Ok::<_, Cause>(())
        };
        write
            .await
            .map_err(not_captured(format!("store step {} of run {}", step.index, step.run_id)))
    }

    pub async fn put_trace(&self, trace: &LlmTrace) -> Result<(), CaptureError> {
        self.put(TRACES, None, trace)
            .await
            .map_err(not_captured(format!("store trace {} of run {}", trace.id, trace.run_id)))
    }

    /// A trace built as JSON elsewhere: a pipeline run's, by the pipeline module.
    pub async fn put_trace_value(&self, trace: &serde_json::Value) -> Result<(), CaptureError> {
        let (id, run) = (trace["id"].as_str(), trace["runId"].as_str());
        let what = format!("store trace {} of run {}", id.unwrap_or("?"), run.unwrap_or("?"));
        self.put(TRACES, None, trace).await.map_err(not_captured(what))
    }

    pub async fn put_checkpoint(&self, checkpoint: &Checkpoint) -> Result<(), CaptureError> {
        let session = &checkpoint.session_id;
        self.put(CHECKPOINTS, Some(session), checkpoint)
            .await
            .map_err(not_captured(format!("store the checkpoint of session {session}")))
    }

    pub async fn delete_checkpoint(&self, session_id: &str) -> Result<(), String> {
        let delete = async {
            let tx = self.writer(&[CHECKPOINTS])?;
            tx.object_store(CHECKPOINTS)?.delete(session_id).await?;
            tx.commit().await?;
            Ok::<_, Cause>(())
        };
        delete.await.map_err(failed(format!("delete the checkpoint of session {session_id}")))
    }

    /// The checkpoint of one session, if it is stored. One that cannot be read is an error
    /// saying why, for a person (and logged); it stays stored.
    pub async fn checkpoint(&self, session_id: &str) -> Result<Option<Checkpoint>, String> {
        let value = capture_db::get(&self.db, CHECKPOINTS, session_id)
            .await
            .map_err(failed(format!("read the checkpoint of session {session_id}")))?;
        match value.map(|value| decode_checkpoint(session_id, value)) {
            Some(Err(unreadable)) => Err(unreadable.message()),
            Some(Ok(checkpoint)) => Ok(Some(checkpoint)),
            None => Ok(None),
        }
    }

    /// Per session: how many runs it has and the first one's task, from the runs'
    /// `taskId` index, in one transaction. Sessions without a stored run are left out.
    pub async fn session_runs(
        &self,
        session_ids: &[&str],
    ) -> Result<lean::SortedMap<String, SessionRuns>, String> {
        /// The fields of a run a summary needs.
        #[derive(tagged_de::FieldsDeserialize)]
        #[serde(rename_all = "camelCase")]
        struct RunHeader {
            task_prompt: String,
            created_at: String,
        }
        let read = async {
            let tx = self.db.transaction(RUNS).build()?;
            let runs_store = tx.object_store(RUNS)?;
            let index = runs_store.index("taskId")?;
            let mut found = lean::SortedMap::new();
            for session in session_ids {
                let mut runs = 0;
                let mut first: Option<RunHeader> = None;
                for value in index.get_all::<JsValue>().with_query(*session).await? {
                    runs += 1;
                    let Ok(run) = decode::<RunHeader>(value?) else {
                        continue;
                    };
                    if first.as_ref().is_none_or(|f| run.created_at < f.created_at) {
                        first = Some(run);
                    }
                }
                if runs > 0 {
                    let first_task = first.map(|run| run.task_prompt);
                    found.insert((*session).to_owned(), SessionRuns { runs, first_task });
                }
            }
            Ok::<_, Cause>(found)
        };
        read.await.map_err(failed("count the runs of the sessions".to_owned()))
    }

    /// Every stored checkpoint, older versions upgraded as they are read. One that cannot be
    /// read comes back as [`Unreadable`] (and is logged with its key and why), so the History
    /// lists it; it is neither skipped nor deleted, and does not block the others.
    pub async fn checkpoints(&self) -> Result<Vec<Result<Checkpoint, Unreadable>>, String> {
        let read = async {
            let tx = self.db.transaction(CHECKPOINTS).build()?;
            let store = tx.object_store(CHECKPOINTS)?;
            // Both lists come in key order from one transaction's view, so they pair up.
            let keys = store.get_all_keys::<JsValue>().await?;
            let values = store.get_all::<JsValue>().await?;
            let mut checkpoints = Vec::new();
            for (key, value) in keys.zip(values) {
                let (key, value) = (key?, value?);
                let key = key.as_string().unwrap_or_else(|| format!("{key:?}"));
                checkpoints.push(decode_checkpoint(&key, value));
            }
            Ok::<_, Cause>(checkpoints)
        };
        read.await.map_err(failed("read the checkpoints".to_owned()))
    }

    /// The stored settings with their API keys put back, or `None` before the first save.
    pub async fn settings(&self) -> Result<Option<Settings>, String> {
        let read = async {
            let tx = self.db.transaction(SETTINGS).build()?;
            let store = tx.object_store(SETTINGS)?;
            let Some(value) = store.get::<JsValue, _, _>(SETTINGS_KEY).await? else {
                return Ok(None);
            };
            let mut settings: Settings = decode(value)?;
            let keys: BTreeMap<String, String> = match store.get::<JsValue, _, _>(KEYS_KEY).await? {
                Some(keys) => decode(keys)?,
                None => BTreeMap::new(),
            };
            // Always restore, so a missing "keys" row leaves empty keys rather than `***`.
            settings.restore_keys(&keys);
            Ok::<_, Cause>(Some(settings))
        };
        read.await.map_err(failed("read the settings".to_owned()))
    }

    /// Writes the settings (keys masked, as `Settings` serializes) and the keys themselves in
    /// one transaction, so they cannot get out of step.
    pub async fn put_settings(&self, settings: &Settings) -> Result<(), String> {
        let write = async {
            let (value, keys) = (encode(settings)?, encode(&settings.keys())?);
            let tx = self.writer(&[SETTINGS])?;
            let store = tx.object_store(SETTINGS)?;
            store.put(value).with_key(SETTINGS_KEY).await?;
            store.put(keys).with_key(KEYS_KEY).await?;
            tx.commit().await?;
            Ok::<_, Cause>(())
        };
        write.await.map_err(failed("store the settings".to_owned()))
    }

    /// The quick-start prompts (none before the first save).
    pub async fn favourites(&self) -> Result<Vec<Favourite>, String> {
        let read = async {
            let tx = self.db.transaction(SETTINGS).build()?;
            let value = tx.object_store(SETTINGS)?.get::<JsValue, _, _>(FAVOURITES_KEY).await?;
            Ok::<_, Cause>(match value {
                Some(value) => decode(value)?,
                None => Vec::new(),
            })
        };
        read.await.map_err(failed("read the favourites".to_owned()))
    }

    pub async fn put_favourites(&self, favourites: &[Favourite]) -> Result<(), String> {
        self.put(SETTINGS, Some(FAVOURITES_KEY), &favourites)
            .await
            .map_err(failed("store the favourites".to_owned()))
    }

    /// Puts one record in a transaction of its own; `key` is for stores with out-of-line keys.
    async fn put(
        &self,
        name: &str,
        key: Option<&str>,
        record: &impl Serialize,
    ) -> Result<(), Cause> {
        capture_db::put(&self.db, name, key, record).await
    }

    /// A readwrite transaction. It rolls back when dropped uncommitted, so `?` undoes a
    /// half-done write.
    fn writer(&self, stores: &[&str]) -> indexed_db_futures::Result<Transaction<'_>> {
        self.db.transaction(stores).with_mode(TransactionMode::Readwrite).build()
    }
}

/// The session rules read and store checkpoints here.
impl CheckpointStore for Store {
    async fn checkpoint(&self, session_id: &str) -> Result<Option<Checkpoint>, String> {
        Store::checkpoint(self, session_id).await
    }
    async fn put_checkpoint(&self, checkpoint: &Checkpoint) -> Result<(), CaptureError> {
        Store::put_checkpoint(self, checkpoint).await
    }
}

/// The checkpoint stored under `key`, read through the engine (which upgrades older
/// versions); one that cannot be read is logged with its key and why.
fn decode_checkpoint(key: &str, value: JsValue) -> Result<Checkpoint, Unreadable> {
    let read = capture_db::decode::<serde_json::Value>(value)
        .map_err(|cause| Unreadable::new(key, format!("it is not plain data: {cause}")))
        .and_then(|value| read_checkpoint(key, value));
    if let Err(unreadable) = &read {
        log(&unreadable.log_line());
    }
    read
}

/// A stored plain object read back as `T` ([`capture_db::decode`], with the worker's error).
pub(crate) fn decode<T: serde::de::DeserializeOwned>(value: JsValue) -> Result<T, Cause> {
    Ok(capture_db::decode(value)?)
}

/// A JPEG `Blob` holding a copy of `bytes`.
pub(crate) fn jpeg(bytes: &[u8]) -> Result<web_sys::Blob, String> {
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type("image/jpeg");
    web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &options)
        .map_err(|error| error_message(&error))
}

/// [`failed`] for the records the executor captures, telling a full disk from the rest:
/// the executor stops the task on the first and only logs the others.
fn not_captured(what: String) -> impl FnOnce(Cause) -> CaptureError {
    move |cause| {
        // Chrome names the DOMException; an aborted commit may only carry it in its text.
        let full = cause.downcast_ref::<indexed_db_futures::error::Error>().is_some_and(|e| {
            matches!(e, indexed_db_futures::error::Error::DomException(dom)
                if AsRef::<JsValue>::as_ref(dom).unchecked_ref::<web_sys::DomException>().name()
                    == "QuotaExceededError")
        }) || cause.to_string().contains("QuotaExceeded");
        let message = failed(what)(cause);
        if full { CaptureError::Full(message) } else { CaptureError::Failed(message) }
    }
}

/// Turns an operation's cause into the message a person reads.
fn failed(what: String) -> impl FnOnce(Cause) -> String {
    move |cause| format!("IndexedDB: could not {what}: {cause}")
}
