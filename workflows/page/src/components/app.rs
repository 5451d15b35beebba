//! The page's root: owns the state, runs the effect layer's hooks, and lays out the lists,
//! the editor and the replay.

use yew::prelude::*;

use crate::components::notice_bar::NoticeBar;
use crate::components::recording_list::RecordingList;
use crate::components::replay_form::ReplayFormView;
use crate::components::replay_status::ReplayStatus;
use crate::components::workflow_editor::WorkflowEditor;
use crate::components::workflow_list::WorkflowList;
use crate::effects::{DbHandle, use_database, use_effects, use_port};
use crate::state::{Action, Page};

#[function_component(App)]
pub fn app() -> Html {
    let page = use_reducer(|| Page::new(crate::port::tab_from_url()));
    let db = use_database(page.dispatcher());
    let port = use_port(page.dispatcher());
    use_effects(&page, db.clone(), port);
    let dispatch = {
        let dispatcher = page.dispatcher();
        Callback::from(move |action: Action| dispatcher.dispatch(action))
    };
    let body = if !page.loaded {
        html! { <p class="loading" data-testid="loading">{ "Reading the recordings and workflows…" }</p> }
    } else {
        html! {
            <div class="columns">
                <aside class="lists">
                    <RecordingList recordings={page.recordings.clone()}
                        reflections={page.reflections.clone()} renaming={page.renaming.clone()} dispatch={dispatch.clone()} />
                    <WorkflowList workflows={page.workflows.clone()}
                        open={page.editor.as_ref().map(|e| e.draft.id.clone())} dispatch={dispatch.clone()} />
                </aside>
                <main class="detail">
                    if let Some(replay) = &page.replay {
                        <ReplayStatus replay={replay.clone()} dispatch={dispatch.clone()} />
                    }
                    if let Some(form) = &page.replay_form {
                        <ReplayFormView form={form.clone()} tabs={page.tabs.clone()} dispatch={dispatch.clone()} />
                    }
                    if let Some(editor) = &page.editor {
                        <WorkflowEditor editor={editor.clone()}
                            versions={page.workflows.get(&editor.draft.id).cloned().unwrap_or_default()}
                            dispatch={dispatch.clone()} />
                    } else {
                        <p class="hint">{ "Reflect a recording, or open a workflow, to edit and replay it." }</p>
                    }
                </main>
            </div>
        }
    };
    html! {
        <ContextProvider<Option<DbHandle>> context={db}>
            <header class="topbar">
                <a class="brand" href="workflows.html">{ "AlphaScout · Workflows" }</a>
                <a href="annotation.html" data-testid="open-annotation">{ "Annotation" }</a>
            </header>
            if let Some(notice) = &page.notice {
                <NoticeBar notice={notice.clone()} dispatch={dispatch.clone()} />
            }
            { body }
        </ContextProvider<Option<DbHandle>>>
    }
}
