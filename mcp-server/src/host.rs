//! The native host: Chrome starts it when the worker connects, and it lives until Chrome
//! closes its stdin. It owns `<dir>/bridge.sock` (and the HTTP port when configured) for
//! that time, and only one host may: a second one (another browser) fails, naming the
//! first, instead of taking over its socket.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;

use mcp_tools::bridge::{self, FromExtension, ToExtension};
use rmcp::ServiceExt;
use tokio::sync::mpsc;

use crate::config::{self, HttpConfig};
use crate::handler::{Bridge, HostHub};
use crate::hub::{Delivery, Hub};
use crate::log;

/// Runs the host for the extension `origin` until Chrome disconnects.
pub fn run(origin: &str) -> Result<(), String> {
    let dir = config::dir()?;
    config::ensure_private_dir(&dir)?;
    let _lock = hold_lock(&dir)?;
    let socket = dir.join(config::SOCKET);
    // Whoever made it before is gone (we hold the lock): a stale socket is replaced.
    let _ = std::fs::remove_file(&socket);
    let listener = std::os::unix::net::UnixListener::bind(&socket)
        .map_err(|e| format!("listening on {}: {e}", socket.display()))?;
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| e.to_string())?;
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    let http = config::read_http(&dir).unwrap_or_else(|problem| {
        log!("HTTP stays off: {problem}");
        None
    });
    log!("native host for {origin}: MCP clients connect through {}", socket.display());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let served = runtime.block_on(serve(listener, http));
    let _ = std::fs::remove_file(&socket);
    log!("Chrome disconnected; the host exits");
    served
}

/// Takes `<dir>/host.lock` for this process's lifetime (the kernel lets go when it ends,
/// however it ends) and writes our pid in it; fails naming the host that holds it.
fn hold_lock(dir: &Path) -> Result<File, String> {
    let path = dir.join(config::LOCK);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| format!("opening {}: {e}", path.display()))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            let mut pid = String::new();
            let _ = file.read_to_string(&mut pid);
            return Err(format!(
                "another AlphaScout MCP host (pid {}) already serves {}: AlphaScout allows MCP \
                 clients in another browser too. Switch off Settings → Allow MCP clients in one \
                 of them.",
                pid.trim(),
                dir.display()
            ));
        }
        Err(TryLockError::Error(e)) => return Err(format!("locking {}: {e}", path.display())),
    }
    file.set_len(0).and_then(|()| file.rewind()).map_err(|e| e.to_string())?;
    write!(file, "{}", std::process::id()).map_err(|e| e.to_string())?;
    Ok(file)
}

async fn serve(
    listener: std::os::unix::net::UnixListener,
    http: Option<HttpConfig>,
) -> Result<(), String> {
    let (to_extension, outgoing) = mpsc::unbounded_channel();
    let hub: Arc<HostHub> = Arc::new(Hub::new(to_extension));
    std::thread::spawn(move || write_frames(outgoing));
    let (incoming, mut from_extension) = mpsc::unbounded_channel();
    std::thread::spawn(move || read_frames(incoming));

    let listener = tokio::net::UnixListener::from_std(listener).map_err(|e| e.to_string())?;
    tokio::spawn(accept(listener, hub.clone()));
    if let Some(http) = http {
        serve_http(http, hub.clone()).await;
    }
    while let Some(message) = from_extension.recv().await {
        match hub.deliver(message) {
            Delivery::Routed => {}
            Delivery::Unclaimed(_) => {} // the client gave up on it
            Delivery::Hello(version) => log!("AlphaScout {version} connected"),
            Delivery::ToolsChanged(peers) => {
                for peer in peers {
                    tokio::spawn(async move { peer.notify_tool_list_changed().await });
                }
            }
        }
    }
    Ok(())
}

/// Each socket connection is a client of its own (an `alphascout-mcp stdio`).
async fn accept(listener: tokio::net::UnixListener, hub: Arc<HostHub>) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                log!("accepting a socket client: {e}");
                continue;
            }
        };
        let hub = hub.clone();
        tokio::spawn(async move {
            match Bridge::new(hub, "stdio").serve(stream).await {
                Ok(running) => {
                    let _ = running.waiting().await;
                }
                Err(e) => log!("a socket client left before initialize: {e}"),
            }
        });
    }
}

/// Binds 127.0.0.1 only; a port already taken leaves HTTP off and the socket on.
async fn serve_http(http: HttpConfig, hub: Arc<HostHub>) {
    let listener = match tokio::net::TcpListener::bind(("127.0.0.1", http.port)).await {
        Ok(listener) => listener,
        Err(e) => {
            log!("HTTP stays off: 127.0.0.1:{} is not free ({e})", http.port);
            return;
        }
    };
    log!("MCP over HTTP at http://127.0.0.1:{}{}", http.port, crate::http::PATH);
    let app = crate::http::router(hub, http.token);
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            log!("HTTP server stopped: {e}");
        }
    });
}

/// Chrome's frames on stdin, until it closes it.
fn read_frames(incoming: mpsc::UnboundedSender<FromExtension>) {
    let mut stdin = std::io::stdin().lock();
    loop {
        match bridge::read_frame(&mut stdin) {
            Ok(Some(body)) => match serde_json::from_slice(&body) {
                Ok(message) => {
                    if incoming.send(message).is_err() {
                        return;
                    }
                }
                Err(e) => {
                    log!("skipped a message from the extension that is not the bridge's: {e}")
                }
            },
            Ok(None) => return,
            Err(e) => {
                log!("reading from Chrome: {e}");
                return;
            }
        }
    }
}

/// Our frames to Chrome on stdout, which carries nothing else.
fn write_frames(mut outgoing: mpsc::UnboundedReceiver<ToExtension>) {
    let mut stdout = std::io::stdout().lock();
    while let Some(message) = outgoing.blocking_recv() {
        if let Err(e) = bridge::write_frame(&mut stdout, &message) {
            log!("writing to Chrome: {e}");
            return;
        }
    }
}
