//! Accepting connections under limits, so that clients that connect and then send slowly or
//! nothing cannot hold the server: at most [`Config::max_connections`] at a time (one more
//! is answered `503` with `Retry-After` and closed), a request head must arrive within
//! [`Config::head_timeout`] of the connection waiting for one, and a body within
//! [`Config::body_timeout`] (`408`, see `http::read_limited`).
//!
//! hyper starts its head timer as soon as a connection waits for a request, whether it is new
//! or kept alive after an answer, so the head timeout is also the idle timeout: a connection
//! that sends nothing for that long is closed. Requests are HTTP/1.1 (the page's `fetch`
//! over http or https through a proxy), served by hyper directly rather than `axum::serve`,
//! which sets no timer and no limit.

use std::future::Future;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::JoinSet;

use crate::Config;
use crate::problem::Problem;

/// How long a shutdown waits for requests in progress before it drops them.
const GRACE: Duration = Duration::from_secs(10);

/// The answer to a connection over the limit: the server is busy, try again in a second.
static BUSY: LazyLock<Vec<u8>> = LazyLock::new(|| {
    let problem = Problem::unavailable("The server has too many connections open; try again.");
    let body = problem.to_json().to_string();
    format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/problem+json\r\n\
         Retry-After: 1\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
});

/// Serves `app` on `listener` until `shutdown` completes; then each connection finishes the
/// request it is on (for up to [`GRACE`]) and closes.
pub async fn serve(
    listener: TcpListener,
    app: axum::Router,
    config: &Config,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(config.max_connections.max(1)));
    let (closing, closing_rx) = watch::channel(false);
    let mut connections = JoinSet::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors, or a connection reset before it was accepted:
                    // wait a moment rather than spin, and go on.
                    eprintln!("sync-server: accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        while connections.try_join_next().is_some() {}
        match slots.clone().try_acquire_owned() {
            Ok(slot) => {
                let head_timeout = config.head_timeout;
                connections.spawn(connection(
                    stream,
                    app.clone(),
                    head_timeout,
                    closing_rx.clone(),
                    slot,
                ));
            }
            Err(_) => {
                connections.spawn(refuse(stream));
            }
        }
    }
    let _ = closing.send(true);
    let drained =
        tokio::time::timeout(GRACE, async { while connections.join_next().await.is_some() {} })
            .await;
    if drained.is_err() {
        connections.abort_all();
    }
    Ok(())
}

async fn connection(
    stream: TcpStream,
    app: axum::Router,
    head_timeout: Duration,
    mut closing: watch::Receiver<bool>,
    _slot: OwnedSemaphorePermit,
) {
    // Answers go out whole; do not hold the last segment back for an ACK.
    let _ = stream.set_nodelay(true);
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(head_timeout);
    let conn = builder.serve_connection(TokioIo::new(stream), TowerToHyperService::new(app));
    let mut conn = std::pin::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => return,
        _ = closing.wait_for(|closing| *closing) => {}
    }
    conn.as_mut().graceful_shutdown();
    let _ = conn.await;
}

/// Answers `503` to a connection over the limit and closes it, reading what the client sent
/// meanwhile (for a second at most) so that closing does not reset the answer away.
async fn refuse(mut stream: TcpStream) {
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        stream.write_all(&BUSY).await?;
        stream.shutdown().await?;
        let mut sink = [0u8; 4096];
        while stream.read(&mut sink).await? > 0 {}
        Ok::<(), std::io::Error>(())
    })
    .await;
}
