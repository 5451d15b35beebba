//! `/webhooks`: admins register, list, pause and resume, edit and remove hooks, and read
//! each one's deliveries. A hook's secret is answered once, at creation, and never again
//! (nor in the audit log). Delivery itself is `crate::webhooks`.

use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use sqlx::AnyConnection;
use sqlx::any::AnyRow;

use crate::AppState;
use crate::auth::{Role, User, new_id};
use crate::http::{JsonBody, Query, Reply};
use crate::problem::{Problem, Result};
use crate::routes::{Paged, id_param};
use crate::store::{Sql, get_i64, get_opt_i64, get_opt_str, get_str};
use crate::validate::{check_body, text};

fn admin(user: &User) -> Result<()> {
    if user.role != Role::Admin {
        return Err(Problem::forbidden("Only an admin manages webhooks."));
    }
    Ok(())
}

const HOOK_SQL: &str = "SELECT h.id, h.url, h.events, h.description, h.paused, h.created_by, \
     h.created_at, \
     (SELECT COUNT(*) FROM webhook_deliveries d WHERE d.hook_id = h.id AND d.status = 'pending') AS pending, \
     (SELECT COUNT(*) FROM webhook_deliveries d WHERE d.hook_id = h.id AND d.status = 'delivered') AS delivered, \
     (SELECT COUNT(*) FROM webhook_deliveries d WHERE d.hook_id = h.id AND d.status = 'failed') AS failed \
     FROM webhooks h";

/// A hook as listed: never its secret (the query does not even read it).
fn hook_json(row: &AnyRow) -> Result<Value> {
    let events: Value = serde_json::from_str(&get_str(row, "events")?).unwrap_or(json!([]));
    Ok(json!({
        "id": get_str(row, "id")?,
        "url": get_str(row, "url")?,
        "events": events,
        "description": get_str(row, "description")?,
        "paused": get_i64(row, "paused")? != 0,
        "createdBy": get_str(row, "created_by")?,
        "createdAt": get_str(row, "created_at")?,
        "pending": get_i64(row, "pending")?,
        "delivered": get_i64(row, "delivered")?,
        "failed": get_i64(row, "failed")?,
    }))
}

async fn load(conn: &mut AnyConnection, id: &str) -> Result<Value> {
    let row = sqlx::query(&format!("{HOOK_SQL} WHERE h.id = $1"))
        .bind(id.to_owned())
        .fetch_optional(conn)
        .await?
        .ok_or_else(|| Problem::not_found("webhook"))?;
    hook_json(&row)
}

fn check_url(body: &Value) -> Result<()> {
    if let Some(url) = body.get("url").and_then(Value::as_str) {
        crate::webhooks::check_url(url).map_err(|why| Problem::invalid("/url", why))?;
    }
    Ok(())
}

pub async fn list(State(state): State<AppState>, user: User) -> Result<Reply> {
    admin(&user)?;
    let rows = sqlx::query(&format!("{HOOK_SQL} ORDER BY h.created_at, h.id"))
        .fetch_all(&state.store.pool)
        .await?;
    let items = rows.iter().map(hook_json).collect::<Result<Vec<_>>>()?;
    Ok(Reply::ok(json!({"items": items})))
}

pub async fn create(
    State(state): State<AppState>,
    user: User,
    JsonBody(body, _): JsonBody,
) -> Result<Response> {
    admin(&user)?;
    check_body("WebhookCreate", &body)?;
    check_url(&body)?;
    let id = new_id();
    let secret = crate::webhooks::new_secret();
    let mut tx = state.store.begin().await?;
    sqlx::query(
        "INSERT INTO webhooks (id, url, events, description, secret, paused, created_by, \
         created_at) VALUES ($1, $2, $3, $4, $5, 0, $6, $7)",
    )
    .bind(id.clone())
    .bind(text(&body, "url").unwrap_or_default())
    .bind(body["events"].to_string())
    .bind(text(&body, "description").unwrap_or_default())
    .bind(secret.clone())
    .bind(user.id.clone())
    .bind(crate::time::now())
    .execute(&mut *tx)
    .await?;
    let after = json!({"id": id, "events": body["events"]});
    crate::audit::record(
        &mut tx,
        &user.id,
        "webhook.created",
        None,
        &format!("webhook {id}"),
        Value::Null,
        after,
    )
    .await?;
    let mut out = load(&mut tx, &id).await?;
    tx.commit().await?;
    out["secret"] = json!(secret);
    let reply = Reply::ok(out).status(StatusCode::CREATED).location(format!("/webhooks/{id}"));
    let no_store = [(header::CACHE_CONTROL, HeaderValue::from_static("no-store"))];
    Ok((no_store, reply).into_response())
}

pub async fn get(
    State(state): State<AppState>,
    user: User,
    Path(id): Path<String>,
) -> Result<Reply> {
    admin(&user)?;
    let id = id_param("hookId", &id)?;
    let mut conn = state.store.pool.acquire().await?;
    Ok(Reply::ok(load(&mut conn, &id).await?))
}

pub async fn edit(
    State(state): State<AppState>,
    user: User,
    Path(id): Path<String>,
    JsonBody(body, _): JsonBody,
) -> Result<Reply> {
    admin(&user)?;
    let id = id_param("hookId", &id)?;
    check_body("WebhookEdit", &body)?;
    check_url(&body)?;
    let mut tx = state.store.begin().await?;
    let before = load(&mut tx, &id).await?;
    let url = text(&body, "url").or_else(|| before["url"].as_str().map(str::to_owned));
    let events = body.get("events").unwrap_or(&before["events"]).to_string();
    let description =
        text(&body, "description").or_else(|| before["description"].as_str().map(str::to_owned));
    let paused = body.get("paused").and_then(Value::as_bool).unwrap_or(before["paused"] == true);
    sqlx::query(
        "UPDATE webhooks SET url = $2, events = $3, description = $4, paused = $5 WHERE id = $1",
    )
    .bind(id.clone())
    .bind(url)
    .bind(events)
    .bind(description)
    .bind(i64::from(paused))
    .execute(&mut *tx)
    .await?;
    let action = match body.get("paused").and_then(Value::as_bool) {
        Some(true) if before["paused"] == false => "webhook.paused",
        Some(false) if before["paused"] == true => "webhook.resumed",
        _ => "webhook.edited",
    };
    let after = load(&mut tx, &id).await?;
    let ids = |h: &Value| json!({"url": h["url"], "events": h["events"], "paused": h["paused"]});
    crate::audit::record(
        &mut tx,
        &user.id,
        action,
        None,
        &format!("webhook {id}"),
        ids(&before),
        ids(&after),
    )
    .await?;
    tx.commit().await?;
    if !paused {
        crate::webhooks::wake();
    }
    Ok(Reply::ok(after))
}

pub async fn delete(
    State(state): State<AppState>,
    user: User,
    Path(id): Path<String>,
) -> Result<Response> {
    admin(&user)?;
    let id = id_param("hookId", &id)?;
    let mut tx = state.store.begin().await?;
    let before = load(&mut tx, &id).await?;
    for sql in
        ["DELETE FROM webhook_deliveries WHERE hook_id = $1", "DELETE FROM webhooks WHERE id = $1"]
    {
        sqlx::query(sql).bind(id.clone()).execute(&mut *tx).await?;
    }
    let ids = json!({"url": before["url"], "events": before["events"]});
    crate::audit::record(
        &mut tx,
        &user.id,
        "webhook.deleted",
        None,
        &format!("webhook {id}"),
        ids,
        Value::Null,
    )
    .await?;
    tx.commit().await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

fn delivery_json(row: &AnyRow) -> Result<Value> {
    Ok(json!({
        "id": get_str(row, "id")?,
        "eventId": get_str(row, "event_id")?,
        "event": get_str(row, "event")?,
        "status": get_str(row, "status")?,
        "attempts": get_i64(row, "attempts")?,
        "lastStatusCode": get_opt_i64(row, "last_status")?,
        "lastError": get_opt_str(row, "last_error")?,
        "nextAttemptAt": if get_str(row, "status")? == "pending" { json!(get_opt_str(row, "next_attempt_at")?) } else { Value::Null },
        "createdAt": get_str(row, "created_at")?,
        "deliveredAt": get_opt_str(row, "delivered_at")?,
    }))
}

pub async fn deliveries(
    State(state): State<AppState>,
    user: User,
    Path(id): Path<String>,
    query: Query,
) -> Result<Reply> {
    admin(&user)?;
    let id = id_param("hookId", &id)?;
    let paged = Paged::read(query, &json!(["deliveries", id]))?;
    let mut conn = state.store.pool.acquire().await?;
    load(&mut conn, &id).await?;
    drop(conn);
    let mut sql = Sql::new(
        "SELECT seq, id, event_id, event, status, attempts, last_status, last_error, \
         next_attempt_at, created_at, delivered_at FROM webhook_deliveries WHERE hook_id = ",
    );
    sql.text(&id);
    paged.newest_first(sql, &state, delivery_json).await
}
