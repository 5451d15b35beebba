//! Starts Chromium with the unpacked extension loaded, on a throw-away profile, and finds
//! its DevTools endpoint. `cargo xtask run` and the e2e harness both start Chromium this
//! way; this crate knows nothing of CDP sessions or tests, so `xtask` links no test code.
//! [`native_host`] registers `alphascout-mcp` with a browser, for both as well.

pub mod native_host;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

pub struct LaunchOptions {
    pub chromium: PathBuf,
    /// The unpacked extension to load.
    pub dist: PathBuf,
    pub headless: bool,
    /// An `alphascout-mcp` binary to register as the profile's native messaging host
    /// (`<profile>/NativeMessagingHosts/`, where Chromium on Linux looks for a
    /// `--user-data-dir` of its own), so the extension's `connectNative` starts it.
    pub mcp_host: Option<PathBuf>,
    /// Environment added to Chromium's, which it passes on to the native hosts it starts
    /// (`ALPHASCOUT_MCP_DIR` keeps a test's host to a folder of its own).
    pub env: Vec<(String, String)>,
}

/// The Chromium process and its throw-away profile; both go away on drop.
pub struct Chromium {
    child: Child,
    profile: PathBuf,
}

impl Drop for Chromium {
    fn drop(&mut self) {
        // Give a graceful close a moment, so helper processes are gone before the profile
        // is deleted; then insist.
        let deadline = Instant::now() + Duration::from_secs(5);
        while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        for _ in 0..5 {
            if std::fs::remove_dir_all(&self.profile).is_ok() || !self.profile.exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Chromium {
    pub fn start(options: &LaunchOptions) -> Result<Chromium, String> {
        let manifest = options.dist.join("manifest.json");
        if !manifest.exists() {
            return Err(format!("{} is missing: run `cargo xtask dist` first", manifest.display()));
        }
        static LAUNCHES: AtomicU32 = AtomicU32::new(0);
        let profile = std::env::temp_dir().join(format!(
            "alphascout-chromium-{}-{}",
            std::process::id(),
            LAUNCHES.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&profile);
        std::fs::create_dir_all(&profile).map_err(|e| e.to_string())?;
        let dist = options.dist.canonicalize().map_err(|e| e.to_string())?;
        if let Some(binary) = &options.mcp_host {
            let id = native_host::extension_id_of(&manifest)?;
            native_host::install(&profile.join("NativeMessagingHosts"), binary, &id)?;
        }
        let log = std::fs::File::create(profile.join("chromium.log")).map_err(|e| e.to_string())?;
        let mut command = Command::new(&options.chromium);
        command
            .args([
                // What this closed network and a root user need (see ../shared/BRIEF.md).
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-quic",
                "--no-first-run",
                "--no-default-browser-check",
                "--remote-debugging-port=0",
                "--window-size=1280,900",
                // No "started debugging this browser" bar: it slides in while a test clicks
                // and shifts every page of the window by its height.
                "--silent-debugger-extension-api",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(format!("--load-extension={}", dist.display()))
            .arg(format!("--disable-extensions-except={}", dist.display()))
            .envs(options.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        if options.headless {
            command.arg("--headless");
        }
        command.arg("about:blank");
        let child =
            command.spawn().map_err(|e| format!("starting {}: {e}", options.chromium.display()))?;
        Ok(Chromium { child, profile })
    }

    /// Chromium writes its DevTools port and path to `DevToolsActivePort` once it listens.
    pub fn devtools_url(&mut self) -> Result<String, String> {
        let file = self.profile.join("DevToolsActivePort");
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("Chromium exited at start ({status}):\n{}", self.log_tail()));
            }
            if let Ok(text) = std::fs::read_to_string(&file) {
                let mut lines = text.lines();
                if let (Some(port), Some(path)) = (lines.next(), lines.next()) {
                    return Ok(format!("ws://127.0.0.1:{port}{path}"));
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Err(format!("Chromium did not open DevTools within 30 s:\n{}", self.log_tail()))
    }

    /// The extension's id, from its service worker in DevTools' plain-HTTP target list
    /// (no CDP session needed), once the worker runs.
    pub fn extension_id(&mut self) -> Result<String, String> {
        let url = self.devtools_url()?;
        let port = url
            .trim_start_matches("ws://127.0.0.1:")
            .split('/')
            .next()
            .unwrap_or_default()
            .to_owned();
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            let targets = list_targets(&port).unwrap_or_default();
            if let Some((_, id)) = extension_in(&targets) {
                return Ok(id);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(format!(
            "the extension's service worker did not start within 20 s:\n{}",
            self.log_tail()
        ))
    }

    /// Blocks until Chromium exits.
    pub fn wait(&mut self) {
        let _ = self.child.wait();
    }

    /// The last lines Chromium wrote, for error messages.
    pub fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.profile.join("chromium.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }
}

/// `GET /json/list` on the DevTools port.
fn list_targets(port: &str) -> Result<serde_json::Value, String> {
    let mut stream = TcpStream::connect(format!("127.0.0.1:{port}")).map_err(|e| e.to_string())?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).map_err(|e| e.to_string())?;
    write!(stream, "GET /json/list HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .map_err(|e| e.to_string())?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply).map_err(|e| e.to_string())?;
    let body = reply.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    serde_json::from_str(body).map_err(|e| e.to_string())
}

/// The extension's service worker among DevTools `targets` (`/json/list` or CDP's
/// `targetInfos`: both have `type` and `url`), with the id in its
/// `chrome-extension://<id>/background.js`.
pub fn extension_in(targets: &serde_json::Value) -> Option<(&serde_json::Value, String)> {
    targets.as_array()?.iter().find_map(|target| {
        let url = target["url"].as_str()?;
        let rest = url.strip_prefix("chrome-extension://")?;
        (target["type"] == "service_worker" && url.ends_with("/background.js"))
            .then(|| (target, rest.split('/').next().unwrap_or_default().to_owned()))
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn the_extension_is_found_by_its_service_worker() {
        let targets = json!([
            {"type": "page", "url": "chrome-extension://abc/side-panel.html"},
            {"type": "service_worker", "url": "chrome-extension://abc/background.js"},
        ]);
        assert_eq!(super::extension_in(&targets).map(|(_, id)| id).as_deref(), Some("abc"));
        assert_eq!(super::extension_in(&json!([])), None);
    }
}
