//! The fine-tuning export's IO: the runs, their Navigator traces and screenshots from
//! IndexedDB, the prompt overrides from the worker's settings, the secrets to mask, handed a
//! run at a time to the fine-tuning module (`annotation-transfer`, imported when an export
//! starts: the page's bundle carries no prompt renderer or dataset writer); then the ZIP of
//! `train.jsonl`, `validation.jsonl`, `test.jsonl`, the card (`README.md`) and
//! `provenance.jsonl` it builds is saved. What goes in, and how, is
//! `annotation_core::finetune`'s.

use std::collections::HashMap;

use annotation_core::finetune::{self, Options};
use annotation_core::record::Step;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use super::{notify, progress};
use crate::db::Db;
use crate::state::{Action, Dispatch};
use crate::util::{now, yield_now};

#[wasm_bindgen]
extern "C" {
    /// `annotation-transfer`'s export in the making.
    type FinetuneExport;

    #[wasm_bindgen(method, catch)]
    fn add_run(
        this: &FinetuneExport,
        run: &str,
        steps: &str,
        traces: &str,
        images: &str,
    ) -> Result<(), JsValue>;

    #[wasm_bindgen(method)]
    fn finish(this: &FinetuneExport, filter: &str, exported_at: &str) -> Vec<u8>;

    #[wasm_bindgen(method)]
    fn notice(this: &FinetuneExport, file: &str) -> String;
}

/// Exports the runs `ids` (those of them in the chosen statuses) for fine-tuning.
pub async fn export(
    db: &Db,
    dispatch: &Dispatch,
    ids: Vec<String>,
    filter: String,
    options: Options,
) {
    let label = "Building fine-tuning data".to_owned();
    progress(dispatch, &label, 0, 0);
    let result = build(db, dispatch, &label, &ids, &filter, &options).await;
    dispatch.dispatch(Action::Progress(None));
    match result {
        Ok(notice) => notify(dispatch, true, notice),
        Err(why) => notify(dispatch, false, format!("Fine-tuning export failed: {why}")),
    }
}

async fn build(
    db: &Db,
    dispatch: &Dispatch,
    label: &str,
    ids: &[String],
    filter: &str,
    options: &Options,
) -> Result<String, String> {
    let wanted: std::collections::HashSet<&str> = ids.iter().map(String::as_str).collect();
    let mut runs: Vec<_> = db
        .everything()
        .await?
        .into_iter()
        .filter(|(run, steps)| {
            wanted.contains(run.id.as_str()) && finetune::chosen(run, steps, options)
        })
        .collect();
    lean::sort_by(&mut runs, |a, b| a.0.id.cmp(&b.0.id));
    let settings = db.agent_settings().await;
    let overrides = settings.get("prompt_overrides").filter(|o| o.is_object());
    let overrides = overrides.map_or_else(|| "{}".to_owned(), ToString::to_string);
    let secrets = js_sys::Array::new();
    for secret in db.secrets().await {
        secrets.push(&JsValue::from_str(&secret));
    }
    let args = js_sys::Array::of3(
        &JsValue::from_str(&json(options)?),
        &JsValue::from_str(&overrides),
        &secrets,
    );
    let export: FinetuneExport =
        crate::modules::construct(crate::modules::TRANSFER, "FinetuneExport", &args)
            .await?
            .unchecked_into();
    let total = runs.len();
    for (i, (run, steps)) in runs.iter().enumerate() {
        let traces = serde_json::Value::Array(db.traces(&run.id).await?).to_string();
        let images: serde_json::Map<String, serde_json::Value> =
            if options.screenshots { screenshots(db, steps).await } else { HashMap::new() }
                .into_iter()
                .map(|(key, url)| (key, url.into()))
                .collect();
        let images = serde_json::Value::Object(images).to_string();
        export
            .add_run(&json(run)?, &json(steps)?, &traces, &images)
            .map_err(|e| e.as_string().unwrap_or_else(|| format!("{e:?}")))?;
        progress(dispatch, label, i + 1, total);
        yield_now().await;
    }
    let at = now();
    let zip = export.finish(filter, &at);
    let file_name = file_name(&at);
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(zip.as_slice()));
    let options_bag = web_sys::BlobPropertyBag::new();
    options_bag.set_type("application/zip");
    let blob = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &options_bag)
        .map_err(|e| format!("could not assemble the file: {e:?}"))?;
    crate::download::save(&crate::download::Built {
        blob,
        file_name: file_name.clone(),
        steps: 0,
    })?;
    Ok(export.notice(&file_name))
}

/// `value` as JSON text for the module (through `Value`, the page's one writer per type).
fn json(value: &impl serde::Serialize) -> Result<String, String> {
    lean::write_json(value).map_err(|e| e.to_string())
}

/// "alphascout-finetune-20261124-1030.zip".
fn file_name(at: &str) -> String {
    let digits: String = at.chars().filter(char::is_ascii_digit).take(12).collect();
    match digits.len() {
        12 => format!("alphascout-finetune-{}-{}.zip", &digits[..8], &digits[8..]),
        _ => "alphascout-finetune.zip".to_owned(),
    }
}

/// The run's screenshots as data URLs, by key.
async fn screenshots(db: &Db, steps: &[Step]) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for shot in steps.iter().filter_map(|s| s.screenshot.as_ref()) {
        if out.contains_key(&shot.key) {
            continue;
        }
        let Some(blob) = db.screenshot(&shot.key).await else { continue };
        let Ok(buffer) = wasm_bindgen_futures::JsFuture::from(blob.array_buffer()).await else {
            continue;
        };
        let data = js_sys::Uint8Array::new(&buffer).to_vec();
        let mime = if shot.mime.is_empty() { "image/jpeg" } else { shot.mime.as_str() };
        out.insert(shot.key.clone(), format!("data:{mime};base64,{}", base64(&data)));
    }
    out
}

/// Standard base64 with padding.
pub(super) fn base64(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_pads_like_the_standard() {
        assert_eq!(super::base64(b""), "");
        assert_eq!(super::base64(b"f"), "Zg==");
        assert_eq!(super::base64(b"fo"), "Zm8=");
        assert_eq!(super::base64(b"foo"), "Zm9v");
        assert_eq!(super::base64(b"foobar"), "Zm9vYmFy");
    }
}
