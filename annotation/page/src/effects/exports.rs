//! Exports, built by the transfer module (`annotation-transfer`, imported when one starts)
//! from the stores it reads itself: the page's bundle carries no export writer. The page
//! shows the progress as the module reports it, saves the file and says what went in.

use annotation_core::{export, finetune};
use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::Closure;

use super::{notify, progress};
use crate::modules::json;
use crate::state::{Action, Dispatch};
use crate::util::now;

/// Exports the runs `ids` in `format`.
pub async fn runs(
    dispatch: &Dispatch,
    ids: Vec<String>,
    filter: String,
    format: export::Format,
    options: export::Options,
) {
    let label = format!("Exporting {}", format.label());
    let settings = [json(&format), json(&options)];
    let failure = "Export failed";
    build(dispatch, &label, failure, "export_runs", ids, filter, settings).await
}

/// Exports the runs `ids` (those of them the dialog's options choose) for fine-tuning.
pub async fn finetune(
    dispatch: &Dispatch,
    ids: Vec<String>,
    filter: String,
    options: finetune::Options,
) {
    let label = "Building fine-tuning data";
    let failure = "Fine-tuning export failed";
    build(dispatch, label, failure, "export_for_finetuning", ids, filter, [json(&options)]).await
}

/// Calls the module's export `function` with the runs, the list's filter, its own
/// `settings` (JSON), the time and the progress callback; saves the file it answers.
async fn build<const N: usize>(
    dispatch: &Dispatch,
    label: &str,
    failure: &str,
    function: &str,
    ids: Vec<String>,
    filter: String,
    settings: [Result<String, String>; N],
) {
    progress(dispatch, label, 0, 0);
    let report = {
        let (dispatch, label) = (dispatch.clone(), label.to_owned());
        Closure::<dyn Fn(f64, f64)>::new(move |done: f64, total: f64| {
            progress(&dispatch, &label, done as usize, total as usize)
        })
    };
    let result = async {
        let args = js_sys::Array::of2(
            &ids.into_iter().map(JsValue::from).collect::<js_sys::Array>(),
            &filter.into(),
        );
        for setting in settings {
            args.push(&setting?.into());
        }
        args.push(&now().into());
        args.push(report.as_ref());
        let answer = crate::modules::call(crate::modules::TRANSFER, function, &args).await?;
        let field = |name: &str| js_sys::Reflect::get(&answer, &name.into()).unwrap_or_default();
        let blob = wasm_bindgen::JsCast::dyn_into(field("blob")).map_err(|_| "no file came")?;
        let file_name = field("fileName").as_string().unwrap_or_default();
        crate::download::save(&blob, &file_name)?;
        Ok::<_, String>(field("notice").as_string().unwrap_or_default())
    };
    let result = result.await;
    dispatch.dispatch(Action::Progress(None));
    match result {
        Ok(notice) => notify(dispatch, true, notice),
        Err(why) => notify(dispatch, false, format!("{failure}: {why}")),
    }
}
