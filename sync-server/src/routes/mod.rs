//! The routes of `openapi.yaml`, one module per tag, and the router that joins them.

mod batch;
mod comments;
mod history;
mod runs;
mod screenshots;
mod steps;
mod suggestions;
mod traces;
mod workflow;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use serde_json::json;
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::AppState;
use crate::auth::User;
use crate::http::Reply;
use crate::problem::{Problem, Result};
use crate::validate;

/// The operations of the contract this version answers `501` to, by `operationId`: none.
pub const NOT_IMPLEMENTED: [&str; 0] = [];

pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/healthz", get(health))
        .route("/users/me", get(me))
        .route("/runs", get(runs::list))
        .route("/runs:batchUpsert", post(batch::upsert))
        .route("/runs/{run_id}", get(runs::get).put(runs::put))
        .route("/runs/{run_id}/transitions", get(workflow::options).post(workflow::transition))
        .route("/runs/{run_id}/steps", get(steps::list))
        .route("/runs/{run_id}/steps/{index}", get(steps::get).put(steps::put))
        .route("/runs/{run_id}/traces", get(traces::list))
        .route("/runs/{run_id}/traces/{trace_id}", get(traces::get).put(traces::put))
        .route("/screenshots:missing", post(screenshots::missing))
        .route(
            "/screenshots/{sha256}",
            put(screenshots::put).get(screenshots::get).head(screenshots::head),
        )
        .route("/runs/{run_id}/comments", get(comments::list).post(comments::create))
        .route(
            "/runs/{run_id}/comments/{comment_id}",
            axum::routing::patch(comments::edit).delete(comments::delete),
        )
        .route("/runs/{run_id}/comments/{comment_id}/resolve", post(comments::resolve))
        .route("/runs/{run_id}/comments/{comment_id}/reopen", post(comments::reopen))
        .route("/runs/{run_id}/suggestions", get(suggestions::list).post(suggestions::create))
        .route(
            "/runs/{run_id}/suggestions/{suggestion_id}",
            axum::routing::delete(suggestions::withdraw),
        )
        .route("/runs/{run_id}/suggestions/{suggestion_id}/accept", post(suggestions::accept))
        .route("/runs/{run_id}/suggestions/{suggestion_id}/reject", post(suggestions::reject))
        .route("/runs/{run_id}/versions", get(history::list))
        .route("/runs/{run_id}/versions/{version}", get(history::get))
        .route("/runs/{run_id}/versions/{version}/steps/{index}", get(history::step_at))
        .route("/runs/{run_id}/diff", get(history::diff_versions))
        .route("/runs/{run_id}/rollback", post(history::rollback))
        .fallback(|| async { Problem::not_found("route") })
        .method_not_allowed_fallback(|| async {
            Problem::new(StatusCode::METHOD_NOT_ALLOWED, "method-not-allowed", "Method not allowed")
                .detail("This path does not answer that method.")
        })
        .layer(cors(&state.config.cors_origins))
        .layer(axum::middleware::map_response(nosniff))
        .with_state(state)
}

/// Every answer says its `Content-Type` is the truth: a browser must not guess another (a
/// screenshot read as HTML, say) from the bytes.
async fn nosniff(mut response: Response) -> Response {
    let nosniff = HeaderValue::from_static("nosniff");
    response.headers_mut().insert(header::X_CONTENT_TYPE_OPTIONS, nosniff);
    response
}

/// CORS for the annotation page: the configured origins, or any `chrome-extension://` one.
fn cors(origins: &[String]) -> CorsLayer {
    let origins = origins.to_vec();
    let allow = AllowOrigin::predicate(move |origin: &HeaderValue, _| {
        let origin = origin.to_str().unwrap_or("");
        if origins.is_empty() {
            origin.starts_with("chrome-extension://")
        } else {
            origins.iter().any(|o| o == origin)
        }
    });
    CorsLayer::new()
        .allow_origin(allow)
        .allow_methods([
            Method::GET,
            Method::HEAD,
            Method::PUT,
            Method::POST,
            Method::PATCH,
            Method::DELETE,
        ])
        .allow_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            header::IF_MATCH,
            header::IF_NONE_MATCH,
            header::HeaderName::from_static("idempotency-key"),
        ])
        .expose_headers([header::ETAG, header::LOCATION, header::RETRY_AFTER])
        .max_age(std::time::Duration::from_secs(600))
}

async fn health(State(state): State<AppState>) -> Result<Reply> {
    // Anyone may call it, so the database's own words (hosts, users, paths) stay in the log.
    sqlx::query("SELECT 1 AS one").fetch_one(&state.store.pool).await.map_err(|e| {
        eprintln!("sync-server: /healthz: the database is unreachable: {e}");
        Problem::unavailable("The database is unreachable.")
    })?;
    Ok(Reply::ok(json!({
        "status": "ok",
        "database": state.store.backend.name(),
        "version": env!("CARGO_PKG_VERSION"),
    })))
}

async fn me(user: User) -> impl IntoResponse {
    Reply::ok(user.to_json())
}

/// A `runId` path segment.
pub fn run_id_param(id: &str) -> Result<String> {
    if validate::is_id(id) {
        Ok(id.to_owned())
    } else {
        Err(Problem::bad_param("path.runId", "must be an id (letters, digits, '.', '_', '-')"))
    }
}

/// A step `index` path segment: 0–1999.
pub fn index_param(index: &str) -> Result<i64> {
    match index.parse::<i64>() {
        Ok(n) if (0..2000).contains(&n) && !index.starts_with('+') => Ok(n),
        _ => Err(Problem::bad_param("path.index", "must be an integer from 0 to 1999")),
    }
}

/// Ends a conversation list's query (comments, suggestions): after the cursor's sequence
/// number if there is one, in sequence order, one more row than a page to know if another
/// follows.
pub fn after_seq(
    sql: &mut crate::store::Sql,
    after: Option<serde_json::Value>,
    column: &str,
    limit: i64,
) -> Result<()> {
    if let Some(after) = after {
        let seq =
            after.as_i64().ok_or_else(|| Problem::bad_param("query.cursor", "is not valid"))?;
        sql.push(&format!(" AND {column} > ")).int(seq);
    }
    sql.push(&format!(" ORDER BY {column} LIMIT ")).int(limit + 1);
    Ok(())
}
