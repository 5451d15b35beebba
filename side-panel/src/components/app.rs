use std::rc::Rc;

use protocol::{PanelRequest, TabId};
use yew::prelude::*;

use crate::components::command_bar::CommandBar;
use crate::components::state_view::StateView;
use crate::components::status_bar::StatusBar;
use crate::components::title_probe::TitleProbe;
use crate::state::{Command, PanelAction, PanelState};
use crate::worker_port::{self, WorkerPort};

/// The whole panel: owns the state and the port, hands slices of state to children.
#[function_component(App)]
pub fn app() -> Html {
    let state = use_reducer(PanelState::default);
    let port = use_mut_ref(|| None::<Rc<WorkerPort>>);

    {
        let state = state.clone();
        let port = port.clone();
        use_effect_with((), move |_| {
            let on_event = state.dispatcher();
            let on_lost = state.dispatcher();
            *port.borrow_mut() = Some(Rc::new(WorkerPort::connect(
                move |event| on_event.dispatch(PanelAction::Worker(event)),
                move || on_lost.dispatch(PanelAction::PortLost),
            )));
            let choose = state.dispatcher();
            yew::platform::spawn_local(async move {
                choose.dispatch(PanelAction::TabChosen(worker_port::target_tab().await));
            });
        });
    }

    // Posts a request carrying the next id, then records that it is pending.
    let send = {
        let state = state.clone();
        let port = port.clone();
        Rc::new(move |make: fn(u32, TabId) -> PanelRequest, pending: PanelAction| {
            let (Some(tab_id), Some(port)) = (state.tab, port.borrow().clone()) else { return };
            if port.send(&make(state.next_request_id, tab_id)) {
                state.dispatch(pending);
            } else {
                state.dispatch(PanelAction::PortLost);
            }
        })
    };
    let on_read = {
        let send = send.clone();
        Callback::from(move |_| {
            send(|id, tab_id| PanelRequest::PageTitle { id, tab_id }, PanelAction::TitleRequested)
        })
    };
    let on_command = {
        let state = state.clone();
        Callback::from(move |line: String| match Command::parse(&line) {
            Ok(Command::State) => send(
                |id, tab_id| PanelRequest::PageState { id, tab_id },
                PanelAction::StateRequested,
            ),
            Err(message) => state.dispatch(PanelAction::CommandRejected(message)),
        })
    };

    html! {
        <main class="panel">
            <StatusBar worker={state.worker.clone()} tab={state.tab} />
            <TitleProbe lookup={state.title.clone()} enabled={state.can_request_title()} {on_read} />
            <CommandBar
                enabled={state.can_request_state()}
                error={state.command_error.clone()}
                {on_command}
            />
            <StateView lookup={state.state_view.clone()} />
        </main>
    }
}
