//! The annotation page's AI draft of a step's thoughts: `agent_engine::draft_thoughts` over
//! `FetchHttp` with the stored settings and keys (which never leave the worker), its trace
//! stored with the step's run.

use agent_engine::draft_thoughts::draft;
use protocol::WorkerEvent;
use protocol::drafting::DraftInput;

use crate::chrome;
use crate::store::Store;
use crate::studio::call_shell;

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
    let (result, trace) = draft(&call_shell(), &settings, &input).await;
    if let Some(trace) = &trace
        && let Err(error) = store.put_trace(trace).await
    {
        chrome::log(&format!("the draft's trace was not stored: {error}"));
    }
    answer(result)
}
