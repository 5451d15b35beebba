//! The runs export (JSON, JSONL, CSV, Markdown, ZIP): the text comes from
//! `annotation_core::export` a run at a time and goes into a list of Blob parts, and the
//! export yields every [`SLICE_MS`] of work so a 20,000-step export keeps the page
//! responsive and its progress bar moving.

use annotation_core::export::{self, Export, Format, Options, ZipWriter};
use annotation_core::record::{Run, Step};
use annotation_store::{Store, clock, yield_now};
use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::wasm_bindgen;

use crate::{Progress, blob, bytes, exported, read};

/// Work between yields to the browser, in ms. Yielding by time rather than every N runs
/// keeps the number of yields (each costs a clamped `setTimeout`, ~4 ms) independent of how
/// big the runs are (`cargo xtask bench studio`).
const SLICE_MS: f64 = 50.0;

/// Exports the stored runs `ids`, in that order, as `format` (JSON text of
/// `annotation_core::export::Format`) with `options` (JSON of `export::Options`), made at
/// `now`; `filter` is the list's filter the file names. Calls `progress(done, total)` as
/// runs finish.
#[wasm_bindgen]
pub async fn export_runs(
    ids: Vec<String>,
    filter: String,
    format: String,
    options: String,
    now: String,
    progress: js_sys::Function,
) -> Result<JsValue, String> {
    let format: Format = read("export's format", &format)?;
    let options: Options = read("export's options", &options)?;
    let store = crate::store().await?;
    let mut runs = store.everything().await?;
    // By position in `ids`, looked up once per run: 20,000 runs stay linear.
    let order: std::collections::HashMap<&str, usize> =
        ids.iter().enumerate().map(|(i, id)| (id.as_str(), i)).collect();
    runs.retain(|(run, _)| order.contains_key(run.id.as_str()));
    lean::sort_by_key(&mut runs, |(run, _)| order[run.id.as_str()]);
    let progress = Progress(progress);
    let (file, steps) = build(&store, &runs, format, &options, &filter, &now, &progress).await?;
    let file_name = export::file_name(format, &now);
    let notice = format!("Exported {} runs ({steps} steps) to {file_name}.", runs.len());
    Ok(exported(file, &file_name, &notice))
}

/// The file, and the number of steps in it.
async fn build(
    store: &Store,
    runs: &[(Run, Vec<Step>)],
    format: Format,
    options: &Options,
    filter: &str,
    now: &str,
    progress: &Progress,
) -> Result<(web_sys::Blob, usize), String> {
    let parts = js_sys::Array::new();
    let total = runs.len();
    let steps: usize = runs.iter().map(|(_, s)| s.len()).sum();
    let text = |s: String| JsValue::from(s);
    // One export, one anonymizer: a person keeps one placeholder in every run.
    let mut export = Export::new(format, options, runs.iter().map(|(r, s)| (r, s.as_slice())));
    if export.wants_traces() {
        // Redacted again at the paths configured now, secrets masked (see `traces`).
        let paths = annotation_core::traces::redaction_paths(&store.agent_settings().await);
        let secrets = store.secrets().await;
        for (run, _) in runs {
            let traces = store.traces(&run.id).await?;
            let traces = traces
                .iter()
                .map(|t| annotation_core::traces::outgoing(t, &paths, &secrets))
                .collect();
            export.add_traces(&run.id, traces);
        }
    }
    let filter = export.filter(filter);
    let mut zip = (format == Format::Zip).then(ZipWriter::new);
    // In a ZIP the JSON and JSONL documents are entries of their own; they are built as
    // text first, then stored with their CRC.
    let mut json = String::new();
    let mut jsonl = String::new();
    match format {
        Format::Json => {
            parts.push(&text(export::json_start(now, &filter, total)));
        }
        Format::Csv => {
            parts.push(&text(export::csv_header()));
        }
        Format::Markdown => {
            parts.push(&text(export::markdown_start(now, &filter, total, steps)));
        }
        Format::Zip => {
            let readme = export::zip_readme(now, &filter, total, steps, export.options());
            let writer = zip.as_mut().expect("a zip writer for zip exports");
            parts.push(&bytes(&writer.entry(export::ZIP_README, readme.as_bytes())));
            json.push_str(&export::json_start(now, &filter, total));
        }
        Format::Jsonl => {}
    };
    let mut slice_start = clock();
    for (i, (run, run_steps)) in runs.iter().enumerate() {
        if format != Format::Zip {
            parts.push(&text(export.run(run, run_steps)));
        } else {
            let part = export.zip_run(run, run_steps);
            json.push_str(&part.json);
            jsonl.push_str(&part.jsonl);
            let writer = zip.as_mut().expect("a zip writer for zip exports");
            // None when anonymizing: text inside an image cannot be removed.
            for (path, key) in part.screenshots {
                if let Some(data) = store.screenshot_bytes(&key).await? {
                    parts.push(&bytes(&writer.entry(&path, &data)));
                }
            }
        }
        if i + 1 == total || clock() - slice_start >= SLICE_MS {
            progress.report(i + 1, total);
            yield_now().await;
            slice_start = clock();
        }
    }
    match format {
        Format::Json => {
            parts.push(&text(export::json_end().into()));
        }
        Format::Zip => {
            json.push_str(export::json_end());
            let writer = zip.as_mut().expect("a zip writer for zip exports");
            parts.push(&bytes(&writer.entry(export::ZIP_DOCUMENT, json.as_bytes())));
            parts.push(&bytes(&writer.entry(export::ZIP_LINES, jsonl.as_bytes())));
            parts.push(&bytes(&zip.take().expect("a zip writer").finish()));
        }
        _ => {}
    }
    if total == 0 {
        progress.report(0, 0);
    }
    Ok((blob(&parts, format.mime())?, steps))
}
