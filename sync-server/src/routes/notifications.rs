//! `/users/me/notifications…`: the caller's notifications (written by `events::notify`),
//! the unread count for the badge, and marking them read.

use axum::extract::{Path, State};
use serde_json::{Value, json};
use sqlx::any::AnyRow;

use crate::AppState;
use crate::auth::User;
use crate::http::{Query, Reply};
use crate::problem::{Problem, Result};
use crate::routes::{Paged, id_param};
use crate::store::{Sql, get_i64, get_opt_str, get_str};

const COLUMNS: &str = "seq, id, kind, run_id, comment_id, actor, body_text, created_at, read_at";

fn notification_json(row: &AnyRow) -> Result<Value> {
    Ok(json!({
        "id": get_str(row, "id")?,
        "kind": get_str(row, "kind")?,
        "runId": get_opt_str(row, "run_id")?,
        "commentId": get_opt_str(row, "comment_id")?,
        "actor": get_str(row, "actor")?,
        "text": get_str(row, "body_text")?,
        "createdAt": get_str(row, "created_at")?,
        "readAt": get_opt_str(row, "read_at")?,
    }))
}

pub async fn list(State(state): State<AppState>, user: User, mut query: Query) -> Result<Reply> {
    let unread = query.boolean("unread")?;
    let paged = Paged::read(query, &json!(["notifications", user.id, unread]))?;
    let mut sql = Sql::new(&format!("SELECT {COLUMNS} FROM notifications WHERE user_id = "));
    sql.text(&user.id);
    match unread {
        Some(true) => drop(sql.push(" AND read_at IS NULL")),
        Some(false) => drop(sql.push(" AND read_at IS NOT NULL")),
        None => {}
    }
    paged.newest_first(sql, &state, notification_json).await
}

pub async fn count(State(state): State<AppState>, user: User) -> Result<Reply> {
    let row = sqlx::query(
        "SELECT COUNT(*) AS n FROM notifications WHERE user_id = $1 AND read_at IS NULL",
    )
    .bind(user.id.clone())
    .fetch_one(&state.store.pool)
    .await?;
    Ok(Reply::ok(json!({"unread": get_i64(&row, "n")?})))
}

pub async fn read(
    State(state): State<AppState>,
    user: User,
    Path(id): Path<String>,
) -> Result<Reply> {
    let id = id_param("notificationId", &id)?;
    let mut tx = state.store.begin().await?;
    let marked = sqlx::query(
        "UPDATE notifications SET read_at = $3 WHERE id = $1 AND user_id = $2 AND read_at IS NULL",
    )
    .bind(id.clone())
    .bind(user.id.clone())
    .bind(crate::time::now())
    .execute(&mut *tx)
    .await?;
    let row =
        sqlx::query(&format!("SELECT {COLUMNS} FROM notifications WHERE id = $1 AND user_id = $2"))
            .bind(id.clone())
            .bind(user.id.clone())
            .fetch_optional(&mut *tx)
            .await?
            .ok_or_else(|| Problem::not_found("notification"))?;
    if marked.rows_affected() > 0 {
        let target = format!("notification {id}");
        crate::audit::record(
            &mut tx,
            &user.id,
            "notification.read",
            None,
            &target,
            json!({"read": false}),
            json!({"read": true}),
        )
        .await?;
    }
    let out = notification_json(&row)?;
    tx.commit().await?;
    Ok(Reply::ok(out))
}

pub async fn read_all(State(state): State<AppState>, user: User) -> Result<Reply> {
    let mut tx = state.store.begin().await?;
    let marked =
        sqlx::query("UPDATE notifications SET read_at = $2 WHERE user_id = $1 AND read_at IS NULL")
            .bind(user.id.clone())
            .bind(crate::time::now())
            .execute(&mut *tx)
            .await?
            .rows_affected() as i64;
    if marked > 0 {
        crate::audit::record(
            &mut tx,
            &user.id,
            "notification.read-all",
            None,
            "notifications",
            json!({"unread": marked}),
            json!({"unread": 0}),
        )
        .await?;
    }
    tx.commit().await?;
    Ok(Reply::ok(json!({"marked": marked})))
}
