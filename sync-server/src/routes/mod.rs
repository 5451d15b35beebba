//! The routes of `openapi.yaml`, one module per tag, and the router that joins them.

mod analytics;
mod assignments;
mod audit;
mod batch;
mod collections;
mod comments;
mod history;
mod hooks;
mod metrics;
mod notifications;
mod overlap;
mod project;
pub(crate) mod runs;
mod screenshots;
mod steps;
mod suggestions;
mod traces;
mod workflow;

use std::future::Future;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Path, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use serde_json::{Value, json};
use sqlx::Any;
use sqlx::any::AnyRow;
use sqlx::pool::PoolConnection;
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::AppState;
use crate::auth::User;
use crate::http::{JsonBody, OptionalJsonBody, Query, Reply, decode_cursor, page};
use crate::idempotency::Replay;
use crate::model;
use crate::problem::{Problem, Result};
use crate::store::Sql;
use crate::validate;

/// The operations of the contract this version answers `501` to, by `operationId`: none.
pub const NOT_IMPLEMENTED: [&str; 0] = [];

pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/healthz", get(health))
        .route("/users/me", get(me))
        .route("/users/me/token", post(rotate_my_token))
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
        .route("/runs:batchTransition", post(workflow::batch))
        .route("/project", get(project::get).put(project::put))
        .route(
            "/runs/{run_id}/assignees",
            get(assignments::get_assignees).put(assignments::put_assignees),
        )
        .route("/assignments:roundRobin", post(assignments::round_robin))
        .route("/users/me/queue", get(assignments::queue))
        .route("/users/me/queue/next", get(assignments::next))
        .route("/runs/{run_id}/annotations", get(overlap::list_sets))
        .route("/runs/{run_id}/annotations/{annotator}/steps", get(overlap::list_steps))
        .route("/runs/{run_id}/annotations/{annotator}/steps/{index}", put(overlap::put_step))
        .route("/runs/{run_id}/annotations/{annotator}/submit", post(overlap::submit))
        .route("/runs/{run_id}/agreement", get(overlap::get_agreement))
        .route("/runs/{run_id}/resolve", post(overlap::resolve))
        .route("/runs/{run_id}/metrics", get(metrics::get).post(metrics::report))
        .route("/collections", get(collections::list).post(collections::create))
        .route(
            "/collections/{collection_id}",
            get(collections::get).patch(collections::edit).delete(collections::delete),
        )
        .route("/analytics/annotators", get(analytics::annotators))
        .route("/analytics/agreement", get(analytics::agreement))
        .route("/webhooks", get(hooks::list).post(hooks::create))
        .route("/webhooks/{hook_id}", get(hooks::get).patch(hooks::edit).delete(hooks::delete))
        .route("/webhooks/{hook_id}/deliveries", get(hooks::deliveries))
        .route("/audit", get(audit::list))
        .route("/audit:export", get(audit::export))
        .route("/users/me/notifications", get(notifications::list))
        .route("/users/me/notifications/count", get(notifications::count))
        .route("/users/me/notifications/{notification_id}/read", post(notifications::read))
        .route("/users/me/notifications:readAll", post(notifications::read_all))
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

/// `POST /users/me/token`: the caller's new token, answered once; the one sent stops working.
async fn rotate_my_token(
    State(state): State<AppState>,
    user: User,
    headers: HeaderMap,
) -> Result<Response> {
    let token = crate::auth::bearer(&headers)?;
    let (token, expires_at) = crate::auth::rotate_own_token(&state.store, &user, token).await?;
    // Which token is never said: only that one was rotated.
    let mut conn = state.store.pool.acquire().await?;
    let (before, after) = (json!({"token": "previous"}), json!({"token": "new"}));
    crate::audit::record(&mut conn, &user.id, "token.rotated", None, "token", before, after)
        .await?;
    let reply = Reply::ok(json!({"token": token, "expiresAt": expires_at}));
    // The answer holds a secret: no cache may keep it.
    let no_store = [(header::CACHE_CONTROL, HeaderValue::from_static("no-store"))];
    Ok((no_store, reply).into_response())
}

/// A run read by id for the caller: the `runId` segment checked, a connection, and the run
/// if they may see it (`404` otherwise).
pub async fn read_run(
    state: &AppState,
    user: &User,
    run_id: &str,
) -> Result<(PoolConnection<Any>, model::RunRow)> {
    let run_id = run_id_param(run_id)?;
    let mut conn = state.store.pool.acquire().await?;
    let run = model::visible_run(&mut conn, user, &run_id).await?;
    Ok((conn, run))
}

/// A page of a list that is not under one run (the queue, collections, the audit log,
/// notifications, a hook's deliveries): `limit` and `cursor` taken from the query after the
/// list's own filters, the cursor only reused with the same `filters`.
pub struct Paged {
    pub limit: i64,
    pub after: Option<Value>,
    filters: String,
}

impl Paged {
    /// Takes `limit` and `cursor`, ends the query, and reads the cursor.
    pub fn read(mut query: Query, filters: &Value) -> Result<Paged> {
        let limit = query.limit()?;
        let cursor = query.one("cursor")?;
        query.finish()?;
        let filters = filters.to_string();
        let after = decode_cursor(cursor, &filters)?;
        Ok(Paged { limit, after, filters })
    }

    /// The cursor's key as a `[text, text]` pair (a time and an id).
    pub fn after_pair(&self) -> Result<Option<(String, String)>> {
        let Some(after) = &self.after else { return Ok(None) };
        match (after[0].as_str(), after[1].as_str()) {
            (Some(a), Some(b)) => Ok(Some((a.to_owned(), b.to_owned()))),
            _ => Err(Problem::bad_param("query.cursor", "is not a cursor this server made")),
        }
    }

    /// The page of `rows` (fetched with `LIMIT limit + 1`), keyed by `key`.
    pub fn page<R>(
        &self,
        rows: &[R],
        key: impl Fn(&R) -> Result<Value>,
        item: impl FnMut(&R) -> Result<Value>,
    ) -> Result<Reply> {
        page(rows, self.limit, &self.filters, key, item)
    }

    /// Runs `sql` newest first by its `seq` column, after the cursor's, and answers the page.
    pub async fn newest_first<I>(&self, mut sql: Sql, state: &AppState, item: I) -> Result<Reply>
    where
        I: FnMut(&AnyRow) -> Result<Value>,
    {
        if let Some(seq) = self.after.as_ref().and_then(Value::as_i64) {
            sql.push(" AND seq < ").int(seq);
        }
        sql.push(" ORDER BY seq DESC LIMIT ").int(self.limit + 1);
        let rows = sql.query().fetch_all(&state.store.pool).await?;
        self.page(&rows, |last| Ok(json!(crate::store::get_i64(last, "seq")?)), item)
    }
}

/// A `runId` path segment.
pub fn run_id_param(id: &str) -> Result<String> {
    if validate::is_id(id) {
        Ok(id.to_owned())
    } else {
        Err(Problem::bad_param("path.runId", "must be an id (letters, digits, '.', '_', '-')"))
    }
}

/// Another id path segment (`commentId`, `traceId`): `name` names it in a `400`.
pub fn id_param(name: &str, id: &str) -> Result<String> {
    if validate::is_id(id) {
        Ok(id.to_owned())
    } else {
        Err(Problem::bad_param(&format!("path.{name}"), "must be an id"))
    }
}

/// A step `index` path segment: 0–1999.
pub fn index_param(index: &str) -> Result<i64> {
    match index.parse::<i64>() {
        Ok(n) if (0..2000).contains(&n) && !index.starts_with('+') => Ok(n),
        _ => Err(Problem::bad_param("path.index", "must be an integer from 0 to 1999")),
    }
}

/// A POST to a run (`/runs/{runId}/…`, `…/comments/{commentId}/resolve`), for the writes
/// there: the run id (checked after the body is read, so a bad body is answered first), the
/// path's other ids, the headers, and the JSON body, `Option`al for an [`ItemPost`].
pub struct RunPost<B = Value> {
    pub run_id: String,
    ids: Vec<String>,
    pub headers: HeaderMap,
    pub body: B,
    raw: Bytes,
}

/// A POST to an item of a run whose body may be left out (resolving a thread, deciding on a
/// suggestion).
pub type ItemPost = RunPost<Option<Value>>;

/// The parts of a [`RunPost`]: the path's ids, the headers, and the body as `B` reads it.
async fn read_post<B>(
    req: Request,
    state: &AppState,
) -> Rejected<(String, Vec<String>, HeaderMap, B)>
where
    B: FromRequest<AppState, Rejection = Problem>,
{
    let (mut parts, body) = req.into_parts();
    let path = Path::<Vec<String>>::from_request_parts(&mut parts, state).await;
    let Path(ids) = path.map_err(IntoResponse::into_response)?;
    let headers = parts.headers.clone();
    let body = B::from_request(Request::from_parts(parts, body), state).await;
    let body = body.map_err(IntoResponse::into_response)?;
    let mut ids = ids.into_iter();
    let run_id = run_id_param(&ids.next().unwrap_or_default());
    let run_id = run_id.map_err(IntoResponse::into_response)?;
    Ok((run_id, ids.collect(), headers, body))
}

/// An extractor's refusal: a problem, or axum's own answer for a path it cannot read.
type Rejected<T> = std::result::Result<T, Response>;

impl FromRequest<AppState> for RunPost {
    type Rejection = Response;

    async fn from_request(req: Request, state: &AppState) -> Rejected<Self> {
        let (run_id, ids, headers, JsonBody(body, raw)) = read_post(req, state).await?;
        Ok(RunPost { run_id, ids, headers, body, raw })
    }
}

impl FromRequest<AppState> for ItemPost {
    type Rejection = Response;

    async fn from_request(req: Request, state: &AppState) -> Rejected<Self> {
        let (run_id, ids, headers, OptionalJsonBody(body, raw)) = read_post(req, state).await?;
        Ok(RunPost { run_id, ids, headers, body, raw })
    }
}

impl<B> RunPost<B> {
    /// The path's id after the run's, which `name` names in a `400`.
    pub fn id(&self, name: &str) -> Result<String> {
        id_param(name, self.ids.first().map_or("", String::as_str))
    }

    /// Runs `act` unless this is a retry of `POST /runs/{runId}/{what}` whose answer is kept
    /// (see `idempotency`).
    pub async fn once<F, Fut>(
        &self,
        state: &AppState,
        user: &User,
        what: &str,
        act: F,
    ) -> Result<Reply>
    where
        F: FnOnce(Replay) -> Fut,
        Fut: Future<Output = Result<Reply>>,
    {
        let request = format!("POST /runs/{}/{what}", self.run_id);
        crate::idempotency::once(state, user, &self.headers, &request, &self.raw, act).await
    }
}

/// What a write under `POST /runs/{runId}/…` acts with once it is sure to act (see
/// [`RunPost::write`]): the server, the caller, the run's id and the request's body.
pub struct Write<'a> {
    pub state: &'a AppState,
    pub user: &'a User,
    pub run_id: &'a str,
    pub body: &'a Value,
}

impl RunPost {
    /// [`RunPost::once`] for a write that acts on the post's run with its body.
    pub async fn write<'a, F, Fut>(
        &'a self,
        state: &'a AppState,
        user: &'a User,
        what: &str,
        act: F,
    ) -> Result<Reply>
    where
        F: FnOnce(Write<'a>, Replay) -> Fut,
        Fut: Future<Output = Result<Reply>>,
    {
        let write = Write { state, user, run_id: &self.run_id, body: &self.body };
        self.once(state, user, what, |replay| act(write, replay)).await
    }
}

/// A list under one run (its steps, traces, comments, suggestions, versions), taken from
/// the request: the run id and the page's size and cursor. The route reads its own filters
/// from `query`, then [`RunList::open`]s it.
pub struct RunList {
    pub run_id: String,
    pub query: Query,
    limit: i64,
    cursor: Option<String>,
}

impl FromRequestParts<AppState> for RunList {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Rejected<Self> {
        let path = Path::<String>::from_request_parts(parts, state).await;
        let Path(run_id) = path.map_err(IntoResponse::into_response)?;
        RunList::read(&run_id, parts.uri.query()).map_err(IntoResponse::into_response)
    }
}

impl RunList {
    fn read(run_id: &str, query: Option<&str>) -> Result<RunList> {
        let run_id = run_id_param(run_id)?;
        let mut query = Query::parse(query)?;
        let limit = query.limit()?;
        let cursor = query.one("cursor")?;
        Ok(RunList { run_id, query, limit, cursor })
    }

    /// Ends the query and, if the caller may see the run, opens a connection. `filters`
    /// (the list's name, the run, the filters) are what a cursor is only reused with.
    pub async fn open(self, state: &AppState, user: &User, filters: Value) -> Result<OpenList> {
        self.query.finish()?;
        let filters = filters.to_string();
        let after = decode_cursor(self.cursor, &filters)?;
        let mut conn = state.store.pool.acquire().await?;
        let run = model::visible_run(&mut conn, user, &self.run_id).await?;
        Ok(OpenList { run_id: self.run_id, run, limit: self.limit, after, conn, filters })
    }
}

/// A [`RunList`] the caller may see.
pub struct OpenList {
    pub run_id: String,
    /// The run as read when the list opened (lists whose rules depend on it need no second read).
    pub run: model::RunRow,
    limit: i64,
    /// The sort key of the last item before this page, from the cursor.
    after: Option<Value>,
    conn: PoolConnection<Any>,
    filters: String,
}

impl OpenList {
    /// The cursor's key read by `read`; `400` if it is not one.
    pub fn after<'a, T>(&'a self, read: impl FnOnce(&'a Value) -> Option<T>) -> Result<Option<T>> {
        let bad = || Problem::bad_param("query.cursor", "is not valid");
        self.after.as_ref().map(|after| read(after).ok_or_else(bad)).transpose()
    }

    /// Answers a page of a conversation list (comments, suggestions): after the cursor's
    /// sequence number in `column` if there is one, in sequence order, each row through
    /// `item`.
    pub async fn page_by_seq<I>(&mut self, mut sql: Sql, column: &str, item: I) -> Result<Reply>
    where
        I: FnMut(&AnyRow) -> Result<Value>,
    {
        if let Some(seq) = self.after(Value::as_i64)? {
            sql.push(&format!(" AND {column} > ")).int(seq);
        }
        sql.push(&format!(" ORDER BY {column}"));
        self.page(sql, |last| Ok(json!(crate::store::get_i64(last, "seq")?)), item).await
    }

    /// Runs `sql` (its `LIMIT` added here: one row more than a page, to know if another
    /// follows) and answers the page, each row through `item`, the cursor on `key`.
    pub async fn page<R, I>(&mut self, mut sql: Sql, key: R, item: I) -> Result<Reply>
    where
        R: Fn(&AnyRow) -> Result<Value>,
        I: FnMut(&AnyRow) -> Result<Value>,
    {
        sql.push(" LIMIT ").int(self.limit + 1);
        let rows = sql.query().fetch_all(&mut *self.conn).await?;
        page(&rows, self.limit, &self.filters, key, item)
    }
}
