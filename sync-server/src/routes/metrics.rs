//! `GET/POST /runs/{runId}/metrics`: a run's figures on the server. The page reports the
//! quality score and time spent it measures; review rounds and issues are counted here.

use axum::extract::{Path, State};
use serde_json::{Value, json};
use sqlx::AnyConnection;

use crate::AppState;
use crate::auth::{Role, User};
use crate::http::Reply;
use crate::idempotency::Replay;
use crate::model::{self, RunRow};
use crate::problem::{Problem, Result};
use crate::routes::{RunPost, Write};
use crate::store::{get_i64, get_json, get_opt_i64, get_opt_str};
use crate::validate::check_body;

pub async fn metrics_json(conn: &mut AnyConnection, user: &User, run: &RunRow) -> Result<Value> {
    let quality = sqlx::query("SELECT quality, quality_at FROM run_metrics WHERE run_id = $1")
        .bind(run.id.clone())
        .fetch_optional(&mut *conn)
        .await?;
    let (quality, quality_at) = match &quality {
        Some(row) => (get_opt_i64(row, "quality")?, get_opt_str(row, "quality_at")?),
        None => (None, None),
    };
    let time = sqlx::query(
        "SELECT CAST(COALESCE(SUM(ms), 0) AS BIGINT) AS total, \
         CAST(COALESCE(SUM(CASE WHEN user_id = $2 THEN ms ELSE 0 END), 0) AS BIGINT) AS mine \
         FROM run_time WHERE run_id = $1",
    )
    .bind(run.id.clone())
    .bind(user.id.clone())
    .fetch_one(&mut *conn)
    .await?;
    let (mut flagged, mut resolved) = (0, 0);
    let steps = sqlx::query("SELECT body FROM steps WHERE run_id = $1")
        .bind(run.id.clone())
        .fetch_all(&mut *conn)
        .await?;
    for row in &steps {
        let body = get_json(row, "body")?;
        for issue in body.get("issues").and_then(Value::as_array).into_iter().flatten() {
            flagged += 1;
            if issue.get("status").and_then(Value::as_str) == Some("resolved") {
                resolved += 1;
            }
        }
    }
    Ok(json!({
        "runId": run.id,
        "quality": quality,
        "qualityAt": quality_at,
        "timeSpentMs": get_i64(&time, "total")?,
        "mine": get_i64(&time, "mine")?,
        "reviewRounds": run.review_rounds,
        "issues": {"flagged": flagged, "resolved": resolved, "open": flagged - resolved},
    }))
}

pub async fn get(
    State(state): State<AppState>,
    user: User,
    Path(run_id): Path<String>,
) -> Result<Reply> {
    let (mut conn, run) = super::read_run(&state, &user, &run_id).await?;
    Ok(Reply::ok(metrics_json(&mut conn, &user, &run).await?))
}

pub async fn report(State(state): State<AppState>, user: User, post: RunPost) -> Result<Reply> {
    post.write(&state, &user, "metrics", apply).await
}

async fn apply(write: Write<'_>, replay: Replay) -> Result<Reply> {
    let Write { state, user, run_id, body } = write;
    check_body("RunMetricsReport", body)?;
    let mut tx = replay.begin(&state.store).await?;
    let run = model::lock_visible_run(&mut tx, user, run_id).await?;
    let now = crate::time::now();
    let mut after = serde_json::Map::new();
    if let Some(quality) = body.get("quality") {
        let editor = match user.role {
            Role::QaManager | Role::Admin => true,
            Role::Annotator => {
                run.annotator == user.id || model::is_assigned(&mut tx, run_id, &user.id).await?
            }
            Role::Reviewer => false,
        };
        if !editor {
            return Err(Problem::forbidden(
                "The run's annotator, a qa_manager or an admin reports its quality score.",
            ));
        }
        sqlx::query(
            "INSERT INTO run_metrics (run_id, quality, quality_at, quality_by) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (run_id) DO UPDATE SET \
             quality = excluded.quality, quality_at = excluded.quality_at, \
             quality_by = excluded.quality_by",
        )
        .bind(run_id.to_owned())
        .bind(quality.as_i64())
        .bind(now.clone())
        .bind(user.id.clone())
        .execute(&mut *tx)
        .await?;
        after.insert("quality".into(), quality.clone());
    }
    if let Some(ms) = body.get("addTimeMs").and_then(Value::as_i64).filter(|ms| *ms > 0) {
        sqlx::query(
            "INSERT INTO run_time (run_id, user_id, ms) VALUES ($1, $2, $3) \
             ON CONFLICT (run_id, user_id) DO UPDATE SET ms = run_time.ms + excluded.ms",
        )
        .bind(run_id.to_owned())
        .bind(user.id.clone())
        .bind(ms)
        .execute(&mut *tx)
        .await?;
        after.insert("addTimeMs".into(), json!(ms));
    }
    if !after.is_empty() {
        let after = Value::Object(after);
        crate::audit::record(
            &mut tx,
            &user.id,
            "metrics.reported",
            Some(run_id),
            "metrics",
            Value::Null,
            after,
        )
        .await?;
    }
    let out = metrics_json(&mut tx, user, &run).await?;
    replay.commit(tx, Reply::ok(out)).await
}
