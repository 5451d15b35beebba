//! The stored recordings, newest first.

use std::collections::BTreeMap;

use protocol::workflow::ReflectProgress;
use yew::prelude::*;

use crate::components::recording_row::RecordingRowView;
use crate::state::{Action, RecordingRow, Renaming};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub recordings: Vec<RecordingRow>,
    pub reflections: BTreeMap<String, ReflectProgress>,
    pub renaming: Option<Renaming>,
    pub dispatch: Callback<Action>,
}

#[function_component(RecordingList)]
pub fn recording_list(props: &Props) -> Html {
    html! {
        <section class="recordings" data-testid="recording-list">
            <h2>{ "Recordings" }</h2>
            if props.recordings.is_empty() {
                <p class="hint">{ "No recordings yet: record one from the side panel." }</p>
            }
            <ul>
                { for props.recordings.iter().map(|r| html! {
                    <RecordingRowView key={r.id.clone()} recording={r.clone()}
                        progress={props.reflections.get(&r.id).cloned()}
                        renaming={props.renaming.clone().filter(|n| n.recording_id == r.id)}
                        dispatch={props.dispatch.clone()} />
                }) }
            </ul>
        </section>
    }
}
