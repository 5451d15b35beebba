//! The annotation page's fine-tuning export as a module of its own (`dist/transfer/`). The
//! page imports it when an export starts: the prompt files and their renderer, the
//! anonymizer, the split and the dataset writer were a twentieth of the page's bundle, and
//! nothing else on the page needs them.
//!
//! The page keeps the IO: it reads the runs, traces, screenshots, settings and secrets from
//! IndexedDB, hands them over a run at a time (as JSON), shows the progress and saves the
//! file. What goes in and how is `annotation_core::finetune`'s, tested there natively.

use annotation_core::export::ZipWriter;
use annotation_core::finetune::{
    self, Build, CardFacts, NavigatorCall, Options, RunExamples, Tally, navigator_calls,
};
use annotation_core::record::{Run, Step};
use prompt_files::prompts::PromptSet;
use serde_json::Value;
use wasm_bindgen::prelude::wasm_bindgen;

/// One fine-tuning export in the making.
#[wasm_bindgen]
pub struct FinetuneExport {
    options: Options,
    prompts: PromptSet,
    secrets: Vec<String>,
    built: Vec<RunExamples>,
    tally: Tally,
}

fn read<T: serde::de::DeserializeOwned>(what: &str, json: &str) -> Result<T, String> {
    lean::read_json(json).map_err(|e| format!("the {what} could not be read: {e}"))
}

#[wasm_bindgen]
impl FinetuneExport {
    /// An export with the dialog's `options` (JSON), the prompt files as Settings edited
    /// them (`overrides`, a JSON object of path to text), and the `secrets` to mask.
    #[wasm_bindgen(constructor)]
    pub fn new(
        options: &str,
        overrides: &str,
        secrets: Vec<String>,
    ) -> Result<FinetuneExport, String> {
        let options: Options = read("export's options", options)?;
        let overrides: std::collections::BTreeMap<String, String> =
            read("prompt overrides", overrides)?;
        // Edited prompts that do not load fall back to the bundled ones, as the worker's do.
        let prompts =
            PromptSet::with_overrides(&overrides).unwrap_or_else(|_| PromptSet::bundled());
        Ok(FinetuneExport { options, prompts, secrets, built: Vec::new(), tally: Tally::default() })
    }

    /// Adds one run's examples: the run and its steps as stored (JSON), its traces (a JSON
    /// array), and its screenshots as data URLs by key (a JSON object).
    pub fn add_run(
        &mut self,
        run: &str,
        steps: &str,
        traces: &str,
        images: &str,
    ) -> Result<(), String> {
        let run: Run = read("run", run)?;
        let steps: Vec<Step> = read("run's steps", steps)?;
        let traces: Vec<Value> = read("run's traces", traces)?;
        let images: lean::StrMap<String> = read("run's screenshots", images)?;
        let calls = navigator_calls(&traces);
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
        let examples = finetune::run_examples(&run, &steps, &calls, &how, &mut self.tally);
        self.built.push(examples);
        Ok(())
    }

    /// The ZIP: the card (`README.md`), the splits that have examples, and
    /// `provenance.jsonl`. `filter` is the list's filter the card names.
    pub fn finish(&mut self, filter: &str, exported_at: &str) -> Vec<u8> {
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
    pub fn notice(&self, file: &str) -> String {
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
