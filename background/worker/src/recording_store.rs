//! The recordings in IndexedDB (`capture-db`'s `recordings`, `recordingEvents` and
//! `screenshots` stores).
//!
//! A `recordings` row is the engine's [`Recording`] as camelCase JSON plus `status`
//! (`"recording"` or `"stopped"`) and `tabId`. While recording, its `steps` is empty and each
//! event is its own `recordingEvents` row (`{recordingId, seq, uid, ...RawEvent}`), written
//! the moment it arrives; Stop folds them into `steps`. Screenshots are JPEG blobs keyed by
//! their SHA-256, as the agent's are.

use agent_engine::workflow::recording::{RawEvent, Recording};
use capture_db::{RECORDING_EVENTS, RECORDINGS, SCREENSHOTS};
use indexed_db_futures::database::Database;
use indexed_db_futures::prelude::*;
use indexed_db_futures::transaction::TransactionMode;
use protocol::TabId;
use serde::Serialize;
use wasm_bindgen::JsValue;

use crate::store::{Cause, Store, decode, jpeg};

pub const RECORDING: &str = "recording";
pub const STOPPED: &str = "stopped";

/// One `recordings` row.
#[derive(Debug, Clone, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordingRow {
    #[serde(flatten)]
    pub recording: Recording,
    pub status: String,
    pub tab_id: TabId,
    /// A person named it: reflecting it keeps the name instead of taking the task's.
    #[serde(default)]
    pub named: bool,
}

/// One `recordingEvents` row. `uid` is the page's name for the event, so one delivered twice
/// (through the binding, then again from the page's pending list) is stored once.
#[derive(Debug, Clone, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventRow {
    pub recording_id: String,
    pub seq: u32,
    pub uid: String,
    #[serde(flatten)]
    pub event: RawEvent,
}

pub struct RecordingStore {
    db: Database,
}

impl RecordingStore {
    /// On the worker's one connection ([`Store::database`]).
    pub fn new(store: &Store) -> RecordingStore {
        RecordingStore { db: store.database() }
    }

    pub async fn put_recording(&self, row: &RecordingRow) -> Result<(), String> {
        capture_db::put(&self.db, RECORDINGS, None, row)
            .await
            .map_err(failed(format!("store recording {}", row.recording.id)))
    }

    pub async fn put_event(&self, row: &EventRow) -> Result<(), String> {
        capture_db::put(&self.db, RECORDING_EVENTS, None, row)
            .await
            .map_err(failed(format!("store event {} of {}", row.seq, row.recording_id)))
    }

    pub async fn put_screenshot(&self, key: &str, bytes: &[u8]) -> Result<(), String> {
        let write = async {
            let blob = jpeg(bytes)?;
            let tx =
                self.db.transaction(SCREENSHOTS).with_mode(TransactionMode::Readwrite).build()?;
            tx.object_store(SCREENSHOTS)?.put(JsValue::from(blob)).with_key(key).await?;
            tx.commit().await?;
            Ok::<_, Cause>(())
        };
        write.await.map_err(failed(format!("store screenshot {key}")))
    }

    /// Recording `id`, read by its key; `None` when it is no longer stored.
    pub async fn recording(&self, id: &str) -> Result<Option<RecordingRow>, String> {
        let read = async {
            match capture_db::get(&self.db, RECORDINGS, id).await? {
                Some(value) => Ok::<_, Cause>(Some(decode::<RecordingRow>(value)?)),
                None => Ok(None),
            }
        };
        read.await.map_err(failed(format!("read recording {id}")))
    }

    /// Every recording, oldest first; rows that cannot be read are logged and left out.
    pub async fn recordings(&self) -> Result<Vec<RecordingRow>, String> {
        let read = async {
            let mut rows = Vec::new();
            for value in capture_db::all(&self.db, RECORDINGS).await? {
                match decode::<RecordingRow>(value) {
                    Ok(row) => rows.push(row),
                    Err(error) => crate::chrome::log(&format!("unreadable recording: {error}")),
                }
            }
            lean::sort_by(&mut rows, |a: &RecordingRow, b| {
                a.recording.created_at.cmp(&b.recording.created_at)
            });
            Ok::<_, Cause>(rows)
        };
        read.await.map_err(failed("read the recordings".to_owned()))
    }

    /// The events of one recording in the order they were stored.
    pub async fn events(&self, recording_id: &str) -> Result<Vec<EventRow>, String> {
        let read = async {
            let values =
                capture_db::all_where(&self.db, RECORDING_EVENTS, "recordingId", recording_id);
            let mut rows = Vec::new();
            for value in values.await? {
                match decode::<EventRow>(value) {
                    Ok(row) => rows.push(row),
                    Err(error) => {
                        crate::chrome::log(&format!("unreadable recorded event: {error}"))
                    }
                }
            }
            lean::sort_by_key(&mut rows, |row: &EventRow| row.seq);
            Ok::<_, Cause>(rows)
        };
        read.await.map_err(failed(format!("read the events of recording {recording_id}")))
    }
}

fn failed(what: String) -> impl FnOnce(Cause) -> String {
    move |cause| format!("IndexedDB: could not {what}: {cause}")
}
