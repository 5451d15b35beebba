use std::rc::Rc;

use protocol::PanelRequest;
use yew::prelude::*;

use crate::components::status_bar::StatusBar;
use crate::components::title_probe::TitleProbe;
use crate::state::{PanelAction, PanelState};
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

    let on_read_title = {
        let state = state.clone();
        let port = port.clone();
        Callback::from(move |_| {
            let (Some(tab_id), Some(port)) = (state.tab, port.borrow().clone()) else {
                return;
            };
            let request = PanelRequest::PageTitle { id: state.next_request_id, tab_id };
            if port.send(&request) {
                state.dispatch(PanelAction::TitleRequested);
            } else {
                state.dispatch(PanelAction::PortLost);
            }
        })
    };

    html! {
        <main class="panel">
            <StatusBar worker={state.worker.clone()} tab={state.tab} />
            <TitleProbe
                lookup={state.title.clone()}
                enabled={state.can_request_title()}
                on_read={on_read_title}
            />
        </main>
    }
}
