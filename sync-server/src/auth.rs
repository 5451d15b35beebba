//! Users, roles and bearer tokens. A token is 32 random bytes shown once by
//! `sync-server user add` (or `user token rotate`, or `POST /users/me/token` to the user
//! rotating their own); only its SHA-256 is stored, so a database leak leaks no token. A user
//! has one token at a time: it may have an expiry, rotating replaces it (the old one stops
//! working at once), and revoking stops it until an admin rotates it. A user's own rotation
//! keeps the expiry, and loses to a revocation racing it: only an admin extends or restores a
//! token. Every request reads the user's row, so each takes effect at once, also when the CLI
//! changes it beside a running server.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use base64::Engine as _;
use run_contract::digest::sha256_hex;
use serde_json::{Value, json};
use sqlx::AnyConnection;

use crate::AppState;
use crate::problem::Problem;
use crate::store::{Store, get_opt_str, get_str};

pub use run_contract::Role;

/// The caller, from the `Authorization` header. Extracting it answers `401` by itself.
#[derive(Debug, Clone)]
pub struct User {
    pub id: String,
    pub name: String,
    pub role: Role,
}

impl User {
    /// qa_manager or admin: edit any run, assign annotators.
    pub fn is_manager(&self) -> bool {
        self.role.is_manager()
    }

    pub fn to_json(&self) -> Value {
        json!({"id": self.id, "name": self.name, "role": self.role.as_str()})
    }

    /// The id of the user a query or path names: `me` is the caller. Else what it must be.
    pub fn named(&self, name: &str) -> Result<String, &'static str> {
        match name {
            "me" => Ok(self.id.clone()),
            id if crate::validate::is_user_id(id) => Ok(id.to_owned()),
            _ => Err("must be a user id or me"),
        }
    }
}

impl FromRequestParts<AppState> for User {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<User, Problem> {
        user_for_token(&state.store, bearer(&parts.headers)?).await
    }
}

/// The token of the `Authorization: Bearer …` header; `401` without one.
pub fn bearer(headers: &HeaderMap) -> Result<&str, Problem> {
    let value = headers.get(header::AUTHORIZATION).ok_or_else(Problem::unauthorized)?;
    let value = value.to_str().map_err(|_| Problem::unauthorized())?;
    let (scheme, token) = value.trim().split_once(' ').ok_or_else(Problem::unauthorized)?;
    if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
        return Err(Problem::unauthorized());
    }
    Ok(token.trim())
}

/// The user a bearer token belongs to, or `401` saying why not (unknown, revoked, expired).
pub async fn user_for_token(store: &Store, token: &str) -> Result<User, Problem> {
    let row = sqlx::query(
        "SELECT id, name, role, token_expires_at, token_revoked_at FROM users \
         WHERE token_hash = $1",
    )
    .bind(hash_token(token))
    .fetch_optional(&store.pool)
    .await?
    .ok_or_else(|| Problem::unauthorized().detail("Unknown token."))?;
    let renew = "ask an admin for a new one (`sync-server user token rotate`).";
    if get_opt_str(&row, "token_revoked_at")?.is_some() {
        return Err(Problem::unauthorized().detail(format!("This token was revoked; {renew}")));
    }
    if let Some(expires) = get_opt_str(&row, "token_expires_at")?
        && expires <= crate::time::now()
    {
        return Err(
            Problem::unauthorized().detail(format!("This token expired at {expires}; {renew}"))
        );
    }
    let role = get_str(&row, "role")?;
    Ok(User {
        id: get_str(&row, "id")?,
        name: get_str(&row, "name")?,
        role: Role::parse(&role).ok_or_else(|| Problem::internal("unknown role stored"))?,
    })
}

pub fn hash_token(token: &str) -> String {
    sha256_hex(token.as_bytes())
}

/// A fresh random id (32 lowercase hex digits), for comments.
pub fn new_id() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// A fresh bearer token: `as_` and 32 random bytes, base64url.
fn new_token() -> String {
    format!(
        "as_{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(rand::random::<[u8; 32]>())
    )
}

/// Creates a user and returns their token, which is stored only hashed; it does not expire.
pub async fn add_user(store: &Store, id: &str, name: &str, role: Role) -> Result<String, String> {
    add_user_until(store, id, name, role, None).await
}

/// Creates a user whose token is valid until `expires_ms` (milliseconds since the epoch;
/// `None`: no end) and returns the token.
pub async fn add_user_until(
    store: &Store,
    id: &str,
    name: &str,
    role: Role,
    expires_ms: Option<i64>,
) -> Result<String, String> {
    if !crate::validate::is_user_id(id) {
        return Err(format!("{id:?} is not a valid user id (a-z, 0-9, '.', '_', '-'; 64 at most)"));
    }
    if name.chars().count() > 200 || name.contains('\0') {
        return Err("the display name is over 200 characters".into());
    }
    let token = new_token();
    let now = crate::time::now();
    let result = sqlx::query(
        "INSERT INTO users (id, name, role, token_hash, created_at, token_issued_at, \
         token_expires_at) VALUES ($1, $2, $3, $4, $5, $5, $6)",
    )
    .bind(id.to_owned())
    .bind(name.to_owned())
    .bind(role.as_str())
    .bind(hash_token(&token))
    .bind(now)
    .bind(expires_ms.map(crate::time::format_ms))
    .execute(&store.pool)
    .await;
    match result {
        Ok(_) => Ok(token),
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
            Err(format!("user {id:?} already exists"))
        }
        Err(e) => Err(e.to_string()),
    }
}

/// Gives a user a new token, valid until `expires_ms` (`None`: no end), and returns it; the
/// old one stops working at once, revoked or not.
pub async fn rotate_token(
    store: &Store,
    id: &str,
    expires_ms: Option<i64>,
) -> Result<String, String> {
    let token = new_token();
    let updated = sqlx::query(
        "UPDATE users SET token_hash = $2, token_issued_at = $3, token_expires_at = $4, \
         token_revoked_at = NULL WHERE id = $1",
    )
    .bind(id.to_owned())
    .bind(hash_token(&token))
    .bind(crate::time::now())
    .bind(expires_ms.map(crate::time::format_ms))
    .execute(&store.pool)
    .await
    .map_err(|e| e.to_string())?;
    if updated.rows_affected() == 0 {
        return Err(format!("no user {id:?}"));
    }
    Ok(token)
}

/// Replaces `user`'s token `token` (the one their request came with) with a new one, and
/// returns it and when it expires: when the old one would have. Only if `token` is still
/// theirs and not revoked, so of two rotations racing with one token one wins (the other is
/// `401`, as any request with the old token now is).
pub async fn rotate_own_token(
    store: &Store,
    user: &User,
    token: &str,
) -> Result<(String, Option<String>), Problem> {
    let new = new_token();
    let row = sqlx::query(
        "UPDATE users SET token_hash = $3, token_issued_at = $4 \
         WHERE id = $1 AND token_hash = $2 AND token_revoked_at IS NULL \
         RETURNING token_expires_at",
    )
    .bind(user.id.clone())
    .bind(hash_token(token))
    .bind(hash_token(&new))
    .bind(crate::time::now())
    .fetch_optional(&store.pool)
    .await?
    .ok_or_else(|| Problem::unauthorized().detail("Unknown token."))?;
    Ok((new, get_opt_str(&row, "token_expires_at")?))
}

/// Stops a user's token from working, until [`rotate_token`] gives them a new one.
pub async fn revoke_token(store: &Store, id: &str) -> Result<(), String> {
    let updated = sqlx::query(
        "UPDATE users SET token_revoked_at = $2 WHERE id = $1 AND token_revoked_at IS NULL",
    )
    .bind(id.to_owned())
    .bind(crate::time::now())
    .execute(&store.pool)
    .await
    .map_err(|e| e.to_string())?;
    if updated.rows_affected() == 0 && !list_users(store).await?.iter().any(|u| u.id == id) {
        return Err(format!("no user {id:?}"));
    }
    Ok(())
}

/// A user as `sync-server user list` shows them: never their token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserEntry {
    pub id: String,
    pub name: String,
    pub role: String,
    pub token_issued_at: Option<String>,
    pub token_expires_at: Option<String>,
    pub token_revoked_at: Option<String>,
}

impl UserEntry {
    /// The token's state now, for a person: valid (until when), expired, or revoked.
    pub fn token_state(&self, now: &str) -> String {
        match (&self.token_revoked_at, &self.token_expires_at) {
            (Some(at), _) => format!("revoked {at}"),
            (None, Some(at)) if at.as_str() <= now => format!("expired {at}"),
            (None, Some(at)) => format!("valid until {at}"),
            (None, None) => "valid, no expiry".to_owned(),
        }
    }
}

/// Every user, by id.
pub async fn list_users(store: &Store) -> Result<Vec<UserEntry>, String> {
    let rows = sqlx::query(
        "SELECT id, name, role, token_issued_at, token_expires_at, token_revoked_at \
         FROM users ORDER BY id",
    )
    .fetch_all(&store.pool)
    .await
    .map_err(|e| e.to_string())?;
    rows.iter()
        .map(|row| {
            Ok(UserEntry {
                id: get_str(row, "id")?,
                name: get_str(row, "name")?,
                role: get_str(row, "role")?,
                token_issued_at: get_opt_str(row, "token_issued_at")?,
                token_expires_at: get_opt_str(row, "token_expires_at")?,
                token_revoked_at: get_opt_str(row, "token_revoked_at")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(|e| e.to_string())
}

/// Whether a user exists, read on `conn` (a write's own transaction, so it needs no second
/// connection from the pool while it holds one).
pub async fn user_exists(conn: &mut AnyConnection, id: &str) -> Result<bool, sqlx::Error> {
    let row = sqlx::query("SELECT id FROM users WHERE id = $1")
        .bind(id.to_owned())
        .fetch_optional(conn)
        .await?;
    Ok(row.is_some())
}
