//! `PUT/GET/HEAD /screenshots/{sha256}`, `POST /screenshots:missing`: content-addressed
//! JPEG blobs, shared across runs.
//!
//! A blob is stored once, but read only by who may: whoever uploaded it, and whoever may see
//! a run one of whose steps shows it (migration 4's `screenshot_uploads` and
//! `run_screenshots`). To anyone else it is not there, on every route: `GET` and `HEAD` are
//! `404`, `missing` lists it, and their upload is answered as a first upload is, so nothing
//! says whether someone else stored the same image.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::AppState;
use crate::auth::{Role, User};
use crate::http::{JsonBody, Reply, SCREENSHOT_LIMIT, read_limited, require_content_type};
use crate::problem::{FieldError, Problem, Result};
use crate::store::{Sql, get_i64, get_str};
use crate::validate;

fn sha_param(sha: &str) -> Result<String> {
    if validate::is_sha256(sha) {
        Ok(sha.to_owned())
    } else {
        Err(Problem::bad_param("path.sha256", "must be a lowercase hex SHA-256 (64 digits)"))
    }
}

fn may_upload(user: &User) -> Result<()> {
    if user.role == Role::Reviewer {
        return Err(Problem::forbidden("Reviewers do not upload screenshots."));
    }
    Ok(())
}

fn blob_json(sha: &str, bytes: i64, created_at: &str) -> Value {
    json!({"sha256": sha, "mime": "image/jpeg", "bytes": bytes, "createdAt": created_at})
}

pub async fn put(
    State(state): State<AppState>,
    user: User,
    Path(sha): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Reply> {
    let sha = sha_param(&sha)?;
    may_upload(&user)?;
    require_content_type(&headers, "image/jpeg")?;
    let bytes = read_limited(&headers, body, SCREENSHOT_LIMIT, state.config.body_timeout).await?;
    if !bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return Err(Problem::unsupported_media_type("The body is not a JPEG (no FF D8 FF start)."));
    }
    // The key is the screenshot's content address, computed as the worker computes it.
    let actual = run_contract::digest::sha256_hex(&bytes);
    if actual != sha {
        return Err(Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "hash-mismatch",
            "Hash mismatch",
        )
        .detail(format!("The body's SHA-256 is {actual}, not the one in the path."))
        .errors(vec![FieldError::new("path.sha256", format!("the body's SHA-256 is {actual}"))]));
    }
    let mut tx = state.store.begin().await?;
    sqlx::query(
        "INSERT INTO screenshots (sha256, bytes, created_at, data) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (sha256) DO NOTHING",
    )
    .bind(sha.clone())
    .bind(bytes.len() as i64)
    .bind(crate::time::now())
    .bind(bytes.to_vec())
    .execute(&mut *tx)
    .await?;
    // The answer is about this user's upload, never about the blob's other uploaders.
    let uploaded = sqlx::query(
        "INSERT INTO screenshot_uploads (sha256, user_id, created_at) VALUES ($1, $2, $3) \
         ON CONFLICT (sha256, user_id) DO NOTHING",
    )
    .bind(sha.clone())
    .bind(user.id.clone())
    .bind(crate::time::now())
    .execute(&mut *tx)
    .await?;
    let row =
        sqlx::query("SELECT created_at FROM screenshot_uploads WHERE sha256 = $1 AND user_id = $2")
            .bind(sha.clone())
            .bind(user.id.clone())
            .fetch_one(&mut *tx)
            .await?;
    if uploaded.rows_affected() == 1 {
        let after = serde_json::json!({"sha256": sha});
        let target = format!("screenshot {sha}");
        let none = serde_json::Value::Null;
        crate::audit::record(&mut tx, &user.id, "screenshot.uploaded", None, &target, none, after)
            .await?;
    }
    tx.commit().await?;
    let body = blob_json(&sha, bytes.len() as i64, &get_str(&row, "created_at")?);
    let mut reply = Reply::ok(body);
    reply.etag = Some(format!("\"{sha}\""));
    if uploaded.rows_affected() == 1 {
        reply = reply.status(StatusCode::CREATED).location(format!("/screenshots/{sha}"));
    }
    Ok(reply)
}

/// Ends a query over screenshots aliased `b` with the condition that `user` may read them.
pub fn readable_by(sql: &mut Sql, user: &User) {
    sql.push(
        " AND (EXISTS (SELECT 1 FROM screenshot_uploads u WHERE u.sha256 = b.sha256 \
         AND u.user_id = ",
    )
    .text(&user.id)
    .push(
        ") OR EXISTS (SELECT 1 FROM run_screenshots x JOIN runs r ON r.id = x.run_id \
         WHERE x.sha256 = b.sha256",
    );
    if user.role == Role::Annotator {
        sql.push(" AND r.annotator = ").text(&user.id);
    }
    sql.push("))");
}

/// The stored size of a screenshot `user` may read, or `None` (absent or not theirs to read,
/// which nobody may tell apart).
pub async fn readable_size(
    conn: &mut sqlx::AnyConnection,
    user: &User,
    sha: &str,
) -> Result<Option<i64>> {
    let mut sql = Sql::new("SELECT b.bytes FROM screenshots b WHERE b.sha256 = ");
    sql.text(sha);
    readable_by(&mut sql, user);
    let row = sql.query().fetch_optional(conn).await?;
    Ok(match row {
        Some(row) => Some(get_i64(&row, "bytes")?),
        None => None,
    })
}

fn blob_headers(response: &mut Response, sha: &str, len: i64) {
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("image/jpeg"));
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, max-age=31536000, immutable"),
    );
    if let Ok(value) = HeaderValue::from_str(&format!("\"{sha}\"")) {
        headers.insert(header::ETAG, value);
    }
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
}

pub async fn get(
    State(state): State<AppState>,
    user: User,
    Path(sha): Path<String>,
) -> Result<Response> {
    let sha = sha_param(&sha)?;
    let mut sql = Sql::new("SELECT b.bytes, b.data FROM screenshots b WHERE b.sha256 = ");
    sql.text(&sha);
    readable_by(&mut sql, &user);
    let row = sql
        .query()
        .fetch_optional(&state.store.pool)
        .await?
        .ok_or_else(|| Problem::not_found("screenshot"))?;
    let data: Vec<u8> = sqlx::Row::try_get(&row, "data")?;
    let mut response = data.into_response();
    blob_headers(&mut response, &sha, get_i64(&row, "bytes")?);
    Ok(response)
}

/// `HEAD`: whether it is stored, without reading the blob; no body either way.
pub async fn head(
    State(state): State<AppState>,
    user: Result<User, Problem>,
    Path(sha): Path<String>,
) -> Response {
    let status = match (user, validate::is_sha256(&sha)) {
        (Err(problem), _) => problem.status,
        (Ok(_), false) => StatusCode::NOT_FOUND,
        (Ok(user), true) => {
            let size = match state.store.pool.acquire().await {
                Ok(mut conn) => readable_size(&mut conn, &user, &sha).await,
                Err(e) => Err(Problem::from(e)),
            };
            match size {
                Ok(Some(bytes)) => {
                    let mut response = StatusCode::OK.into_response();
                    blob_headers(&mut response, &sha, bytes);
                    return response;
                }
                Ok(None) => StatusCode::NOT_FOUND,
                Err(problem) => problem.status,
            }
        }
    };
    let mut response = status.into_response();
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

pub async fn missing(
    State(state): State<AppState>,
    user: User,
    JsonBody(body, _): JsonBody,
) -> Result<Reply> {
    may_upload(&user)?;
    validate::check_body("MissingRequest", &body)?;
    let mut hashes: Vec<String> = Vec::new();
    for sha in body["hashes"].as_array().into_iter().flatten().filter_map(Value::as_str) {
        if !hashes.iter().any(|h| h == sha) {
            hashes.push(sha.to_owned());
        }
    }
    let mut stored: Vec<String> = Vec::new();
    for chunk in hashes.chunks(500) {
        let mut sql = Sql::new("SELECT b.sha256 FROM screenshots b WHERE b.sha256 IN (");
        for (i, sha) in chunk.iter().enumerate() {
            if i > 0 {
                sql.push(", ");
            }
            sql.text(sha);
        }
        sql.push(")");
        // One stored but not theirs to read is missing to them: they upload it, which
        // proves they hold it.
        readable_by(&mut sql, &user);
        for row in sql.query().fetch_all(&state.store.pool).await? {
            stored.push(get_str(&row, "sha256")?);
        }
    }
    let missing: Vec<&String> = hashes.iter().filter(|h| !stored.contains(h)).collect();
    Ok(Reply::ok(json!({"missing": missing})))
}
