//! `GET/PUT /project`: the project's settings (overlap, guidelines), one row, admins write.

use axum::extract::State;
use axum::http::HeaderMap;
use serde_json::{Value, json};
use sqlx::AnyConnection;

use crate::AppState;
use crate::auth::{Role, User};
use crate::http::{JsonBody, Reply, if_match};
use crate::problem::{Problem, Result};
use crate::store::{get_i64, get_opt_str};
use crate::validate::{check_body, text};

/// The settings as stored, or the defaults (version 0) before the first write.
pub struct Project {
    pub overlap: i64,
    pub guidelines_url: Option<String>,
    pub guidelines_markdown: Option<String>,
    pub version: i64,
    pub updated_at: Option<String>,
    pub updated_by: Option<String>,
}

impl Project {
    pub fn json(&self) -> Value {
        json!({
            "overlap": self.overlap,
            "guidelinesUrl": self.guidelines_url,
            "guidelinesMarkdown": self.guidelines_markdown,
            "version": self.version,
            "etag": crate::http::etag(self.version),
            "updatedAt": self.updated_at,
            "updatedBy": self.updated_by,
        })
    }
}

pub async fn load(conn: &mut AnyConnection) -> Result<Project> {
    let row = sqlx::query(
        "SELECT overlap, guidelines_url, guidelines_markdown, version, updated_at, updated_by \
         FROM project WHERE id = 'project'",
    )
    .fetch_optional(conn)
    .await?;
    let Some(row) = row else {
        return Ok(Project {
            overlap: 1,
            guidelines_url: None,
            guidelines_markdown: None,
            version: 0,
            updated_at: None,
            updated_by: None,
        });
    };
    Ok(Project {
        overlap: get_i64(&row, "overlap")?,
        guidelines_url: get_opt_str(&row, "guidelines_url")?,
        guidelines_markdown: get_opt_str(&row, "guidelines_markdown")?,
        version: get_i64(&row, "version")?,
        updated_at: get_opt_str(&row, "updated_at")?,
        updated_by: get_opt_str(&row, "updated_by")?,
    })
}

pub async fn get(State(state): State<AppState>, _user: User) -> Result<Reply> {
    let mut conn = state.store.pool.acquire().await?;
    let project = load(&mut conn).await?;
    Ok(Reply::ok(project.json()).version(project.version))
}

pub async fn put(
    State(state): State<AppState>,
    user: User,
    headers: HeaderMap,
    JsonBody(body, _): JsonBody,
) -> Result<Reply> {
    if user.role != Role::Admin {
        return Err(Problem::forbidden("Only an admin changes the project's settings."));
    }
    let base = if_match(&headers)?;
    check_body("ProjectWrite", &body)?;
    let overlap = body["overlap"].as_i64().unwrap_or(1);
    let (url, markdown) = (text(&body, "guidelinesUrl"), text(&body, "guidelinesMarkdown"));
    let mut tx = state.store.begin().await?;
    let current = load(&mut tx).await?;
    if current.version != base {
        return Err(Problem::conflict(
            "conflict",
            "project",
            Some(base),
            Some(current.version),
            current.json(),
            None,
        ));
    }
    let now = crate::time::now();
    let sql = if current.version == 0 {
        "INSERT INTO project (id, overlap, guidelines_url, guidelines_markdown, version, \
         updated_at, updated_by) VALUES ('project', $1, $2, $3, $4, $5, $6)"
    } else {
        "UPDATE project SET overlap = $1, guidelines_url = $2, guidelines_markdown = $3, \
         version = $4, updated_at = $5, updated_by = $6 WHERE id = 'project'"
    };
    sqlx::query(sql)
        .bind(overlap)
        .bind(url)
        .bind(markdown)
        .bind(base + 1)
        .bind(now)
        .bind(user.id.clone())
        .execute(&mut *tx)
        .await?;
    let before = json!({"version": base, "overlap": current.overlap});
    let after = json!({"version": base + 1, "overlap": overlap});
    crate::audit::record(&mut tx, &user.id, "project.updated", None, "project", before, after)
        .await?;
    let project = load(&mut tx).await?;
    tx.commit().await?;
    Ok(Reply::ok(project.json()).version(project.version))
}
