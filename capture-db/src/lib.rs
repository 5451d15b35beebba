//! The `alphascout` IndexedDB database, opened the same way by every program that uses it.
//!
//! The worker writes what the agent captures; the annotation page reads it and adds its own
//! stores. Both open the database through [`open`], so they always ask for the same version
//! and the same upgrade runs whichever opens it first. Opening with two different versions
//! would make the older program fail with a `VersionError`, so the version lives only here.
//!
//! Version 1 (the worker's capture):
//!
//! | store | key | value | indexes |
//! |---|---|---|---|
//! | `runs` | `id` | `AgentRun` | `taskId`, `createdAt` |
//! | `steps` | `[runId, index]` | `StepRecord` | `runId` |
//! | `screenshots` | out-of-line: the SHA-256 of the JPEG | JPEG `Blob` | – |
//! | `traces` | `id` | `LlmTrace` | `runId` |
//! | `checkpoints` | out-of-line: the session id | `Checkpoint` | – |
//! | `settings` | out-of-line: `"settings"`, `"keys"`, `"favourites"` | – | – |
//!
//! Version 2 (annotation):
//!
//! | store | key | value | indexes |
//! |---|---|---|---|
//! | `versions` | `[runId, number]` | a run and its steps as saved (`history::Version`) | `runId` |
//! | `comments` | `id` | `review::Comment` | `runId` |
//! | `suggestions` | `id` | `review::Suggestion` | `runId` |
//! | `summaries` | `runId` | `query::RunSummary`, the runs list's row, without its search text | – |
//! | `search` | `runId` | `{runId, text}`: the run's lowercased text for full-text search | – |
//! | `templates` | `id` | starred steps (`templates::Template`) | – |
//! | `outbox` | auto-increment | sync operations waiting for the server | – |
//! | `annotation` | out-of-line: `"user"`, `"sync"`, `"words"`, `"collections"` | the page's settings | – |
//!
//! Version 3 (workflows, seed 004; Prompt Studio and pipelines, seed 002):
//!
//! | store | key | value | indexes |
//! |---|---|---|---|
//! | `recordings` | `id` | a recording's header and status; its steps once stopped (`workflow::recording::Recording`) | `createdAt` |
//! | `recordingEvents` | `[recordingId, seq]` | one `RawEvent` as the worker saw it, appended as it happens | `recordingId` |
//! | `workflows` | `[id, version]` | a `workflow::schema::Workflow` as saved; every save is a new version | `id` |
//! | `replays` | out-of-line: the replay's run id | a paused or running `ReplayState` | – |
//! | `promptVersions` | `[path, number]` | one saved override of a prompt file (`{path, number, text, savedAt}`) | `path` |
//! | `pipelines` | `[id, version]` | a pipeline file as saved (`{id, version, text, hash, savedAt, published}`) | `id` |
//!
//! Records are plain objects, written and read through JSON text ([`encode`], [`decode`]),
//! so DevTools and the other program read them as JSON, and each program compiles one
//! serde format (serde_json) for its types rather than a second one for `JsValue`s.

use indexed_db_futures::KeyPath;
use indexed_db_futures::database::Database;
use indexed_db_futures::prelude::*;
use indexed_db_futures::transaction::TransactionMode;
use serde::Serialize;
use serde::de::DeserializeOwned;
use wasm_bindgen::JsValue;

pub const DATABASE: &str = "alphascout";
pub const VERSION: u32 = 3;

pub const RUNS: &str = "runs";
pub const STEPS: &str = "steps";
pub const SCREENSHOTS: &str = "screenshots";
pub const TRACES: &str = "traces";
pub const CHECKPOINTS: &str = "checkpoints";
pub const SETTINGS: &str = "settings";

pub const VERSIONS: &str = "versions";
pub const COMMENTS: &str = "comments";
pub const SUGGESTIONS: &str = "suggestions";
pub const SUMMARIES: &str = "summaries";
pub const SEARCH: &str = "search";
pub const TEMPLATES: &str = "templates";
pub const OUTBOX: &str = "outbox";
pub const ANNOTATION: &str = "annotation";

pub const RECORDINGS: &str = "recordings";
pub const RECORDING_EVENTS: &str = "recordingEvents";
pub const WORKFLOWS: &str = "workflows";
pub const REPLAYS: &str = "replays";
pub const PROMPT_VERSIONS: &str = "promptVersions";
pub const PIPELINES: &str = "pipelines";

/// Opens the database, creating or upgrading its stores first if needed. An extension
/// update reloads the worker and its pages together, so no connection of an older version
/// is left open to block the upgrade.
pub async fn open() -> Result<Database, String> {
    let db = Database::open(DATABASE)
        .with_version(VERSION)
        .with_on_upgrade_needed(|event, db| {
            // Each version adds its own stores, so an old database walks through them all.
            if event.old_version() < 1.0 {
                create_version_1(&db)?;
            }
            if event.old_version() < 2.0 {
                create_version_2(&db)?;
            }
            if event.old_version() < 3.0 {
                create_version_3(&db)?;
            }
            Ok(())
        })
        .await
        .map_err(|cause| format!("IndexedDB: could not open {DATABASE}: {cause}"))?;
    Ok(db)
}

fn create_version_1(db: &Database) -> indexed_db_futures::Result<()> {
    let runs = db.create_object_store(RUNS).with_key_path(KeyPath::One("id")).build()?;
    runs.create_index("taskId", KeyPath::One("taskId")).build()?;
    runs.create_index("createdAt", KeyPath::One("createdAt")).build()?;

    create_owned_rows(db, STEPS, ["runId", "index"])?;

    db.create_object_store(SCREENSHOTS).build()?;

    let traces = db.create_object_store(TRACES).with_key_path(KeyPath::One("id")).build()?;
    traces.create_index("runId", KeyPath::One("runId")).build()?;

    db.create_object_store(CHECKPOINTS).build()?;
    db.create_object_store(SETTINGS).build()?;
    Ok(())
}

fn create_version_2(db: &Database) -> indexed_db_futures::Result<()> {
    create_owned_rows(db, VERSIONS, ["runId", "number"])?;
    for name in [COMMENTS, SUGGESTIONS] {
        let store = db.create_object_store(name).with_key_path(KeyPath::One("id")).build()?;
        store.create_index("runId", KeyPath::One("runId")).build()?;
    }
    // Search text apart from the rows, so the list opens without reading it.
    for name in [SUMMARIES, SEARCH] {
        db.create_object_store(name).with_key_path(KeyPath::One("runId")).build()?;
    }
    db.create_object_store(TEMPLATES).with_key_path(KeyPath::One("id")).build()?;
    db.create_object_store(OUTBOX).with_auto_increment(true).build()?;
    db.create_object_store(ANNOTATION).build()?;
    Ok(())
}

fn create_version_3(db: &Database) -> indexed_db_futures::Result<()> {
    let recordings =
        db.create_object_store(RECORDINGS).with_key_path(KeyPath::One("id")).build()?;
    recordings.create_index("createdAt", KeyPath::One("createdAt")).build()?;
    // One row per event, so recording appends instead of rewriting a growing list.
    create_owned_rows(db, RECORDING_EVENTS, ["recordingId", "seq"])?;
    create_owned_rows(db, WORKFLOWS, ["id", "version"])?;
    create_owned_rows(db, PROMPT_VERSIONS, ["path", "number"])?;
    create_owned_rows(db, PIPELINES, ["id", "version"])?;
    db.create_object_store(REPLAYS).build()?;
    Ok(())
}

/// A store keyed by `[owner, n]` (a run's steps, a workflow's versions), with an index on the
/// owner named as its field, so one owner's rows are read at once.
fn create_owned_rows(db: &Database, name: &str, key: [&str; 2]) -> indexed_db_futures::Result<()> {
    let store = db.create_object_store(name).with_key_path(KeyPath::<&str>::from(key)).build()?;
    store.create_index(key[0], KeyPath::One(key[0])).build()?;
    Ok(())
}

/// Whatever went wrong inside one read or write: IndexedDB's error or the record's encoding.
pub type Cause = Box<dyn std::error::Error>;

/// The value under `key` in store `name`, as stored, read in a transaction of its own.
pub async fn get(db: &Database, name: &str, key: &str) -> Result<Option<JsValue>, Cause> {
    let tx = db.transaction(name).build()?;
    Ok(tx.object_store(name)?.get::<JsValue, _, _>(key).await?)
}

/// Every value in store `name`, as stored, in key order.
pub async fn all(db: &Database, name: &str) -> Result<Vec<JsValue>, Cause> {
    let tx = db.transaction(name).build()?;
    let values = tx.object_store(name)?.get_all::<JsValue>().await?;
    Ok(values.collect::<Result<Vec<_>, _>>()?)
}

/// Every value in store `name` whose index `index` is `key`, as stored.
pub async fn all_where(
    db: &Database,
    name: &str,
    index: &str,
    key: &str,
) -> Result<Vec<JsValue>, Cause> {
    let tx = db.transaction(name).build()?;
    let values = tx.object_store(name)?.index(index)?.get_all::<JsValue>().with_query(key).await?;
    Ok(values.collect::<Result<Vec<_>, _>>()?)
}

/// Puts one record in store `name` (under `key` when the store's keys are out-of-line), in a
/// transaction of its own.
pub async fn put(
    db: &Database,
    name: &str,
    key: Option<&str>,
    record: &impl Serialize,
) -> Result<(), Cause> {
    let value = encode(record)?;
    let tx = db.transaction(name).with_mode(TransactionMode::Readwrite).build()?;
    let store = tx.object_store(name)?;
    match key {
        Some(key) => {
            store.put(value).with_key(key).await?;
        }
        None => store.put(value).await?,
    }
    tx.commit().await?;
    Ok(())
}

/// Plain objects and `null`s, as the JSON the types describe.
pub fn encode(value: &impl Serialize) -> Result<JsValue, String> {
    let text = lean::write_json(value).map_err(|e| e.to_string())?;
    js_sys::JSON::parse(&text).map_err(|e| format!("{e:?}"))
}

/// A stored record (or any plain JS value) read back as `T`; `undefined` reads as `null`. A
/// Blob or any other non-JSON value is an error, as is a record that does not have `T`'s shape.
pub fn decode<T: DeserializeOwned>(value: JsValue) -> Result<T, String> {
    if value.is_undefined() {
        return serde_json::from_value(serde_json::Value::Null).map_err(|e| e.to_string());
    }
    let text = js_sys::JSON::stringify(&value)
        .ok()
        .and_then(|text| text.as_string())
        .ok_or_else(|| "the stored value is not JSON".to_owned())?;
    lean::read_json(&text).map_err(|e| e.to_string())
}
