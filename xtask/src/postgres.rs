//! A throwaway PostgreSQL for the gate, so the sync server's integration tests run against
//! a real one and not only SQLite.
//!
//! [`Cluster::start`] finds the server binaries (`pg_ctl`, `initdb`, `postgres`: on PATH or
//! under `/usr/lib/postgresql/*/bin`, installing Debian's `postgresql` when there are none),
//! makes a fresh cluster under `target/postgres/`, starts it on a free loopback port with
//! its unix socket beside it, waits until it accepts connections, and creates the test
//! database. Dropping the [`Cluster`] stops it, so it goes away when the tests fail too.
//!
//! PostgreSQL refuses to run as root. As root, the cluster belongs to the `postgres` user
//! (Debian's package creates it; it is created as a system user when missing) and every
//! server command runs through `runuser`. Authentication is `trust`: the server listens on
//! 127.0.0.1 only and lives for one gate run. Durability is switched off for speed.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::shell::{self, first_line, which};

/// The unprivileged owner of the cluster when the gate runs as root.
const OWNER: &str = "postgres";
const DATABASE: &str = "sync_test";

/// A running throwaway cluster; stopped on drop.
pub struct Cluster {
    bin: PathBuf,
    data: PathBuf,
    /// `Some(user)` when server commands must run as that user (we are root).
    owner: Option<String>,
    /// `postgres://postgres@127.0.0.1:<port>/sync_test`
    pub url: String,
    /// `postgres (PostgreSQL) 15.18 …`, for the log.
    pub version: String,
}

impl Cluster {
    pub fn start() -> Result<Cluster, String> {
        let bin = match find_bin() {
            Some(bin) => bin,
            None => {
                crate::setup::apt_install(&["postgresql"], "PostgreSQL is missing")?;
                find_bin().ok_or("no pg_ctl/initdb/postgres after apt-get install postgresql")?
            }
        };
        let owner = if first_line("id", &["-u"]).as_deref() == Some("0") {
            ensure_user(OWNER)?;
            Some(OWNER.to_owned())
        } else {
            None
        };
        let version = first_line(&bin.join("postgres").to_string_lossy(), &["--version"])
            .unwrap_or_else(|| "postgres (version unknown)".into());

        let base = base_dir(owner.as_deref())?;
        let data = base.join("data");
        let socket = base.join("socket");
        // A cluster left running by a gate that was killed: stop it before wiping it.
        if data.join("postmaster.pid").exists() {
            let _ = stop(&bin, &data, owner.as_deref());
        }
        for dir in [&data, &socket] {
            if dir.exists() {
                std::fs::remove_dir_all(dir)
                    .map_err(|e| format!("cannot remove {}: {e}", dir.display()))?;
            }
        }
        std::fs::create_dir_all(&socket)
            .map_err(|e| format!("cannot create {}: {e}", socket.display()))?;
        if let Some(owner) = &owner {
            // `base` is the owner's already; initdb creates `data` (0700) in it, as them.
            chown(owner, &socket)?;
        }

        let data_arg = data.to_string_lossy().into_owned();
        let initdb = [
            "-D",
            &data_arg,
            "-U",
            "postgres",
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
            "--no-instructions",
        ];
        run(&bin.join("initdb"), &initdb, owner.as_deref())?;

        let log = base.join("postgres.log");
        let log_arg = log.to_string_lossy().into_owned();
        let mut last_error = String::new();
        // A port found free can be taken before the server binds it; try a few.
        for _ in 0..3 {
            let port = free_port()?;
            let options = format!(
                "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off \
                 -c synchronous_commit=off -c full_page_writes=off",
                socket.display()
            );
            // `-w -t 60`: pg_ctl returns once the server accepts connections (or fails at 60 s).
            let started = run(
                &bin.join("pg_ctl"),
                &["-D", &data_arg, "-l", &log_arg, "-o", &options, "-w", "-t", "60", "start"],
                owner.as_deref(),
            );
            let port_arg = port.to_string();
            let client = ["-h", "127.0.0.1", "-p", &port_arg, "-U", "postgres"];
            match started {
                Ok(()) => {
                    let cluster = Cluster {
                        bin: bin.clone(),
                        data: data.clone(),
                        owner: owner.clone(),
                        url: format!("postgres://postgres@127.0.0.1:{port}/{DATABASE}"),
                        version: version.clone(),
                    };
                    run(&bin.join("pg_isready"), &[&client[..], &["-t", "30"]].concat(), None)?;
                    run(&bin.join("createdb"), &[&client[..], &[DATABASE]].concat(), None)?;
                    return Ok(cluster);
                }
                Err(error) => {
                    last_error = format!("{error}\n{}", tail(&log, 20));
                    let _ = stop(&bin, &data, owner.as_deref());
                }
            }
        }
        Err(format!("PostgreSQL did not start: {last_error}"))
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Err(error) = stop(&self.bin, &self.data, self.owner.as_deref()) {
            eprintln!("warning: could not stop the test PostgreSQL: {error}");
        }
    }
}

fn stop(bin: &Path, data: &Path, owner: Option<&str>) -> Result<(), String> {
    let data = data.to_string_lossy();
    run(&bin.join("pg_ctl"), &["-D", &data, "-m", "fast", "-w", "-t", "30", "stop"], owner)
}

/// A folder holding `pg_ctl`, `initdb` and `postgres`: PATH first (following symlinks
/// such as `/usr/local/bin/pg_ctl`), then Debian's `/usr/lib/postgresql/<major>/bin`,
/// newest major first.
fn find_bin() -> Option<PathBuf> {
    let complete =
        |dir: &Path| ["pg_ctl", "initdb", "postgres"].iter().all(|name| dir.join(name).is_file());
    let on_path = which("pg_ctl")
        .and_then(|pg_ctl| std::fs::canonicalize(pg_ctl).ok())
        .and_then(|pg_ctl| pg_ctl.parent().map(Path::to_owned))
        .filter(|dir| complete(dir));
    if on_path.is_some() {
        return on_path;
    }
    let mut majors: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| {
            let major = entry.file_name().to_str()?.parse::<u32>().ok()?;
            Some((major, entry.path().join("bin")))
        })
        .filter(|(_, dir)| complete(dir))
        .collect();
    majors.sort();
    majors.pop().map(|(_, dir)| dir)
}

/// Creates `user` as a system user unless it exists.
fn ensure_user(user: &str) -> Result<(), String> {
    if first_line("id", &["-u", user]).is_some() {
        return Ok(());
    }
    eprintln!("user {user} is missing (PostgreSQL will not run as root); creating it");
    shell::run("useradd", &["--system", "--user-group", "--no-create-home", user])
}

fn chown(user: &str, dir: &Path) -> Result<(), String> {
    shell::run("chown", &[&format!("{user}:"), &dir.to_string_lossy()])
}

/// `target/postgres`, when the cluster's owner can write there (every folder above must be
/// searchable by them); otherwise a folder under the system's temp dir.
fn base_dir(owner: Option<&str>) -> Result<PathBuf, String> {
    let preferred = shell::root().join("target/postgres");
    let fallback = std::env::temp_dir().join(format!("alphascout-postgres-{}", std::process::id()));
    for (i, dir) in [preferred, fallback].into_iter().enumerate() {
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        // A unix socket path is at most 107 bytes: keep room for `/socket/.s.PGSQL.NNNNN`.
        let short = dir.as_os_str().len() < 80;
        let usable = match owner {
            None => true,
            Some(owner) => {
                chown(owner, &dir)?;
                run(Path::new("test"), &["-w", &dir.to_string_lossy()], Some(owner)).is_ok()
            }
        };
        if short && usable {
            return Ok(dir);
        }
        if i == 0 {
            eprintln!("{} does not suit a PostgreSQL cluster; using a temp dir", dir.display());
        }
    }
    Err("no folder is usable for the test PostgreSQL cluster".into())
}

fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"))?;
    listener.local_addr().map(|addr| addr.port()).map_err(|e| e.to_string())
}

/// Runs `program args…` (as `owner` through `runuser` when given), echoed first; its
/// output is shown only when it fails.
fn run(program: &Path, args: &[&str], owner: Option<&str>) -> Result<(), String> {
    let program_text = program.to_string_lossy().into_owned();
    let mut command = match owner {
        Some(owner) => {
            let mut command = Command::new("runuser");
            command.args(["-u", owner, "--", &program_text]);
            command
        }
        None => Command::new(program),
    };
    command.args(args).current_dir(std::env::temp_dir());
    let who = owner.map(|o| format!("(as {o}) ")).unwrap_or_default();
    eprintln!("$ {who}{program_text} {}", args.join(" "));
    let Output { status, stdout, stderr } =
        command.output().map_err(|e| format!("could not start {program_text}: {e}"))?;
    if status.success() {
        return Ok(());
    }
    Err(format!(
        "{program_text} failed ({status}):\n{}{}",
        String::from_utf8_lossy(&stdout),
        String::from_utf8_lossy(&stderr)
    ))
}

/// The last `lines` lines of a log file, for error messages.
pub fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
