//! Runs in storage: the list, opening, saving, rollbacks, imports, batch edits.

use annotation_core::history::Version;
use annotation_core::import;
use annotation_core::query::RunSummary;
use annotation_core::record::{ReviewStatus, Run, Step};
use annotation_core::review::ApprovalCheck;
use annotation_core::roles::User;
use annotation_core::sync::SyncSettings;
use annotation_core::team::BatchMoved;

use super::{notify, scorer};
use crate::db::{Db, Edit};
use crate::state::editor::Loaded;
use crate::state::list::ListAction;
use crate::state::{Action, Dispatch, Route};
use crate::util::{now, query_string, set_query};

/// Loads the runs list into the state.
pub async fn load_list(db: &Db, dispatch: &Dispatch) {
    // What is stored shows at once; the check against the runs follows, and replaces it
    // only if a run changed since.
    let shown = db.stored_summaries().await;
    if let Some(stored) = &shown {
        dispatch.dispatch(Action::ListLoaded(stored.clone()));
    }
    match db.summaries().await {
        Ok(checked) => {
            let stamp = |list: &[RunSummary]| {
                let mut stamps: Vec<(String, String, u32)> = list
                    .iter()
                    .map(|s| (s.run_id.clone(), s.updated_at.clone(), s.version))
                    .collect();
                lean::sort(&mut stamps);
                stamps
            };
            if shown.as_deref().is_none_or(|stored| stamp(stored) != stamp(&checked)) {
                dispatch.dispatch(Action::ListLoaded(checked));
            }
        }
        Err(why) => return notify(dispatch, false, why),
    }
    dispatch.dispatch(Action::Collections(db.collections().await));
    // The list is on screen; the search index follows.
    match db.search_texts().await {
        Ok(texts) => dispatch.dispatch(Action::List(ListAction::Texts(texts))),
        Err(why) => notify(dispatch, false, why),
    }
}

/// Opens the run `run_id` (review mode when `qa`) with its stored unsaved edits. A run not
/// stored here is fetched from the sync server when one is set (seed §3: the backend first,
/// else what is local); otherwise, or if the server has none either, it is missing.
pub async fn open_run(
    db: &Db,
    dispatch: &Dispatch,
    run_id: String,
    qa: bool,
    user: User,
    sync: &SyncSettings,
) {
    let mut found = db.run(&run_id).await;
    if matches!(found, Ok(None)) && sync.enabled() {
        match crate::sync::fetch_run(db, sync, &run_id).await {
            Ok(true) => found = db.run(&run_id).await,
            Ok(false) => {}
            Err(why) => {
                notify(dispatch, false, format!("The sync server could not be asked: {why}"))
            }
        }
    }
    match found {
        Ok(Some(data)) => {
            let route = Route {
                run_id: Some(run_id.clone()),
                task_id: Some(data.run.task_id.clone()),
                qa,
                step: None,
            };
            if query_string() != route.query() {
                set_query(&route.query());
            }
            let draft = db.draft(&data.run.id).await;
            let unscored = data.run.quality.is_none();
            dispatch.dispatch(Action::RunLoaded(Box::new(Loaded { data, qa, user, draft })));
            // A run never scored (captured, or synced from elsewhere) is scored as it opens,
            // once the dictionary is here; the editor shows first.
            if unscored {
                match db.score_unscored(&run_id, &scorer().await).await {
                    Ok(Some(quality)) => dispatch.dispatch(Action::Scored { run_id, quality }),
                    Ok(None) => {}
                    Err(why) => notify(dispatch, false, why),
                }
            }
        }
        Ok(None) => dispatch.dispatch(Action::RunMissing(run_id)),
        Err(why) => notify(dispatch, false, why),
    }
}

/// How a save goes besides what it stores.
pub struct Save<'a> {
    pub latest: Option<&'a Version>,
    pub author: &'a str,
    pub then_select: Option<usize>,
    /// Grammar issues found in the text saved (step index, count): they count in the score
    /// beside the spelling.
    pub grammar: &'a [(u32, usize)],
}

/// Stores the editor's drafts as one version, scored whatever it changed.
pub async fn save(
    db: &Db,
    dispatch: &Dispatch,
    before: &(Run, Vec<Step>),
    (run, steps): (Run, Vec<Step>),
    how: Save<'_>,
) {
    let Save { latest, author, then_select, grammar } = how;
    let (at, scorer) = (now(), scorer().await);
    let before = (&before.0, &before.1[..]);
    match db.save(before, latest, run, steps, (author, &at), (&scorer, grammar)).await {
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
}

pub async fn rollback(
    db: &Db,
    dispatch: &Dispatch,
    current: &(Run, Vec<Step>),
    target: &Version,
    latest: &Version,
    author: &str,
) {
    let scorer = scorer().await;
    let current = (&current.0, &current.1[..]);
    match db.rollback(current, (target, latest), (author, &now()), &scorer).await {
        Ok(saved) => {
            let n = saved.versions.last().map(|v| v.number).unwrap_or_default();
            dispatch.dispatch(Action::Saved {
                run: Box::new(saved.run),
                steps: saved.steps,
                versions: saved.versions,
                then_select: None,
            });
            let number = target.number;
            notify(
                dispatch,
                true,
                format!("Rolled back to version {number}, saved as version {n}."),
            );
        }
        Err(why) => notify(dispatch, false, why),
    }
}

/// Imports a file: all of it, or nothing with every problem listed.
pub async fn import_file(db: &Db, dispatch: &Dispatch, file: web_sys::File, user: User) {
    let name = file.name();
    match wasm_bindgen_futures::JsFuture::from(file.text()).await {
        Ok(text) => {
            let text = text.as_string().unwrap_or_default();
            import_text(db, dispatch, name, text, user, false).await
        }
        Err(_) => notify(dispatch, false, format!("Could not read {name}.")),
    }
}

/// Imports `text`; with `as_copies`, runs whose ids exist here come in under new ids.
pub async fn import_text(
    db: &Db,
    dispatch: &Dispatch,
    name: String,
    text: String,
    user: User,
    as_copies: bool,
) {
    dispatch.dispatch(Action::Rejections(Vec::new()));
    // As copies, ids already here are no fault: the runs get new ones.
    let existing = match db.run_ids().await {
        Ok(_) if as_copies => Vec::new(),
        Ok(ids) => ids,
        Err(why) => return notify(dispatch, false, why),
    };
    let parsed = match read_import(&name, &text, existing).await {
        Ok(parsed) if as_copies => {
            parsed.map(|runs| import::as_copies(import::Batch { runs }, crate::util::new_id))
        }
        Ok(parsed) => parsed.map(|runs| import::Batch { runs }),
        Err(why) => return notify(dispatch, false, format!("Nothing was imported: {why}")),
    };
    match parsed {
        Err((lines, copyable)) => {
            let count = lines.len();
            dispatch.dispatch(Action::Rejections(lines));
            if copyable {
                dispatch.dispatch(Action::CopyableImport(Some((name.clone(), text))));
            }
            notify(
                dispatch,
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
            match db.import(&batch.runs, (&user.name, &now()), &scorer().await).await {
                Ok(()) => {
                    dispatch.dispatch(Action::CopyableImport(None));
                    let copies = if as_copies { " as copies" } else { "" };
                    notify(
                        dispatch,
                        true,
                        format!("Imported {runs} runs ({steps} steps) from {name}{copies}."),
                    );
                    load_list(db, dispatch).await;
                }
                Err(why) => notify(dispatch, false, format!("Nothing was imported: {why}")),
            }
        }
    }
}

/// The import file read and checked by the transfer module (`read_import`): its runs, or
/// the problems, one a line, and whether ids already here were the only fault.
async fn read_import(
    name: &str,
    text: &str,
    existing: Vec<String>,
) -> Result<Result<Vec<(Run, Vec<Step>)>, (Vec<String>, bool)>, String> {
    let ids = js_sys::Array::new();
    for id in existing {
        ids.push(&id.into());
    }
    let args = js_sys::Array::of3(&name.into(), &text.into(), &ids);
    let answer = crate::modules::call(crate::modules::TRANSFER, "read_import", &args)
        .await?
        .as_string()
        .ok_or("the import was not read")?;
    let mut answer: serde_json::Value =
        serde_json::from_str(&answer).map_err(|e| format!("the import was not read: {e}"))?;
    if answer.get("runs").is_some() {
        let runs = serde_json::from_value(answer["runs"].take())
            .map_err(|e| format!("the import was not read: {e}"))?;
        return Ok(Ok(runs));
    }
    let lines = serde_json::from_value(answer["rejections"].take()).unwrap_or_default();
    Ok(Err((lines, answer["copyable"] == true)))
}

/// Stores a copy of a run and opens it.
pub async fn duplicate(db: &Db, dispatch: &Dispatch, run: Run, steps: Vec<Step>, user: User) {
    let id = run.id.clone();
    match db.import(&[(run, steps)], (&user.name, &now()), &scorer().await).await {
        Ok(()) => {
            notify(dispatch, true, "Duplicated: this is the copy.");
            open_run(db, dispatch, id, false, user, &SyncSettings::default()).await;
        }
        Err(why) => notify(dispatch, false, why),
    }
}

/// Moves runs to `to` (batch approve or submit). With a sync server, runs it holds and
/// with nothing queued here move there, in one `runs:batchTransition` (the server judges
/// each, pending suggestions included); the rest, or all when the server cannot be reached,
/// move here as saved versions, replayed by the next round. Runs not moved are named in
/// the notice with why.
pub async fn move_runs(
    db: &Db,
    dispatch: &Dispatch,
    ids: &[String],
    to: ReviewStatus,
    user: &User,
    settings: &SyncSettings,
) {
    let (mut moved, mut refused) = (0, Vec::new());
    let mut here: Vec<String> = ids.to_vec();
    if settings.enabled() {
        let queued = db.queued().await.unwrap_or_default();
        let mut on_server = Vec::new();
        let mut prompts = std::collections::HashMap::new();
        here.clear();
        for id in ids {
            let run = db.run_and_steps(id).await.ok().flatten().map(|(r, _)| r);
            let waiting = queued.iter().any(|(_, q)| q.pending.run_id() == id);
            match run.and_then(|r| Some((r.server_version?, r.task_prompt))) {
                Some((version, prompt)) if !waiting => {
                    prompts.insert(id.clone(), prompt);
                    on_server.push((id.clone(), version));
                }
                _ => here.push(id.clone()),
            }
        }
        match crate::sync::move_runs(db, settings, to, &on_server).await {
            Ok(Some(results)) => {
                for result in results {
                    match result {
                        BatchMoved::Moved { .. } => moved += 1,
                        BatchMoved::Refused { run_id, why } => {
                            let prompt =
                                prompts.get(&run_id).map_or(run_id.as_str(), String::as_str);
                            refused.push(format!(
                                "{} ({})",
                                short(prompt),
                                why.trim_end_matches('.')
                            ));
                        }
                    }
                }
            }
            // Offline: they move here, and the next round replays the moves.
            Ok(None) => here.extend(on_server.into_iter().map(|(id, _)| id)),
            Err(why) => refused.push(format!("the server refused the batch: {why}")),
        }
    }
    let scorer = scorer().await;
    for id in &here {
        // The single Approve's rule: a suggestion its author has not decided refuses it.
        let waiting = match to {
            ReviewStatus::Approved => match db.review(id).await {
                Ok((_, suggestions)) => ApprovalCheck::of(&[], &suggestions).refusal(),
                Err(why) => Some(why),
            },
            _ => None,
        };
        let edited = db
            .edit_run(id, (&user.name, &now()), &scorer, |run| {
                if let Some(why) = &waiting {
                    return Edit::Skip(format!("{} ({why})", short(&run.task_prompt)));
                }
                let allowed = annotation_core::roles::permitted(
                    user,
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
                annotation_core::roles::move_run(run, to, user);
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
    notify(dispatch, refused.is_empty(), text);
    dispatch.dispatch(Action::List(ListAction::PickShown(false)));
    if moved > 0 && settings.enabled() {
        dispatch.dispatch(Action::SyncKick);
    }
    load_list(db, dispatch).await;
}

/// Adds runs to a named collection (seed §7.D), each change a saved version.
pub async fn collect(db: &Db, dispatch: &Dispatch, ids: &[String], name: &str, user: &User) {
    let mut added = 0;
    let scorer = scorer().await;
    for id in ids {
        let edited = db
            .edit_run(id, (&user.name, &now()), &scorer, |run| {
                if run.collections.iter().any(|c| c == name) {
                    return Edit::Skip(String::new());
                }
                run.collections.push(name.to_owned());
                Edit::Save
            })
            .await;
        match edited {
            Ok(Edit::Save) => added += 1,
            Ok(Edit::Skip(_)) => {}
            Err(why) => return notify(dispatch, false, why),
        }
    }
    let at = now();
    put_collection(db, dispatch, |all| {
        annotation_core::collections::ensure(all, name, &user.name, &at)
    })
    .await;
    notify(
        dispatch,
        true,
        format!(
            "Added {added} run{} to the collection “{name}”.",
            if added == 1 { "" } else { "s" }
        ),
    );
    load_list(db, dispatch).await;
}

/// Deletes a collection: its runs stay, without its name. One the server has is kept as
/// deleted until a round deletes it there.
pub async fn delete_collection(db: &Db, dispatch: &Dispatch, name: &str) {
    let renamed = db
        .rename_collections(|_, names| {
            names
                .iter()
                .any(|n| n == name)
                .then(|| names.iter().filter(|n| *n != name).cloned().collect())
        })
        .await;
    if let Err(why) = renamed {
        return notify(dispatch, false, why);
    }
    put_collection(db, dispatch, |all| {
        all.retain(|c| c.name != name || c.shared.is_some());
        if let Some(shared) = all.iter_mut().find(|c| c.name == name) {
            shared.deleted = true;
        }
    })
    .await;
    notify(dispatch, true, format!("Deleted the collection “{name}”; its runs stay."));
    load_list(db, dispatch).await;
}

/// Changes the stored collections with `edit`, then shows them.
pub async fn put_collection(
    db: &Db,
    dispatch: &Dispatch,
    edit: impl FnOnce(&mut Vec<annotation_core::collections::Collection>),
) {
    let mut all = db.collections().await;
    edit(&mut all);
    match db.put_collections(&all).await {
        Ok(()) => {
            dispatch.dispatch(Action::Collections(all));
            // A team's collections go to the server at once.
            dispatch.dispatch(Action::SyncKick);
        }
        Err(why) => notify(dispatch, false, why),
    }
}

fn short(text: &str) -> String {
    let mut out: String = text.chars().take(40).collect();
    if text.chars().count() > 40 {
        out.push('…');
    }
    out
}
