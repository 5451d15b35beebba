//! HTTP plumbing shared by the routes: bodies read under a size limit, preconditions
//! (`If-Match`, `If-None-Match`), query strings, opaque cursors, and the reply type.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde_json::Value;

use crate::AppState;
use crate::problem::{Problem, Result};

/// JSON request bodies: 10 MiB, the shared contract's (clients split batches by it).
pub const JSON_LIMIT: usize = run_contract::limits::JSON_BODY_BYTES;
/// Screenshots: 5 MiB.
pub const SCREENSHOT_LIMIT: usize = 5 * 1024 * 1024;

/// Reads a body of at most `limit` bytes (`413` past it, by `Content-Length` or as read)
/// within `deadline` (`408` past it, and the connection is closed).
pub async fn read_limited(
    headers: &HeaderMap,
    body: Body,
    limit: usize,
    deadline: Duration,
) -> Result<Bytes> {
    let declared = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok());
    if declared.and_then(|v| v.parse::<u64>().ok()).is_some_and(|n| n > limit as u64) {
        return Err(Problem::payload_too_large(limit));
    }
    let read = tokio::time::timeout(deadline, axum::body::to_bytes(body, limit));
    let read = read.await.map_err(|_| Problem::request_timeout(deadline))?;
    read.map_err(|e| {
        if e.into_inner().is::<http_body_util::LengthLimitError>() {
            Problem::payload_too_large(limit)
        } else {
            Problem::bad_request("The request body could not be read.")
        }
    })
}

fn content_type(headers: &HeaderMap) -> String {
    let value = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    value.split(';').next().unwrap_or("").trim().to_ascii_lowercase()
}

/// A JSON request body, parsed but not yet validated; `415` unless `application/json`,
/// `413` over [`JSON_LIMIT`], `400` if it is not JSON. Also keeps the raw bytes (for
/// idempotency fingerprints).
pub struct JsonBody(pub Value, pub Bytes);

impl FromRequest<AppState> for JsonBody {
    type Rejection = Problem;

    async fn from_request(req: Request, state: &AppState) -> Result<Self> {
        let (parts, body) = req.into_parts();
        let kind = content_type(&parts.headers);
        if kind != "application/json" && !kind.ends_with("+json") {
            return Err(Problem::unsupported_media_type("Send the body as application/json."));
        }
        let deadline = state.config.body_timeout;
        let bytes = read_limited(&parts.headers, body, JSON_LIMIT, deadline).await?;
        if bytes.is_empty() {
            return Err(Problem::bad_request("A JSON body is required."));
        }
        let value = serde_json::from_slice(&bytes)
            .map_err(|e| Problem::bad_request(format!("The body is not valid JSON: {e}.")))?;
        Ok(JsonBody(value, bytes))
    }
}

/// An optional JSON body (for POSTs whose body is optional), with its raw bytes (empty when
/// there is none).
pub struct OptionalJsonBody(pub Option<Value>, pub Bytes);

impl FromRequest<AppState> for OptionalJsonBody {
    type Rejection = Problem;

    async fn from_request(req: Request, state: &AppState) -> Result<Self> {
        let empty = req.headers().get(header::CONTENT_LENGTH).is_some_and(|v| v == "0")
            || (req.headers().get(header::CONTENT_TYPE).is_none()
                && req.headers().get(header::TRANSFER_ENCODING).is_none());
        if empty {
            return Ok(OptionalJsonBody(None, Bytes::new()));
        }
        let JsonBody(value, raw) = JsonBody::from_request(req, state).await?;
        Ok(OptionalJsonBody(Some(value), raw))
    }
}

pub fn require_content_type(headers: &HeaderMap, wanted: &str) -> Result<()> {
    if content_type(headers) == wanted {
        Ok(())
    } else {
        Err(Problem::unsupported_media_type(format!("Send the body as {wanted}.")))
    }
}

// ---------------------------------------------------------------------- preconditions

/// What a write is based on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precondition {
    /// `If-None-Match: *`: create; the resource must not exist.
    Create,
    /// `If-Match: "<version>"`.
    Match(i64),
}

/// `"<version>"` as a number.
fn parse_version_tag(text: &str) -> Option<i64> {
    let inner = text.trim().strip_prefix('"')?.strip_suffix('"')?;
    if inner.is_empty() || inner.len() > 18 || !inner.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    inner.parse().ok()
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Result<Option<&'a str>> {
    match headers.get(name) {
        None => Ok(None),
        Some(value) => value
            .to_str()
            .map(Some)
            .map_err(|_| Problem::bad_param(&format!("header.{name}"), "must be visible ASCII")),
    }
}

/// `If-Match` on a write that cannot create: required, and never `*`.
pub fn if_match(headers: &HeaderMap) -> Result<i64> {
    match header_str(headers, "If-Match")? {
        None => Err(Problem::precondition_required(
            "Send If-Match: \"<version>\" with the version this write is based on.",
        )),
        Some(v) if v.trim() == "*" => Err(Problem::precondition_required(
            "If-Match: * would skip the version check; send the version this write is based on.",
        )),
        Some(v) => parse_version_tag(v)
            .ok_or_else(|| Problem::bad_param("header.If-Match", "must be \"<version>\"")),
    }
}

/// `If-Match` where it is optional: checked when sent.
pub fn optional_if_match(headers: &HeaderMap) -> Result<Option<i64>> {
    if headers.get("If-Match").is_none() { Ok(None) } else { if_match(headers).map(Some) }
}

/// Exactly one of `If-Match: "<version>"` and `If-None-Match: *`.
pub fn write_precondition(headers: &HeaderMap) -> Result<Precondition> {
    let none_match = header_str(headers, "If-None-Match")?;
    let has_match = headers.get("If-Match").is_some();
    match (none_match, has_match) {
        (Some(_), true) => Err(Problem::precondition_required(
            "Send either If-Match (update) or If-None-Match: * (create), not both.",
        )),
        (Some(v), false) if v.trim() == "*" => Ok(Precondition::Create),
        (Some(_), false) => Err(Problem::bad_param(
            "header.If-None-Match",
            "must be * on a write (create only if missing)",
        )),
        (None, true) => if_match(headers).map(Precondition::Match),
        (None, false) => Err(Problem::precondition_required(
            "Send If-None-Match: * to create, or If-Match: \"<version>\" to update.",
        )),
    }
}

/// Whether a read's `If-None-Match` names the current `version` (so `304`).
pub fn not_modified(headers: &HeaderMap, version: i64) -> bool {
    let Some(value) = headers.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    value.split(',').any(|tag| {
        let tag = tag.trim();
        tag == "*" || parse_version_tag(tag.trim_start_matches("W/")) == Some(version)
    })
}

pub fn etag(version: i64) -> String {
    format!("\"{version}\"")
}

// ---------------------------------------------------------------------- query strings

// A query string is what a form sends: `+` is a space.
use run_contract::url::form_decode;

/// A parsed query string; each parameter must be taken, and [`Query::finish`] refuses the
/// rest, so a misspelt filter is a `400` rather than silently ignored.
pub struct Query {
    pairs: Vec<(String, String)>,
}

/// A handler takes the query string parsed, as `mut query: Query`; an unreadable one is a `400`.
impl<S: Sync> FromRequestParts<S> for Query {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Query> {
        Query::parse(parts.uri.query())
    }
}

impl Query {
    pub fn parse(raw: Option<&str>) -> Result<Query> {
        let mut pairs = Vec::new();
        for part in raw.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (key, value) = part.split_once('=').unwrap_or((part, ""));
            let key = form_decode(key)
                .ok_or_else(|| Problem::bad_request("The query string is not valid."))?;
            let value = form_decode(value)
                .filter(|v| !v.contains('\0'))
                .ok_or_else(|| Problem::bad_param(&format!("query.{key}"), "is not valid text"))?;
            pairs.push((key, value));
        }
        Ok(Query { pairs })
    }

    /// Every value of a repeatable parameter.
    pub fn all(&mut self, name: &str) -> Vec<String> {
        let (taken, rest): (Vec<_>, Vec<_>) = self.pairs.drain(..).partition(|(k, _)| k == name);
        self.pairs = rest;
        taken.into_iter().map(|(_, v)| v).collect()
    }

    /// The one value of a parameter.
    pub fn one(&mut self, name: &str) -> Result<Option<String>> {
        let mut values = self.all(name);
        match values.len() {
            0 => Ok(None),
            1 => Ok(values.pop()),
            _ => Err(Problem::bad_param(&format!("query.{name}"), "must be given once")),
        }
    }

    pub fn int(&mut self, name: &str, min: i64, max: i64) -> Result<Option<i64>> {
        let Some(value) = self.one(name)? else { return Ok(None) };
        match value.parse::<i64>() {
            Ok(n) if (min..=max).contains(&n) => Ok(Some(n)),
            _ => Err(Problem::bad_param(
                &format!("query.{name}"),
                format!("must be an integer from {min} to {max}"),
            )),
        }
    }

    pub fn boolean(&mut self, name: &str) -> Result<Option<bool>> {
        match self.one(name)?.as_deref() {
            None => Ok(None),
            Some("true") => Ok(Some(true)),
            Some("false") => Ok(Some(false)),
            Some(_) => Err(Problem::bad_param(&format!("query.{name}"), "must be true or false")),
        }
    }

    /// `limit`: 1–200, default 50.
    pub fn limit(&mut self) -> Result<i64> {
        Ok(self.int("limit", 1, 200)?.unwrap_or(50))
    }

    pub fn finish(self) -> Result<()> {
        match self.pairs.first() {
            None => Ok(()),
            Some((key, _)) => {
                Err(Problem::bad_param(&format!("query.{key}"), "is not a parameter here"))
            }
        }
    }
}

// ---------------------------------------------------------------------------- cursors

/// An opaque cursor: the last item's sort key plus a fingerprint of the filters it was
/// made under, so reusing it with other filters is a `400`.
/// One page of `rows`, fetched with `LIMIT limit + 1`: the first `limit` as items, and when
/// the extra row came back, a cursor keyed on the last item shown.
pub fn page<R>(
    rows: &[R],
    limit: i64,
    filters: &str,
    key: impl Fn(&R) -> Result<Value>,
    mut item: impl FnMut(&R) -> Result<Value>,
) -> Result<Reply> {
    let shown = &rows[..rows.len().min(limit.max(0) as usize)];
    let items = shown.iter().map(&mut item).collect::<Result<Vec<_>>>()?;
    let next = match shown.last() {
        Some(last) if rows.len() > shown.len() => Some(encode_cursor(filters, &key(last)?)),
        _ => None,
    };
    Ok(Reply::ok(serde_json::json!({"items": items, "nextCursor": next})))
}

pub fn encode_cursor(filters: &str, key: &Value) -> String {
    let body = serde_json::json!({"f": fingerprint(filters), "k": key});
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(body.to_string())
}

pub fn decode_cursor(cursor: Option<String>, filters: &str) -> Result<Option<Value>> {
    let Some(cursor) = cursor else { return Ok(None) };
    let bad = || Problem::bad_param("query.cursor", "is not a cursor this server made");
    if cursor.len() > 512 {
        return Err(bad());
    }
    let bytes =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(&cursor).map_err(|_| bad())?;
    let body: Value = serde_json::from_slice(&bytes).map_err(|_| bad())?;
    if body.get("f").and_then(Value::as_str) != Some(fingerprint(filters).as_str()) {
        return Err(Problem::bad_param(
            "query.cursor",
            "was made with other filters or sort; reuse a cursor only with the same ones",
        ));
    }
    body.get("k").cloned().map(Some).ok_or_else(bad)
}

fn fingerprint(text: &str) -> String {
    use sha2::Digest;
    run_contract::digest::hex(&sha2::Sha256::digest(text.as_bytes())[..8])
}

// ------------------------------------------------------------------------------ reply

/// A JSON answer with its status and optional `ETag` and `Location`.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: StatusCode,
    pub body: Value,
    pub etag: Option<String>,
    pub location: Option<String>,
}

impl Reply {
    pub fn ok(body: Value) -> Reply {
        Reply { status: StatusCode::OK, body, etag: None, location: None }
    }

    pub fn status(mut self, status: StatusCode) -> Reply {
        self.status = status;
        self
    }

    pub fn version(mut self, version: i64) -> Reply {
        self.etag = Some(etag(version));
        self
    }

    pub fn location(mut self, location: String) -> Reply {
        self.location = Some(location);
        self
    }
}

impl IntoResponse for Reply {
    fn into_response(self) -> Response {
        let body = serde_json::to_vec(&self.body).unwrap_or_default();
        let mut response = (self.status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let pairs = [(header::ETAG, self.etag), (header::LOCATION, self.location)];
        for (name, value) in pairs {
            if let Some(value) = value.and_then(|v| HeaderValue::from_str(&v).ok()) {
                headers.insert(name, value);
            }
        }
        response
    }
}

/// `304` with the current ETag.
pub fn not_modified_response(version: i64) -> Response {
    let mut response = StatusCode::NOT_MODIFIED.into_response();
    if let Ok(value) = HeaderValue::from_str(&etag(version)) {
        response.headers_mut().insert(header::ETAG, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preconditions_and_queries() {
        let mut headers = HeaderMap::new();
        assert_eq!(write_precondition(&headers).unwrap_err().status, 428);
        headers.insert("If-Match", HeaderValue::from_static("*"));
        assert_eq!(write_precondition(&headers).unwrap_err().status, 428);
        headers.insert("If-Match", HeaderValue::from_static("\"12\""));
        assert_eq!(write_precondition(&headers).unwrap(), Precondition::Match(12));
        headers.insert("If-Match", HeaderValue::from_static("12"));
        assert_eq!(write_precondition(&headers).unwrap_err().status, 400);
        let mut q = Query::parse(Some("status=draft&status=in-review&q=a+b%21&limit=7")).unwrap();
        assert_eq!(q.all("status"), ["draft", "in-review"]);
        assert_eq!(q.one("q").unwrap().unwrap(), "a b!");
        assert_eq!(q.limit().unwrap(), 7);
        q.finish().unwrap();
        let cursor = encode_cursor("x", &serde_json::json!([1, "a"]));
        assert!(decode_cursor(Some(cursor.clone()), "x").unwrap().is_some());
        assert!(decode_cursor(Some(cursor), "y").is_err());
    }
}
