//! The effect layer: the one place the page does IO. It holds the handles (the open
//! database, the spelling dictionary), carries out each [`Effect`] the reducer queued, and
//! reports what happened as actions. It decides nothing a test could check without a
//! browser; components never reach it except through actions (and `use_screenshot`).

mod drafting;
mod exports;
mod hooks;
mod runs;
mod screenshots;
mod team;

use std::cell::RefCell;
use std::rc::Rc;

use annotation_core::grammar;
use annotation_core::lint::TextIssue;
use annotation_core::record::Thought;
use annotation_core::spelling::SpellCheck;
use annotation_core::sync::SyncSettings;
use annotation_core::team::OwnVersion;
use annotation_sync::{Exchanged, Failure};

pub use hooks::{
    use_activity, use_database, use_effects, use_history, use_speller, use_sync_timer,
    use_unload_guard,
};
pub use screenshots::use_screenshot;

use crate::db::Db;
use crate::http;
use crate::language::Scorer;
use crate::state::{Action, Dispatch, Effect, Notice, Progress};

/// The open database, shared by the effects and the screenshots.
#[derive(Clone)]
pub struct DbHandle(pub Rc<Db>);

impl PartialEq for DbHandle {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

/// The spelling dictionary, once loaded; until then thoughts show no spelling issues.
#[derive(Clone)]
pub struct SpellerHandle(pub Rc<dyn SpellCheck>);

impl PartialEq for SpellerHandle {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

thread_local! {
    /// The dictionary once loaded, for the effects that count spelling issues (a save's
    /// quality) as well as for the components, which get it as context.
    static SPELLER: RefCell<Option<Rc<dyn SpellCheck>>> = const { RefCell::new(None) };
    static LOADING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Time spent on the open run since its last save (seed §7.H).
    static ACTIVE: RefCell<(String, annotation_core::metrics::ActiveTime)> =
        RefCell::new((String::new(), Default::default()));
}

/// The dictionary, loading it first if nothing has yet; a load under way is waited for,
/// not started again.
async fn speller() -> Result<Rc<dyn SpellCheck>, String> {
    loop {
        if let Some(loaded) = SPELLER.with(|s| s.borrow().clone()) {
            return Ok(loaded);
        }
        if !LOADING.with(std::cell::Cell::get) {
            break;
        }
        crate::util::yield_now().await;
    }
    LOADING.with(|l| l.set(true));
    let loaded = load_speller().await.map(|s| Rc::new(s) as Rc<dyn SpellCheck>);
    LOADING.with(|l| l.set(false));
    let loaded = loaded?;
    SPELLER.with(|s| *s.borrow_mut() = Some(loaded.clone()));
    Ok(loaded)
}

/// The scorer every stored score comes from, with the dictionary (loaded first if need be);
/// without it, runs are left unscored and the console says why.
async fn scorer() -> Scorer {
    match speller().await {
        Ok(speller) => Scorer::new(Some(speller)),
        Err(why) => {
            web_sys::console::warn_1(&format!("spelling is off, runs stay unscored: {why}").into());
            Scorer::new(None)
        }
    }
}

/// A person's action on `run_id` now: counts towards the time spent annotating it.
fn touch(run_id: &str, now_ms: f64) {
    ACTIVE.with(|active| {
        let mut active = active.borrow_mut();
        if active.0 != run_id {
            *active = (run_id.to_owned(), Default::default());
        }
        active.1.touch(now_ms);
    });
}

/// The time spent on `run_id` since the last call, in ms.
fn take_active(run_id: &str) -> u64 {
    ACTIVE.with(|active| {
        let mut active = active.borrow_mut();
        if active.0 == run_id { active.1.take() } else { 0 }
    })
}

fn notify(dispatch: &Dispatch, ok: bool, text: impl Into<String>) {
    dispatch.dispatch(Action::Notify(Notice { ok, text: text.into() }));
}

/// Shows `label` in the progress bar at `done` of `total` (both 0 before the total is
/// known): how the long exports report as they go.
fn progress(dispatch: &Dispatch, label: &str, done: usize, total: usize) {
    dispatch.dispatch(Action::Progress(Some(Progress { label: label.to_owned(), done, total })));
}

/// Carries out one effect, off the current turn.
pub fn perform(db: Rc<Db>, dispatch: Dispatch, effect: Effect) {
    yew::platform::spawn_local(async move { run(&db, &dispatch, effect).await });
}

async fn run(db: &Db, dispatch: &Dispatch, effect: Effect) {
    match effect {
        Effect::LoadList => runs::load_list(db, dispatch).await,
        Effect::OpenRun { run_id, qa, user, sync } => {
            runs::open_run(db, dispatch, run_id, qa, user, &sync).await
        }
        Effect::ClearQuery => crate::util::set_query(""),
        Effect::SetQuery(query) => crate::util::set_query(&query),
        Effect::PutDraft(mut draft) => {
            draft.saved_at = crate::util::now();
            if let Err(why) = db.put_draft(&draft).await {
                notify(dispatch, false, why);
            }
        }
        Effect::DeleteDraft(run_id) => {
            if let Err(why) = db.delete_draft(&run_id).await {
                notify(dispatch, false, why);
            }
        }
        Effect::Save { before, latest, mut run, steps, author, then_select, grammar } => {
            run.active_ms += take_active(&run.id);
            let edited = (*run, steps);
            let grammar = &grammar[..];
            let save =
                runs::Save { latest: latest.as_deref(), author: &author, then_select, grammar };
            runs::save(db, dispatch, &before, edited, save).await
        }
        Effect::Rollback { current, target, latest, author } => {
            runs::rollback(db, dispatch, &current, &target, &latest, &author).await
        }
        Effect::Export { ids, filter, format, options } => {
            exports::runs(dispatch, ids, filter, format, options).await
        }
        Effect::DraftThoughts { input, screenshot_key, trace_ids } => {
            drafting::ask(db, dispatch, *input, screenshot_key, trace_ids).await
        }
        Effect::Finetune { ids, filter, options } => {
            exports::finetune(dispatch, ids, filter, options).await
        }
        Effect::ImportFile { file, user } => runs::import_file(db, dispatch, file, user).await,
        Effect::ImportText { name, text, user, as_copies } => {
            runs::import_text(db, dispatch, name, text, user, as_copies).await
        }
        Effect::MoveRuns { ids, to, user, settings } => {
            runs::move_runs(db, dispatch, &ids, to, &user, &settings).await
        }
        Effect::Collect { ids, name, user } => {
            runs::collect(db, dispatch, &ids, &name, &user).await
        }
        Effect::Duplicate { run, steps, user } => {
            runs::duplicate(db, dispatch, *run, steps, user).await
        }
        Effect::PutUser(user) => {
            if let Err(why) = db.put_user(&user).await {
                notify(dispatch, false, why);
            }
        }
        Effect::PutComment(comment) => match db.put_comment(&comment).await {
            Ok(()) => load_review(db, dispatch, &comment.run_id).await,
            Err(why) => notify(dispatch, false, why),
        },
        Effect::PutSuggestion { suggestion, notice, sent } => {
            match db.put_suggestion(&suggestion).await {
                Ok(()) => {
                    if sent {
                        dispatch.dispatch(Action::CancelSuggest);
                    }
                    notify(dispatch, true, notice);
                    load_review(db, dispatch, &suggestion.run_id).await;
                }
                Err(why) => notify(dispatch, false, why),
            }
        }
        Effect::DecideOnServer { suggestion, accept, settings, at } => {
            match crate::sync::decide(db, &settings, &suggestion, accept).await {
                Ok((decided, _)) => {
                    dispatch.dispatch(Action::Decided { decided: Box::new(decided), accept, at })
                }
                Err(why) => notify(dispatch, false, why),
            }
        }
        Effect::LoadStarred => dispatch.dispatch(Action::Starred(db.starred().await)),
        Effect::PutTemplate(template) => match db.put_template(&template).await {
            Ok(()) => {
                notify(dispatch, true, "Starred: this step is now in the template library.");
                dispatch.dispatch(Action::Starred(db.starred().await));
            }
            Err(why) => notify(dispatch, false, why),
        },
        Effect::PutCollection(collection) => {
            runs::put_collection(db, dispatch, |all| {
                match all.iter_mut().find(|c| c.name == collection.name) {
                    Some(stored) => stored.description = collection.description.clone(),
                    None => all.push(collection.clone()),
                }
            })
            .await
        }
        Effect::CollectionExported(name) => {
            let at = crate::util::now();
            runs::put_collection(db, dispatch, |all| {
                if let Some(stored) = all.iter_mut().find(|c| c.name == name) {
                    stored.exported_at = Some(at.clone());
                    stored.export_unsent = true;
                }
            })
            .await
        }
        Effect::DeleteCollection(name) => runs::delete_collection(db, dispatch, &name).await,
        Effect::SaveTemplate(template) => match db.put_template(&template).await {
            Ok(()) => {
                notify(dispatch, true, format!("Template “{}” saved.", template.name));
                dispatch.dispatch(Action::Starred(db.starred().await));
            }
            Err(why) => notify(dispatch, false, why),
        },
        Effect::DeleteTemplate(id) => match db.delete_template(&id).await {
            Ok(()) => {
                notify(dispatch, true, "Template deleted from the library.");
                dispatch.dispatch(Action::Starred(db.starred().await));
            }
            Err(why) => notify(dispatch, false, why),
        },
        Effect::CheckGrammar { endpoint, run_id, step_index, thoughts } => {
            let result = check_grammar(&endpoint, thoughts).await;
            dispatch.dispatch(Action::GrammarChecked { run_id, step_index, result });
        }
        Effect::SaveSettings { settings, grammar } => {
            if let Err(why) = db.put_grammar_endpoint(&grammar).await {
                return notify(dispatch, false, why);
            }
            dispatch.dispatch(Action::Grammar(grammar));
            match db.put_sync_settings(&settings).await {
                Ok(()) => {
                    dispatch.dispatch(Action::SyncSettings(settings));
                    // The pill shows how it goes from here.
                    dispatch.dispatch(Action::SyncOpen(false));
                }
                Err(why) => notify(dispatch, false, why),
            }
        }
        Effect::ResolveConflict { conflict, mine } => {
            let result = if mine {
                crate::sync::keep_mine(db, &conflict).await
            } else {
                crate::sync::take_theirs(db, &conflict).await
            };
            match result {
                Ok(()) => {
                    let text = if mine {
                        "Keeping your copy: it goes to the server now."
                    } else {
                        "Took the server's copy."
                    };
                    notify(dispatch, true, text);
                    dispatch.dispatch(Action::SyncKick);
                }
                Err(why) => notify(dispatch, false, why),
            }
        }
        Effect::Discard(pending) => match crate::sync::discard(db, &pending).await {
            Ok(()) => dispatch.dispatch(Action::SyncKick),
            Err(why) => notify(dispatch, false, why),
        },
        Effect::Team { settings, request } => team::carry(dispatch, &settings, request).await,
        Effect::SyncRound { settings, failures, open_run } => {
            let exchange = |user, own| exchange(settings.clone(), user, own);
            let round =
                crate::sync::round(db, &settings, failures, open_run.as_deref(), exchange).await;
            dispatch.dispatch(Action::RoundDone(Box::new(round)));
        }
    }
}

/// A sync round's exchange with the server (push, pull), run by the transfer module: the
/// page's bundle carries no push or pull.
async fn exchange(settings: SyncSettings, user: String, own: Vec<OwnVersion>) -> Exchanged {
    let answer = async {
        let (settings, own) = (crate::modules::json(&settings)?, crate::modules::json(&own)?);
        let args = js_sys::Array::of3(&settings.into(), &user.into(), &own.into());
        let answer = crate::modules::call(crate::modules::TRANSFER, "exchange", &args).await?;
        Ok::<_, String>(answer.as_string().unwrap_or_default())
    };
    match answer.await {
        Ok(text) => Exchanged::from_json(&text),
        Err(why) => Exchanged {
            failure: Some(Failure::Refused(format!("the sync did not start: {why}"))),
            ..Exchanged::default()
        },
    }
}

/// Reloads a run's comments and suggestions from storage into the state.
async fn load_review(db: &Db, dispatch: &Dispatch, run_id: &str) {
    match db.review(run_id).await {
        Ok((comments, suggestions)) => dispatch.dispatch(Action::Review { comments, suggestions }),
        Err(why) => notify(dispatch, false, why),
    }
}

/// Asks the grammar server about each thought; the reducer keeps an answer only while its
/// text is unchanged.
async fn check_grammar(
    endpoint: &str,
    thoughts: Vec<(Thought, String)>,
) -> Result<Vec<(Thought, String, Vec<TextIssue>)>, String> {
    let mut out = Vec::new();
    for (which, text) in thoughts {
        if text.trim().is_empty() {
            continue;
        }
        let form = wasm_bindgen::JsValue::from(grammar::request_body(&text, "en-US"));
        let headers = [("Content-Type", "application/x-www-form-urlencoded")];
        let response = http::fetch("POST", &grammar::check_url(endpoint), &headers, Some(&form))
            .await
            .map_err(|()| format!("The grammar server at {endpoint} does not answer."))?;
        if !response.ok() {
            return Err(format!("The grammar server answered {}.", response.status()));
        }
        let body = http::text(&response).await;
        let issues = grammar::parse_response(which, &text, &body)?;
        out.push((which, text, issues));
    }
    Ok(out)
}

/// Reads the bundled Hunspell dictionary (`dictionaries/en_US.*`, from Debian's
/// `hunspell-en-us`) and builds the speller in the spelling module.
async fn load_speller() -> Result<crate::spelling::ModuleSpeller, String> {
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
    crate::spelling::load(&aff, &dic).await
}
