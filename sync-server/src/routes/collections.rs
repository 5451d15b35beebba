//! `/collections`: the team's curated sets of runs (seed §8) with their metadata, computed
//! from the server's data: runs, steps, average quality, domains (the hosts of the steps'
//! pages), annotators, average annotation time per step, created, last exported.
//! Curators only: reviewers, qa_managers and admins.

use std::collections::BTreeSet;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use sqlx::AnyConnection;
use sqlx::any::AnyRow;

use crate::AppState;
use crate::auth::{Role, User, new_id};
use crate::http::{JsonBody, Query, Reply, if_match};
use crate::problem::{FieldError, Problem, Result};
use crate::routes::{Paged, id_param};
use crate::store::{Sql, get_i64, get_json, get_opt_i64, get_opt_str, get_str};
use crate::validate::{check_body, text, texts};

fn curator(user: &User) -> Result<()> {
    if user.role == Role::Annotator {
        return Err(Problem::forbidden("Collections are for reviewers, qa_managers and admins."));
    }
    Ok(())
}

const COLUMNS: &str =
    "id, name, description, created_by, created_at, updated_at, version, last_exported_at";

async fn load(conn: &mut AnyConnection, id: &str) -> Result<Option<AnyRow>> {
    let sql = format!("SELECT {COLUMNS} FROM collections WHERE id = $1");
    Ok(sqlx::query(&sql).bind(id.to_owned()).fetch_optional(conn).await?)
}

/// A collection with its runs and metadata.
async fn collection_json(conn: &mut AnyConnection, row: &AnyRow) -> Result<Value> {
    let id = get_str(row, "id")?;
    let runs = sqlx::query(
        "SELECT c.run_id, r.annotator, \
         (SELECT COUNT(*) FROM steps s WHERE s.run_id = c.run_id) AS steps, \
         (SELECT m.quality FROM run_metrics m WHERE m.run_id = c.run_id) AS quality, \
         (SELECT CAST(COALESCE(SUM(t.ms), 0) AS BIGINT) FROM run_time t \
         WHERE t.run_id = c.run_id) AS ms \
         FROM collection_runs c JOIN runs r ON r.id = c.run_id WHERE c.collection_id = $1 \
         ORDER BY c.run_id",
    )
    .bind(id.clone())
    .fetch_all(&mut *conn)
    .await?;
    let (mut run_ids, mut annotators) = (Vec::new(), BTreeSet::new());
    let (mut steps, mut ms, mut qualities) = (0i64, 0i64, Vec::new());
    for run in &runs {
        run_ids.push(get_str(run, "run_id")?);
        annotators.insert(get_str(run, "annotator")?);
        steps += get_i64(run, "steps")?;
        ms += get_i64(run, "ms")?;
        if let Some(q) = get_opt_i64(run, "quality")? {
            qualities.push(q as f64);
        }
    }
    let mut domains = BTreeSet::new();
    let bodies = sqlx::query(
        "SELECT s.body FROM steps s JOIN collection_runs c ON c.run_id = s.run_id \
         WHERE c.collection_id = $1",
    )
    .bind(id.clone())
    .fetch_all(&mut *conn)
    .await?;
    for body in &bodies {
        let body = get_json(body, "body")?;
        let host = body
            .get("url")
            .and_then(Value::as_str)
            .and_then(run_contract::url::WebUrl::parse)
            .and_then(|u| u.host_str().map(str::to_owned));
        if let Some(host) = host {
            domains.insert(host);
        }
    }
    let version = get_i64(row, "version")?;
    Ok(json!({
        "id": id,
        "name": get_str(row, "name")?,
        "description": get_str(row, "description")?,
        "runIds": run_ids,
        "createdBy": get_str(row, "created_by")?,
        "createdAt": get_str(row, "created_at")?,
        "updatedAt": get_str(row, "updated_at")?,
        "version": version,
        "etag": crate::http::etag(version),
        "metadata": {
            "runs": runs.len(),
            "steps": steps,
            "averageQuality": run_contract::agreement::mean(qualities),
            "domains": domains,
            "annotators": annotators,
            "averageTimePerStepMs": (steps > 0 && ms > 0).then(|| ms as f64 / steps as f64),
            "createdAt": get_str(row, "created_at")?,
            "lastExportedAt": get_opt_str(row, "last_exported_at")?,
        },
    }))
}

/// `422` naming each run id that is not stored, at `at/i`.
async fn check_runs(conn: &mut AnyConnection, ids: &[String], at: &str) -> Result<()> {
    if ids.is_empty() {
        return Ok(());
    }
    let mut sql = Sql::new("SELECT id FROM runs WHERE id IN ");
    sql.texts(ids);
    let found: Vec<String> = sql
        .query()
        .fetch_all(conn)
        .await?
        .iter()
        .map(|r| get_str(r, "id"))
        .collect::<Result<_, _>>()?;
    let errors: Vec<FieldError> = ids
        .iter()
        .enumerate()
        .filter(|(_, id)| !found.contains(id))
        .map(|(i, _)| FieldError::new(format!("{at}/{i}"), "no such run"))
        .collect();
    if errors.is_empty() { Ok(()) } else { Err(Problem::validation(errors)) }
}

/// The collection, if it is still at version `base` (`409` with it as it is otherwise).
async fn at_version(conn: &mut AnyConnection, id: &str, base: i64) -> Result<AnyRow> {
    let row = load(conn, id).await?.ok_or_else(|| Problem::not_found("collection"))?;
    let version = get_i64(&row, "version")?;
    if version != base {
        let current = collection_json(conn, &row).await?;
        let conflict =
            Problem::conflict("conflict", "collection", Some(base), Some(version), current, None);
        return Err(conflict);
    }
    Ok(row)
}

async fn add_runs(conn: &mut AnyConnection, id: &str, runs: &[String], now: &str) -> Result<()> {
    for run in runs {
        sqlx::query(
            "INSERT INTO collection_runs (collection_id, run_id, added_at) VALUES ($1, $2, $3) \
             ON CONFLICT (collection_id, run_id) DO NOTHING",
        )
        .bind(id.to_owned())
        .bind(run.clone())
        .bind(now.to_owned())
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// A write's result; `409` if it would give a collection another's name.
fn name_unique<T>(written: std::result::Result<T, sqlx::Error>) -> Result<T> {
    match written {
        Err(sqlx::Error::Database(d)) if d.is_unique_violation() => {
            Err(Problem::new(StatusCode::CONFLICT, "already-exists", "Already exists")
                .detail("A collection has this name already."))
        }
        written => Ok(written?),
    }
}

pub async fn list(State(state): State<AppState>, user: User, query: Query) -> Result<Reply> {
    curator(&user)?;
    let paged = Paged::read(query, &json!(["collections"]))?;
    let limit = paged.limit;
    let mut sql = Sql::new(&format!("SELECT {COLUMNS} FROM collections WHERE 1 = 1"));
    if let Some((at, id)) = paged.after_pair()? {
        sql.push(" AND (created_at < ").text(&at);
        sql.push(" OR (created_at = ").text(&at).push(" AND id < ").text(id).push("))");
    }
    sql.push(" ORDER BY created_at DESC, id DESC LIMIT ").int(limit + 1);
    let mut conn = state.store.pool.acquire().await?;
    let rows = sql.query().fetch_all(&mut *conn).await?;
    let mut items = Vec::new();
    for row in rows.iter().take(limit as usize) {
        items.push(collection_json(&mut conn, row).await?);
    }
    let key = |last: &AnyRow| Ok(json!([get_str(last, "created_at")?, get_str(last, "id")?]));
    let mut reply = paged.page(&rows, key, |_| Ok(Value::Null))?;
    reply.body["items"] = json!(items);
    Ok(reply)
}

pub async fn create(
    State(state): State<AppState>,
    user: User,
    JsonBody(body, _): JsonBody,
) -> Result<Reply> {
    curator(&user)?;
    check_body("CollectionCreate", &body)?;
    let runs = texts(body.get("runIds")).unwrap_or_default();
    let id = new_id();
    let now = crate::time::now();
    let mut tx = state.store.begin().await?;
    check_runs(&mut tx, &runs, "/runIds").await?;
    let inserted = sqlx::query(
        "INSERT INTO collections (id, name, description, created_by, created_at, updated_at, \
         version, last_exported_at) VALUES ($1, $2, $3, $4, $5, $5, 1, NULL)",
    )
    .bind(id.clone())
    .bind(text(&body, "name").unwrap_or_default())
    .bind(text(&body, "description").unwrap_or_default())
    .bind(user.id.clone())
    .bind(now.clone())
    .execute(&mut *tx)
    .await;
    name_unique(inserted)?;
    add_runs(&mut tx, &id, &runs, &now).await?;
    let after = json!({"version": 1, "runs": runs.len()});
    crate::audit::record(
        &mut tx,
        &user.id,
        "collection.created",
        None,
        &format!("collection {id}"),
        Value::Null,
        after,
    )
    .await?;
    let row = load(&mut tx, &id).await?.ok_or_else(|| Problem::internal("gone"))?;
    let out = collection_json(&mut tx, &row).await?;
    tx.commit().await?;
    Ok(Reply::ok(out).status(StatusCode::CREATED).version(1).location(format!("/collections/{id}")))
}

pub async fn get(
    State(state): State<AppState>,
    user: User,
    Path(id): Path<String>,
) -> Result<Reply> {
    curator(&user)?;
    let id = id_param("collectionId", &id)?;
    let mut conn = state.store.pool.acquire().await?;
    let row = load(&mut conn, &id).await?.ok_or_else(|| Problem::not_found("collection"))?;
    let version = get_i64(&row, "version")?;
    Ok(Reply::ok(collection_json(&mut conn, &row).await?).version(version))
}

pub async fn edit(
    State(state): State<AppState>,
    user: User,
    Path(id): Path<String>,
    headers: HeaderMap,
    JsonBody(body, _): JsonBody,
) -> Result<Reply> {
    curator(&user)?;
    let id = id_param("collectionId", &id)?;
    let base = if_match(&headers)?;
    check_body("CollectionEdit", &body)?;
    let mut tx = state.store.begin().await?;
    let row = at_version(&mut tx, &id, base).await?;
    let version = base;
    let add = texts(body.get("addRuns")).unwrap_or_default();
    let remove = texts(body.get("removeRuns")).unwrap_or_default();
    check_runs(&mut tx, &add, "/addRuns").await?;
    let now = crate::time::now();
    let name = text(&body, "name").unwrap_or(get_str(&row, "name")?);
    let description = text(&body, "description").unwrap_or(get_str(&row, "description")?);
    let exported = body.get("exported").and_then(Value::as_bool) == Some(true);
    let last_exported =
        if exported { Some(now.clone()) } else { get_opt_str(&row, "last_exported_at")? };
    let updated = sqlx::query(
        "UPDATE collections SET name = $2, description = $3, updated_at = $4, version = $5, \
         last_exported_at = $6 WHERE id = $1",
    )
    .bind(id.clone())
    .bind(name)
    .bind(description)
    .bind(now.clone())
    .bind(version + 1)
    .bind(last_exported)
    .execute(&mut *tx)
    .await;
    name_unique(updated)?;
    add_runs(&mut tx, &id, &add, &now).await?;
    for run in &remove {
        sqlx::query("DELETE FROM collection_runs WHERE collection_id = $1 AND run_id = $2")
            .bind(id.clone())
            .bind(run.clone())
            .execute(&mut *tx)
            .await?;
    }
    let action = if exported { "collection.exported" } else { "collection.edited" };
    let after = json!({"version": version + 1, "added": add, "removed": remove});
    crate::audit::record(
        &mut tx,
        &user.id,
        action,
        None,
        &format!("collection {id}"),
        json!({"version": version}),
        after,
    )
    .await?;
    let row = load(&mut tx, &id).await?.ok_or_else(|| Problem::internal("gone"))?;
    let out = collection_json(&mut tx, &row).await?;
    tx.commit().await?;
    Ok(Reply::ok(out).version(version + 1))
}

pub async fn delete(
    State(state): State<AppState>,
    user: User,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response> {
    curator(&user)?;
    if user.role == Role::Reviewer {
        return Err(Problem::forbidden("A qa_manager or an admin deletes a collection."));
    }
    let id = id_param("collectionId", &id)?;
    let base = if_match(&headers)?;
    let mut tx = state.store.begin().await?;
    at_version(&mut tx, &id, base).await?;
    let version = base;
    for sql in [
        "DELETE FROM collection_runs WHERE collection_id = $1",
        "DELETE FROM collections WHERE id = $1",
    ] {
        sqlx::query(sql).bind(id.clone()).execute(&mut *tx).await?;
    }
    crate::audit::record(
        &mut tx,
        &user.id,
        "collection.deleted",
        None,
        &format!("collection {id}"),
        json!({"version": version}),
        Value::Null,
    )
    .await?;
    tx.commit().await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
