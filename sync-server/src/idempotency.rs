//! `Idempotency-Key` on POSTs: the first successful answer is kept 24 h per user and key,
//! and a retry gets it back instead of acting twice; the same key with another request is
//! `422 idempotency-key-reused`. Failed answers are not kept, so a retry re-evaluates them.
//! Two retries racing each other can both act (a known limit of this first version).

use std::future::Future;

use axum::http::{HeaderMap, StatusCode};
use sha2::{Digest, Sha256};

use crate::AppState;
use crate::auth::User;
use crate::http::Reply;
use crate::problem::{Problem, Result};
use crate::store::{get_i64, get_json, get_opt_str, get_str};

const KEEP_MS: i64 = 24 * 3600 * 1000;

pub async fn once<Fut>(
    state: &AppState,
    user: &User,
    headers: &HeaderMap,
    request: &str,
    body: &[u8],
    act: Fut,
) -> Result<Reply>
where
    Fut: Future<Output = Result<Reply>>,
{
    let Some(key) = headers.get("Idempotency-Key") else { return act.await };
    let key = key
        .to_str()
        .ok()
        .filter(|k| (8..=128).contains(&k.len()))
        .ok_or_else(|| {
            Problem::bad_param("header.Idempotency-Key", "must be 8 to 128 visible characters")
        })?
        .to_owned();
    let mut hasher = Sha256::new();
    hasher.update(request.as_bytes());
    hasher.update([0]);
    hasher.update(body);
    let fingerprint = run_contract::digest::hex(&hasher.finalize());
    let cutoff = crate::time::format_ms(crate::time::now_ms() - KEEP_MS);
    let pool = &state.store.pool;
    let stored = sqlx::query(
        "SELECT fingerprint, status, etag, body FROM idempotency \
         WHERE user_id = $1 AND idem_key = $2 AND created_at >= $3",
    )
    .bind(user.id.clone())
    .bind(key.clone())
    .bind(cutoff.clone())
    .fetch_optional(pool)
    .await?;
    if let Some(row) = stored {
        if get_str(&row, "fingerprint")? != fingerprint {
            return Err(Problem::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "idempotency-key-reused",
                "Idempotency key reused",
            )
            .detail("This Idempotency-Key was used for another request.")
            .errors(vec![crate::problem::FieldError::new(
                "header.Idempotency-Key",
                "was used for another request",
            )]));
        }
        let status =
            StatusCode::from_u16(get_i64(&row, "status")? as u16).map_err(Problem::internal)?;
        let mut reply = Reply::ok(get_json(&row, "body")?).status(status);
        reply.etag = get_opt_str(&row, "etag")?;
        return Ok(reply);
    }
    let reply = act.await?;
    sqlx::query("DELETE FROM idempotency WHERE created_at < $1").bind(cutoff).execute(pool).await?;
    sqlx::query(
        "INSERT INTO idempotency (user_id, idem_key, fingerprint, status, etag, body, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (user_id, idem_key) DO NOTHING",
    )
    .bind(user.id.clone())
    .bind(key)
    .bind(fingerprint)
    .bind(i64::from(reply.status.as_u16()))
    .bind(reply.etag.clone())
    .bind(reply.body.to_string())
    .bind(crate::time::now())
    .execute(pool)
    .await?;
    Ok(reply)
}
