//! The page's root: owns the state, runs the effect layer's hooks, and hands slices of the
//! state to the components.

use yew::prelude::*;

use crate::components::help_overlay::HelpOverlay;
use crate::components::leave_dialog::LeaveDialog;
use crate::components::notice_bar::NoticeBar;
use crate::components::run_view::RunView;
use crate::components::runs_list::RunsList;
use crate::components::sync_panel::{SyncPanel, SyncPill};
use crate::components::team_bar::TeamBar;
use crate::components::team_panel::TeamPanel;
use crate::components::user_bar::UserBar;
use crate::effects::{
    DbHandle, SpellerHandle, use_activity, use_database, use_effects, use_history, use_speller,
    use_sync_timer, use_unload_guard,
};
use crate::state::{Action, Screen, Studio};

/// The page: the effect layer opens the database, follows the URL and carries out what the
/// reducer asks for; the components render the state and emit actions.
#[function_component(App)]
pub fn app() -> Html {
    let state = use_reducer(Studio::default);
    let db = use_database(state.dispatcher());
    let speller = use_speller(state.screen != Screen::Loading);
    use_effects(&state, db.clone());
    use_history(state.dispatcher(), db.is_some());
    use_sync_timer(state.dispatcher(), &state.sync);
    use_unload_guard(state.editor.as_ref().is_some_and(|e| e.dirty()));
    use_activity(state.editor.as_ref().map(|e| e.run.id.clone()));

    let on_user = state.dispatcher().to_callback().reform(Action::ChooseUser);

    let body = match (&state.screen, db.is_some()) {
        (Screen::Loading, _) | (_, false) => {
            html! { <p class="loading" data-testid="loading">{ "Opening the captured runs…" }</p> }
        }
        (Screen::List, true) => html! {
            <RunsList list={state.list.clone()} user={state.user.clone()}
                dispatch={state.dispatcher()} rejections={state.rejections.clone()} copyable={state.copyable.clone()}
                collections={state.collections.clone()} team={state.team.clone()} syncing={state.sync.settings.enabled()} />
        },
        (Screen::Run, true) => match &state.editor {
            Some(editor) => html! {
                <RunView editor={editor.clone()} dispatch={state.dispatcher()} grammar={state.grammar.clone()}
                    team={state.team.clone()} syncing={state.sync.settings.enabled()} assign_choices={state.assign_choices()}
                    starred={state.starred.clone()} grammar_check={state.grammar_check.clone()} />
            },
            None => html! {},
        },
        (Screen::Missing(id), true) => html! {
            <div class="missing" data-testid="missing">
                <h2>{ "This run is not stored in this browser" }</h2>
                <p>{
                    if state.sync.settings.enabled() {
                        format!("No captured run has the id {id} here, and the sync server does not have it either (or not for you). It opens as soon as a sync brings it.")
                    } else {
                        format!("No captured run has the id {id}. It may have been captured in another Chrome profile: set a sync server in Sync & checks to fetch it from there.")
                    }
                }</p>
                if let Some(task) = &state.task {
                    <p><a data-testid="task-runs" href={format!("annotation.html?taskId={}", js_sys::encode_uri_component(task))}>
                        { format!("Show the runs of task {task}") }
                    </a></p>
                }
                <a href="annotation.html">{ "Show all runs" }</a>
            </div>
        },
    };
    let on_help = {
        let dispatch = state.dispatcher();
        Callback::from(move |open| dispatch.dispatch(Action::Help(open)))
    };
    let on_dismiss = {
        let dispatch = state.dispatcher();
        Callback::from(move |()| dispatch.dispatch(Action::DismissNotice))
    };
    let page = html! {
        <div class="studio">
            <header class="topbar">
                <a class="brand" href="annotation.html">{ "AlphaScout · Annotation" }</a>
                <a class="ghost" data-testid="open-studio" href="studio.html" title="Prompt Studio: the prompts, their runs and traces">{ "Prompt Studio" }</a>
                <SyncPill state={state.sync.state.clone()} on_open={state.dispatcher().to_callback().reform(|_| Action::SyncOpen(true))} />
                // In the bar's flow, so a notice or an export's progress never covers a control.
                if let Some(progress) = &state.progress {
                    <div class="progress" data-testid="progress" role="status">
                        <span>{ format!("{} · {} of {} runs", progress.label, progress.done, progress.total) }</span>
                        <progress max={progress.total.max(1).to_string()} value={progress.done.to_string()} />
                    </div>
                }
                if let Some(notice) = &state.notice {
                    <NoticeBar notice={notice.clone()} on_dismiss={on_dismiss} />
                }
                if state.sync.settings.enabled() {
                    <TeamBar user={state.user.clone()} unread={state.team.unread} view={state.team.view} dispatch={state.dispatcher()} />
                }
                <UserBar user={state.user.clone()} on_change={on_user} from_server={state.sync.settings.enabled()} />
                <button class="ghost" data-testid="help" title="Keyboard shortcuts (?)" onclick={on_help.reform(|_| true)}>{ "?" }</button>
            </header>
            <TeamPanel team={state.team.clone()} dispatch={state.dispatcher()} />
            { body }
            if state.sync.open && db.is_some() {
                <SyncPanel sync={state.sync.clone()} grammar={state.grammar.clone()} dispatch={state.dispatcher()} />
            }
            if let (Some(_), Some(editor)) = (&state.leaving, &state.editor) {
                <LeaveDialog steps={editor.drafts.values().map(|s| s.index + 1).collect::<Vec<_>>()}
                    can_save={editor.permissions().edit}
                    on_choice={state.dispatcher().to_callback().reform(Action::ConfirmLeave)} />
            }
            if state.help {
                <HelpOverlay on_close={on_help.reform(|_| false)} />
            }
        </div>
    };
    // The providers are always there, holding `None` until ready: adding one later would
    // remount everything below it and lose what is being typed.
    html! {
        <ContextProvider<Option<DbHandle>> context={db}>
            <ContextProvider<Option<SpellerHandle>> context={speller}>
                { page }
            </ContextProvider<Option<SpellerHandle>>>
        </ContextProvider<Option<DbHandle>>>
    }
}
