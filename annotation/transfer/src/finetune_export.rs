//! The fine-tuning export: the runs, their Navigator traces and screenshots, the prompt
//! overrides from the worker's settings and the secrets to mask, read from IndexedDB; then
//! the ZIP of `train.jsonl`, `validation.jsonl`, `test.jsonl`, the card (`README.md`) and
//! `provenance.jsonl`. What goes in, and how, is `annotation_core::finetune`'s.

use std::collections::HashMap;

use annotation_core::export::ZipWriter;
use annotation_core::finetune::{
    self, Build, CardFacts, NavigatorCall, Options, RunExamples, Tally, navigator_calls,
};
use annotation_core::record::{Run, Step};
use annotation_store::{Store, yield_now};
use prompt_files::prompts::PromptSet;
use serde_json::Value;
use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::wasm_bindgen;

use crate::{Progress, blob, bytes, exported, read};

/// Exports the stored runs `ids` that the dialog's `options` (JSON of
/// `annotation_core::finetune::Options`) choose, made at `now`; `filter` is the list's
/// filter the card names. Calls `progress(done, total)` as runs finish.
#[wasm_bindgen]
pub async fn export_for_finetuning(
    ids: Vec<String>,
    filter: String,
    options: String,
    now: String,
    progress: js_sys::Function,
) -> Result<JsValue, String> {
    let options: Options = read("export's options", &options)?;
    let store = crate::store().await?;
    let wanted: std::collections::HashSet<&str> = ids.iter().map(String::as_str).collect();
    let mut runs: Vec<_> = store
        .everything()
        .await?
        .into_iter()
        .filter(|(run, steps)| {
            wanted.contains(run.id.as_str()) && finetune::chosen(run, steps, &options)
        })
        .collect();
    lean::sort_by(&mut runs, |a, b| a.0.id.cmp(&b.0.id));
    let settings = store.agent_settings().await;
    // Overrides that do not read leave the bundled prompts, as the worker's do.
    let overrides = settings
        .get("prompt_overrides")
        .and_then(|o| serde_json::from_value(o.clone()).ok())
        .unwrap_or_default();
    let screenshots = options.screenshots;
    let mut export = FinetuneExport::new(options, &overrides, store.secrets().await);
    let progress = Progress(progress);
    let total = runs.len();
    for (i, (run, steps)) in runs.iter().enumerate() {
        let traces = store.traces(&run.id).await?;
        let images = if screenshots { data_urls(&store, steps).await } else { HashMap::new() };
        export.add_run(run, steps, &traces, &images);
        progress.report(i + 1, total);
        yield_now().await;
    }
    let zip = export.finish(&filter, &now);
    let file_name = file_name(&now);
    let file = blob(&js_sys::Array::of1(&bytes(&zip)), "application/zip")?;
    Ok(exported(file, &file_name, &export.notice(&file_name)))
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
async fn data_urls(store: &Store, steps: &[Step]) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for shot in steps.iter().filter_map(|s| s.screenshot.as_ref()) {
        if out.contains_key(&shot.key) {
            continue;
        }
        let Ok(Some(data)) = store.screenshot_bytes(&shot.key).await else { continue };
        let mime = if shot.mime.is_empty() { "image/jpeg" } else { shot.mime.as_str() };
        out.insert(
            shot.key.clone(),
            format!("data:{mime};base64,{}", annotation_store::base64(&data)),
        );
    }
    out
}

/// One fine-tuning export in the making.
struct FinetuneExport {
    options: Options,
    prompts: PromptSet,
    secrets: Vec<String>,
    built: Vec<RunExamples>,
    tally: Tally,
}

impl FinetuneExport {
    /// An export with the dialog's `options`, the prompt files as Settings edited them
    /// (`overrides`, path to text), and the `secrets` to mask.
    fn new(
        options: Options,
        overrides: &std::collections::BTreeMap<String, String>,
        secrets: Vec<String>,
    ) -> FinetuneExport {
        // Edited prompts that do not load fall back to the bundled ones, as the worker's do.
        let prompts = PromptSet::with_overrides(overrides).unwrap_or_else(|_| PromptSet::bundled());
        FinetuneExport { options, prompts, secrets, built: Vec::new(), tally: Tally::default() }
    }

    /// Adds one run's examples: the run and its steps as stored, its traces, and its
    /// screenshots as data URLs by key.
    fn add_run(
        &mut self,
        run: &Run,
        steps: &[Step],
        traces: &[Value],
        images: &HashMap<String, String>,
    ) {
        let calls = navigator_calls(traces);
        let prompts = &self.prompts;
        let render = |call: &NavigatorCall| -> Result<String, String> {
            Ok(prompts.render(&call.prompt_id, Some(&call.variant), &call.params)?.text)
        };
        let parse_answer = |raw: &str| prompt_files::structured::extract_json(raw).ok();
        let image =
            |step: &Step| step.screenshot.as_ref().and_then(|s| images.get(&s.key).cloned());
        let how = Build {
            options: &self.options,
            user_turn: prompt_files::prompts::USER_TURN,
            secrets: &self.secrets,
            render: &render,
            parse_answer: &parse_answer,
            image: &image,
        };
        let examples = finetune::run_examples(run, steps, &calls, &how, &mut self.tally);
        self.built.push(examples);
    }

    /// The ZIP: the card (`README.md`), the splits that have examples, and
    /// `provenance.jsonl`. `filter` is the list's filter the card names.
    fn finish(&mut self, filter: &str, exported_at: &str) -> Vec<u8> {
        let built = std::mem::take(&mut self.built);
        let splits = finetune::split(built, &self.options, &mut self.tally);
        let tally = &self.tally;
        let facts = CardFacts { exported_at, filter, options: &self.options };
        let card = finetune::card(tally, &facts);
        let mut zip = ZipWriter::new();
        let mut out = zip.entry("README.md", card.as_bytes());
        for (name, lines, examples) in [
            ("train.jsonl", &splits.train, tally.train_examples),
            ("validation.jsonl", &splits.validation, tally.validation_examples),
            ("test.jsonl", &splits.test, tally.test_examples),
        ] {
            if examples > 0 {
                out.extend(zip.entry(name, lines.as_bytes()));
            }
        }
        if tally.examples() > 0 {
            out.extend(zip.entry("provenance.jsonl", splits.provenance.as_bytes()));
        }
        out.extend(zip.finish());
        out
    }

    /// What the page says once the file is saved as `file`.
    fn notice(&self, file: &str) -> String {
        let tally = &self.tally;
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
        text
    }
}
