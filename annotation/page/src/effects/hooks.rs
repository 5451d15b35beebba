//! The hooks the `App` runs the effect layer with: open the database, carry out queued
//! effects, follow back and forward, load the dictionary, and time the next sync round.

use std::rc::Rc;

use annotation_core::sync::SyncState;
use gloo::timers::callback::Timeout;
use yew::prelude::*;

use super::{DbHandle, SpellerHandle, notify, perform, touch};
use crate::db::Db;
use crate::state::{Action, Dispatch, Route, Studio, SyncView};
use crate::util::{listen, query_string};

/// Opens the database once, loads what the page starts from, and follows the URL.
#[hook]
pub fn use_database(dispatch: Dispatch) -> Option<DbHandle> {
    let db = use_state(|| None::<DbHandle>);
    {
        let db = db.clone();
        use_effect_with((), move |_| {
            yew::platform::spawn_local(async move {
                match Db::open().await {
                    Ok(opened) => {
                        let user = opened.user().await.unwrap_or_default();
                        dispatch.dispatch(Action::SyncSettings(opened.sync_settings().await));
                        dispatch.dispatch(Action::Grammar(opened.grammar_endpoint().await));
                        dispatch.dispatch(Action::UserLoaded(user));
                        dispatch.dispatch(Action::OpenRoute(Route::parse(&query_string())));
                        db.set(Some(DbHandle(Rc::new(opened))));
                    }
                    Err(why) => notify(&dispatch, false, why),
                }
            });
        });
    }
    (*db).clone()
}

/// Carries out each queued effect once, as soon as the database is open.
#[hook]
pub fn use_effects(state: &UseReducerHandle<Studio>, db: Option<DbHandle>) {
    let taken = use_mut_ref(|| 0u32);
    let dispatch = state.dispatcher();
    use_effect_with((state.effects.clone(), db), move |(effects, db)| {
        let Some(db) = db else { return };
        let mut last = None;
        for (n, effect) in effects {
            if *n <= *taken.borrow() {
                continue;
            }
            *taken.borrow_mut() = *n;
            last = Some(*n);
            perform(db.0.clone(), dispatch.clone(), effect.clone());
        }
        if let Some(up_to) = last {
            dispatch.dispatch(Action::EffectsTaken { up_to });
        }
    });
}

/// Back and forward move between the list and runs.
#[hook]
pub fn use_history(dispatch: Dispatch, ready: bool) {
    use_effect_with(ready, move |ready| {
        let listener = ready.then(|| {
            listen("popstate", move |_: web_sys::Event| {
                let route = Route::parse(&query_string());
                dispatch.dispatch(match route.run_id {
                    Some(run_id) => Action::OpenRun { run_id, qa: route.qa },
                    None => Action::BackToList,
                });
            })
        });
        move || drop(listener)
    });
}

/// The dictionary, loaded once the first screen shows: parsing it takes the main thread
/// for a moment, which the runs list should not wait for.
#[hook]
pub fn use_speller(shown: bool) -> Option<SpellerHandle> {
    let speller = use_state(|| None::<SpellerHandle>);
    {
        let speller = speller.clone();
        use_effect_with(shown, move |shown| {
            if *shown && speller.is_none() {
                yew::platform::spawn_local(async move {
                    match super::speller().await {
                        Ok(loaded) => speller.set(Some(SpellerHandle(loaded))),
                        // Spelling is a help, not a gate: say so once and go on without it.
                        Err(why) => {
                            web_sys::console::warn_1(&format!("spelling is off: {why}").into())
                        }
                    }
                });
            }
        });
    }
    (*speller).clone()
}

/// The next round: soon while everything works, backing off while it does not, and at
/// once when the browser comes back online.
#[hook]
pub fn use_sync_timer(dispatch: Dispatch, sync: &SyncView) {
    let deps = (sync.settings.enabled(), sync.running, sync.failures, sync.state.clone());
    use_effect_with(deps, move |(enabled, running, failures, state)| {
        let delay_s = match state {
            SyncState::Offline { retry_in_s, .. } => *retry_in_s,
            _ if *failures > 0 => annotation_core::sync::backoff(*failures, None),
            _ => 15,
        };
        let timer = (*enabled && !*running).then(|| {
            let dispatch = dispatch.clone();
            Timeout::new(delay_s * 1000, move || dispatch.dispatch(Action::SyncKick))
        });
        let online = listen("online", move |_: web_sys::Event| dispatch.dispatch(Action::SyncKick));
        move || {
            drop(timer);
            drop(online);
        }
    });
}

/// While there are unsaved edits, closing or reloading the tab asks first (the browser's
/// own "Leave site?"). The edits are stored as drafts anyway; the question is the promise
/// that nothing goes without the person knowing.
#[hook]
pub fn use_unload_guard(dirty: bool) {
    use_effect_with(dirty, move |dirty| {
        let guard = dirty.then(|| {
            listen("beforeunload", |event: web_sys::BeforeUnloadEvent| {
                event.prevent_default();
                event.set_return_value("You have unsaved edits.");
            })
        });
        move || drop(guard)
    });
}

/// Counts the time spent on the open run: every key and click on the page is activity
/// (`annotation_core::metrics::ActiveTime` says what counts), added to the run at its next
/// save.
#[hook]
pub fn use_activity(run_id: Option<String>) {
    use_effect_with(run_id, move |run_id| {
        let guards = run_id.clone().map(|run_id| {
            let now = || web_sys::window().and_then(|w| w.performance()).map_or(0.0, |p| p.now());
            touch(&run_id, now());
            let (a, b) = (run_id.clone(), run_id);
            (
                listen("keydown", move |_: web_sys::Event| touch(&a, now())),
                listen("pointerdown", move |_: web_sys::Event| touch(&b, now())),
            )
        });
        move || drop(guards)
    });
}
