//! Accepting connections under limits, so that clients that connect and then send slowly,
//! send nothing or stop reading cannot hold the server:
//!
//! - at most [`Config::max_connections`] open at a time, and at most
//!   [`Config::max_connections_per_peer`] from one peer (an IPv4 address, or an IPv6 /64,
//!   which one host usually has whole);
//! - a request head must arrive within [`Config::head_timeout`] of the connection waiting
//!   for one, and a body within [`Config::body_timeout`] (`408`, see `http::read_limited`);
//! - a write may wait at most [`Config::write_timeout`] for the client to take bytes, then
//!   the connection is dropped (a client that stops reading its answer).
//!
//! **Idle connections yield.** A connection is *idle* while it waits for a request head (new,
//! kept alive after an answer, or with a head arriving slowly) and *busy* from when its head
//! has arrived until its answer is written whole. At a limit, a new connection closes the
//! connection that has been idle longest in that limit's scope (the peer's own at the
//! per-peer one, any at the global one) and takes its place; only when every connection in
//! the scope is busy is it answered `503` with `Retry-After` and closed, and then it takes no
//! slot. So sockets that only connect, however many and however often reopened, cannot keep
//! a request from being served, and a request in progress is never closed to make room. The
//! idle connection closed goes without an answer, as at its idle timeout, only sooner: HTTP
//! clients retry a request on a kept-alive connection closed before answering. What a peer
//! can keep busy (slow bodies, unread answers) is bounded by its cap and by the timeouts.
//!
//! hyper starts its head timer as soon as a connection waits for a request, whether it is new
//! or kept alive after an answer, so the head timeout is also the idle timeout: a connection
//! that sends nothing for that long is closed. Requests are HTTP/1.1 (the page's `fetch`
//! over http or https through a proxy), served by hyper directly rather than `axum::serve`,
//! which sets no timer and no limit. A proxy in front is one peer: raise the per-peer limit
//! to the global one there.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv6Addr};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, Request, header};
use axum::response::IntoResponse;
use hyper::body::{Body as HttpBody, Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper::service::Service as _;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};
use tokio::task::JoinSet;
use tokio::time::Sleep;

use crate::Config;
use crate::problem::Problem;

/// How long a shutdown waits for requests in progress before it drops them.
const GRACE: Duration = Duration::from_secs(10);

/// The answer to a connection over a limit whose connections are all busy: try again in a
/// second.
fn busy_answer(detail: &str) -> Vec<u8> {
    let body = Problem::unavailable(detail).to_json().to_string();
    format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/problem+json\r\n\
         Retry-After: 1\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

static SERVER_BUSY: LazyLock<Vec<u8>> =
    LazyLock::new(|| busy_answer("The server has too many connections open; try again."));
static PEER_BUSY: LazyLock<Vec<u8>> = LazyLock::new(|| {
    busy_answer("Too many connections from this address are open at once; try again.")
});

/// Serves `app` on `listener` until `shutdown` completes; then each connection finishes the
/// request it is on (for up to [`GRACE`]) and closes.
pub async fn serve(
    listener: TcpListener,
    app: axum::Router,
    config: &Config,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let slots = Slots::new(config);
    let (closing, closing_rx) = watch::channel(false);
    let mut connections = JoinSet::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, addr) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
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
        match slots.admit(peer_of(addr.ip())) {
            Ok(slot) => {
                let timeouts = (config.head_timeout, config.write_timeout);
                connections.spawn(connection(
                    stream,
                    app.clone(),
                    timeouts,
                    closing_rx.clone(),
                    slot,
                ));
            }
            Err(answer) => {
                connections.spawn(refuse(stream, answer));
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

/// Who a connection is from, for the per-peer limit: its IPv4 address (also when mapped into
/// IPv6), or its IPv6 address's /64.
fn peer_of(addr: IpAddr) -> IpAddr {
    match addr.to_canonical() {
        IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !(u64::MAX as u128))),
        v4 => v4,
    }
}

/// The connections open, by peer: what admitting one reads and changes, under one lock
/// (held, at a limit, for a scan of at most `max` connections).
struct Slots {
    max: usize,
    per_peer: usize,
    /// The clock of [`Conn::idle_since`].
    epoch: Instant,
    open: Mutex<Open>,
}

#[derive(Default)]
struct Open {
    conns: HashMap<u64, Arc<Conn>>,
    peers: HashMap<IpAddr, usize>,
    next_id: u64,
}

/// [`Conn::requests`] of a connection closed to make room.
const CLOSED: u32 = u32::MAX;

/// What the accept loop and a connection's task share of the connection.
struct Conn {
    peer: IpAddr,
    /// Requests whose head has arrived and whose answer is not yet handed over whole (one at
    /// a time over HTTP/1.1); [`CLOSED`] once closed to make room. Idle at 0.
    requests: AtomicU32,
    /// An answer still going out: set when hyper takes its body whole (and drops it, see
    /// [`Answer`]) and by every write, cleared when hyper flushes, which it does only once
    /// its buffer is written whole. Not idle either.
    writing: AtomicBool,
    /// Microseconds from [`Slots::epoch`] to when it last became idle.
    idle_since: AtomicU64,
    epoch: Instant,
    closed: Notify,
}

impl Conn {
    fn is_idle(&self) -> bool {
        self.requests.load(Ordering::SeqCst) == 0 && !self.writing.load(Ordering::SeqCst)
    }

    /// Marks a request in progress until the guard drops; `None` if the connection was
    /// closed to make room before its head arrived.
    fn busy(self: &Arc<Self>) -> Option<Busy> {
        let more = |n| (n != CLOSED).then_some(n + 1);
        let counted = self.requests.fetch_update(Ordering::SeqCst, Ordering::SeqCst, more);
        counted.ok().map(|_| Busy(self.clone()))
    }
}

/// A request in progress on a connection (see [`Conn::busy`]).
struct Busy(Arc<Conn>);

impl Drop for Busy {
    fn drop(&mut self) {
        let conn = &self.0;
        // The answer is handed over, not yet written: idle from hyper's next flush.
        conn.writing.store(true, Ordering::SeqCst);
        conn.idle_since.store(conn.epoch.elapsed().as_micros() as u64, Ordering::SeqCst);
        conn.requests.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Slots {
    fn new(config: &Config) -> Arc<Slots> {
        let max = config.max_connections.max(1);
        Arc::new(Slots {
            max,
            per_peer: config.max_connections_per_peer.clamp(1, max),
            epoch: Instant::now(),
            open: Mutex::default(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Open> {
        // The books stay whole whatever panicked: every change is one statement.
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A slot for a connection from `peer`, made by closing an idle connection at a limit;
    /// the `503` to answer when every connection in the limit's scope is busy.
    fn admit(self: &Arc<Self>, peer: IpAddr) -> Result<Slot, &'static [u8]> {
        let mut open = self.lock();
        if open.peers.get(&peer).is_some_and(|n| *n >= self.per_peer) {
            if !open.close_idle(|conn| conn.peer == peer) {
                return Err(&PEER_BUSY);
            }
        } else if open.conns.len() >= self.max && !open.close_idle(|_| true) {
            return Err(&SERVER_BUSY);
        }
        let conn = Arc::new(Conn {
            peer,
            requests: AtomicU32::new(0),
            writing: AtomicBool::new(false),
            idle_since: AtomicU64::new(self.epoch.elapsed().as_micros() as u64),
            epoch: self.epoch,
            closed: Notify::new(),
        });
        let id = open.next_id;
        open.next_id += 1;
        open.conns.insert(id, conn.clone());
        *open.peers.entry(peer).or_default() += 1;
        Ok(Slot { id, conn, slots: self.clone() })
    }
}

impl Open {
    /// Closes the connection idle longest among those `in_scope` and frees its slot at once
    /// (its task drops it right after); false if none is idle.
    fn close_idle(&mut self, in_scope: impl Fn(&Conn) -> bool) -> bool {
        loop {
            let oldest = self
                .conns
                .iter()
                .filter(|(_, conn)| in_scope(conn) && conn.is_idle())
                .min_by_key(|(_, conn)| conn.idle_since.load(Ordering::SeqCst))
                .map(|(id, conn)| (*id, conn.clone()));
            let Some((id, conn)) = oldest else { return false };
            // Its request head may have just arrived: then it is busy, and the next is tried.
            let closed =
                conn.requests.compare_exchange(0, CLOSED, Ordering::SeqCst, Ordering::SeqCst);
            if closed.is_ok() {
                self.remove(id);
                conn.closed.notify_one();
                return true;
            }
        }
    }

    fn remove(&mut self, id: u64) {
        let Some(conn) = self.conns.remove(&id) else { return };
        if let Entry::Occupied(mut count) = self.peers.entry(conn.peer) {
            *count.get_mut() -= 1;
            if *count.get() == 0 {
                count.remove();
            }
        }
    }
}

/// A connection's place in [`Slots`], given back when its task ends (unless it was taken
/// already, by a connection that closed it to make room).
struct Slot {
    id: u64,
    conn: Arc<Conn>,
    slots: Arc<Slots>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.slots.lock().remove(self.id);
    }
}

async fn connection(
    stream: TcpStream,
    app: axum::Router,
    (head_timeout, write_timeout): (Duration, Duration),
    mut closing: watch::Receiver<bool>,
    slot: Slot,
) {
    // Answers go out whole; do not hold the last segment back for an ACK.
    let _ = stream.set_nodelay(true);
    let socket = Socket { stream, write_timeout, stalled: None, conn: slot.conn.clone() };
    let app = TowerToHyperService::new(app);
    let conn = slot.conn.clone();
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let busy = conn.busy();
        let answer = busy.is_some().then(|| app.call(request));
        async move {
            let (Some(busy), Some(answer)) = (busy, answer) else {
                // Closed to make room as the head arrived; its task is dropping it.
                let mut response = Problem::unavailable("Try again.").into_response();
                let close = HeaderValue::from_static("close");
                response.headers_mut().insert(header::CONNECTION, close);
                return Ok(response.map(|body| Answer { body, _busy: None }));
            };
            let response = answer.await?;
            Ok::<_, Infallible>(response.map(|body| Answer { body, _busy: Some(busy) }))
        }
    });
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(head_timeout);
    let served = builder.serve_connection(TokioIo::new(socket), service);
    let mut served = std::pin::pin!(served);
    tokio::select! {
        _ = served.as_mut() => return,
        // Idle, and closed to make room: dropped, which closes the socket.
        () = slot.conn.closed.notified() => return,
        _ = closing.wait_for(|closing| *closing) => {}
    }
    served.as_mut().graceful_shutdown();
    let _ = served.await;
}

/// An answer's body: it keeps its request in progress until hyper has taken it whole and
/// drops it.
struct Answer {
    body: Body,
    _busy: Option<Busy>,
}

impl HttpBody for Answer {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// A connection's socket. A write that has waited [`Config::write_timeout`] for the client to
/// take bytes fails, and hyper ends the connection with that error. The wait is since the
/// last byte taken, not the whole answer's, so a slow but reading client is not cut off.
struct Socket {
    stream: TcpStream,
    write_timeout: Duration,
    /// The timer of the write waiting now.
    stalled: Option<Pin<Box<Sleep>>>,
    conn: Arc<Conn>,
}

impl Socket {
    fn wrote<T>(
        &mut self,
        cx: &mut Context<'_>,
        written: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        // hyper flushes only once its buffer is written whole: until then, not idle.
        self.conn.writing.store(true, Ordering::SeqCst);
        if written.is_ready() {
            self.stalled = None;
            return written;
        }
        let timeout = self.write_timeout;
        let stalled = self.stalled.get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        // Polled here so that the deadline wakes the task, and hyper writes (fails) again.
        match stalled.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client took no bytes within the write timeout",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl AsyncRead for Socket {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Socket {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.stream).poll_write(cx, buf);
        this.wrote(cx, written)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        this.wrote(cx, written)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.conn.writing.store(false, Ordering::SeqCst);
        Pin::new(&mut this.stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

/// Answers `503` to a connection over a limit and closes it, reading what the client sent
/// meanwhile (for a second at most) so that closing does not reset the answer away.
async fn refuse(mut stream: TcpStream, answer: &'static [u8]) {
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        stream.write_all(answer).await?;
        stream.shutdown().await?;
        let mut sink = [0u8; 4096];
        while stream.read(&mut sink).await? > 0 {}
        Ok::<(), io::Error>(())
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peers_are_ipv4_addresses_and_ipv6_slash_64s() {
        let peer = |text: &str| peer_of(text.parse().unwrap()).to_string();
        assert_eq!(peer("203.0.113.7"), "203.0.113.7");
        assert_eq!(peer("::ffff:203.0.113.7"), "203.0.113.7");
        assert_eq!(peer("2001:db8:1:2:aaaa:bbbb:cccc:dddd"), "2001:db8:1:2::");
        assert_eq!(peer("2001:db8:1:2::1"), peer("2001:db8:1:2:ffff::9"));
        assert_ne!(peer("2001:db8:1:2::1"), peer("2001:db8:1:3::1"));
    }
}
