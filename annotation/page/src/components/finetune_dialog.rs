use annotation_core::finetune::Options;
use annotation_core::record::ReviewStatus;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    /// How many runs the list offers (picked, or shown by its filters).
    pub count: usize,
    /// How many of them have open issues or steps not marked complete.
    pub unfinished: usize,
    pub on_export: Callback<Options>,
    pub on_cancel: Callback<()>,
}

/// Options of the fine-tuning export: which statuses, screenshots as image parts, the
/// share of runs held out for validation and the seed of that split.
#[function_component(FinetuneDialog)]
pub fn finetune_dialog(props: &Props) -> Html {
    let options = use_state(Options::default);
    let toggle = |status: ReviewStatus| {
        let options = options.clone();
        Callback::from(move |_: Event| {
            let mut next = (*options).clone();
            if let Some(i) = next.statuses.iter().position(|s| *s == status) {
                next.statuses.remove(i);
            } else {
                next.statuses.push(status);
            }
            options.set(next);
        })
    };
    let check = |edit: fn(&mut Options, bool)| {
        let options = options.clone();
        Callback::from(move |e: Event| {
            let mut next = (*options).clone();
            edit(&mut next, page_kit::checked(&e));
            options.set(next);
        })
    };
    let number = |edit: fn(&mut Options, u64)| {
        let options = options.clone();
        Callback::from(move |e: Event| {
            if let Ok(value) = page_kit::value(&e).trim().parse::<u64>() {
                let mut next = (*options).clone();
                edit(&mut next, value);
                options.set(next);
            }
        })
    };
    let go = {
        let options = options.clone();
        props.on_export.reform(move |_| (*options).clone())
    };
    html! {
        <div class="overlay">
            <div class="dialog finetune" role="dialog" aria-label="Fine-tuning export" data-testid="finetune-dialog">
                <h2>{ "Fine-tuning data for the Navigator" }</h2>
                <p class="muted">{ format!(
                    "From the {} run{} the list offers (set its filters, or pick runs, first): one chat example per step, the Navigator's prompt as it saw it and its answer with your thoughts. A ZIP of train.jsonl, validation.jsonl, test.jsonl and a dataset card.",
                    props.count, if props.count == 1 { "" } else { "s" }) }</p>
                <fieldset class="statuses">
                    <legend>{ "Runs in status" }</legend>
                    { for ReviewStatus::ALL.iter().map(|status| html! {
                        <label class="check">
                            <input type="checkbox" data-testid={format!("finetune-status-{}", status.as_str())}
                                checked={options.statuses.contains(status)} onchange={toggle(*status)} />
                            { status.label() }
                        </label>
                    }) }
                </fieldset>
                <label class="check">
                    <input type="checkbox" data-testid="finetune-screenshots" checked={options.screenshots} onchange={check(|o, on| o.screenshots = on)} />
                    { "Include each step's screenshot as an image" }
                </label>
                <p data-testid="finetune-unfinished" class={classes!((props.unfinished > 0).then_some("warn"))}>{ match props.unfinished {
                    0 => "Every one of these runs was finished: all steps complete, no open issue.".to_owned(),
                    n => format!("{n} of these runs {} open issues or steps not complete.", if n == 1 { "has" } else { "have" }),
                } }</p>
                <label class="check">
                    <input type="checkbox" data-testid="finetune-only-finished" checked={options.only_finished} onchange={check(|o, on| o.only_finished = on)} />
                    { "Leave out runs with open issues or steps not complete" }
                </label>
                <label class="check">
                    <input type="checkbox" data-testid="finetune-leave-out-drafted" checked={options.leave_out_drafted} onchange={check(|o, on| o.leave_out_drafted = on)} />
                    { "Leave out steps whose thoughts a model drafted" }
                </label>
                <label>{ "Runs held out for validation (%)" }
                    <input type="number" min="0" max="50" data-testid="finetune-validation" value={options.validation_percent.to_string()}
                        onchange={number(|o, v| o.validation_percent = v.min(50) as u8)} />
                </label>
                <label>{ "Runs held out for test (%)" }
                    <input type="number" min="0" max="50" data-testid="finetune-test" value={options.test_percent.to_string()}
                        onchange={number(|o, v| o.test_percent = v.min(50) as u8)} />
                </label>
                <label>{ "Split seed" }
                    <input type="number" min="0" data-testid="finetune-seed" value={options.seed.to_string()} onchange={number(|o, v| o.seed = v)} />
                </label>
                <div class="row">
                    <button class="primary" data-testid="finetune-go" disabled={options.statuses.is_empty()} onclick={go}>{ "Export" }</button>
                    <button onclick={props.on_cancel.reform(|_| ())}>{ "Cancel" }</button>
                </div>
            </div>
        </div>
    }
}
