//! The fine-tuning export's IO: the runs, their Navigator traces and screenshots from
//! IndexedDB, the prompt files the worker renders with (and its prompt overrides), the
//! secrets to mask; then a ZIP of `train.jsonl`, `validation.jsonl`, `test.jsonl` and the card
//! (`README.md`), and `provenance.jsonl` (each example's run, step and drafted thoughts).
//! What goes in, and how, is `annotation_core::finetune`'s.

use std::collections::HashMap;

use annotation_core::export::ZipWriter;
use annotation_core::finetune::{
    self, Build, CardFacts, NavigatorCall, Options, Tally, navigator_calls,
};
use annotation_core::record::Step;
use prompt_files::prompts::PromptSet;
use wasm_bindgen::JsValue;

use super::{notify, progress};
use crate::db::Db;
use crate::state::{Action, Dispatch};
use crate::util::{now, yield_now};

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
        Ok((file, tally)) => {
            let left_out: usize = tally.skipped.values().sum();
            let mut text = format!(
                "Exported {} examples ({} train, {} validation, {} test) from {} runs to {file}.",
                tally.examples(),
                tally.train_examples,
                tally.validation_examples,
                tally.test_examples,
                tally.runs()
            );
            if left_out > 0 {
                text += &format!(" {left_out} steps were left out: the card in the ZIP says why.");
            }
            notify(dispatch, true, text);
        }
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
) -> Result<(String, Tally), String> {
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
    let prompts = match settings.get("prompt_overrides").and_then(|o| {
        serde_json::from_value::<std::collections::BTreeMap<String, String>>(o.clone()).ok()
    }) {
        Some(overrides) if !overrides.is_empty() => {
            PromptSet::with_overrides(&overrides).unwrap_or_else(|_| PromptSet::bundled())
        }
        _ => PromptSet::bundled(),
    };
    let render = |call: &NavigatorCall| -> Result<String, String> {
        Ok(prompts.render(&call.prompt_id, Some(&call.variant), &call.params)?.text)
    };
    let parse_answer = |raw: &str| prompt_files::structured::extract_json(raw).ok();
    let secrets = db.secrets().await;
    let mut built = Vec::with_capacity(runs.len());
    let mut tally = Tally::default();
    let total = runs.len();
    for (i, (run, steps)) in runs.iter().enumerate() {
        let traces = db.traces(&run.id).await?;
        let calls = navigator_calls(&traces);
        let images =
            if options.screenshots { screenshots(db, steps).await } else { HashMap::new() };
        let image =
            |step: &Step| step.screenshot.as_ref().and_then(|s| images.get(&s.key).cloned());
        let how = Build {
            options,
            user_turn: prompt_files::prompts::USER_TURN,
            secrets: &secrets,
            render: &render,
            parse_answer: &parse_answer,
            image: &image,
        };
        built.push(finetune::run_examples(run, steps, &calls, &how, &mut tally));
        progress(dispatch, label, i + 1, total);
        yield_now().await;
    }
    let splits = finetune::split(built, options, &mut tally);
    let at = now();
    let card = finetune::card(&tally, &CardFacts { exported_at: &at, filter, options });
    let mut zip = ZipWriter::new();
    let parts = js_sys::Array::new();
    let bytes = |data: Vec<u8>| JsValue::from(js_sys::Uint8Array::from(data.as_slice()));
    parts.push(&bytes(zip.entry("README.md", card.as_bytes())));
    for (name, lines, examples) in [
        ("train.jsonl", &splits.train, tally.train_examples),
        ("validation.jsonl", &splits.validation, tally.validation_examples),
        ("test.jsonl", &splits.test, tally.test_examples),
    ] {
        if examples > 0 {
            parts.push(&bytes(zip.entry(name, lines.as_bytes())));
        }
    }
    if tally.examples() > 0 {
        parts.push(&bytes(zip.entry("provenance.jsonl", splits.provenance.as_bytes())));
    }
    parts.push(&bytes(zip.finish()));
    let file_name = file_name(&at);
    let options_bag = web_sys::BlobPropertyBag::new();
    options_bag.set_type("application/zip");
    let blob = web_sys::Blob::new_with_blob_sequence_and_options(&parts, &options_bag)
        .map_err(|e| format!("could not assemble the file: {e:?}"))?;
    crate::download::save(&crate::download::Built {
        blob,
        file_name: file_name.clone(),
        steps: 0,
    })?;
    Ok((file_name, tally))
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
