//! The annotation page's AI draft of a step's thoughts: `agent_engine::draft_thoughts`, in the
//! authoring module, with the stored settings and keys (which never leave the extension's
//! worker), its trace stored with the step's run.

use protocol::WorkerEvent;
use protocol::drafting::DraftInput;
use serde_json::json;

use crate::store::Store;
use crate::studio::traced;
use crate::{authoring, chrome};

/// One draft; always answered with `thoughts_drafted`, a draft or why there is none.
pub async fn run(store: &Store, id: u32, input: DraftInput) -> WorkerEvent {
    let (run_id, step_index) = (input.run_id.clone(), input.step_index);
    let answer =
        |result| WorkerEvent::ThoughtsDrafted { id, run_id: run_id.clone(), step_index, result };
    let settings = match store.settings().await {
        Ok(Some(settings)) => settings,
        Ok(None) => {
            return answer(Err("No model is configured: choose one and enter its API key in \
                the side panel's Settings first."
                .into()));
        }
        Err(error) => return answer(Err(format!("The settings could not be read: {error}"))),
    };
    let request = json!({"settings": settings, "keys": settings.keys(), "input": input});
    let mut drafted = match authoring::draft_thoughts(&request).await {
        Ok(drafted) => drafted,
        Err(error) => return answer(Err(error)),
    };
    if let Some(trace) = traced(&mut drafted)
        && let Err(error) = store.put_trace_value(&trace).await
    {
        chrome::log(&format!("the draft's trace was not stored: {error}"));
    }
    let result = serde_json::from_value(drafted["result"].take());
    answer(result.unwrap_or_else(|e| Err(format!("The draft could not be read: {e}"))))
}
