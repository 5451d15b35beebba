//! The stored recordings, newest first.

use std::collections::BTreeMap;

use protocol::workflow::ReflectProgress;
use yew::prelude::*;

use crate::components::list_section::list_section;
use crate::components::recording_row::RecordingRowView;
use crate::state::{Action, RecordingRow};
use page_kit::RecordingName;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub recordings: Vec<RecordingRow>,
    pub reflections: BTreeMap<String, ReflectProgress>,
    pub renaming: Option<RecordingName>,
    pub dispatch: Callback<Action>,
}

#[function_component(RecordingList)]
pub fn recording_list(props: &Props) -> Html {
    let rows = props.recordings.iter().map(|r| {
        html! {
            <RecordingRowView key={r.id.clone()} recording={r.clone()}
                progress={props.reflections.get(&r.id).cloned()}
                renaming={props.renaming.clone().filter(|n| n.recording_id == r.id)}
                dispatch={props.dispatch.clone()} />
        }
    });
    list_section(
        "recordings",
        "recording-list",
        "Recordings",
        props.recordings.is_empty(),
        "No recordings yet: record one from the side panel.",
        rows.collect(),
    )
}
