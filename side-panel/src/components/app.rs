use std::cell::RefCell;
use std::rc::Rc;

use protocol::WorkerEvent;
use protocol::agent::TaskStatus;
use yew::prelude::*;

use crate::components::chat_log::ChatLog;
use crate::components::composer::Composer;
use crate::components::driven_banner::DrivenBanner;
use crate::components::history_view::HistoryView;
use crate::components::jobs_view::JobsView;
use crate::components::paused_banner::PausedBanner;
use crate::components::quick_start::QuickStart;
use crate::components::record_bar::RecordBar;
use crate::components::record_name::RecordName;
use crate::components::record_offer::RecordOffer;
use crate::components::settings_view::SettingsView;
use crate::components::status_bar::StatusBar;
use crate::components::telemetry_view::TelemetryView;
use crate::components::tools::Tools;
use crate::components::workflow_menu::WorkflowMenuView;
use crate::shortcut::Shortcut;
use crate::state::jobs::JobAction;
use crate::state::recording::RecordAction;
use crate::state::settings::Field;
use crate::state::{Effect, FavouriteAction, PanelAction, PanelState, Phase, View};
use crate::worker_port::{self, WorkerPort};
use protocol::settings::ModelRole;

fn focus(input: &NodeRef) {
    if let Some(element) = input.cast::<web_sys::HtmlElement>() {
        let _ = element.focus();
    }
}

type PortSlot = Rc<RefCell<Option<WorkerPort>>>;
type Dispatcher = UseReducerDispatcher<PanelState>;

/// Connects to the worker. When the port closes it connects again: Chrome stops an idle
/// worker, and connecting starts it, whose snapshot then brings the task back. It gives up
/// after a few tries without a greeting, or when the extension itself is gone.
fn connect(port: PortSlot, dispatcher: Dispatcher, tries: Rc<RefCell<u32>>) {
    let on_event = {
        let (dispatcher, tries) = (dispatcher.clone(), tries.clone());
        move |event: WorkerEvent| {
            if matches!(event, WorkerEvent::Hello { .. }) {
                *tries.borrow_mut() = 0;
            }
            dispatcher.dispatch(PanelAction::Worker(event));
        }
    };
    let on_lost = {
        let (port, dispatcher, tries) = (port.clone(), dispatcher.clone(), tries.clone());
        move || reconnect(port.clone(), dispatcher.clone(), tries.clone())
    };
    match WorkerPort::connect(on_event, on_lost) {
        Some(connected) => *port.borrow_mut() = Some(connected),
        None => {
            port.borrow_mut().take();
            dispatcher.dispatch(PanelAction::PortLost);
        }
    }
}

fn reconnect(port: PortSlot, dispatcher: Dispatcher, tries: Rc<RefCell<u32>>) {
    // Later, not inside the old port's listener: replacing the port drops that listener.
    yew::platform::spawn_local(async move {
        if *tries.borrow() >= 3 || !worker_port::extension_alive() {
            port.borrow_mut().take();
            dispatcher.dispatch(PanelAction::PortLost);
            return;
        }
        *tries.borrow_mut() += 1;
        dispatcher.dispatch(PanelAction::PortInterrupted);
        connect(port, dispatcher, tries);
    });
}

/// The whole panel: owns the state and the port, posts what the reducer decided to ask,
/// carries out the effects it decided on, and hands slices of state to the components.
#[function_component(App)]
pub fn app() -> Html {
    let state = use_reducer(PanelState::default);
    let port = use_mut_ref(|| None::<WorkerPort>);
    // Reconnections since the worker last said hello.
    let tries = use_mut_ref(|| 0u32);
    // The id of the last request posted, so none is posted twice.
    let posted = use_mut_ref(|| None::<u32>);
    // The id of the last effect carried out, so none runs twice.
    let ran = use_mut_ref(|| None::<u32>);
    let input = use_node_ref();

    {
        let dispatcher = state.dispatcher();
        let port = port.clone();
        let tries = tries.clone();
        let input = input.clone();
        use_effect_with((), move |_| {
            connect(port, dispatcher.clone(), tries);
            let choose = dispatcher.clone();
            yew::platform::spawn_local(async move {
                choose.dispatch(PanelAction::TabChosen(worker_port::target_tab().await));
            });
            // Alt+P: Pause & Steer, then type the new instructions.
            let offer = dispatcher.clone();
            let shortcut = Shortcut::alt("KeyP", move || {
                dispatcher.dispatch(PanelAction::Pause);
                focus(&input);
            });
            // Ctrl+I while recording: the Extract / Details offer.
            let record = Shortcut::ctrl("KeyI", move || {
                offer.dispatch(PanelAction::Record(RecordAction::OpenOffer))
            });
            move || drop((shortcut, record))
        });
    }

    {
        let port = port.clone();
        let tries = tries.clone();
        let posted = posted.clone();
        let dispatcher = state.dispatcher();
        use_effect_with(state.outbox.clone(), move |outbox| {
            let mut last = None;
            for request in outbox {
                if posted.borrow().is_some_and(|up_to| request.id() <= up_to) {
                    continue;
                }
                if !port.borrow().as_ref().is_some_and(|port| port.send(request)) {
                    reconnect(port.clone(), dispatcher, tries.clone());
                    return;
                }
                *posted.borrow_mut() = Some(request.id());
                last = Some(request.id());
            }
            if let Some(up_to) = last {
                dispatcher.dispatch(PanelAction::Posted { up_to });
            }
        });
    }

    {
        let dispatcher = state.dispatcher();
        use_effect_with(state.effects.clone(), move |effects| {
            let mut last = None;
            for effect in effects {
                if ran.borrow().is_some_and(|up_to| effect.id() <= up_to) {
                    continue;
                }
                match effect {
                    Effect::ShowTab { tab_id, .. } => worker_port::show_tab(*tab_id),
                }
                *ran.borrow_mut() = Some(effect.id());
                last = Some(effect.id());
            }
            if let Some(up_to) = last {
                dispatcher.dispatch(PanelAction::EffectsRun { up_to });
            }
        });
    }

    let act = |make: fn() -> PanelAction| {
        let dispatcher = state.dispatcher();
        Callback::from(move |()| dispatcher.dispatch(make()))
    };
    let on_pause = {
        let dispatcher = state.dispatcher();
        let input = input.clone();
        Callback::from(move |()| {
            dispatcher.dispatch(PanelAction::Pause);
            focus(&input);
        })
    };
    let on_input = {
        let dispatcher = state.dispatcher();
        Callback::from(move |text| dispatcher.dispatch(PanelAction::DraftChanged(text)))
    };
    let on_edit = {
        let dispatcher = state.dispatcher();
        Callback::from(move |(field, value): (Field, String)| {
            dispatcher.dispatch(PanelAction::EditSetting(field, value))
        })
    };
    let on_open_settings = act(|| PanelAction::OpenSettings);
    let on_test = {
        let dispatcher = state.dispatcher();
        Callback::from(move |role: ModelRole| {
            dispatcher.dispatch(PanelAction::TestConnection(role))
        })
    };
    let session = |make: fn(String) -> PanelAction| {
        let dispatcher = state.dispatcher();
        Callback::from(move |session: String| dispatcher.dispatch(make(session)))
    };
    let on_favourite = {
        let dispatcher = state.dispatcher();
        let input = input.clone();
        Callback::from(move |action: FavouriteAction| {
            // A chosen prompt lands in the box, ready to read over and send.
            let fills_box = matches!(action, FavouriteAction::Use(_));
            dispatcher.dispatch(PanelAction::Favourite(action));
            if fills_box {
                focus(&input);
            }
        })
    };
    let on_save_favourite = {
        let dispatcher = state.dispatcher();
        Callback::from(move |text: String| {
            dispatcher.dispatch(PanelAction::Favourite(FavouriteAction::SaveTask(text)))
        })
    };
    let not_deletable: Vec<(String, AttrValue)> = state
        .history
        .sessions
        .iter()
        .flatten()
        .filter_map(|s| state.why_not_delete(s).map(|why| (s.session_id.clone(), why.into())))
        .collect();
    let favourite_prompts: Vec<String> =
        state.favourites.list.iter().map(|f| f.prompt.clone()).collect();

    let phase = state.phase();
    let paused = match &state.task.status {
        Some(TaskStatus::Paused { reason, .. }) if matches!(phase, Phase::Paused { .. }) => {
            Some(AttrValue::from(reason.clone()))
        }
        _ => None,
    };

    let on_workflow = {
        let dispatcher = state.dispatcher();
        Callback::from(move |action| dispatcher.dispatch(PanelAction::Workflow(action)))
    };
    let on_stop_job = {
        let dispatcher = state.dispatcher();
        Callback::from(move |job| dispatcher.dispatch(PanelAction::Job(JobAction::Stop(job))))
    };
    let on_goto_tab = {
        let dispatcher = state.dispatcher();
        Callback::from(move |tab| dispatcher.dispatch(PanelAction::Job(JobAction::GoTo(tab))))
    };
    let provider_wait = state.jobs.provider_wait(state.tab).map(|wait| wait.describe());
    let driven = state.jobs.driven_in(state.tab).map(|job| {
        let client = job.driven_by.clone().unwrap_or_default();
        (AttrValue::from(client), AttrValue::from(job.id.clone()), state.jobs.is_stopping(&job.id))
    });

    html! {
        <main class={classes!("panel", state.settings_open().then_some("with-settings"))}>
            <StatusBar
                worker={state.worker.clone()}
                tab={state.tab}
                {phase}
                step={state.task.step}
                pause_requested={state.task.pause_requested}
                replay={state.workflows.pill()}
                spend={state.task.spend}
                annotation={state.task.annotation_link()}
                view={state.view}
                live_jobs={state.jobs.live()}
                jobs_needing_you={state.jobs.needing_you()}
                {provider_wait}
                can_start_over={!phase.is_active() && !state.chat.is_empty()}
                on_new_chat={act(|| PanelAction::NewChat)}
                on_toggle_history={act(|| PanelAction::ToggleHistory)}
                on_toggle_jobs={act(|| PanelAction::Job(JobAction::Toggle))}
                on_toggle_telemetry={act(|| PanelAction::ToggleTelemetry)}
                on_toggle_settings={act(|| PanelAction::ToggleSettings)}
            />
            if let Some((client, job_id, stopping)) = driven {
                <DrivenBanner {client} {job_id} {stopping} connected={state.connected()}
                    on_stop={on_stop_job.clone()} />
            }
            <RecordBar recording={state.recording.clone()} connected={state.connected()}
                on_toggle={act(|| PanelAction::Record(RecordAction::Toggle))}
                on_offer={act(|| PanelAction::Record(RecordAction::OpenOffer))} />
            if let Some(naming) = state.recording.naming.clone() {
                <RecordName {naming} on_action={{
                    let dispatcher = state.dispatcher();
                    Callback::from(move |action| dispatcher.dispatch(PanelAction::Record(action)))
                }} />
            }
            if let Some(offer) = state.recording.offer.clone() {
                <RecordOffer {offer} on_action={{
                    let dispatcher = state.dispatcher();
                    Callback::from(move |action| dispatcher.dispatch(PanelAction::Record(action)))
                }} />
            }
            if state.view == View::History {
                <HistoryView
                    history={state.history.clone()}
                    shown={state.task.session_id.clone()}
                    can_open={state.can_open_session()}
                    tab={state.tab}
                    {not_deletable}
                    on_open={session(PanelAction::OpenSession)}
                    on_ask_delete={session(PanelAction::AskDeleteSession)}
                    on_cancel_delete={act(|| PanelAction::CancelDeleteSession)}
                    on_delete={session(PanelAction::DeleteSession)}
                    on_close={act(|| PanelAction::ToggleHistory)}
                />
            }
            if state.view == View::Jobs {
                <JobsView jobs={state.jobs.clone()} tab={state.tab} connected={state.connected()}
                    on_stop={on_stop_job} on_goto={on_goto_tab}
                    on_close={act(|| PanelAction::Job(JobAction::Toggle))} />
            }
            if state.view == View::Telemetry {
                <TelemetryView telemetry={state.task.telemetry.clone()}
                    has_task={state.task.run_id.is_some()}
                    steps={state.task.step}
                    on_close={act(|| PanelAction::ToggleTelemetry)} />
            }
            if state.settings_open() {
                <SettingsView
                    form={state.settings.clone()}
                    connected={state.connected()}
                    mcp={state.mcp.clone()}
                    {on_edit}
                    {on_test}
                    on_add_mcp={act(|| PanelAction::AddMcpServer)}
                    on_remove_mcp={{
                        let dispatcher = state.dispatcher();
                        Callback::from(move |i: usize| dispatcher.dispatch(PanelAction::RemoveMcpServer(i)))
                    }}
                    on_test_mcp={{
                        let dispatcher = state.dispatcher();
                        Callback::from(move |i: usize| dispatcher.dispatch(PanelAction::TestMcpServer(i)))
                    }}
                    on_save={act(|| PanelAction::SaveSettings)}
                    on_close={act(|| PanelAction::ToggleSettings)}
                    on_reload={act(|| PanelAction::OpenSettings)}
                />
            }
            <div class="chat-view" hidden={state.view != View::Chat}>
                <Tools
                    collapsed={state.tools_collapsed}
                    on_toggle={act(|| PanelAction::ToggleTools)}
                    title={state.title.clone()}
                    can_read_title={state.can_request_title()}
                    on_read_title={act(|| PanelAction::ReadTitle)}
                    state_view={state.state_view.clone()}
                />
                <WorkflowMenuView menu={state.workflows.clone()} tab={state.tab}
                    connected={state.connected()} on_action={on_workflow} />
                <ChatLog
                    entries={state.chat.entries.clone()}
                    pending={state.chat.pending.clone()}
                    working={matches!(phase, Phase::Running | Phase::Starting)}
                    on_open_settings={on_open_settings}
                    {favourite_prompts}
                    {on_save_favourite}
                >
                    if state.shows_quick_start() {
                        <QuickStart favourites={state.favourites.clone()} connected={state.connected()}
                            on_action={on_favourite} />
                    }
                </ChatLog>
                if let Phase::Paused { question } = phase {
                    <PausedBanner {question} reason={paused} on_resume={act(|| PanelAction::ResumeAnyway)} />
                }
                <Composer
                    draft={AttrValue::from(state.draft.clone())}
                    {phase}
                    connected={state.connected()}
                    pause_requested={state.task.pause_requested}
                    send_label={state.send_label()}
                    command_error={state.command_error.clone().map(AttrValue::from)}
                    send_error={state.send_error.clone().map(AttrValue::from)}
                    input={input.clone()}
                    {on_input}
                    on_send={act(|| PanelAction::Send)}
                    {on_pause}
                    on_stop={act(|| PanelAction::Stop)}
                />
            </div>
        </main>
    }
}
