//! Export files built in the page: the text comes from `annotation_core::export` a run at a
//! time, goes into a list of Blob parts (the browser keeps them off the wasm heap), and the
//! page yields every [`SLICE_MS`] of work so a 20,000-step export keeps the page responsive
//! and its progress bar moving.

use annotation_core::export::{self, Format, Options, Screenshots, ZipWriter};
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
    let mut zip = (format == Format::Zip).then(ZipWriter::new);
    // In a ZIP the JSON and JSONL documents are entries of their own; they are built as
    // text first, then stored with their CRC.
    let mut json = String::new();
    let mut jsonl = String::new();
    match format {
        Format::Json => {
            parts.push(&text(export::json_start(now, filter, total)));
        }
        Format::Csv => {
            parts.push(&text(export::csv_header()));
        }
        Format::Markdown => {
            parts.push(&text(export::markdown_start(now, filter, total, steps)));
        }
        Format::Zip => json.push_str(&export::json_start(now, filter, total)),
        Format::Jsonl => {}
    };
    let zip_options = Options { screenshots: Screenshots::Files, ..options.clone() };
    let mut slice_start = clock();
    let mut written = std::collections::HashSet::new();
    for (i, (run, run_steps)) in runs.iter().enumerate() {
        // Only anonymizing changes the records: otherwise they are written as read, uncopied.
        let anonymized = options.anonymize.then(|| {
            let (mut run, mut run_steps) = (run.clone(), run_steps.clone());
            export::anonymize(&mut run, &mut run_steps);
            (run, run_steps)
        });
        let (run, run_steps) = match &anonymized {
            Some((run, run_steps)) => (run, run_steps.as_slice()),
            None => (run, run_steps.as_slice()),
        };
        match format {
            Format::Json => {
                if i > 0 {
                    parts.push(&text(export::json_separator().into()));
                }
                parts.push(&text(export::json_run(run, run_steps, options)));
            }
            Format::Jsonl => {
                parts.push(&text(export::jsonl_lines(run, run_steps, options)));
            }
            Format::Csv => {
                parts.push(&text(export::csv_rows(run, run_steps, options)));
            }
            Format::Markdown => {
                parts.push(&text(export::markdown_run(run, run_steps, options)));
            }
            Format::Zip => {
                if i > 0 {
                    json.push_str(export::json_separator());
                }
                json.push_str(&export::json_run(run, run_steps, &zip_options));
                jsonl.push_str(&export::jsonl_lines(run, run_steps, &zip_options));
                let writer = zip.as_mut().expect("a zip writer for zip exports");
                for step in run_steps {
                    let (Some(path), Some(shot)) =
                        (export::screenshot_path(step), &step.screenshot)
                    else {
                        continue;
                    };
                    // Files are named by content: an image many steps share is written once.
                    // Anonymizing never changes the key.
                    if !written.insert(shot.key.clone()) {
                        continue;
                    }
                    if let Some(data) = db.screenshot(&shot.key).await {
                        let data = blob_bytes(&data).await?;
                        parts.push(&bytes(writer.entry(&path, &data)));
                    }
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
            parts.push(&bytes(writer.entry("runs.json", json.as_bytes())));
            parts.push(&bytes(writer.entry("runs.jsonl", jsonl.as_bytes())));
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
