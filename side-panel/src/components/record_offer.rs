use yew::prelude::*;

use crate::state::recording::{Offer, RecordAction};

#[derive(Properties, PartialEq)]
pub struct RecordOfferProps {
    pub offer: Offer,
    pub on_action: Callback<RecordAction>,
}

/// The Ctrl+I offer while recording: Extract (a query and optional candidate values) or
/// Details (a note for the next step). Capture is paused while it is open.
#[function_component(RecordOffer)]
pub fn record_offer(props: &RecordOfferProps) -> Html {
    let send = |make: fn(String) -> RecordAction| {
        props.on_action.reform(move |event: InputEvent| make(page_kit::value(&event)))
    };
    let click =
        |action: fn() -> RecordAction| props.on_action.reform(move |_: MouseEvent| action());
    let offer = &props.offer;
    html! {
        <div class="record-offer" data-testid="record-offer" role="dialog" aria-label="Extract or add details">
            <p class="hint">{ "Recording is paused. Extract something from the page, or add a note for the next step." }</p>
            <fieldset>
                <legend>{ "Extract" }</legend>
                <label>{ "What to extract" }
                    <input data-testid="record-extract-query" value={offer.query.clone()}
                        placeholder="the cheapest price" oninput={send(RecordAction::Query)} />
                </label>
                <label>{ "Candidate values (optional, comma or line separated)" }
                    <textarea data-testid="record-extract-candidates" rows="2" value={offer.candidates.clone()}
                        oninput={send(RecordAction::Candidates)} />
                </label>
                <button type="button" data-testid="record-extract-save"
                    onclick={click(|| RecordAction::SaveExtract)}>{ "Save extract" }</button>
            </fieldset>
            <fieldset>
                <legend>{ "Details" }</legend>
                <label>{ "Note for the next step" }
                    <textarea data-testid="record-details-text" rows="2" value={offer.details.clone()}
                        oninput={send(RecordAction::Details)} />
                </label>
                <button type="button" data-testid="record-details-save"
                    onclick={click(|| RecordAction::SaveDetails)}>{ "Save note" }</button>
            </fieldset>
            if let Some(problem) = offer.problem.clone() {
                <p class="problem" role="alert">{ problem }</p>
            }
            <button type="button" data-testid="record-offer-cancel"
                onclick={click(|| RecordAction::CancelOffer)}>{ "Back to recording" }</button>
        </div>
    }
}
