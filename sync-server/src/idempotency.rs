//! `Idempotency-Key` on POSTs: the first successful answer is kept 24 h per user and key,
//! and a retry gets it back instead of acting twice; the same key with another request is
//! `422 idempotency-key-reused`. Failed answers are not kept, so a retry re-evaluates them.
//!
//! The key is reserved by the write's own transaction, as its first statement
//! ([`Replay::begin`]): a row under the key, which [`Replay::commit`] fills with the answer
//! as it commits the write. So a crash leaves both or neither (a retry never finds the write
//! done but its answer missing, which would read as a conflict with itself), and a failed
//! write takes its reservation with it. Retries racing each other queue on that row: the
//! database makes a second insert of the key wait until the first transaction ends (a row
//! lock on PostgreSQL, the write gate or lock on SQLite), then it finds the answer and
//! returns it, or, if the first failed, finds no row and acts itself. Nobody ever sees a
//! reservation without its answer, so there is nothing to poll and nothing a crash leaves
//! pending. Expired answers are pruned by `Store::prune`, in the background.

use std::future::Future;

use axum::http::{HeaderMap, StatusCode};
use sha2::{Digest, Sha256};

use crate::AppState;
use crate::auth::User;
use crate::http::Reply;
use crate::problem::{Problem, Result};
use crate::store::{Store, Tx, get_i64, get_json, get_opt_str, get_str};

/// The `kind` of the error [`Replay::begin`] returns when an answer is kept under the key
/// already; [`once`] answers with that answer instead. It never reaches a client.
const KEPT: &str = "idempotency-answer-kept";

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

    /// Begins the write's transaction, its first statement reserving the key (see the module
    /// doc). A write that keeps its answer begins here, not with `Store::begin`, and ends
    /// with [`Replay::commit`]. If an answer is kept under the key already (a racing retry
    /// committed first), the error is one [`once`] replaces with that answer.
    pub async fn begin(&self, store: &Store) -> Result<Tx> {
        let mut tx = store.begin().await?;
        if let Some(key) = &self.key {
            // An expired answer not yet pruned is replaced; a live one is not.
            let now = crate::time::now_ms();
            let reserved = sqlx::query(
                "INSERT INTO idempotency (user_id, idem_key, fingerprint, status, etag, body, \
                 created_at) VALUES ($1, $2, $3, 0, NULL, '', $4) \
                 ON CONFLICT (user_id, idem_key) DO UPDATE SET fingerprint = excluded.fingerprint, \
                 status = 0, etag = NULL, body = '', created_at = excluded.created_at \
                 WHERE idempotency.created_at < $5",
            )
            .bind(key.user_id.clone())
            .bind(key.key.clone())
            .bind(key.fingerprint.clone())
            .bind(crate::time::format_ms(now))
            .bind(crate::time::format_ms(now - crate::store::IDEMPOTENCY_KEEP_MS))
            .execute(&mut *tx)
            .await?;
            if reserved.rows_affected() == 0 {
                return Err(Problem::new(StatusCode::CONFLICT, KEPT, "Answer kept"));
            }
        }
        Ok(tx)
    }

    /// Keeps `reply` for retries under the key [`Replay::begin`] reserved in `tx`, then
    /// commits `tx`: the write and its answer are stored together or not at all.
    pub async fn commit(self, mut tx: Tx, reply: Reply) -> Result<Reply> {
        if let Some(key) = self.key {
            let kept = sqlx::query(
                "UPDATE idempotency SET status = $3, etag = $4, body = $5 \
                 WHERE user_id = $1 AND idem_key = $2",
            )
            .bind(key.user_id)
            .bind(key.key)
            .bind(i64::from(reply.status.as_u16()))
            .bind(reply.etag.clone())
            .bind(reply.body.to_string())
            .execute(&mut *tx)
            .await?;
            if kept.rows_affected() != 1 {
                return Err(Problem::internal("an Idempotency-Key answer without its reservation"));
            }
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
    // Most retries come after the first answer: kept, it is answered without acting.
    if let Some(reply) = kept(state, &user.id, &key, &fingerprint).await? {
        return Ok(reply);
    }
    let reserve =
        Key { user_id: user.id.clone(), key: key.clone(), fingerprint: fingerprint.clone() };
    match act(Replay { key: Some(reserve) }).await {
        // A racing retry committed first (see the module doc): its answer.
        Err(problem) if problem.kind == KEPT => kept(state, &user.id, &key, &fingerprint)
            .await?
            // Gone only if it expired in between; this request did not act, so it may retry.
            .ok_or_else(|| Problem::unavailable("Try again.")),
        acted => acted,
    }
}

/// The answer kept under `key`, if there is a live one; `422` if it answers another request.
async fn kept(
    state: &AppState,
    user_id: &str,
    key: &str,
    fingerprint: &str,
) -> Result<Option<Reply>> {
    let cutoff = crate::time::format_ms(crate::time::now_ms() - crate::store::IDEMPOTENCY_KEEP_MS);
    let stored = sqlx::query(
        "SELECT fingerprint, status, etag, body FROM idempotency \
         WHERE user_id = $1 AND idem_key = $2 AND created_at >= $3",
    )
    .bind(user_id.to_owned())
    .bind(key.to_owned())
    .bind(cutoff)
    .fetch_optional(&state.store.pool)
    .await?;
    let Some(row) = stored else { return Ok(None) };
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
    Ok(Some(reply))
}
