//! `bench sync`: the sync server under load, as its own release process on a fresh SQLite
//! database in a temp dir. 2,000 `runs:batchUpsert` calls of about 24 KB (a new run and ten
//! steps, eleven items, each with a `mutationId`) from 10 clients on kept-alive connections:
//! req/s, p50, p99, errors, the server's RSS and CPU time. Then idle connections: sockets
//! that send nothing, a head cut off, or a body that never ends; an authenticated request's
//! answer while they are open, and how many the server has closed after a while.
//!
//! The build measured is `SYNC_SERVER_BIN` (default `target/release/sync-server`). When
//! `SYNC_BENCH_BASELINE` names another build (`cargo xtask bench sync` builds the pre-fix
//! commit's), it gets the same load, and the ratio is printed; `SYNC_BENCH_BASELINE_LABEL`
//! names it. The request bodies are made before the clock starts, and answers are checked
//! by their status and outcomes, so the client costs little of the two cores.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use e2e::annotation::{run_record, step_record};
use serde_json::json;

const CLIENTS: usize = 10;
const REQUESTS: usize = 2_000;
const STEPS: u32 = 10;
const IDLE_SOCKETS: usize = 300;
const IDLE_WATCH: Duration = Duration::from_secs(20);
/// The timeouts the idle scenario starts a build with, when it has them.
const HEAD_TIMEOUT_S: u64 = 5;
const BODY_TIMEOUT_S: u64 = 10;
/// The issue's figure for the pre-fix server on this kind of machine.
const ANCHOR_RPS: f64 = 17.6;

pub fn run() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let this = std::env::var_os("SYNC_SERVER_BIN")
        .map_or_else(|| root.join("target/release/sync-server"), PathBuf::from);
    let mut builds = vec![("this build".to_owned(), this)];
    if let Some(baseline) = std::env::var_os("SYNC_BENCH_BASELINE") {
        let label = std::env::var("SYNC_BENCH_BASELINE_LABEL").unwrap_or("baseline".into());
        builds.push((label, PathBuf::from(baseline)));
    }
    let figures: Vec<(String, Figures)> =
        builds.iter().map(|(label, bin)| (label.clone(), measure(label, bin))).collect();
    report(&figures);
}

struct Figures {
    requests: usize,
    wall_s: f64,
    ms: Vec<f64>,
    errors: usize,
    first_error: Option<String>,
    rss_kib: Option<u64>,
    peak_kib: Option<u64>,
    server_cpu_s: Option<f64>,
    client_cpu_s: Option<f64>,
    idle: Idle,
}

struct Idle {
    /// The timeouts it ran with, when the build takes them.
    timeouts: Option<(u64, u64)>,
    request: String,
    closed: Vec<f64>,
}

impl Figures {
    fn rps(&self) -> f64 {
        self.requests as f64 / self.wall_s
    }

    fn quantile(&self, q: f64) -> f64 {
        self.ms[((self.ms.len() as f64 * q) as usize).min(self.ms.len() - 1)]
    }
}

struct Running {
    child: Child,
    addr: SocketAddr,
    dir: PathBuf,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn measure(label: &str, bin: &Path) -> Figures {
    assert!(bin.is_file(), "{label}: no server at {}", bin.display());
    eprintln!("{label}: {}", bin.display());
    let dir =
        std::env::temp_dir().join(format!("sync-bench-{}-{}", std::process::id(), label.len()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite://{}/sync.db", dir.display());
    let tokens: Vec<String> = (0..CLIENTS).map(|i| add_user(bin, &url, i)).collect();
    // Builds that take the timeouts get short ones, so the idle watch need not be long.
    let help = Command::new(bin).arg("--help").output().map(|o| o.stdout).unwrap_or_default();
    let timeouts = String::from_utf8_lossy(&help)
        .contains("--body-timeout-secs")
        .then_some((HEAD_TIMEOUT_S, BODY_TIMEOUT_S));
    let server = start(bin, &url, dir, timeouts);
    let pid = server.child.id();

    let bodies: Vec<Vec<u8>> = (0..REQUESTS).map(batch).collect();
    let server_cpu = cpu_seconds(pid);
    let client_cpu = cpu_seconds(std::process::id());
    let (wall_s, mut ms, errors, first_error) = load(server.addr, &tokens, bodies);
    let server_cpu_s = cpu_seconds(pid).zip(server_cpu).map(|(after, before)| after - before);
    let client_cpu_s =
        cpu_seconds(std::process::id()).zip(client_cpu).map(|(after, before)| after - before);
    ms.sort_by(f64::total_cmp);
    let (rss_kib, peak_kib) = (status_kib(pid, "VmRSS"), status_kib(pid, "VmHWM"));

    let idle = idle(server.addr, &tokens[0], &tokens[1], timeouts);
    Figures {
        requests: ms.len(),
        wall_s,
        ms,
        errors,
        first_error,
        rss_kib,
        peak_kib,
        server_cpu_s,
        client_cpu_s,
        idle,
    }
}

fn add_user(bin: &Path, url: &str, i: usize) -> String {
    let out = Command::new(bin)
        .args(["--database-url", url, "user", "add", &format!("bench{i}"), "annotator"])
        .output()
        .expect("sync-server user add");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// Starts the server on a free port and reads the address it prints.
fn start(bin: &Path, url: &str, dir: PathBuf, timeouts: Option<(u64, u64)>) -> Running {
    let mut command = Command::new(bin);
    command.args(["--database-url", url, "--addr", "127.0.0.1:0"]);
    if let Some((head, body)) = timeouts {
        command.args(["--head-timeout-secs", &head.to_string()]);
        command.args(["--body-timeout-secs", &body.to_string()]);
    }
    let mut child = command.stderr(Stdio::piped()).spawn().expect("sync-server");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let line = lines.next().expect("the server's first line").unwrap();
    let addr = line.split("http://").nth(1).and_then(|rest| rest.split(' ').next());
    let addr = addr.and_then(|a| a.parse().ok()).unwrap_or_else(|| panic!("{line}"));
    // Keep draining its stderr so it never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    Running { child, addr, dir }
}

/// Request `n`: a new run and its steps, each item with its own mutation id.
fn batch(n: usize) -> Vec<u8> {
    let run_id = format!("bench-{n}");
    let thought = "The page lists the kettles; the steel one is third, at 24.99 EUR. ".repeat(9);
    let mut items = vec![json!({
        "kind": "run", "mutationId": format!("{run_id}-run"), "runId": run_id,
        "baseVersion": null, "run": run_record(&run_id, "Find the price of the steel kettle", STEPS)
    })];
    for index in 0..STEPS {
        let step = step_record(&run_id, index, [&thought, &thought, &thought]);
        items.push(json!({"kind": "step", "mutationId": format!("{run_id}-{index}"),
            "runId": run_id, "index": index, "baseVersion": null, "step": step}));
    }
    json!({ "items": items }).to_string().into_bytes()
}

fn request(method: &str, path: &str, token: &str, body: &[u8]) -> Vec<u8> {
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    head.extend_from_slice(body);
    head
}

/// Reads one response on a kept-alive connection: its status and body.
fn read_response(reader: &mut BufReader<TcpStream>) -> std::io::Result<(u16, Vec<u8>)> {
    let mut status_line = String::new();
    if reader.read_line(&mut status_line)? == 0 {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    let status = status_line.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        if line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    Ok((status, body))
}

fn connect(addr: SocketAddr) -> BufReader<TcpStream> {
    let stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    stream.set_nodelay(true).unwrap();
    BufReader::new(stream)
}

/// A batch answered 200 with all eleven items `ok` (counted, not parsed).
fn all_ok(status: u16, body: &[u8]) -> bool {
    let ok = br#""outcome":"ok","record""#;
    status == 200 && body.windows(ok.len()).filter(|w| w == ok).count() == STEPS as usize + 1
}

/// The load: every body once, from `CLIENTS` threads. Wall time, each request's ms, errors.
fn load(
    addr: SocketAddr,
    tokens: &[String],
    bodies: Vec<Vec<u8>>,
) -> (f64, Vec<f64>, usize, Option<String>) {
    let bodies = Arc::new(bodies);
    let next = Arc::new(AtomicUsize::new(0));
    let errors = Arc::new(AtomicUsize::new(0));
    let first_error = Arc::new(Mutex::new(None));
    let latencies = Arc::new(Mutex::new(Vec::with_capacity(REQUESTS)));
    let started = Instant::now();
    let clients: Vec<_> = tokens
        .iter()
        .map(|token| {
            let (bodies, next, errors) = (bodies.clone(), next.clone(), errors.clone());
            let (first_error, latencies, token) =
                (first_error.clone(), latencies.clone(), token.clone());
            std::thread::spawn(move || {
                let mut conn = connect(addr);
                let mut mine = Vec::new();
                loop {
                    let n = next.fetch_add(1, Ordering::SeqCst);
                    let Some(body) = bodies.get(n) else { break };
                    let wire = request("POST", "/runs:batchUpsert", &token, body);
                    let t = Instant::now();
                    let answer =
                        conn.get_mut().write_all(&wire).and_then(|()| read_response(&mut conn));
                    mine.push(t.elapsed().as_secs_f64() * 1000.0);
                    let error = match answer {
                        Ok((status, body)) if all_ok(status, &body) => None,
                        Ok((status, body)) => {
                            let text = String::from_utf8_lossy(&body);
                            Some(format!("{status} {}", &text[..text.len().min(400)]))
                        }
                        Err(e) => {
                            conn = connect(addr);
                            Some(e.to_string())
                        }
                    };
                    if let Some(error) = error {
                        errors.fetch_add(1, Ordering::SeqCst);
                        first_error.lock().unwrap().get_or_insert(error);
                    }
                }
                latencies.lock().unwrap().extend(mine);
            })
        })
        .collect();
    for client in clients {
        client.join().unwrap();
    }
    let wall = started.elapsed().as_secs_f64();
    let ms = latencies.lock().unwrap().clone();
    let first = first_error.lock().unwrap().clone();
    (wall, ms, errors.load(Ordering::SeqCst), first)
}

/// A process's user + system CPU seconds so far.
fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command name (which may hold spaces) start with the state.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|line| {
        let rest = line.strip_prefix(field)?.trim_start_matches(':').trim();
        rest.trim_end_matches("kB").trim().parse().ok()
    })
}

/// Idle and half-sent sockets, an authenticated request while they are open, and when the
/// server closes each.
fn idle(addr: SocketAddr, token: &str, other: &str, timeouts: Option<(u64, u64)>) -> Idle {
    let mut sockets = Vec::new();
    for i in 0..IDLE_SOCKETS {
        let mut stream = TcpStream::connect(addr).expect("connect");
        let partial = match i % 3 {
            0 => String::new(),
            1 => "GET /users/me HTTP/1.1\r\nHost: bench\r\nAuthor".to_owned(),
            _ => format!(
                "POST /runs:batchUpsert HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {other}\r\n\
                 Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"items\":"
            ),
        };
        stream.write_all(partial.as_bytes()).unwrap();
        sockets.push(stream);
    }
    let opened = Instant::now();
    let t = Instant::now();
    let mut conn = connect(addr);
    let answer = conn
        .get_mut()
        .write_all(&request("GET", "/users/me", token, b""))
        .and_then(|()| read_response(&mut conn));
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    let request = match answer {
        Ok((status, _)) => format!("{status} in {ms:.0} ms"),
        Err(e) => format!("failed after {ms:.0} ms ({e})"),
    };
    drop(conn);
    for socket in &sockets {
        socket.set_nonblocking(true).unwrap();
    }
    let mut closed_at: Vec<Option<f64>> = vec![None; sockets.len()];
    while opened.elapsed() < IDLE_WATCH && closed_at.iter().any(Option::is_none) {
        for (socket, closed) in sockets.iter_mut().zip(closed_at.iter_mut()) {
            if closed.is_some() {
                continue;
            }
            let mut buf = [0u8; 4096];
            match socket.read(&mut buf) {
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                // An answer (a 408) is not yet a close; an end or a reset is.
                Ok(n) if n > 0 => {}
                _ => *closed = Some(opened.elapsed().as_secs_f64()),
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut closed: Vec<f64> = closed_at.into_iter().flatten().collect();
    closed.sort_by(f64::total_cmp);
    Idle { timeouts, request, closed }
}

fn mib(kib: Option<u64>) -> String {
    kib.map_or_else(|| "?".into(), |k| format!("{:.1}", k as f64 / 1024.0))
}

fn seconds(s: Option<f64>) -> String {
    s.map_or_else(|| "?".into(), |s| format!("{s:.1}"))
}

fn report(figures: &[(String, Figures)]) {
    let bytes = batch(0).len();
    println!(
        "sync server on SQLite: {REQUESTS} runs:batchUpsert of {:.1} KB ({} items: a new run and \
         its {STEPS} steps) from {CLIENTS} clients on kept-alive connections",
        bytes as f64 / 1024.0,
        STEPS + 1
    );
    let width = figures.iter().map(|(label, _)| label.len()).max().unwrap_or(10).max(10);
    println!(
        "  {:<width$} {:>7} {:>7} {:>7} {:>7} {:>7}  {:>13}  {:>10}  {:>10}",
        "",
        "req/s",
        "p50 ms",
        "p99 ms",
        "max ms",
        "errors",
        "RSS (peak) MiB",
        "server CPU",
        "client CPU"
    );
    for (label, f) in figures {
        println!(
            "  {label:<width$} {:>7.1} {:>7.0} {:>7.0} {:>7.0} {:>7}  {:>13}  {:>9}s  {:>9}s",
            f.rps(),
            f.quantile(0.5),
            f.quantile(0.99),
            f.ms.last().copied().unwrap_or(f64::NAN),
            f.errors,
            format!("{} ({})", mib(f.rss_kib), mib(f.peak_kib)),
            seconds(f.server_cpu_s),
            seconds(f.client_cpu_s),
        );
        if let Some(error) = &f.first_error {
            println!("  {label:<width$} first error: {error}");
        }
    }
    let this = &figures[0].1;
    let mut ratios = format!(
        "  this build: {:.1}× the issue's pre-fix anchor of {ANCHOR_RPS} req/s",
        this.rps() / ANCHOR_RPS
    );
    if let Some((label, base)) = figures.get(1) {
        ratios += &format!(
            "; {:.1}× {label} measured here (p99 {:.0} → {:.0} ms)",
            this.rps() / base.rps(),
            base.quantile(0.99),
            this.quantile(0.99)
        );
    }
    println!("{ratios}");
    println!("  target: ≥ {:.0} req/s (10× the anchor), p99 under 500 ms", ANCHOR_RPS * 10.0);

    println!(
        "idle connections: {IDLE_SOCKETS} open ({} silent, {} with a head cut off, {} with a \
         body that never ends)",
        IDLE_SOCKETS / 3,
        IDLE_SOCKETS / 3,
        IDLE_SOCKETS / 3
    );
    for (label, f) in figures {
        let idle = &f.idle;
        let timeouts = match idle.timeouts {
            Some((head, body)) => format!("head timeout {head} s, body timeout {body} s"),
            None => "no timeouts to set".to_owned(),
        };
        let last =
            idle.closed.last().map_or(String::new(), |s| format!(", the last after {s:.1} s"));
        println!(
            "  {label:<width$} GET /users/me beside them: {}; closed by the server within {} s: \
             {} of {IDLE_SOCKETS}{last} ({timeouts})",
            idle.request,
            IDLE_WATCH.as_secs(),
            idle.closed.len()
        );
    }
}
