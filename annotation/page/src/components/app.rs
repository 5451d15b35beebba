use std::rc::Rc;

use annotation_core::export::{Format, Options};
use annotation_core::import;
use annotation_core::record::ReviewStatus;
use annotation_core::roles::User;
use annotation_core::sync::{SyncSettings, SyncState};
use yew::prelude::*;

use crate::components::help_overlay::HelpOverlay;
use crate::components::notice_bar::NoticeBar;
use crate::components::run_view::RunView;
use crate::components::runs_list::RunsList;
use crate::components::sync_panel::{SyncPanel, SyncPill};
use crate::components::user_bar::UserBar;
use crate::db::{Db, Edit};
use crate::download;
use crate::http;
use crate::state::editor::{Command, Loaded};
use crate::state::{Action, Notice, Progress, Route, Screen, Studio};
use crate::util::{now, query_string, set_query};

pub type Dispatch = UseReducerDispatcher<Studio>;

/// The open database, shared by the components that read or write it.
#[derive(Clone)]
pub struct DbHandle(pub Rc<Db>);

impl PartialEq for DbHandle {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

/// The spelling dictionary, once loaded; until then thoughts show no spelling issues.
#[derive(Clone)]
pub struct SpellerHandle(pub Rc<annotation_core::spelling::Speller>);

impl PartialEq for SpellerHandle {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

/// Reads the bundled Hunspell dictionary (`dictionaries/en_US.*`, from Debian's
/// `hunspell-en-us`) and builds the speller, off the first paint.
async fn load_speller() -> Result<annotation_core::spelling::Speller, String> {
    async fn text(path: &str) -> Result<String, String> {
        let response =
            http::fetch("GET", path, &[], None).await.map_err(|()| format!("{path}: no answer"))?;
        if !response.ok() {
            return Err(format!("{path}: HTTP {}", response.status()));
        }
        Ok(http::text(&response).await)
    }
    let aff = text("dictionaries/en_US.aff").await?;
    let dic = text("dictionaries/en_US.dic").await?;
    annotation_core::spelling::Speller::new(&aff, &dic)
}

pub fn notify(dispatch: &Dispatch, ok: bool, text: impl Into<String>) {
    dispatch.dispatch(Action::Notify(Notice { ok, text: text.into() }));
}

/// Loads the runs list into the state.
pub fn load_list(db: Rc<Db>, dispatch: Dispatch) {
    yew::platform::spawn_local(async move {
        // What is stored shows at once; the check against the runs follows, and replaces it
        // only if a run changed since.
        let shown = db.stored_summaries().await;
        if let Some(stored) = &shown {
            dispatch.dispatch(Action::ListLoaded(stored.clone()));
        }
        match db.summaries().await {
            Ok(checked) => {
                let stamp = |list: &[annotation_core::query::RunSummary]| {
                    let mut stamps: Vec<(String, String, u32)> = list
                        .iter()
                        .map(|s| (s.run_id.clone(), s.updated_at.clone(), s.version))
                        .collect();
                    stamps.sort();
                    stamps
                };
                if shown.as_deref().is_none_or(|stored| stamp(stored) != stamp(&checked)) {
                    dispatch.dispatch(Action::ListLoaded(checked));
                }
            }
            Err(why) => return notify(&dispatch, false, why),
        }
        // The list is on screen; the search index follows.
        match db.search_texts().await {
            Ok(texts) => {
                dispatch.dispatch(Action::List(crate::state::list::ListAction::Texts(texts)))
            }
            Err(why) => notify(&dispatch, false, why),
        }
    });
}

/// Opens the run `run_id` (review mode when `qa`), or says it is not here.
pub fn open_run(db: Rc<Db>, dispatch: Dispatch, run_id: String, qa: bool, user: User) {
    yew::platform::spawn_local(async move {
        match db.run(&run_id).await {
            Ok(Some(data)) => {
                let route =
                    Route { run_id: Some(run_id), task_id: Some(data.run.task_id.clone()), qa };
                if query_string() != route.query() {
                    set_query(&route.query());
                }
                dispatch.dispatch(Action::RunLoaded(Box::new(Loaded {
                    run: data.run,
                    steps: data.steps,
                    versions: data.versions,
                    comments: data.comments,
                    suggestions: data.suggestions,
                    qa,
                    user,
                })));
            }
            Ok(None) => dispatch.dispatch(Action::RunMissing(run_id)),
            Err(why) => notify(&dispatch, false, why),
        }
    });
}

/// Exports the runs the list shows (or all of them) and hands the file to the browser.
pub fn export(
    db: Rc<Db>,
    dispatch: Dispatch,
    ids: Option<Vec<String>>,
    filter: String,
    format: Format,
    options: Options,
) {
    yew::platform::spawn_local(async move {
        let label = format!("Exporting {}", format.label());
        dispatch.dispatch(Action::Progress(Some(Progress {
            label: label.clone(),
            done: 0,
            total: 0,
        })));
        let result = async {
            let mut runs = db.everything().await?;
            if let Some(ids) = &ids {
                // By position in `ids`, looked up once per run: 20,000 runs stay linear.
                let order: std::collections::HashMap<&str, usize> =
                    ids.iter().enumerate().map(|(i, id)| (id.as_str(), i)).collect();
                runs.retain(|(run, _)| order.contains_key(run.id.as_str()));
                runs.sort_by_key(|(run, _)| order[run.id.as_str()]);
            }
            let progress = |done, total| {
                dispatch.dispatch(Action::Progress(Some(Progress {
                    label: label.clone(),
                    done,
                    total,
                })))
            };
            let built =
                download::build(&db, &runs, format, &options, &filter, &now(), progress).await?;
            download::save(&built)?;
            Ok::<_, String>((built.file_name, runs.len(), built.steps))
        };
        let result = result.await;
        dispatch.dispatch(Action::Progress(None));
        match result {
            Ok((file, runs, steps)) => {
                notify(&dispatch, true, format!("Exported {runs} runs ({steps} steps) to {file}."))
            }
            Err(why) => notify(&dispatch, false, format!("Export failed: {why}")),
        }
    });
}

/// Imports a file: all of it, or nothing with every problem listed.
pub fn import_file(db: Rc<Db>, dispatch: Dispatch, file: web_sys::File, user: User) {
    yew::platform::spawn_local(async move {
        let name = file.name();
        match wasm_bindgen_futures::JsFuture::from(file.text()).await {
            Ok(text) => {
                import_text(db, dispatch, name, text.as_string().unwrap_or_default(), user, false)
                    .await
            }
            Err(_) => notify(&dispatch, false, format!("Could not read {name}.")),
        }
    });
}

/// Imports `text`; with `as_copies`, runs whose ids exist here come in under new ids.
pub async fn import_text(
    db: Rc<Db>,
    dispatch: Dispatch,
    name: String,
    text: String,
    user: User,
    as_copies: bool,
) {
    dispatch.dispatch(Action::Rejections(Vec::new()));
    let existing = match db.run_ids().await {
        Ok(ids) => ids.into_iter().collect(),
        Err(why) => return notify(&dispatch, false, why),
    };
    let parsed = if as_copies {
        import::read(&name, &text).map(|batch| import::as_copies(batch, crate::util::new_id))
    } else {
        import::parse(&name, &text, &existing)
    };
    match parsed {
        Err(rejections) => {
            let count = rejections.len();
            // A file whose only fault is ids already here can come in as copies.
            let copyable = !as_copies && import::read(&name, &text).is_ok();
            let lines = rejections
                .into_iter()
                .map(|r| {
                    let path =
                        if r.path.is_empty() { String::new() } else { format!(" · {}", r.path) };
                    format!("{}{}: {}", r.record, path, r.message)
                })
                .collect();
            dispatch.dispatch(Action::Rejections(lines));
            if copyable {
                dispatch.dispatch(Action::CopyableImport(Some((name.clone(), text))));
            }
            notify(
                &dispatch,
                false,
                format!(
                    "Nothing was imported from {name}: {count} problem{} found.",
                    if count == 1 { "" } else { "s" }
                ),
            );
        }
        Ok(batch) => {
            let steps: usize = batch.runs.iter().map(|(_, s)| s.len()).sum();
            let runs = batch.runs.len();
            match db.import(&batch.runs, &user.name, &now()).await {
                Ok(()) => {
                    dispatch.dispatch(Action::CopyableImport(None));
                    let copies = if as_copies { " as copies" } else { "" };
                    notify(
                        &dispatch,
                        true,
                        format!("Imported {runs} runs ({steps} steps) from {name}{copies}."),
                    );
                    load_list(db, dispatch);
                }
                Err(why) => notify(&dispatch, false, format!("Nothing was imported: {why}")),
            }
        }
    }
}

/// Moves runs to `to` (batch approve), each as a saved version; runs that may not move are
/// named in the notice.
pub fn transition_runs(
    db: Rc<Db>,
    dispatch: Dispatch,
    ids: Vec<String>,
    to: ReviewStatus,
    user: User,
) {
    yew::platform::spawn_local(async move {
        let (mut moved, mut refused) = (0, Vec::new());
        for id in &ids {
            let edited = db
                .edit_run(id, &user.name, &now(), |run| {
                    let allowed = annotation_core::roles::permitted(
                        &user,
                        run.annotator.as_deref(),
                        run.status,
                        to,
                    );
                    if allowed != Some(true) {
                        return Edit::Skip(format!(
                            "{} ({})",
                            short(&run.task_prompt),
                            run.status.label()
                        ));
                    }
                    annotation_core::roles::move_run(run, to, &user);
                    Edit::Save
                })
                .await;
            match edited {
                Ok(Edit::Save) => moved += 1,
                Ok(Edit::Skip(why)) | Err(why) => refused.push(why),
            }
        }
        let mut text =
            format!("{moved} run{} moved to {}.", if moved == 1 { "" } else { "s" }, to.label());
        if !refused.is_empty() {
            text += &format!(" Not moved: {}.", refused.join("; "));
        }
        notify(&dispatch, refused.is_empty(), text);
        dispatch.dispatch(Action::List(crate::state::list::ListAction::PickShown(false)));
        load_list(db, dispatch);
    });
}

/// Adds runs to a named collection (seed §7.D), each change a saved version.
pub fn collect_runs(db: Rc<Db>, dispatch: Dispatch, ids: Vec<String>, name: String, user: User) {
    yew::platform::spawn_local(async move {
        let mut added = 0;
        for id in &ids {
            let edited = db
                .edit_run(id, &user.name, &now(), |run| {
                    if run.collections.contains(&name) {
                        return Edit::Skip(String::new());
                    }
                    run.collections.push(name.clone());
                    Edit::Save
                })
                .await;
            match edited {
                Ok(Edit::Save) => added += 1,
                Ok(Edit::Skip(_)) => {}
                Err(why) => return notify(&dispatch, false, why),
            }
        }
        notify(
            &dispatch,
            true,
            format!(
                "Added {added} run{} to the collection “{name}”.",
                if added == 1 { "" } else { "s" }
            ),
        );
        load_list(db, dispatch);
    });
}

fn short(text: &str) -> String {
    let mut out: String = text.chars().take(40).collect();
    if text.chars().count() > 40 {
        out.push('…');
    }
    out
}

/// Saves what the editor asked to save.
fn run_command(db: Rc<Db>, dispatch: Dispatch, state: &Studio, command: Command) {
    let Some(editor) = &state.editor else { return };
    let Command::Save { run, steps, then_select } = command;
    let before = (editor.run.clone(), editor.steps.clone());
    let latest = editor.versions.last().cloned();
    let author = editor.user.name.clone();
    yew::platform::spawn_local(async move {
        match db.save((&before.0, &before.1), latest.as_ref(), run, steps, &author, &now()).await {
            Ok(saved) => dispatch.dispatch(Action::Saved {
                run: Box::new(saved.run),
                steps: saved.steps,
                versions: saved.versions,
                then_select,
            }),
            Err(why) => dispatch.dispatch(Action::SaveFailed(format!(
                "{why}. Your edits are still here; try saving again."
            ))),
        }
    });
}

/// The page: opens the database, follows the URL, and carries out storage commands.
#[function_component(App)]
pub fn app() -> Html {
    let state = use_reducer(Studio::default);
    let db = use_state(|| None::<DbHandle>);
    let speller = use_state(|| None::<SpellerHandle>);
    let last_command = use_mut_ref(|| 0u32);
    let synced_kick = use_mut_ref(|| 0u32);
    let on_screen = use_mut_ref(|| (None::<(String, bool, bool)>, Screen::Loading));

    {
        let dispatch = state.dispatcher();
        let db = db.clone();
        use_effect_with((), move |_| {
            yew::platform::spawn_local(async move {
                match Db::open().await {
                    Ok(opened) => {
                        let opened = Rc::new(opened);
                        let user = opened.user().await.unwrap_or_default();
                        dispatch.dispatch(Action::SyncSettings(opened.sync_settings().await));
                        dispatch.dispatch(Action::Grammar(opened.grammar_endpoint().await));
                        dispatch.dispatch(Action::UserLoaded(user.clone()));
                        let route = Route::parse(&query_string());
                        match route.run_id {
                            Some(run_id) => {
                                open_run(opened.clone(), dispatch.clone(), run_id, route.qa, user)
                            }
                            None => load_list(opened.clone(), dispatch.clone()),
                        }
                        db.set(Some(DbHandle(opened)));
                    }
                    Err(why) => notify(&dispatch, false, why),
                }
            });
        });
    }

    {
        let dispatch = state.dispatcher();
        let db = db.clone();
        let state_now = state.clone();
        let command = state.editor.as_ref().and_then(|e| e.command.clone());
        use_effect_with(command, move |command| {
            if let (Some((n, command)), Some(db)) = (command.clone(), (*db).clone())
                && n > *last_command.borrow()
            {
                *last_command.borrow_mut() = n;
                run_command(db.0, dispatch, &state_now, command);
            }
        });
    }

    {
        // Back and forward move between the list and runs.
        let dispatch = state.dispatcher();
        let db = db.clone();
        let user = state.user.clone();
        use_effect_with((db.is_some(), user), move |(ready, user)| {
            let listener = ready.then(|| {
                let db = (*db).clone();
                let user = user.clone();
                listen("popstate", move |_: web_sys::Event| {
                    let Some(db) = db.clone() else { return };
                    let route = Route::parse(&query_string());
                    match route.run_id {
                        Some(id) => open_run(db.0, dispatch.clone(), id, route.qa, user.clone()),
                        None => {
                            dispatch.dispatch(Action::BackToList);
                            load_list(db.0, dispatch.clone());
                        }
                    }
                })
            });
            move || drop(listener)
        });
    }

    {
        // The dictionary loads once the first screen shows: parsing it takes the main thread
        // for a moment, which the runs list should not wait for.
        let speller = speller.clone();
        let shown = state.screen != Screen::Loading;
        use_effect_with(shown, move |shown| {
            if *shown && speller.is_none() {
                yew::platform::spawn_local(async move {
                    match load_speller().await {
                        Ok(loaded) => speller.set(Some(SpellerHandle(Rc::new(loaded)))),
                        // Spelling is a help, not a gate: say so once and go on without it.
                        Err(why) => {
                            web_sys::console::warn_1(&format!("spelling is off: {why}").into())
                        }
                    }
                });
            }
        });
    }
    {
        // One sync round at a time; a kick during a round starts another after it.
        let dispatch = state.dispatcher();
        let db = (*db).clone();
        let sync = state.sync.clone();
        let open = state.editor.as_ref().map(|e| (e.run.id.clone(), e.qa, e.dirty()));
        // What is on screen when the round ends may differ from when it started.
        *on_screen.borrow_mut() = (open.clone(), state.screen.clone());
        let on_screen = on_screen.clone();
        let user = state.user.clone();
        let done = synced_kick.clone();
        use_effect_with((sync.kick, sync.running, db.is_some()), move |_| {
            if let Some(db) = db
                && !sync.running
                && sync.kick > *done.borrow()
            {
                *done.borrow_mut() = sync.kick;
                dispatch.dispatch(Action::SyncStarted);
                yew::platform::spawn_local(async move {
                    let open_id = open.as_ref().map(|(id, _, _)| id.clone());
                    let round = crate::sync::round(
                        &db.0,
                        &sync.settings,
                        sync.failures,
                        open_id.as_deref(),
                    )
                    .await;
                    let (open, screen) = on_screen.borrow().clone();
                    if let Some((comments, suggestions)) = round.review.clone()
                        && open.as_ref().map(|(id, _, _)| id) == open_id.as_ref()
                    {
                        dispatch.dispatch(Action::Review { comments, suggestions });
                    }
                    let mut user = user;
                    if let Some(me) = round.user.clone().filter(|me| *me != user) {
                        let _ = db.0.put_user(&me).await;
                        dispatch.dispatch(Action::UserChanged(me.clone()));
                        user = me;
                    }
                    // What the pull brought shows at once, unless it would drop edits.
                    match open {
                        Some((id, qa, false)) if round.pulled.contains(&id) => {
                            open_run(db.0.clone(), dispatch.clone(), id, qa, user)
                        }
                        None if screen == Screen::List && !round.pulled.is_empty() => {
                            load_list(db.0.clone(), dispatch.clone())
                        }
                        _ => {}
                    }
                    dispatch.dispatch(Action::SyncFinished {
                        state: round.state,
                        conflicts: round.conflicts,
                        refused: round.refused,
                    });
                });
            }
        });
    }
    {
        // The next round: soon while everything works, backing off while it does not.
        let dispatch = state.dispatcher();
        let (enabled, running, failures, state_now) = (
            state.sync.settings.enabled(),
            state.sync.running,
            state.sync.failures,
            state.sync.state.clone(),
        );
        use_effect_with(
            (enabled, running, failures, state_now),
            move |(enabled, running, failures, state_now)| {
                let delay_s = match state_now {
                    SyncState::Offline { retry_in_s, .. } => *retry_in_s,
                    _ if *failures > 0 => annotation_core::sync::backoff(*failures, None),
                    _ => 15,
                };
                let timer = (*enabled && !*running).then(|| {
                    let dispatch = dispatch.clone();
                    Timeout::new(delay_s * 1000, move || dispatch.dispatch(Action::SyncKick))
                });
                let online =
                    listen("online", move |_: web_sys::Event| dispatch.dispatch(Action::SyncKick));
                move || {
                    drop(timer);
                    drop(online);
                }
            },
        );
    }

    let on_user = {
        let dispatch = state.dispatcher();
        let db = db.clone();
        Callback::from(move |user: User| {
            dispatch.dispatch(Action::UserChanged(user.clone()));
            if let Some(db) = (*db).clone() {
                let dispatch = dispatch.clone();
                yew::platform::spawn_local(async move {
                    if let Err(why) = db.0.put_user(&user).await {
                        notify(&dispatch, false, why);
                    }
                });
            }
        })
    };

    let body = match (&state.screen, (*db).clone()) {
        (Screen::Loading, _) | (_, None) => {
            html! { <p class="loading" data-testid="loading">{ "Opening the captured runs…" }</p> }
        }
        (Screen::List, Some(db)) => html! {
            <RunsList db={db} list={state.list.clone()} user={state.user.clone()}
                dispatch={state.dispatcher()} rejections={state.rejections.clone()} copyable={state.copyable.clone()} />
        },
        (Screen::Run, Some(db)) => match &state.editor {
            Some(editor) => {
                html! { <RunView db={db} editor={editor.clone()} dispatch={state.dispatcher()} grammar={state.grammar.clone()} /> }
            }
            None => html! {},
        },
        (Screen::Missing(id), Some(_)) => html! {
            <div class="missing" data-testid="missing">
                <h2>{ "This run is not stored in this browser" }</h2>
                <p>{ format!("No captured run has the id {id}. It may have been captured in another Chrome profile, or not synced here yet.") }</p>
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
                <SyncPill state={state.sync.state.clone()} on_open={state.dispatcher().to_callback().reform(|_| Action::SyncOpen(true))} />
                <UserBar user={state.user.clone()} on_change={on_user} from_server={state.sync.settings.enabled()} />
                <button class="ghost" data-testid="help" title="Keyboard shortcuts (?)" onclick={on_help.reform(|_| true)}>{ "?" }</button>
            </header>
            { body }
            if let Some(progress) = &state.progress {
                <div class="progress" data-testid="progress" role="status">
                    <span>{ format!("{} · {} of {} runs", progress.label, progress.done, progress.total) }</span>
                    <progress max={progress.total.max(1).to_string()} value={progress.done.to_string()} />
                </div>
            }
            if let Some(notice) = &state.notice {
                <NoticeBar notice={notice.clone()} on_dismiss={on_dismiss} />
            }
            if let (true, Some(db)) = (state.sync.open, (*db).clone()) {
                <SyncPanel db={db} sync={state.sync.clone()} grammar={state.grammar.clone()} dispatch={state.dispatcher()} />
            }
            if state.help {
                <HelpOverlay on_close={on_help.reform(|_| false)} />
            }
        </div>
    };
    // The providers are always there, holding `None` until ready: adding one later would
    // remount everything below it and lose what is being typed.
    html! {
        <ContextProvider<Option<DbHandle>> context={(*db).clone()}>
            <ContextProvider<Option<SpellerHandle>> context={(*speller).clone()}>
                <ContextProvider<SyncSettings> context={state.sync.settings.clone()}>
                    { page }
                </ContextProvider<SyncSettings>>
            </ContextProvider<Option<SpellerHandle>>>
        </ContextProvider<Option<DbHandle>>>
    }
}

/// Listens to a window event until the returned guard is dropped; events of another type
/// than `E` are ignored.
pub fn listen<E: wasm_bindgen::JsCast + 'static>(
    event: &'static str,
    mut f: impl FnMut(E) + 'static,
) -> Option<gloo::events::EventListener> {
    use wasm_bindgen::JsCast;
    let window = web_sys::window()?;
    Some(gloo::events::EventListener::new(&window, event, move |event| {
        if let Ok(event) = event.clone().dyn_into::<E>() {
            f(event);
        }
    }))
}

/// Runs `f` once after `ms` milliseconds, unless dropped first.
pub use gloo::timers::callback::Timeout;
