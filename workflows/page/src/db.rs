//! The page's IndexedDB shell (layout in `capture-db`): recordings are read, workflow
//! versions read and written, screenshots read as Blobs.

use capture_db::{Cause, RECORDINGS, SCREENSHOTS, WORKFLOWS};
use indexed_db_futures::database::Database;
use serde_json::Value;
use wasm_bindgen::JsCast;
use workflow_format::recording::Recording;
use workflow_format::schema::Workflow;

use crate::state::RecordingRow;

pub struct Db {
    db: Database,
}

fn failed(what: &str) -> impl FnOnce(Cause) -> String + '_ {
    move |cause| format!("IndexedDB: could not {what}: {cause}")
}

impl Db {
    pub async fn open() -> Result<Db, String> {
        Ok(Db { db: capture_db::open().await? })
    }

    async fn all(&self, name: &str) -> Result<Vec<Value>, Cause> {
        let values = capture_db::all(&self.db, name).await?;
        Ok(values.into_iter().map(capture_db::decode).collect::<Result<_, _>>()?)
    }

    /// The recordings (newest first) and every workflow version. A row that cannot be read
    /// is left out and said so in the console; it stays stored.
    pub async fn load(&self) -> Result<(Vec<RecordingRow>, Vec<Workflow>), String> {
        let recordings = self.all(RECORDINGS).await.map_err(failed("read the recordings"))?;
        let mut rows: Vec<RecordingRow> = recordings
            .iter()
            .map(|r| RecordingRow {
                id: text(&r["id"]),
                name: text(&r["name"]),
                created_at: text(&r["createdAt"]),
                status: r["status"].as_str().unwrap_or("stopped").to_owned(),
                steps: r["steps"].as_array().map_or(0, Vec::len),
            })
            .collect();
        lean::sort_by(&mut rows, |a, b| b.created_at.cmp(&a.created_at));
        let mut workflows = Vec::new();
        for value in self.all(WORKFLOWS).await.map_err(failed("read the workflows"))? {
            match serde_json::from_value::<Workflow>(value) {
                Ok(workflow) => workflows.push(workflow),
                Err(error) => warn(&format!("an unreadable workflow version: {error}")),
            }
        }
        Ok((rows, workflows))
    }

    pub async fn save(&self, workflow: &Workflow) -> Result<(), String> {
        capture_db::put(&self.db, WORKFLOWS, None, workflow)
            .await
            .map_err(failed("save the workflow"))
    }

    pub async fn recording(&self, id: &str) -> Result<Recording, String> {
        let value = capture_db::get(&self.db, RECORDINGS, id)
            .await
            .map_err(failed("read the recording"))?;
        let value = value.ok_or_else(|| format!("There is no recording {id:?}."))?;
        capture_db::decode(value).map_err(|e| format!("The recording cannot be read: {e}"))
    }

    pub async fn screenshot(&self, key: &str) -> Option<web_sys::Blob> {
        let value = capture_db::get(&self.db, SCREENSHOTS, key).await;
        value.ok().flatten().and_then(|v| v.dyn_into().ok())
    }
}

fn text(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_owned()
}

#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = console)]
    fn warn(message: &str);
}
