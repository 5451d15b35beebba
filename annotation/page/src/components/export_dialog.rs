use annotation_core::anonymize;
use annotation_core::export::{Format, Options, Screenshots};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    /// How many runs the export will hold.
    pub count: usize,
    pub on_export: Callback<(Format, Options)>,
    pub on_cancel: Callback<()>,
}

/// Format and options for an export (seed §7.D): the runs are the ones the list shows, so
/// the list's filters are the export's filters.
#[function_component(ExportDialog)]
pub fn export_dialog(props: &Props) -> Html {
    let format = use_state(|| Format::Jsonl);
    let anonymize = use_state(|| false);
    let shots = use_state(|| Screenshots::Reference);
    let on_format = {
        let format = format.clone();
        Callback::from(move |e: Event| {
            let value = page_kit::value(&e);
            if let Some(f) = Format::ALL.into_iter().find(|f| f.extension() == value) {
                format.set(f);
            }
        })
    };
    let on_anon = page_kit::keep_checked(&anonymize);
    let on_shots = {
        let shots = shots.clone();
        Callback::from(move |e: Event| {
            shots.set(if page_kit::value(&e) == "omit" {
                Screenshots::Omit
            } else {
                Screenshots::Reference
            });
        })
    };
    let go = {
        let (format, anonymize, shots) = (format.clone(), anonymize.clone(), shots.clone());
        props.on_export.reform(move |_| {
            let screenshots = if *format == Format::Zip { Screenshots::Files } else { *shots };
            (*format, Options { anonymize: *anonymize, screenshots })
        })
    };
    html! {
        <div class="overlay">
            <div class="dialog" role="dialog" aria-label="Export" data-testid="export-dialog">
                <h2>{ format!("Export {} run{}", props.count, if props.count == 1 { "" } else { "s" }) }</h2>
                <label>{ "Format" }
                    <select data-testid="export-format" onchange={on_format}>
                        { for Format::ALL.iter().map(|f| html! {
                            <option value={f.extension()} selected={*f == *format}>{ f.label() }</option>
                        }) }
                    </select>
                </label>
                if *format != Format::Zip {
                    <label>{ "Screenshots" }
                        <select data-testid="export-screenshots" onchange={on_shots}>
                            <option value="reference" selected={*shots == Screenshots::Reference}>{ "As file references" }</option>
                            <option value="omit" selected={*shots == Screenshots::Omit}>{ "Leave out" }</option>
                        </select>
                    </label>
                } else if *anonymize {
                    <p class="muted">{ "The ZIP holds a README, runs.json and runs.jsonl. Screenshots are left out: text inside an image cannot be removed." }</p>
                } else {
                    <p class="muted">{ "The ZIP holds a README, runs.json, runs.jsonl and every screenshot as a JPEG file." }</p>
                }
                <label class="check">
                    <input type="checkbox" data-testid="export-anonymize" checked={*anonymize} onchange={on_anon} />
                    { "Anonymize: names, contact details, typed text, URL secrets and times" }
                </label>
                if *anonymize {
                    <div class="muted" data-testid="export-anonymize-scope">
                        <p>{ "Removes or replaces, in every format:" }</p>
                        <ul>
                            { for anonymize::REMOVES.iter().map(|item| html! { <li>{ *item }</li> }) }
                        </ul>
                        <p>{ anonymize::CANNOT }</p>
                    </div>
                }
                <p class="muted">{ "The runs are the ones the list shows, so set the filters first (status, dates, annotator, quality…)." }</p>
                <div class="row">
                    <button class="primary" data-testid="export-go" onclick={go}>{ "Export" }</button>
                    <button onclick={props.on_cancel.reform(|_| ())}>{ "Cancel" }</button>
                </div>
            </div>
        </div>
    }
}
