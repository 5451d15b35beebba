//! `Idempotency-Key` on POSTs: the first successful answer is kept 24 h per user and key,
//! and a retry gets it back instead of acting twice; the same key with another request is
//! `422 idempotency-key-reused`. Failed answers are not kept, so a retry re-evaluates them.
//!
//! The answer is stored in the same transaction as the write it answers ([`Replay::commit`]),
//! so a crash leaves both or neither: a retry after one never finds the write done but its
//! answer missing (which would read as a conflict with itself). Expired answers are pruned by
//! `Store::prune`, in the background. Two retries racing each other can both act (a known
//! limit: the second one's answer is then not kept).

use std::future::Future;

use axum::http::{HeaderMap, StatusCode};
use sha2::{Digest, Sha256};

use crate::AppState;
use crate::auth::User;
use crate::http::Reply;
use crate::problem::{Problem, Result};
use crate::store::{Tx, get_i64, get_json, get_opt_str, get_str};

/// What a write keeps for retries, written with it by [`Replay::commit`].
#[derive(Debug, Default)]
pub struct Replay {
    key: Option<Key>,
}

#[derive(Debug)]
struct Key {
    user_id: String,
    key: String,
    fingerprint: String,
}

impl Replay {
    /// Nothing to keep: the request had no `Idempotency-Key`.
    pub fn none() -> Replay {
        Replay::default()
    }

    /// Keeps `reply` for retries in `tx`, then commits `tx`: the write and its answer are
    /// stored together or not at all.
    pub async fn commit(self, mut tx: Tx, reply: Reply) -> Result<Reply> {
        if let Some(key) = self.key {
            // An expired answer not yet pruned is replaced; a live one (a racing retry's) is
            // kept.
            let now = crate::time::now_ms();
            sqlx::query(
                "INSERT INTO idempotency (user_id, idem_key, fingerprint, status, etag, body, \
                 created_at) VALUES ($1, $2, $3, $4, $5, $6, $7) \
                 ON CONFLICT (user_id, idem_key) DO UPDATE SET fingerprint = excluded.fingerprint, \
                 status = excluded.status, etag = excluded.etag, body = excluded.body, \
                 created_at = excluded.created_at WHERE idempotency.created_at < $8",
            )
            .bind(key.user_id)
            .bind(key.key)
            .bind(key.fingerprint)
            .bind(i64::from(reply.status.as_u16()))
            .bind(reply.etag.clone())
            .bind(reply.body.to_string())
            .bind(crate::time::format_ms(now))
            .bind(crate::time::format_ms(now - crate::store::IDEMPOTENCY_KEEP_MS))
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(reply)
    }
}

/// Answers a retry of `request` (its method and path, and whatever else makes it what it is)
/// with the kept answer, or acts: `act` gets the [`Replay`] to commit its write with.
pub async fn once<F, Fut>(
    state: &AppState,
    user: &User,
    headers: &HeaderMap,
    request: &str,
    body: &[u8],
    act: F,
) -> Result<Reply>
where
    F: FnOnce(Replay) -> Fut,
    Fut: Future<Output = Result<Reply>>,
{
    let Some(key) = headers.get("Idempotency-Key") else { return act(Replay::none()).await };
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
    let cutoff = crate::time::format_ms(crate::time::now_ms() - crate::store::IDEMPOTENCY_KEEP_MS);
    let stored = sqlx::query(
        "SELECT fingerprint, status, etag, body FROM idempotency \
         WHERE user_id = $1 AND idem_key = $2 AND created_at >= $3",
    )
    .bind(user.id.clone())
    .bind(key.clone())
    .bind(cutoff)
    .fetch_optional(&state.store.pool)
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
    act(Replay { key: Some(Key { user_id: user.id.clone(), key, fingerprint }) }).await
}
