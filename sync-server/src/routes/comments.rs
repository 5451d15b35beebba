//! Comment threads: `GET/POST /runs/{runId}/comments`, `PATCH/DELETE
//! /runs/{runId}/comments/{commentId}`, `POST …/resolve` and `…/reopen`. Comments are
//! conversation, not content: they have their own versions and add no run version.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use sqlx::AnyConnection;
use sqlx::any::AnyRow;

use crate::AppState;
use crate::auth::{Role, User, new_id};
use crate::http::{JsonBody, Reply, if_match, optional_if_match};
use crate::idempotency::Replay;
use crate::model::{self, RunRow, Status};
use crate::problem::{Problem, Result};
use crate::routes::{ItemPost, RunList, RunPost, Write, id_param, run_id_param};
use crate::store::{Sql, Tx, get_i64, get_json, get_opt_i64, get_opt_str, get_str};
use crate::validate::{self, Check, Level, text};

const KINDS: [&str; 4] = ["question", "suggestion", "correction", "approval"];

/// Comment columns, with the thread's state from its first comment `t`.
/// A reply shows its thread's anchor as it is now (re-anchored with the thread's first
/// comment, see `passages`).
const COLUMNS: &str = "c.id, c.run_id, c.thread_id, c.parent_id, c.kind, t.anchor AS anchor, \
     c.body_text, c.author, c.created_at, c.edited_at, c.version, c.seq, \
     t.resolved AS t_resolved, t.resolved_by AS t_resolved_by, t.resolved_at AS t_resolved_at, \
     t.outdated AS t_outdated";

fn comment_json(row: &AnyRow) -> Result<Value> {
    let version = get_i64(row, "version")?;
    Ok(json!({
        "id": get_str(row, "id")?,
        "runId": get_str(row, "run_id")?,
        "threadId": get_str(row, "thread_id")?,
        "parentId": get_opt_str(row, "parent_id")?,
        "anchor": get_json(row, "anchor")?,
        "kind": get_opt_str(row, "kind")?,
        "text": get_str(row, "body_text")?,
        "author": get_str(row, "author")?,
        "createdAt": get_str(row, "created_at")?,
        "editedAt": get_opt_str(row, "edited_at")?,
        "resolved": get_i64(row, "t_resolved")? != 0,
        "resolvedBy": get_opt_str(row, "t_resolved_by")?,
        "resolvedAt": get_opt_str(row, "t_resolved_at")?,
        "version": version,
        "etag": crate::http::etag(version),
        "outdated": get_i64(row, "t_outdated")? != 0,
    }))
}

async fn load(conn: &mut AnyConnection, run_id: &str, id: &str) -> Result<Option<AnyRow>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM comments c JOIN comments t ON t.id = c.thread_id \
         WHERE c.run_id = $1 AND c.id = $2"
    );
    Ok(sqlx::query(&sql).bind(run_id.to_owned()).bind(id.to_owned()).fetch_optional(conn).await?)
}

/// The comment as a write in `tx` left it.
async fn reload(tx: &mut Tx, run_id: &str, id: &str) -> Result<Value> {
    let row = load(tx, run_id, id).await?.ok_or_else(|| Problem::internal("comment vanished"))?;
    comment_json(&row)
}

/// Commits a change to a comment and answers with the comment, its version as `ETag`.
async fn commit_change(mut tx: Tx, run_id: &str, id: &str) -> Result<Reply> {
    let out = reload(&mut tx, run_id, id).await?;
    tx.commit().await?;
    let version = out["version"].as_i64().unwrap_or(0);
    Ok(Reply::ok(out).version(version))
}

/// Seed §6: annotators do not see others' comments until review. An annotator reads every
/// comment on a run once it has gone to review (its review rounds are above 0, so it is or
/// was in review, and the conversation stays readable when it is sent back to rework it);
/// before that, only their own. Every other role reads all.
pub fn reads_all_comments(user: &User, run: &RunRow) -> bool {
    user.role != Role::Annotator || run.review_rounds > 0
}

fn not_archived(run: &RunRow) -> Result<()> {
    if run.status == Status::Archived {
        return Err(Problem::forbidden("The run is archived; its comments are read only."));
    }
    Ok(())
}

pub async fn list(State(state): State<AppState>, user: User, mut list: RunList) -> Result<Reply> {
    let step = list.query.int("stepIndex", 0, 1999)?;
    let resolved = list.query.boolean("resolved")?;
    let kind = list.query.one("kind")?;
    if kind.as_deref().is_some_and(|k| !KINDS.contains(&k)) {
        return Err(Problem::bad_param(
            "query.kind",
            format!("must be one of {}", KINDS.join(", ")),
        ));
    }
    let filters = json!(["comments", list.run_id, step, resolved, kind]);
    let mut list = list.open(&state, &user, filters).await?;
    let mut sql = Sql::new(&format!(
        "SELECT {COLUMNS} FROM comments c JOIN comments t ON t.id = c.thread_id WHERE c.run_id = "
    ));
    sql.text(&list.run_id);
    if !reads_all_comments(&user, &list.run) {
        sql.push(" AND c.author = ").text(&user.id);
    }
    if let Some(step) = step {
        sql.push(" AND c.step_index = ").int(step);
    }
    if let Some(resolved) = resolved {
        sql.push(" AND t.resolved = ").int(i64::from(resolved));
    }
    if let Some(kind) = &kind {
        sql.push(" AND c.thread_kind = ").text(kind);
    }
    list.page_by_seq(sql, "c.seq", comment_json).await
}

pub async fn create(State(state): State<AppState>, user: User, post: RunPost) -> Result<Reply> {
    post.write(&state, &user, "comments", create_comment).await
}

async fn create_comment(write: Write<'_>, replay: Replay) -> Result<Reply> {
    let Write { state, user, run_id, body } = write;
    let mut c = Check::default();
    c.body("CommentCreate", body);
    let (text, kind, parent) = (text(body, "text"), text(body, "kind"), text(body, "parentId"));
    if let Some(map) = body.as_object() {
        if let Some(anchor) = map.get("anchor") {
            validate::anchor(anchor, "/anchor", &mut c);
        }
        // The schema's if/then/else, with a message for each case.
        if map.contains_key("parentId") {
            for key in ["anchor", "kind"] {
                if map.contains_key(key) {
                    c.err(
                        &validate::pointer("", key),
                        "a reply inherits its thread's; leave it out",
                    );
                }
            }
        } else {
            for key in ["anchor", "kind"] {
                if !map.contains_key(key) {
                    c.err(&validate::pointer("", key), "is required to start a thread");
                }
            }
        }
    }
    let text = c.finish_with(text)?;

    let mut tx = replay.begin(&state.store).await?;
    let run = model::lock_visible_run(&mut tx, user, run_id).await?;
    not_archived(&run)?;
    let id = new_id();
    let (thread_id, anchor, step_index, thread_kind) = match &parent {
        Some(parent_id) => {
            let parent = load(&mut tx, run_id, parent_id)
                .await?
                .filter(|p| {
                    reads_all_comments(user, &run)
                        || get_str(p, "author").is_ok_and(|a| a == user.id)
                })
                .ok_or_else(|| Problem::invalid("/parentId", "no such comment in this run"))?;
            let thread = get_str(&parent, "thread_id")?;
            let row =
                sqlx::query("SELECT anchor, step_index, thread_kind FROM comments WHERE id = $1")
                    .bind(thread.clone())
                    .fetch_one(&mut *tx)
                    .await?;
            let anchor = get_json(&row, "anchor")?;
            (thread, anchor, get_opt_i64(&row, "step_index")?, get_str(&row, "thread_kind")?)
        }
        None => {
            let kind = kind.clone().unwrap_or_default();
            if kind == "approval" && user.role == Role::Annotator {
                return Err(Problem::forbidden(
                    "Approval threads are for reviewers, qa_managers and admins.",
                ));
            }
            let mut anchor = body.get("anchor").cloned().unwrap_or(Value::Null);
            let step_index = anchor.get("stepIndex").and_then(Value::as_i64);
            check_anchor_target(&mut tx, &run, &mut anchor, step_index).await?;
            (id.clone(), anchor, step_index, kind)
        }
    };
    let seq_row = sqlx::query("SELECT COALESCE(MAX(seq), 0) AS n FROM comments WHERE run_id = $1")
        .bind(run_id.to_owned())
        .fetch_one(&mut *tx)
        .await?;
    let seq = get_i64(&seq_row, "n")? + 1;
    sqlx::query(
        "INSERT INTO comments (id, run_id, thread_id, parent_id, step_index, kind, thread_kind, \
         anchor, body_text, author, created_at, edited_at, resolved, resolved_by, resolved_at, \
         version, seq) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, NULL, 0, NULL, \
         NULL, 1, $12)",
    )
    .bind(id.clone())
    .bind(run_id.to_owned())
    .bind(thread_id)
    .bind(parent.clone())
    .bind(step_index)
    .bind(if body.get("parentId").is_some() { None } else { kind })
    .bind(thread_kind)
    .bind(anchor.to_string())
    .bind(text)
    .bind(user.id.clone())
    .bind(crate::time::now())
    .bind(seq)
    .execute(&mut *tx)
    .await?;
    let out = reload(&mut tx, run_id, &id).await?;
    let target = format!("comment {id}");
    let after = json!({"id": id, "threadId": out["threadId"], "version": 1});
    crate::audit::record(
        &mut tx,
        &user.id,
        "comment.created",
        Some(run_id),
        &target,
        Value::Null,
        after,
    )
    .await?;
    let data = json!({"commentId": id, "threadId": out["threadId"], "parentId": out["parentId"],
        "stepIndex": step_index});
    crate::events::fire(&mut tx, "comment.added", &user.id, Some(run_id), data).await?;
    if let Some(parent_id) = &parent {
        let row = load(&mut tx, run_id, parent_id).await?;
        let parent_author = row.as_ref().map(|r| get_str(r, "author")).transpose()?;
        if let Some(author) = parent_author.filter(|a| *a != user.id) {
            let text = format!("{} replied to your comment on run {run_id}.", user.id);
            crate::events::notify(
                &mut tx,
                &author,
                "comment-reply",
                Some(run_id),
                Some(&id),
                &user.id,
                &text,
            )
            .await?;
        }
    }
    replay.commit(tx, Reply::ok(out).status(StatusCode::CREATED).version(1)).await
}

/// A thread's anchor must point at a step that exists and a field the record has. A range
/// on a text field is a passage: its quote is read from the text (and must be what the
/// client quoted, if it sent one), with its context, so it can be found again after edits.
async fn check_anchor_target(
    tx: &mut Tx,
    run: &RunRow,
    anchor: &mut Value,
    step_index: Option<i64>,
) -> Result<()> {
    let record = match step_index {
        Some(index) => {
            let step = model::load_step(tx, &run.id, index)
                .await?
                .ok_or_else(|| Problem::invalid("/anchor/stepIndex", "no such step in this run"))?;
            step.body
        }
        None => run.header.clone(),
    };
    if let Some(field) = anchor.get("field").and_then(Value::as_str) {
        let expected = if step_index.is_some() { Level::Step } else { Level::Run };
        let pointer = format!("/{}", field.replace('.', "/"));
        if validate::field_path_level(field) != Some(expected)
            || Value::Object(record.clone()).pointer(&pointer).is_none()
        {
            return Err(Problem::invalid("/anchor/field", "is not a field of the anchored record"));
        }
        let text = crate::passages::field_text(&record, field);
        let range = anchor.get("range").filter(|r| r.is_object()).cloned();
        if let (Some(text), Some(range)) = (text, range) {
            let start = range["start"].as_u64().unwrap_or(0) as usize;
            let end = range["end"].as_u64().unwrap_or(0) as usize;
            let passage =
                run_contract::passage::Passage::capture(text, start, end).ok_or_else(|| {
                    Problem::invalid(
                        "/anchor/range",
                        "is not a non-empty range of the field's text",
                    )
                })?;
            if anchor.get("quote").and_then(Value::as_str).is_some_and(|q| q != passage.quote) {
                return Err(Problem::invalid("/anchor/quote", "is not the field's text at range"));
            }
            anchor["quote"] = json!(passage.quote);
            anchor["prefix"] = json!(passage.prefix);
            anchor["suffix"] = json!(passage.suffix);
        }
    }
    Ok(())
}

/// The comment, if the run is visible and holds it, with the run locked.
async fn locked_comment(
    tx: &mut Tx,
    user: &User,
    run_id: &str,
    comment_id: &str,
) -> Result<(RunRow, AnyRow)> {
    let run = model::lock_visible_run(tx, user, run_id).await?;
    let row = load(tx, run_id, comment_id).await?.ok_or_else(|| Problem::not_found("comment"))?;
    Ok((run, row))
}

fn comment_conflict(row: &AnyRow, base: i64) -> Result<Problem> {
    let current = comment_json(row)?;
    let version = get_i64(row, "version")?;
    Ok(Problem::conflict("conflict", "comment", Some(base), Some(version), current, None))
}

pub async fn edit(
    State(state): State<AppState>,
    user: User,
    Path((run_id, comment_id)): Path<(String, String)>,
    headers: HeaderMap,
    JsonBody(body, _): JsonBody,
) -> Result<Reply> {
    let (run_id, comment_id) = (run_id_param(&run_id)?, id_param("commentId", &comment_id)?);
    let base = if_match(&headers)?;
    let mut c = Check::default();
    c.body("CommentEdit", &body);
    let text = c.finish_with(text(&body, "text"))?;
    let mut tx = state.store.begin().await?;
    let (run, row) = locked_comment(&mut tx, &user, &run_id, &comment_id).await?;
    not_archived(&run)?;
    if get_str(&row, "author")? != user.id {
        return Err(Problem::forbidden("Only its author edits a comment."));
    }
    if get_i64(&row, "version")? != base {
        return Err(comment_conflict(&row, base)?);
    }
    sqlx::query(
        "UPDATE comments SET body_text = $2, edited_at = $3, version = version + 1 WHERE id = $1",
    )
    .bind(comment_id.clone())
    .bind(text)
    .bind(crate::time::now())
    .execute(&mut *tx)
    .await?;
    let (before, after) = (json!({"version": base}), json!({"version": base + 1}));
    let target = format!("comment {comment_id}");
    crate::audit::record(
        &mut tx,
        &user.id,
        "comment.edited",
        Some(&run_id),
        &target,
        before,
        after,
    )
    .await?;
    commit_change(tx, &run_id, &comment_id).await
}

pub async fn delete(
    State(state): State<AppState>,
    user: User,
    Path((run_id, comment_id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Response> {
    let (run_id, comment_id) = (run_id_param(&run_id)?, id_param("commentId", &comment_id)?);
    let base = if_match(&headers)?;
    let mut tx = state.store.begin().await?;
    let (run, row) = locked_comment(&mut tx, &user, &run_id, &comment_id).await?;
    let is_admin = user.role == Role::Admin;
    if !is_admin {
        not_archived(&run)?;
    }
    if get_str(&row, "author")? != user.id && !is_admin {
        return Err(Problem::forbidden("Only its author (or an admin) deletes a comment."));
    }
    if get_i64(&row, "version")? != base {
        return Err(comment_conflict(&row, base)?);
    }
    // The comment and, for an admin, every reply below it.
    let mut doomed = vec![comment_id.clone()];
    let mut i = 0;
    while i < doomed.len() {
        let children = sqlx::query("SELECT id FROM comments WHERE run_id = $1 AND parent_id = $2")
            .bind(run_id.clone())
            .bind(doomed[i].clone())
            .fetch_all(&mut *tx)
            .await?;
        if !children.is_empty() && !is_admin {
            return Err(Problem::forbidden(
                "The comment has replies; only an admin deletes it (with its replies).",
            ));
        }
        for child in &children {
            doomed.push(get_str(child, "id")?);
        }
        i += 1;
    }
    for id in doomed.iter().rev() {
        sqlx::query("DELETE FROM comments WHERE id = $1")
            .bind(id.clone())
            .execute(&mut *tx)
            .await?;
        let target = format!("comment {id}");
        crate::audit::record(
            &mut tx,
            &user.id,
            "comment.deleted",
            Some(&run_id),
            &target,
            json!({"id": id}),
            Value::Null,
        )
        .await?;
    }
    tx.commit().await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

pub async fn resolve(State(state): State<AppState>, user: User, post: ItemPost) -> Result<Reply> {
    set_resolved(&state, &user, &post, true).await
}

pub async fn reopen(State(state): State<AppState>, user: User, post: ItemPost) -> Result<Reply> {
    set_resolved(&state, &user, &post, false).await
}

/// Resolves or reopens a thread; its body, if any, says nothing more.
async fn set_resolved(
    state: &AppState,
    user: &User,
    post: &ItemPost,
    resolved: bool,
) -> Result<Reply> {
    let (run_id, comment_id) = (&post.run_id, post.id("commentId")?);
    let base = optional_if_match(&post.headers)?;
    let mut tx = state.store.begin().await?;
    let (_, row) = locked_comment(&mut tx, user, run_id, &comment_id).await?;
    if get_opt_str(&row, "parent_id")?.is_some() {
        return Err(Problem::invalid(
            "path.commentId",
            "is a reply; resolve or reopen a thread on its first comment",
        ));
    }
    let version = get_i64(&row, "version")?;
    if let Some(base) = base.filter(|base| *base != version) {
        return Err(comment_conflict(&row, base)?);
    }
    if (get_i64(&row, "t_resolved")? != 0) != resolved {
        let (by, at) =
            if resolved { (Some(user.id.clone()), Some(crate::time::now())) } else { (None, None) };
        sqlx::query(
            "UPDATE comments SET resolved = $2, resolved_by = $3, resolved_at = $4, \
             version = version + 1 WHERE id = $1",
        )
        .bind(comment_id.clone())
        .bind(i64::from(resolved))
        .bind(by)
        .bind(at)
        .execute(&mut *tx)
        .await?;
        let action = if resolved { "comment.resolved" } else { "comment.reopened" };
        let (before, after) = (json!({"version": version}), json!({"version": version + 1}));
        let target = format!("comment {comment_id}");
        crate::audit::record(&mut tx, &user.id, action, Some(run_id), &target, before, after)
            .await?;
    }
    commit_change(tx, run_id, &comment_id).await
}
