//! Import files, read and checked whole before anything is stored.

use wasm_bindgen::prelude::wasm_bindgen;

/// Reads an import file (`name` for its kind, `text` its contents) and checks every record,
/// refusing the runs whose ids are in `existing`. Answers JSON text: `{"runs": [[run,
/// steps], …]}` when all of it may come in, else `{"rejections": [line, …], "copyable":
/// bool}`, each line as the runs list shows it; `copyable` when ids already here are the
/// only fault, so the file can come in as copies.
#[wasm_bindgen]
pub fn read_import(name: &str, text: &str, existing: Vec<String>) -> String {
    use annotation_core::import;
    let existing: std::collections::HashSet<String> = existing.into_iter().collect();
    let answer = match import::parse(name, text, &existing) {
        Ok(batch) => serde_json::json!({ "runs": batch.runs }),
        Err(rejections) => {
            let lines: Vec<String> = rejections.iter().map(ToString::to_string).collect();
            let copyable = !existing.is_empty() && import::read(name, text).is_ok();
            serde_json::json!({ "rejections": lines, "copyable": copyable })
        }
    };
    answer.to_string()
}
