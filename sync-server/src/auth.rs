//! Users, roles and bearer tokens. A token is 32 random bytes shown once by
//! `sync-server user add`; only its SHA-256 is stored, so a database leak leaks no token.

use axum::extract::FromRequestParts;
use axum::http::header;
use axum::http::request::Parts;
use base64::Engine as _;
use run_contract::digest::sha256_hex;
use serde_json::{Value, json};
use sqlx::AnyConnection;

use crate::AppState;
use crate::problem::Problem;
use crate::store::{Store, get_str};

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
}

impl FromRequestParts<AppState> for User {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<User, Problem> {
        let value = parts.headers.get(header::AUTHORIZATION).ok_or_else(Problem::unauthorized)?;
        let value = value.to_str().map_err(|_| Problem::unauthorized())?;
        let (scheme, token) = value.trim().split_once(' ').ok_or_else(Problem::unauthorized)?;
        if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
            return Err(Problem::unauthorized());
        }
        let row = sqlx::query("SELECT id, name, role FROM users WHERE token_hash = $1")
            .bind(hash_token(token.trim()))
            .fetch_optional(&state.store.pool)
            .await?
            .ok_or_else(|| Problem::unauthorized().detail("Unknown token."))?;
        let role = get_str(&row, "role")?;
        Ok(User {
            id: get_str(&row, "id")?,
            name: get_str(&row, "name")?,
            role: Role::parse(&role).ok_or_else(|| Problem::internal("unknown role stored"))?,
        })
    }
}

pub fn hash_token(token: &str) -> String {
    sha256_hex(token.as_bytes())
}

/// A fresh random id (32 lowercase hex digits), for comments.
pub fn new_id() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// Creates a user and returns their token, which is stored only hashed.
pub async fn add_user(store: &Store, id: &str, name: &str, role: Role) -> Result<String, String> {
    if !crate::validate::is_user_id(id) {
        return Err(format!("{id:?} is not a valid user id (a-z, 0-9, '.', '_', '-'; 64 at most)"));
    }
    if name.chars().count() > 200 || name.contains('\0') {
        return Err("the display name is over 200 characters".into());
    }
    let token = format!(
        "as_{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(rand::random::<[u8; 32]>())
    );
    let result = sqlx::query(
        "INSERT INTO users (id, name, role, token_hash, created_at) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(id.to_owned())
    .bind(name.to_owned())
    .bind(role.as_str())
    .bind(hash_token(&token))
    .bind(crate::time::now())
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

/// Whether a user exists, read on `conn` (a write's own transaction, so it needs no second
/// connection from the pool while it holds one).
pub async fn user_exists(conn: &mut AnyConnection, id: &str) -> Result<bool, sqlx::Error> {
    let row = sqlx::query("SELECT id FROM users WHERE id = $1")
        .bind(id.to_owned())
        .fetch_optional(conn)
        .await?;
    Ok(row.is_some())
}
