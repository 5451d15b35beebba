//! Export files built in the page: the text comes from `annotation_core::export` a run at a
//! time, goes into a list of Blob parts (the browser keeps them off the wasm heap), and the
//! page yields every [`SLICE_MS`] of work so a 20,000-step export keeps the page responsive
//! and its progress bar moving.

use annotation_core::export::{self, Export, Format, Options, ZipWriter};
use annotation_core::record::{Run, Step};
use wasm_bindgen::{JsCast, JsValue};

use crate::db::Db;
use crate::util::yield_now;

/// Work between yields to the browser, in ms. Yielding by time rather than every N runs
/// keeps the number of yields (each costs a clamped `setTimeout`, ~4 ms) independent of how
/// big the runs are (`cargo xtask bench studio`).
const SLICE_MS: f64 = 50.0;

fn clock() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map_or(0.0, |p| p.now())
}

pub struct Built {
    pub blob: web_sys::Blob,
    pub file_name: String,
    pub steps: usize,
}

fn blob(parts: &js_sys::Array, mime: &str) -> Result<web_sys::Blob, String> {
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    web_sys::Blob::new_with_blob_sequence_and_options(parts, &options)
        .map_err(|e| format!("could not assemble the file: {e:?}"))
}

fn bytes(data: Vec<u8>) -> JsValue {
    js_sys::Uint8Array::from(data.as_slice()).into()
}

/// Builds the export of `runs` in `format`, calling `progress(done, total)` as runs finish.
pub async fn build(
    db: &Db,
    runs: &[(Run, Vec<Step>)],
    format: Format,
    options: &Options,
    filter: &str,
    now: &str,
    mut progress: impl FnMut(usize, usize),
) -> Result<Built, String> {
    let parts = js_sys::Array::new();
    let total = runs.len();
    let steps: usize = runs.iter().map(|(_, s)| s.len()).sum();
    let text = |s: String| JsValue::from(s);
    // One export, one anonymizer: a person keeps one placeholder in every run.
    let mut export = Export::new(format, options, runs.iter().map(|(r, s)| (r, s.as_slice())));
    if export.wants_traces() {
        // Redacted again at the paths configured now, secrets masked (see `traces`).
        let paths = annotation_core::traces::redaction_paths(&db.agent_settings().await);
        let secrets = db.secrets().await;
        for (run, _) in runs {
            let traces = db.traces(&run.id).await?;
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
            parts.push(&bytes(writer.entry(export::ZIP_README, readme.as_bytes())));
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
                if let Some(data) = db.screenshot(&key).await {
                    let data = blob_bytes(&data).await?;
                    parts.push(&bytes(writer.entry(&path, &data)));
                }
            }
        }
        if i + 1 == total || clock() - slice_start >= SLICE_MS {
            progress(i + 1, total);
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
            parts.push(&bytes(writer.entry(export::ZIP_DOCUMENT, json.as_bytes())));
            parts.push(&bytes(writer.entry(export::ZIP_LINES, jsonl.as_bytes())));
            parts.push(&bytes(zip.take().expect("a zip writer").finish()));
        }
        _ => {}
    }
    if total == 0 {
        progress(0, 0);
    }
    Ok(Built {
        blob: blob(&parts, format.mime())?,
        file_name: export::file_name(format, now),
        steps,
    })
}

async fn blob_bytes(blob: &web_sys::Blob) -> Result<Vec<u8>, String> {
    let buffer = wasm_bindgen_futures::JsFuture::from(blob.array_buffer())
        .await
        .map_err(|e| format!("could not read a screenshot: {e:?}"))?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}

/// Hands the file to the browser's download, as if a link to it were clicked.
pub fn save(built: &Built) -> Result<(), String> {
    let url = web_sys::Url::create_object_url_with_blob(&built.blob)
        .map_err(|e| format!("could not offer the file: {e:?}"))?;
    let document = web_sys::window().and_then(|w| w.document()).ok_or("no document")?;
    let link: web_sys::HtmlAnchorElement = document
        .create_element("a")
        .map_err(|e| format!("{e:?}"))?
        .dyn_into()
        .map_err(|_| "not a link")?;
    link.set_href(&url);
    link.set_download(&built.file_name);
    link.click();
    // The download has its own reference; ours can go once the click is handled.
    let revoke = wasm_bindgen::closure::Closure::once_into_js(move || {
        let _ = web_sys::Url::revoke_object_url(&url);
    });
    if let Some(window) = web_sys::window() {
        let _ = window
            .set_timeout_with_callback_and_timeout_and_arguments_0(revoke.unchecked_ref(), 60_000);
    }
    Ok(())
}
