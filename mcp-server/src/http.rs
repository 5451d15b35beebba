//! Streamable HTTP for local agents: `http://127.0.0.1:<port>/mcp`, each session a client
//! of its own. A request needs `Authorization: Bearer <token>` (401 otherwise), and one
//! from a browser page must come from a loopback origin: a page elsewhere that reaches the
//! port through a rebound DNS name is refused (rmcp checks `Host` and `Origin`, 403).

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use crate::config::bearer_matches;
use crate::handler::{Bridge, HostHub};

/// The path MCP is served at.
pub const PATH: &str = "/mcp";

/// Origins a browser page may send: this computer's, on any port.
const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://127.0.0.1:*",
    "http://localhost:*",
    "http://[::1]:*",
    "https://127.0.0.1:*",
    "https://localhost:*",
    "https://[::1]:*",
];

pub fn router(hub: Arc<HostHub>, token: String) -> axum::Router {
    let mut sessions = LocalSessionManager::default();
    // A browser task may run for many minutes with the client only listening.
    sessions.session_config.keep_alive = Some(Duration::from_secs(30 * 60));
    let service = StreamableHttpService::new(
        move || Ok(Bridge::new(hub.clone(), "http")),
        Arc::new(sessions),
        StreamableHttpServerConfig::default()
            .with_allowed_hosts(["127.0.0.1", "localhost", "::1"])
            .with_allowed_origins(LOOPBACK_ORIGINS)
            .enforce_origin_validation(),
    );
    axum::Router::new()
        .route_service(PATH, service)
        .layer(middleware::from_fn_with_state(Arc::new(token), require_token))
}

async fn require_token(State(token): State<Arc<String>>, request: Request, next: Next) -> Response {
    let given = request.headers().get(header::AUTHORIZATION).map(|v| v.as_bytes());
    if bearer_matches(given, &token) {
        next.run(request).await
    } else {
        (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "Send Authorization: Bearer <token>, with the token from mcp.json in AlphaScout's \
             configuration folder.",
        )
            .into_response()
    }
}
