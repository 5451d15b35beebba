//! The effect layer: the one place the page does IO. It carries out each [`Effect`] the
//! reducer queued (once, by its number) and reports what happened as actions.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use protocol::workflow::WorkflowsEvent;
use protocol::workflow::WorkflowsRequest;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use crate::db::Db;
use crate::port::{self, Link};
use crate::state::{Action, Effect, Page};

/// The open database, shared by the effects and the screenshots.
#[derive(Clone)]
pub struct DbHandle(pub Rc<Db>);

impl PartialEq for DbHandle {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

type PortSlot = Link;

/// Opens the database once.
#[hook]
pub fn use_database(dispatch: UseReducerDispatcher<Page>) -> Option<DbHandle> {
    let db = use_state(|| None::<DbHandle>);
    {
        let db = db.clone();
        use_effect_with((), move |_| {
            wasm_bindgen_futures::spawn_local(async move {
                match Db::open().await {
                    Ok(opened) => db.set(Some(DbHandle(Rc::new(opened)))),
                    Err(error) => dispatch.dispatch(Action::Notice(error)),
                }
            });
        });
    }
    (*db).clone()
}

/// Connects to the worker, and again whenever the port closes (Chrome stops an idle worker;
/// connecting starts it).
#[hook]
pub fn use_port(dispatch: UseReducerDispatcher<Page>) -> PortSlot {
    let link = use_memo((), |_| Link::default());
    {
        let link = (*link).clone();
        use_effect_with((), move |_| {
            let on_event: Rc<dyn Fn(WorkflowsEvent)> =
                Rc::new(move |event| dispatch.dispatch(Action::Worker(event)));
            link.keep_connected(300, on_event, Rc::new(|_| ()));
        });
    }
    (*link).clone()
}

/// Runs every queued effect not run yet, once the database is open.
#[hook]
pub fn use_effects(page: &UseReducerHandle<Page>, db: Option<DbHandle>, port: PortSlot) {
    let done = use_mut_ref(|| 0u64);
    let newest = page.effects.last().map_or(0, |(n, _)| *n);
    let effects = page.effects.clone();
    let dispatch = page.dispatcher();
    use_effect_with((newest, db.is_some()), move |_| {
        let Some(db) = db else { return };
        for (n, effect) in effects {
            if n <= *done.borrow() {
                continue;
            }
            *done.borrow_mut() = n;
            run(effect, db.0.clone(), port.clone(), dispatch.clone());
        }
    });
}

fn send(port: &PortSlot, request: &WorkflowsRequest, dispatch: &UseReducerDispatcher<Page>) {
    let sent = port.send(request);
    if !sent {
        dispatch.dispatch(Action::Notice(
            "The extension's worker is not connected; try again in a moment.".into(),
        ));
    }
}

fn run(effect: Effect, db: Rc<Db>, port: PortSlot, dispatch: UseReducerDispatcher<Page>) {
    match effect {
        Effect::Send(request) => send(&port, &request, &dispatch),
        Effect::Tell(request) => {
            port.send(&request);
        }
        Effect::Download { name, text } => download(&name, &text),
        effect => wasm_bindgen_futures::spawn_local(async move {
            match effect {
                Effect::Load => match db.load().await {
                    Ok((recordings, workflows)) => {
                        dispatch.dispatch(Action::Loaded { recordings, workflows })
                    }
                    Err(error) => dispatch.dispatch(Action::Notice(error)),
                },
                Effect::Save(mut workflow) => {
                    workflow.updated_at = now();
                    match db.save(&workflow).await {
                        Ok(()) => dispatch.dispatch(Action::Saved(workflow)),
                        Err(error) => dispatch.dispatch(Action::Notice(error)),
                    }
                }
                Effect::ExportRecording(id) => match db.recording(&id).await {
                    Ok(recording) => {
                        download(&format!("{id}.recording.jsonl"), &recording.to_jsonl())
                    }
                    Err(error) => dispatch.dispatch(Action::Notice(error)),
                },
                Effect::StartReplay {
                    id,
                    workflow_id,
                    version,
                    tab,
                    start_url,
                    params,
                    fast_path,
                } => {
                    let tab = match tab {
                        Some(tab) => {
                            port::show_tab(tab).await;
                            tab
                        }
                        None => match port::open_tab(&start_url).await {
                            Ok(tab) => tab,
                            Err(error) => return dispatch.dispatch(Action::Notice(error)),
                        },
                    };
                    let request = WorkflowsRequest::StartReplay {
                        id,
                        workflow_id,
                        version,
                        tab_id: tab,
                        params,
                        fast_path,
                    };
                    send(&port, &request, &dispatch);
                }
                Effect::Send(_) | Effect::Tell(_) | Effect::Download { .. } => {}
            }
        }),
    }
}

fn now() -> String {
    js_sys::Date::new_0().to_iso_string().as_string().unwrap_or_default()
}

/// Offers `text` as a file named `name`.
fn download(name: &str, text: &str) {
    let parts = js_sys::Array::of1(&text.into());
    let options = web_sys::BlobPropertyBag::new();
    options.set_type("application/json");
    let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else { return };
    let document = web_sys::window().and_then(|w| w.document());
    if let Some(anchor) = document
        .and_then(|d| d.create_element("a").ok())
        .and_then(|a| a.dyn_into::<web_sys::HtmlAnchorElement>().ok())
    {
        anchor.set_href(&url);
        anchor.set_download(name);
        anchor.click();
    }
}

thread_local! {
    /// Object URLs of screenshots read already, by key (a key names one image forever).
    static URLS: RefCell<HashMap<String, String>> = RefCell::new(HashMap::new());
}

/// The object URL of the screenshot stored under `key`, read once per page.
#[hook]
pub fn use_screenshot(key: Option<String>) -> Option<String> {
    let db = use_context::<Option<DbHandle>>().flatten();
    let cached = key.as_ref().and_then(|k| URLS.with(|u| u.borrow().get(k).cloned()));
    let url = use_state(|| cached.clone());
    {
        let url = url.clone();
        use_effect_with(key.clone(), move |key| {
            let cached = key.as_ref().and_then(|k| URLS.with(|u| u.borrow().get(k).cloned()));
            match (cached, key.clone(), db) {
                (Some(found), _, _) => url.set(Some(found)),
                (None, Some(key), Some(db)) => wasm_bindgen_futures::spawn_local(async move {
                    let found =
                        db.0.screenshot(&key)
                            .await
                            .and_then(|blob| web_sys::Url::create_object_url_with_blob(&blob).ok());
                    if let Some(found) = &found {
                        URLS.with(|u| u.borrow_mut().insert(key, found.clone()));
                    }
                    url.set(found);
                }),
                _ => url.set(None),
            }
        });
    }
    cached.or_else(|| (*url).clone())
}
