//! Suggestions, the reviewers' tracked changes: `GET/POST /runs/{runId}/suggestions`,
//! `DELETE /runs/{runId}/suggestions/{suggestionId}` (withdraw), `POST …/accept` and
//! `POST …/reject`.
//!
//! A suggestion proposes a new value for one field of one step, made against the step
//! version the reviewer was reading, with the field's value then kept as `original`.
//! Accepting it is a step save like any other (one run version, kind `suggestion-accepted`,
//! by the accepter, with the changed paths), under two checks: `If-Match` names the step
//! version the accepter is looking at, and the field must still hold `original` — a
//! suggestion made against text that changed since is a `409` carrying the current step,
//! never a silent overwrite. Creating, rejecting and withdrawing add no run version.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde_json::{Map, Value, json};
use sqlx::AnyConnection;
use sqlx::any::AnyRow;

use crate::AppState;
use crate::auth::{Role, User, new_id};
use crate::http::{Reply, if_match};
use crate::idempotency::Replay;
use crate::model::{self, Entry, RunRow, Status};
use crate::problem::{Problem, Result};
use crate::routes::{ItemPost, RunList, RunPost, Write, id_param, run_id_param};
use crate::store::{Sql, Tx, get_i64, get_json, get_opt_i64, get_opt_str, get_str};
use crate::validate::{self, Check, step_editable};

const STATES: [&str; 4] = ["pending", "accepted", "rejected", "withdrawn"];

/// Suggestion columns, with the current body of its step (`step_body`) for `outdated`.
const COLUMNS: &str = "g.id, g.run_id, g.step_index, g.field, g.base_version, g.original, \
     g.proposed, g.note, g.author, g.created_at, g.state, g.decided_by, g.decided_at, \
     g.decision_note, g.applied_version, g.seq, g.passage, s.body AS step_body";

const FROM: &str =
    "FROM suggestions g LEFT JOIN steps s ON s.run_id = g.run_id AND s.idx = g.step_index";

/// The field's current value in a step (null where the step has none, e.g. `action.value`).
fn current_value(step: &Map<String, Value>, field: &str) -> Value {
    validate::value_at(step, field).cloned().unwrap_or(Value::Null)
}

fn suggestion_json(row: &AnyRow) -> Result<Value> {
    let field = get_str(row, "field")?;
    let original = get_json(row, "original")?;
    let state = get_str(row, "state")?;
    let passage: Option<Value> =
        get_opt_str(row, "passage")?.and_then(|p| serde_json::from_str(&p).ok());
    let outdated = match get_opt_str(row, "step_body")? {
        _ if passage.is_some() => {
            state == "pending"
                && passage.as_ref().and_then(|p| p.get("outdated")).and_then(Value::as_bool)
                    == Some(true)
        }
        Some(body) if state == "pending" => {
            let body: Value = serde_json::from_str(&body).map_err(Problem::internal)?;
            let body = body.as_object().ok_or_else(|| Problem::internal("bad stored step"))?;
            current_value(body, &field) != original
        }
        _ => false,
    };
    Ok(json!({
        "id": get_str(row, "id")?,
        "runId": get_str(row, "run_id")?,
        "stepIndex": get_i64(row, "step_index")?,
        "field": field,
        "baseVersion": get_i64(row, "base_version")?,
        "original": original,
        "proposed": get_json(row, "proposed")?,
        "note": get_opt_str(row, "note")?,
        "author": get_str(row, "author")?,
        "createdAt": get_str(row, "created_at")?,
        "state": state,
        "decidedBy": get_opt_str(row, "decided_by")?,
        "decidedAt": get_opt_str(row, "decided_at")?,
        "decisionNote": get_opt_str(row, "decision_note")?,
        "appliedVersion": get_opt_i64(row, "applied_version")?,
        "passage": passage.as_ref().and_then(crate::passages::passage_from_json)
            .map(|p| crate::passages::passage_json(&p)),
        "outdated": outdated,
    }))
}

async fn load(conn: &mut AnyConnection, run_id: &str, id: &str) -> Result<Option<AnyRow>> {
    let sql = format!("SELECT {COLUMNS} {FROM} WHERE g.run_id = $1 AND g.id = $2");
    Ok(sqlx::query(&sql).bind(run_id.to_owned()).bind(id.to_owned()).fetch_optional(conn).await?)
}

async fn reload(conn: &mut AnyConnection, run_id: &str, id: &str) -> Result<Value> {
    let row = load(conn, run_id, id).await?.ok_or_else(|| Problem::internal("gone"))?;
    suggestion_json(&row)
}

pub async fn list(State(state): State<AppState>, user: User, mut list: RunList) -> Result<Reply> {
    let wanted = list.query.one("state")?;
    if wanted.as_deref().is_some_and(|s| !STATES.contains(&s)) {
        return Err(Problem::bad_param(
            "query.state",
            format!("must be one of {}", STATES.join(", ")),
        ));
    }
    let step = list.query.int("stepIndex", 0, 1999)?;
    let filters = json!(["suggestions", list.run_id, wanted, step]);
    let mut list = list.open(&state, &user, filters).await?;
    let mut sql = Sql::new(&format!("SELECT {COLUMNS} {FROM} WHERE g.run_id = "));
    sql.text(&list.run_id);
    if let Some(wanted) = &wanted {
        sql.push(" AND g.state = ").text(wanted);
    }
    if let Some(step) = step {
        sql.push(" AND g.step_index = ").int(step);
    }
    list.page_by_seq(sql, "g.seq", suggestion_json).await
}

pub async fn create(State(state): State<AppState>, user: User, post: RunPost) -> Result<Reply> {
    post.write(&state, &user, "suggestions", create_suggestion).await
}

async fn create_suggestion(write: Write<'_>, replay: Replay) -> Result<Reply> {
    let Write { state, user, run_id, body } = write;
    let mut c = Check::default();
    let input = validate::suggestion_create(body, &mut c);
    let input = c.finish_with(input)?;
    let mut tx = replay.begin(&state.store).await?;
    let run = model::lock_visible_run(&mut tx, user, run_id).await?;
    if user.role == Role::Annotator {
        return Err(Problem::forbidden(
            "Annotators edit their runs directly and decide on suggestions; reviewers, \
             qa_managers and admins make them.",
        ));
    }
    if !run.status.editable() {
        return Err(Problem::forbidden(format!(
            "The run is {}; suggestions are made while it is a draft or in review.",
            run.status.as_str()
        )));
    }
    let index = input.step_index;
    let step = model::load_step(&mut tx, run_id, index)
        .await?
        .ok_or_else(|| Problem::invalid("/stepIndex", "no such step in this run"))?;
    let base = input.base_version;
    if step.version > base || base > run.version {
        return Err(model::step_conflict(&mut tx, run_id, &step, base).await?);
    }
    let Some(original) = validate::value_at(&step.body, &input.field)
        .cloned()
        .or_else(|| (input.field == "action.value").then_some(Value::Null))
    else {
        return Err(Problem::invalid("/field", "the step has no such entry"));
    };
    let passage = match &input.range {
        Some((start, end, quote)) => {
            let text = crate::passages::field_text(&step.body, &input.field).unwrap_or("");
            let passage = run_contract::passage::Passage::capture(text, *start, *end)
                .ok_or_else(|| Problem::invalid("/range", "is not a range of the field's text"))?;
            if passage.quote != *quote {
                return Err(Problem::invalid("/quote", "is not the field's text at range"));
            }
            if input.proposed.as_str() == Some(quote.as_str()) {
                return Err(Problem::invalid("/proposed", "is the passage's current text"));
            }
            Some(crate::passages::passage_json(&passage).to_string())
        }
        None => None,
    };
    if passage.is_none() && original == input.proposed {
        return Err(Problem::invalid("/proposed", "is the field's current value"));
    }
    let seq_row =
        sqlx::query("SELECT COALESCE(MAX(seq), 0) AS n FROM suggestions WHERE run_id = $1")
            .bind(run_id.to_owned())
            .fetch_one(&mut *tx)
            .await?;
    let seq = get_i64(&seq_row, "n")? + 1;
    let id = new_id();
    sqlx::query(
        "INSERT INTO suggestions (id, run_id, step_index, field, base_version, original, \
         proposed, note, author, created_at, state, decided_by, decided_at, decision_note, \
         applied_version, seq, passage) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, \
         'pending', NULL, NULL, NULL, NULL, $11, $12)",
    )
    .bind(id.clone())
    .bind(run_id.to_owned())
    .bind(index)
    .bind(input.field)
    .bind(base)
    .bind(original.to_string())
    .bind(input.proposed.to_string())
    .bind(input.note)
    .bind(user.id.clone())
    .bind(crate::time::now())
    .bind(seq)
    .bind(passage)
    .execute(&mut *tx)
    .await?;
    let out = reload(&mut tx, run_id, &id).await?;
    let target = format!("suggestion {id}");
    crate::audit::record(
        &mut tx,
        &user.id,
        "suggestion.created",
        Some(run_id),
        &target,
        Value::Null,
        json!({"id": id}),
    )
    .await?;
    replay.commit(tx, Reply::ok(out).status(StatusCode::CREATED)).await
}

/// The suggestion, if the run is visible and holds it, with the run locked.
async fn locked(tx: &mut Tx, user: &User, run_id: &str, id: &str) -> Result<(RunRow, AnyRow)> {
    let run = model::lock_visible_run(tx, user, run_id).await?;
    let row = load(tx, run_id, id).await?.ok_or_else(|| Problem::not_found("suggestion"))?;
    Ok((run, row))
}

/// `409 not-pending` unless the suggestion is pending.
fn pending(row: &AnyRow) -> Result<()> {
    if get_str(row, "state")? == "pending" {
        return Ok(());
    }
    let current = suggestion_json(row)?;
    Err(Problem::conflict("not-pending", "suggestion", None, None, current, None)
        .detail(format!("The suggestion is {} already.", get_str(row, "state")?)))
}

/// The run's annotator, a qa_manager or an admin decide on suggestions.
fn may_decide(user: &User, run: &RunRow) -> Result<()> {
    let owner = user.role == Role::Annotator && run.annotator == user.id;
    if owner || user.is_manager() {
        Ok(())
    } else {
        Err(Problem::forbidden(
            "The run's annotator, a qa_manager or an admin accepts or rejects suggestions.",
        ))
    }
}

fn not_archived(run: &RunRow) -> Result<()> {
    if run.status == Status::Archived {
        return Err(Problem::forbidden("The run is archived; its review is closed."));
    }
    Ok(())
}

/// Ends a pending suggestion unapplied, as `state` (`withdrawn` or `rejected`): decided by
/// the caller now, audited; answers the suggestion as it is then.
async fn close(
    tx: &mut Tx,
    user: &User,
    run_id: &str,
    id: &str,
    state: &str,
    note: Option<String>,
) -> Result<Value> {
    sqlx::query(
        "UPDATE suggestions SET state = $2, decided_by = $3, decided_at = $4, \
         decision_note = $5 WHERE id = $1",
    )
    .bind(id.to_owned())
    .bind(state.to_owned())
    .bind(user.id.clone())
    .bind(crate::time::now())
    .bind(note)
    .execute(&mut **tx)
    .await?;
    let (before, after) = (json!({"state": "pending"}), json!({"state": state}));
    let (action, target) = (format!("suggestion.{state}"), format!("suggestion {id}"));
    crate::audit::record(tx, &user.id, &action, Some(run_id), &target, before, after).await?;
    reload(tx, run_id, id).await
}

pub async fn withdraw(
    State(state): State<AppState>,
    user: User,
    Path((run_id, id)): Path<(String, String)>,
) -> Result<Reply> {
    let (run_id, id) = (run_id_param(&run_id)?, id_param("suggestionId", &id)?);
    let mut tx = state.store.begin().await?;
    let (run, row) = locked(&mut tx, &user, &run_id, &id).await?;
    if get_str(&row, "author")? != user.id {
        return Err(Problem::forbidden("Only its author withdraws a suggestion."));
    }
    not_archived(&run)?;
    pending(&row)?;
    let out = close(&mut tx, &user, &run_id, &id, "withdrawn", None).await?;
    tx.commit().await?;
    Ok(Reply::ok(out))
}

pub async fn reject(State(state): State<AppState>, user: User, post: ItemPost) -> Result<Reply> {
    decide(&state, &user, &post, false).await
}

pub async fn accept(State(state): State<AppState>, user: User, post: ItemPost) -> Result<Reply> {
    decide(&state, &user, &post, true).await
}

/// Accepts (with `If-Match` naming the step version the accepter sees) or rejects, once per
/// `Idempotency-Key`.
async fn decide(state: &AppState, user: &User, post: &ItemPost, accept: bool) -> Result<Reply> {
    let (run_id, id) = (&post.run_id, post.id("suggestionId")?);
    let base = if accept { Some(if_match(&post.headers)?) } else { None };
    let what = match base {
        Some(base) => format!("suggestions/{id}/accept {base}"),
        None => format!("suggestions/{id}/reject"),
    };
    let act = |replay: Replay| async move {
        let body = post.body.as_ref();
        let decision = Decision::take(state, user, run_id, &id, body, &replay).await?;
        match base {
            Some(base) => accept_suggestion(user, run_id, &id, base, decision, replay).await,
            None => reject_suggestion(user, run_id, &id, decision, replay).await,
        }
    };
    post.once(state, user, &what, act).await
}

/// What accepting and rejecting begin with: the note checked, the transaction begun (by
/// `replay`), the run locked, the suggestion found, and the caller one who decides on it.
struct Decision {
    tx: Tx,
    run: RunRow,
    row: AnyRow,
    note: Option<String>,
}

impl Decision {
    async fn take(
        state: &AppState,
        user: &User,
        run_id: &str,
        id: &str,
        body: Option<&Value>,
        replay: &Replay,
    ) -> Result<Decision> {
        let mut c = Check::default();
        let note = validate::suggestion_decision(body, &mut c);
        c.finish()?;
        let mut tx = replay.begin(&state.store).await?;
        let (run, row) = locked(&mut tx, user, run_id, id).await?;
        may_decide(user, &run)?;
        Ok(Decision { tx, run, row, note })
    }
}

async fn reject_suggestion(
    user: &User,
    run_id: &str,
    id: &str,
    decision: Decision,
    replay: Replay,
) -> Result<Reply> {
    let Decision { mut tx, run, row, note } = decision;
    not_archived(&run)?;
    pending(&row)?;
    let out = close(&mut tx, user, run_id, id, "rejected", note).await?;
    replay.commit(tx, Reply::ok(json!({"suggestion": out, "step": null}))).await
}

async fn accept_suggestion(
    user: &User,
    run_id: &str,
    id: &str,
    base: i64,
    decision: Decision,
    replay: Replay,
) -> Result<Reply> {
    let Decision { mut tx, run, row, note } = decision;
    model::require_editable(&run)?;
    pending(&row)?;
    let index = get_i64(&row, "step_index")?;
    let field = get_str(&row, "field")?;
    let step = model::load_step(&mut tx, run_id, index)
        .await?
        .ok_or_else(|| Problem::internal("a suggestion's step vanished"))?;
    // The step must be what the accepter is looking at…
    if step.version > base || base > run.version {
        return Err(model::step_conflict(&mut tx, run_id, &step, base).await?);
    }
    // …and the field must still hold the text the suggestion was made against: for a
    // passage, the quote where it was re-anchored to; otherwise the whole value.
    let suggested_on = get_i64(&row, "base_version")?;
    let passage =
        get_opt_str(&row, "passage")?.and_then(|p| serde_json::from_str::<Value>(&p).ok());
    let proposed = match &passage {
        Some(stored) => {
            let text = crate::passages::field_text(&step.body, &field).unwrap_or("").to_owned();
            let holds = crate::passages::passage_from_json(stored)
                .filter(|p| stored.get("outdated") != Some(&json!(true)) && p.holds(&text));
            let Some(p) = holds else {
                return Err(model::step_conflict(&mut tx, run_id, &step, suggested_on)
                    .await?
                    .detail(format!(
                        "The passage of {field} of step {index} this suggestion replaces is gone \
                         (edited after the suggestion). Reject it, or have its author withdraw \
                         it and suggest again on the current text."
                    )));
            };
            let replacement = get_json(&row, "proposed")?;
            let replacement = replacement.as_str().unwrap_or("");
            json!(
                run_contract::passage::replace(&text, p.start, p.end, replacement).unwrap_or(text)
            )
        }
        None => get_json(&row, "proposed")?,
    };
    if passage.is_none() && current_value(&step.body, &field) != get_json(&row, "original")? {
        return Err(model::step_conflict(&mut tx, run_id, &step, suggested_on).await?.detail(
            format!(
                "{field} of step {index} changed after the suggestion was made (on version \
             {suggested_on}; the step is now at {}). Reject it, or have its author withdraw it \
             and suggest again on the current text.",
                step.version
            ),
        ));
    }

    let mut record = step.body.clone();
    if !validate::set_value_at(&mut record, &field, proposed) {
        return Err(Problem::internal("a suggestion's field is not in its step"));
    }
    let now = crate::time::now();
    record.insert("lastEditedBy".into(), json!(user.id));
    record.insert("lastEditedAt".into(), json!(now));
    let prefix = format!("steps.{index}");
    let changes = model::diff_maps(&step_editable(&step.body), &step_editable(&record), &prefix);
    let author = get_str(&row, "author")?;
    let summary = format!("Accepted {author}'s suggestion for {field} of step {index}");
    let mut entry = Entry::new("suggestion-accepted", Some(index), changes, summary);
    entry.extra.insert("suggestionId".into(), json!(id));
    let version = model::commit_version(&mut tx, &run, user, &now, entry, None).await?;
    model::save_step(&mut tx, run_id, index, version, &record, false).await?;
    sqlx::query(
        "UPDATE suggestions SET state = 'accepted', decided_by = $2, decided_at = $3, \
         decision_note = $4, applied_version = $5 WHERE id = $1",
    )
    .bind(id.to_owned())
    .bind(user.id.clone())
    .bind(now)
    .bind(note)
    .bind(version)
    .execute(&mut *tx)
    .await?;
    let step = model::StepRow { index, version, body: record };
    let step = model::step_json(&mut tx, run_id, &step).await?;
    let suggestion = reload(&mut tx, run_id, id).await?;
    let reply = Reply::ok(json!({"suggestion": suggestion, "step": step})).version(version);
    replay.commit(tx, reply).await
}
