//! The effect layer: the port, the database and the address bar. It carries out what the
//! reducer queued and reports back as actions; it decides nothing.

use std::rc::Rc;

use gloo::events::EventListener;
use yew::prelude::*;

use crate::state::{Action, Effect, Route, Studio};
use page_port::Link;
use protocol::studio::StudioEvent;

type Dispatch = UseReducerDispatcher<Studio>;

thread_local! {
    static PORT: Link = Link::default();
}

/// Connects to the worker, and again a second after the port closes (Chrome stops an idle
/// worker; connecting starts it).
#[hook]
pub fn use_port(dispatch: Dispatch) {
    use_effect_with((), move |()| {
        let on_event: Rc<dyn Fn(StudioEvent)> = {
            let dispatch = dispatch.clone();
            Rc::new(move |event| dispatch.dispatch(Action::Worker(event)))
        };
        let on_link: Rc<dyn Fn(bool)> = Rc::new(move |up| {
            dispatch.dispatch(if up { Action::Connected } else { Action::Disconnected })
        });
        PORT.with(|port| port.keep_connected(1000, on_event, on_link));
    });
}

/// Follows `location.hash`, at load and on every change.
#[hook]
pub fn use_route(dispatch: Dispatch) {
    use_effect_with((), move |()| {
        let read = || web_sys::window().and_then(|w| w.location().hash().ok()).unwrap_or_default();
        dispatch.dispatch(Action::Route(Route::parse(&read())));
        let window = web_sys::window().expect("a page has a window");
        let listener = EventListener::new(&window, "hashchange", move |_| {
            dispatch.dispatch(Action::Route(Route::parse(&read())));
        });
        move || drop(listener)
    });
}

#[hook]
pub fn use_effects(state: &UseReducerHandle<Studio>) {
    let dispatch = state.dispatcher();
    // Effects stay queued until the reducer hears they were taken; never perform one twice.
    let taken = use_mut_ref(|| 0u32);
    use_effect_with(state.effects.clone(), move |effects| {
        let mut last = None;
        for (n, effect) in effects {
            if *n <= *taken.borrow() {
                continue;
            }
            *taken.borrow_mut() = *n;
            last = Some(*n);
            perform(dispatch.clone(), effect.clone());
        }
        if let Some(up_to) = last {
            dispatch.dispatch(Action::EffectsTaken(up_to));
        }
    });
}

fn perform(dispatch: Dispatch, effect: Effect) {
    match effect {
        Effect::Send(request) => {
            let sent = PORT.with(|port| port.send(&request));
            if !sent {
                dispatch.dispatch(Action::Worker(protocol::studio::StudioEvent::Failed {
                    id: request.id(),
                    message: "Not connected to the extension's worker; try again.".into(),
                }));
            }
        }
        Effect::LoadTraces => wasm_bindgen_futures::spawn_local(async move {
            dispatch.dispatch(Action::TracesLoaded(crate::db::traces().await));
        }),
        Effect::LoadVersions => wasm_bindgen_futures::spawn_local(async move {
            dispatch.dispatch(Action::VersionsLoaded(crate::db::prompt_versions().await));
        }),
        Effect::SetHash(hash) => {
            if let Some(window) = web_sys::window() {
                // replaceState: no hashchange, so the reducer is not told twice.
                let url =
                    if hash.is_empty() { "studio.html".to_owned() } else { format!("#{hash}") };
                if let Ok(history) = window.history() {
                    let _ = history.replace_state_with_url(
                        &wasm_bindgen::JsValue::NULL,
                        "",
                        Some(&url),
                    );
                }
            }
        }
    }
}
