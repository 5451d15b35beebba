//! The AlphaScout sync server: where the annotation page syncs captured runs (the engine's
//! `run.rs` records), their steps, screenshots and traces, and where the review workflow,
//! comments and history live. The contract is `sync-server/openapi.yaml`; this crate
//! implements it with axum and sqlx.
//!
//! ```text
//! cargo run -p sync-server                                  # 127.0.0.1:8787, SQLite ./data/sync.db
//! cargo run -p sync-server -- --database-url postgres://…   # PostgreSQL
//! cargo run -p sync-server -- user add alice annotator      # prints alice's bearer token
//! cargo run -p sync-server -- user token rotate alice       # a new one; the old one ends
//! cargo test -p sync-server                                 # SQLite; PostgreSQL too with
//!                                                           # SYNC_TEST_POSTGRES_URL=postgres://…
//! cargo xtask test                                          # the gate runs both
//! ```
//!
//! # Layout
//!
//! - `main.rs`: the CLI (`serve`, the default; `user add`, `user list`, `user token rotate`
//!   and `user token revoke`).
//! - `connections.rs`: accepting connections under a cap and a per-peer cap, at which idle
//!   connections make room for new ones (busy ones never do), with head (and so idle), body
//!   and write timeouts, so slow, silent or unread clients cannot hold the server
//!   ([`Config`]).
//! - [`store`]: the `sqlx::Any` pool over SQLite or PostgreSQL, the embedded migrations
//!   (`migrations/*.sql`, portable SQL), and the write lock on a run's row that serializes
//!   writers (its module doc says why `Any` and how).
//! - [`model`]: runs and steps as stored, visibility and the editing table, and the history:
//!   every save is one run version with who, when and which paths changed, plus snapshots of
//!   the header and of each saved step, from which versions, diffs and rollbacks are read.
//! - [`schema`]: request bodies checked against `openapi.yaml` itself (embedded, its
//!   component schemas compiled at start-up) by the `boon` JSON Schema (2020-12) validator,
//!   every problem with its JSON Pointer (`/thoughts/thought2`, `422`); [`validate`]: what a
//!   schema cannot say (rules across fields, U+0000, dot-path reads and writes).
//!   `tests/contract.rs` holds `openapi.yaml` to the shared contract (`run_contract`) and
//!   shows the server refuses what the schemas refuse.
//! - [`http`]: bodies under size limits, `If-Match`/`If-None-Match`, queries, cursors.
//! - [`problem`]: RFC 9457 errors, including the `409` conflict body with the current
//!   record, the base and current versions and the paths changed in between.
//! - [`auth`]: roles, hashed bearer tokens, the `User` extractor (`401`), and a user's own
//!   token rotation (`POST /users/me/token`).
//! - [`idempotency`]: `Idempotency-Key` on POSTs, reserved in the write's own transaction so
//!   that retries racing each other act once.
//! - `routes/`: one module per tag of the contract; `routes::NOT_IMPLEMENTED` lists the
//!   operations answered with `501` (none now). `routes/mod.rs` holds what the routes share:
//!   the extractors of a list under a run (`RunList`: run id, page size and cursor, then the
//!   visible run) and of a POST to a run (`RunPost`, acted on once per `Idempotency-Key`),
//!   and the path parameters; `model` has the run lock, visibility and `409` bodies they
//!   use. `routes/suggestions.rs` holds the reviewers' tracked changes: accepting one is a
//!   versioned step save that never overwrites text changed after the suggestion, and
//!   approval waits while any is pending.
//!
//! - Teams (issue 29): `routes/project.rs` (overlap and guidelines), `routes/assignments.rs`
//!   (by hand and round-robin over a `GET /runs` filter, `routes::runs::RunFilter`; "My
//!   queue" and the next run), `routes/overlap.rs` (each annotator's own version of an
//!   overlap run, agreement, resolution into the run as one version), `routes/metrics.rs`,
//!   `routes/collections.rs`, `routes/analytics.rs` (per-annotator figures, peers anonymised
//!   for everyone but admins), `routes/hooks.rs` and [`webhooks`] (the outbox's delivery
//!   task: signed, retried with backoff, paused hooks wait), `routes/audit.rs` and [`audit`]
//!   (the append-only log every write appends to in its own transaction), and
//!   `routes/notifications.rs`. [`events`] is what a write tells people (notifications) and
//!   systems (webhook events), in its transaction; [`passages`] re-anchors passage comments
//!   and suggestions whenever a step is saved. The maths (token F1, agreement, the
//!   re-anchoring rule) is `run_contract::agreement` and `run_contract::passage`, shared
//!   with the page.
//!
//! Roles and ownership are checked here for every route; the page only hides buttons. An
//! annotator sees the runs they upload or are assigned; reads other people's comments on a
//! run only once it has gone to review (`comments::reads_all_comments`); writes only their
//! own version of an overlap run.
//!
//! # Not yet
//!
//! - A suggestion targets one field of one step; there are none on run header fields
//!   (`taskPrompt`, `finalAnswer`, subtasks), and pending ones stay pending on a run that
//!   is rejected and then archived until an admin restores it.
//! - `q` on `GET /runs` is a case-insensitive substring match over the lowercased prompt,
//!   answer and steps' thoughts (portable `LIKE`), not SQLite FTS5 / PostgreSQL `tsvector`.
//! - Problems do not carry `instance`.
//! - Migrations run at start-up without a cross-process lock: start one server first when
//!   several share a PostgreSQL database.
//! - Tokens are revoked, and their lives extended, with the CLI only; a user can rotate their
//!   own (`POST /users/me/token`), keeping its expiry.
//! - Teams: agreement and per-annotator figures are computed on each request from the
//!   stored versions (no cache; `cargo xtask bench agreement` measures it at 1,000 runs);
//!   round-robin assignment is not kept under an `Idempotency-Key` (each run is its own
//!   transaction; a retry skips the runs assigned already); webhook secrets are stored as
//!   given (they must sign), so a database leak leaks them; a webhook's https URL may name
//!   any host (admins choose them; no check for private addresses); the audit log is
//!   append-only by code (one `INSERT`, no route or statement updates or deletes it), not by
//!   a database trigger; reading a notification is audited, reading anything else is not.
//!   Resolving overlap versions leaves the run in overlap: its annotators still write only
//!   their versions, so later edits to the run are a qa_manager's or admin's.

pub mod audit;
pub mod auth;
mod connections;
pub mod events;
pub mod http;
pub mod idempotency;
pub mod model;
pub mod passages;
pub mod problem;
mod routes;
pub mod schema;
pub mod store;
pub mod time;
pub mod validate;
pub mod webhooks;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

pub use routes::NOT_IMPLEMENTED;
use store::Store;

/// What the server is started with besides the database.
#[derive(Debug, Clone)]
pub struct Config {
    /// Allowed CORS origins; empty means any `chrome-extension://` origin.
    pub cors_origins: Vec<String>,
    /// How often expired replay records are pruned ([`Store::prune`]); the first time is one
    /// period after start.
    pub prune_every: Duration,
    /// How long a connection waiting for a request (new, or idle after an answer) has to send
    /// the request's whole head before it is closed: the idle timeout too.
    pub head_timeout: Duration,
    /// How long a request's body may take to arrive, from when the handler starts reading
    /// it (`408` and the connection closed past it).
    pub body_timeout: Duration,
    /// Connections open at once. At the cap a new connection closes the connection that has
    /// been idle longest to take its place; if none is idle, it is answered `503`
    /// (`Retry-After: 1`) and closed (`connections.rs`).
    pub max_connections: usize,
    /// Connections open at once from one peer (an IPv4 address, an IPv6 /64), answered the
    /// same way at its cap (the peer's own idle connections yield) without taking a slot of
    /// `max_connections`. Behind a reverse proxy every client is the proxy: raise it to
    /// `max_connections` there.
    pub max_connections_per_peer: usize,
    /// How long a write may wait for the client to take bytes before the connection is
    /// dropped: a client that stops reading its answer cannot hold a connection.
    pub write_timeout: Duration,
    /// A failed webhook delivery's first wait before it is tried again; each later wait is
    /// twice the one before, up to `webhook_max_delay`.
    pub webhook_base_delay: Duration,
    pub webhook_max_delay: Duration,
    /// Attempts before a delivery is `failed`.
    pub webhook_max_attempts: u32,
    /// How often the delivery task looks for due rows when nothing woke it (another server
    /// process on the same database may have queued some).
    pub webhook_poll: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            cors_origins: Vec::new(),
            prune_every: Duration::from_secs(600),
            head_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(60),
            max_connections: 512,
            max_connections_per_peer: 128,
            write_timeout: Duration::from_secs(30),
            webhook_base_delay: Duration::from_secs(30),
            webhook_max_delay: Duration::from_secs(3600),
            webhook_max_attempts: 8,
            webhook_poll: Duration::from_secs(5),
        }
    }
}

#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    pub config: Arc<Config>,
}

pub fn router(store: Store, config: Config) -> axum::Router {
    // A broken openapi.yaml fails here, at start-up, not on the first request.
    schema::spec();
    routes::router(AppState { store, config: Arc::new(config) })
}

/// Serves on `listener` until `shutdown` completes.
pub async fn serve(
    listener: tokio::net::TcpListener,
    store: Store,
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let pruning = tokio::spawn(prune_forever(store.clone(), config.prune_every));
    let delivering =
        tokio::spawn(webhooks::deliver_forever(store.clone(), Arc::new(config.clone())));
    let app = router(store, config.clone());
    let served = connections::serve(listener, app, &config, shutdown).await;
    pruning.abort();
    delivering.abort();
    served
}

/// Prunes expired replay records every `period`, beside the requests rather than inside a
/// write (an error is reported and tried again next period).
async fn prune_forever(store: Store, period: Duration) {
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    loop {
        ticks.tick().await;
        if let Err(e) = store.prune().await {
            eprintln!("sync-server: pruning replay records failed: {e}");
        }
    }
}
