//! A round's collections (curators only; the server refuses annotators): what changed here
//! since the server's copy was read goes up, then the server's list and membership come
//! back (`annotation_core::collections::sync`).

use std::collections::BTreeSet;

use annotation_core::collections::sync::{self as plan, Write};
use annotation_core::record::Run;
use annotation_core::sync::SyncSettings;
use annotation_store::Store;
use run_contract::url::component_encode;

use super::{Failure, Precondition, RequestBody, all_pages, request, request_with};
use crate::RoundDone;

pub(super) async fn round(
    db: &Store,
    settings: &SyncSettings,
    runs: &[Run],
    out: &mut RoundDone,
) -> Result<(), Failure> {
    let refused = |why: String| Failure::Refused(why);
    let before = db.collections().await;
    let mut local = before.clone();
    let on_server: BTreeSet<String> =
        runs.iter().filter(|r| r.server_version.is_some()).map(|r| r.id.clone()).collect();
    let names = || runs.iter().map(|r| (r.id.as_str(), r.collections.as_slice()));
    let mut server = plan::read(&all_pages(settings, "/collections").await?);
    plan::adopt(&mut local, &server);
    let writes = plan::writes(&local, &plan::members(names()), &on_server);
    let (mut kept, mut problems) = (BTreeSet::new(), Vec::new());
    for write in &writes {
        match send(settings, write).await {
            Ok(true) => {}
            // Made elsewhere under this name meanwhile: the next round adopts it.
            Ok(false) => {
                kept.insert(write.name().to_owned());
            }
            Err(Failure::Refused(why) | Failure::TooLarge(why)) => {
                kept.insert(write.name().to_owned());
                problems.push(format!("the collection “{}”: {why}", write.name()));
            }
            Err(unreachable) => return Err(unreachable),
        }
    }
    if !writes.is_empty() {
        server = plan::read(&all_pages(settings, "/collections").await?);
    }
    let merged = plan::merge(&local, &server, &kept);
    let read = runs.iter().map(|r| (r.id.clone(), r.collections.clone())).collect();
    let changed = db.take_memberships(&read, &merged, &on_server, &kept).await.map_err(refused)?;
    let now = plan::meanwhile(merged, &before, &db.collections().await);
    db.put_collections(&now).await.map_err(refused)?;
    out.pulled.extend(changed);
    out.collections = Some(now);
    match problems.first() {
        None => Ok(()),
        Some(first) => Err(Failure::Refused(format!("the server refused {first}"))),
    }
}

/// One write; `false` when a new collection's name was taken on the server meanwhile. A
/// `409` on an edit (changed elsewhere since it was read) is sent again once, on the
/// version there now: adds and removes say what changed here, not the whole list.
async fn send(settings: &SyncSettings, write: &Write) -> Result<bool, Failure> {
    let (method, path, body, version) = match write {
        Write::Create { body, .. } => ("POST", "/collections".to_owned(), Some(body), None),
        Write::Edit { id, version, body, .. } => {
            ("PATCH", format!("/collections/{}", component_encode(id)), Some(body), Some(*version))
        }
        Write::Delete { id, version, .. } => {
            ("DELETE", format!("/collections/{}", component_encode(id)), None, Some(*version))
        }
    };
    let json = || body.cloned().map(RequestBody::Json);
    let precondition = version.map_or(Precondition::None, Precondition::Match);
    let (status, _) = match request_with(settings, method, &path, json(), precondition).await {
        // Deleted elsewhere already: nothing left to do.
        Err(Failure::Refused(why)) if why.ends_with("(404)") && version.is_some() => {
            return Ok(true);
        }
        other => other?,
    };
    if status != 409 {
        return Ok(true);
    }
    if version.is_none() {
        return Ok(false);
    }
    let (_, now) = request(settings, "GET", &path, None).await?;
    let Some(now) = plan::read(std::slice::from_ref(&now)).pop() else { return Ok(true) };
    let retry = Precondition::Match(now.shared.version);
    let (status, answer) = request_with(settings, method, &path, json(), retry).await?;
    if status == 409 {
        return Err(Failure::Refused(annotation_core::sync::problem_text(&answer)));
    }
    Ok(true)
}
