//! Errors as RFC 9457 problem details (`application/problem+json`), the only error shape
//! the server answers with. `type` is `urn:alphascout:problem:<kind>`.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

/// One problem in a request, with a JSON Pointer into the body (`/thoughts/thought2`; `""`
/// for the whole body), or `query.<name>`, `header.<name>`, `path.<name>` outside it: the
/// problem type every checker of the product reports.
pub type FieldError = run_contract::Problem;

#[derive(Debug)]
pub struct Problem {
    pub status: StatusCode,
    pub kind: &'static str,
    pub title: &'static str,
    pub detail: Option<String>,
    pub errors: Vec<FieldError>,
    /// Extension members: `allowed`, and the conflict members.
    pub extra: Map<String, Value>,
}

impl Problem {
    pub fn new(status: StatusCode, kind: &'static str, title: &'static str) -> Self {
        Self { status, kind, title, detail: None, errors: Vec::new(), extra: Map::new() }
    }

    pub fn detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    pub fn errors(mut self, errors: Vec<FieldError>) -> Self {
        self.errors = errors;
        self
    }

    pub fn with(mut self, key: &str, value: Value) -> Self {
        self.extra.insert(key.into(), value);
        self
    }

    pub fn bad_request(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad-request", "Bad request").detail(detail)
    }

    /// A `400` naming one parameter (`query.limit`, `header.If-Match`, `path.index`).
    pub fn bad_param(path: &str, message: impl Into<String>) -> Self {
        let message = message.into();
        Self::bad_request(format!("{path}: {message}")).errors(vec![FieldError::new(path, message)])
    }

    pub fn unauthorized() -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthorized", "Unauthorized").detail(
            "Send `Authorization: Bearer <token>` with a token from `sync-server user add`.",
        )
    }

    pub fn forbidden(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "forbidden", "Forbidden").detail(detail)
    }

    pub fn not_found(what: &str) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not-found", "Not found")
            .detail(format!("No such {what}."))
    }

    /// `422` listing every problem found.
    pub fn validation(errors: Vec<FieldError>) -> Self {
        let detail = match errors.as_slice() {
            [one] => format!("{}: {}", display_path(&one.path), one.message),
            many => format!("{} problems in the request.", many.len()),
        };
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, "validation", "Validation failed")
            .detail(detail)
            .errors(errors)
    }

    pub fn invalid(path: &str, message: impl Into<String>) -> Self {
        Self::validation(vec![FieldError::new(path, message)])
    }

    pub fn precondition_required(detail: impl Into<String>) -> Self {
        Self::new(
            StatusCode::PRECONDITION_REQUIRED,
            "precondition-required",
            "Precondition required",
        )
        .detail(detail)
    }

    pub fn payload_too_large(limit: usize) -> Self {
        Self::new(StatusCode::PAYLOAD_TOO_LARGE, "payload-too-large", "Payload too large")
            .detail(format!("The body is over {limit} bytes."))
    }

    /// A body that did not arrive in time; the connection is closed after the answer.
    pub fn request_timeout(deadline: std::time::Duration) -> Self {
        Self::new(StatusCode::REQUEST_TIMEOUT, "request-timeout", "Request timeout")
            .detail(format!("The body did not arrive within {} s.", deadline.as_secs()))
    }

    pub fn unsupported_media_type(detail: impl Into<String>) -> Self {
        let (status, kind) = (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported-media-type");
        Self::new(status, kind, "Unsupported media type").detail(detail)
    }

    /// A stale write (or a create that found the resource, or a decision on something no
    /// longer pending): carries the current record for a three-way merge.
    pub fn conflict(
        kind: &'static str,
        resource: &str,
        base: Option<i64>,
        current_version: Option<i64>,
        current: Value,
        changed_paths: Option<Vec<String>>,
    ) -> Self {
        let title = match kind {
            "already-exists" => "Already exists",
            "not-pending" => "No longer pending",
            "pending-suggestions" => "Suggestions pending",
            _ => "Conflict",
        };
        let detail = match (kind, base, current_version) {
            ("already-exists", ..) => format!("The {resource} already exists."),
            (_, Some(base), Some(now)) => format!(
                "The {resource} changed after version {base} (now {now}); merge and resend with \
                 If-Match: \"{now}\"."
            ),
            _ => format!("The {resource} differs from what this write expected."),
        };
        let mut problem = Self::new(StatusCode::CONFLICT, kind, title)
            .detail(detail)
            .with("resource", json!(resource))
            .with("baseVersion", json!(base))
            .with("currentVersion", json!(current_version))
            .with("current", current);
        if let Some(paths) = changed_paths {
            problem = problem.with("changedPaths", json!(paths));
        }
        problem
    }

    pub fn not_implemented(operation_id: &str) -> Self {
        Self::new(StatusCode::NOT_IMPLEMENTED, "not-implemented", "Not implemented")
            .detail(format!("`{operation_id}` is in the contract but not implemented yet."))
            .with("operation", json!(operation_id))
    }

    pub fn internal(error: impl std::fmt::Display) -> Self {
        eprintln!("sync-server: internal error: {error}");
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "Internal server error")
            .detail("The server failed; the error is in its log.")
    }

    pub fn unavailable(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", "Unavailable").detail(detail)
    }

    pub fn to_json(&self) -> Value {
        let mut body = Map::new();
        body.insert("type".into(), json!(format!("urn:alphascout:problem:{}", self.kind)));
        body.insert("title".into(), json!(self.title));
        body.insert("status".into(), json!(self.status.as_u16()));
        if let Some(detail) = &self.detail {
            body.insert("detail".into(), json!(detail));
        }
        if !self.errors.is_empty() {
            let errors: Vec<Value> =
                self.errors.iter().map(|e| json!({"path": e.path, "message": e.message})).collect();
            body.insert("errors".into(), Value::Array(errors));
        }
        for (key, value) in &self.extra {
            body.insert(key.clone(), value.clone());
        }
        Value::Object(body)
    }
}

fn display_path(path: &str) -> &str {
    if path.is_empty() { "body" } else { path }
}

impl From<sqlx::Error> for Problem {
    fn from(error: sqlx::Error) -> Self {
        Self::internal(error)
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let body = serde_json::to_vec(&self.to_json()).unwrap_or_default();
        let mut response = (self.status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/problem+json"));
        if self.status == StatusCode::UNAUTHORIZED {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if self.status == StatusCode::REQUEST_TIMEOUT {
            // The rest of the body may still come: the connection cannot carry another request.
            headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        response
    }
}

pub type Result<T, E = Problem> = std::result::Result<T, E>;
