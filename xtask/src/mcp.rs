//! `cargo xtask mcp install [--port N]` and `cargo xtask mcp uninstall`: registers the MCP
//! server `alphascout-mcp` with the user's Chromium and Chrome, so AlphaScout's "Allow MCP
//! clients" can start it, and says how to point MCP clients at it.

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use chromium_launch::native_host;
use serde_json::{Value, json};

use crate::shell::{self, root};

/// The HTTP port a fresh `mcp.json` enables; `--port` picks another.
pub const DEFAULT_PORT: u16 = 39217;

/// Where install writes, for the current user.
#[derive(Debug, PartialEq)]
pub struct Places {
    /// The binary the browsers start (a copy: `target/` may be cleaned).
    pub binary: PathBuf,
    /// Each browser's `NativeMessagingHosts` folder.
    pub host_dirs: Vec<PathBuf>,
    /// The host's folder, with `mcp.json` (the binary's own rule, `native_host::host_dir_from`).
    pub mcp_dir: PathBuf,
}

impl Places {
    /// From the environment `var` reads; an empty variable counts as unset.
    pub fn from(var: impl Fn(&str) -> Option<String>) -> Result<Places, String> {
        let os = |name: &str| var(name).map(OsString::from);
        let mcp_dir =
            native_host::host_dir_from(os("ALPHASCOUT_MCP_DIR"), os("XDG_CONFIG_HOME"), os("HOME"));
        let var = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let home = var("HOME").ok_or("HOME is not set")?;
        let data = var("XDG_DATA_HOME").unwrap_or_else(|| home.join(".local/share"));
        let config = var("XDG_CONFIG_HOME").unwrap_or_else(|| home.join(".config"));
        Ok(Places {
            binary: data.join("alphascout/alphascout-mcp"),
            host_dirs: ["chromium", "google-chrome"]
                .iter()
                .map(|browser| config.join(browser).join("NativeMessagingHosts"))
                .collect(),
            mcp_dir: mcp_dir.ok_or("HOME is not set")?,
        })
    }

    fn config_file(&self) -> PathBuf {
        self.mcp_dir.join("mcp.json")
    }
}

pub fn run(args: &[String]) -> Result<(), String> {
    let places = Places::from(|name| std::env::var(name).ok())?;
    match args.first().map(String::as_str) {
        Some("install") => {
            let port = match args.iter().position(|a| a == "--port") {
                Some(at) => Some(
                    args.get(at + 1)
                        .and_then(|p| p.parse::<u16>().ok())
                        .filter(|p| *p != 0)
                        .ok_or("--port needs a port number (1-65535)")?,
                ),
                None => None,
            };
            install(&places, port)
        }
        Some("uninstall") => uninstall(&places),
        _ => Err("usage: cargo xtask mcp install [--port N] | uninstall".into()),
    }
}

fn install(places: &Places, port: Option<u16>) -> Result<(), String> {
    // The sync server's profile: optimized, and a panic ends one task, not the host.
    shell::cargo(&["build", "--profile", "server", "-p", "alphascout-mcp"])?;
    copy_binary(&root().join("target/server/alphascout-mcp"), &places.binary)?;
    let id = native_host::extension_id_of(&root().join("manifest.json"))?;
    for dir in &places.host_dirs {
        let written = native_host::install(dir, &places.binary, &id)?;
        println!("host manifest: {}", written.display());
    }
    let port = write_config(&places.config_file(), port)?;
    println!("\n{}", instructions(&places.binary, port, &places.config_file()));
    Ok(())
}

/// Copies next to `to` and renames over it, so a host that is running keeps its file.
fn copy_binary(from: &Path, to: &Path) -> Result<(), String> {
    let dir = to.parent().expect("the binary's place is in a folder");
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let fresh = to.with_extension("new");
    std::fs::copy(from, &fresh).map_err(|e| format!("copying {}: {e}", from.display()))?;
    std::fs::set_permissions(&fresh, std::fs::Permissions::from_mode(0o755))
        .and_then(|()| std::fs::rename(&fresh, to))
        .map_err(|e| format!("installing {}: {e}", to.display()))?;
    println!("binary:        {}", to.display());
    Ok(())
}

/// Creates `mcp.json` with a fresh token unless it exists; `port` replaces the port of one
/// that does. Returns the port it enables.
fn write_config(path: &Path, port: Option<u16>) -> Result<u16, String> {
    let existing = match std::fs::read_to_string(path) {
        Ok(text) => Some(
            serde_json::from_str::<Value>(&text)
                .map_err(|_| format!("{} is not JSON: fix or remove it", path.display()))?,
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("reading {}: {e}", path.display())),
    };
    let config = match existing {
        Some(config) if port.is_none() && config["http"]["port"].is_u64() => {
            println!("configuration: {} (kept)", path.display());
            return Ok(config["http"]["port"].as_u64().unwrap_or_default() as u16);
        }
        Some(mut config) if config["http"]["token"].is_string() => {
            config["http"]["port"] = json!(port.unwrap_or(DEFAULT_PORT));
            config
        }
        _ => fresh_config(port.unwrap_or(DEFAULT_PORT), &random_token()?),
    };
    let dir = path.parent().expect("mcp.json is in a folder");
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| e.to_string())?;
    // Written 0600 from the start: the token is never readable by others, even briefly.
    let mut options = std::fs::OpenOptions::new();
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(|e| format!("writing {}: {e}", path.display()))?;
    std::io::Write::write_all(&mut file, format!("{config:#}\n").as_bytes())
        .map_err(|e| format!("writing {}: {e}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| e.to_string())?;
    println!("configuration: {} (HTTP token inside)", path.display());
    Ok(config["http"]["port"].as_u64().unwrap_or_default() as u16)
}

fn fresh_config(port: u16, token: &str) -> Value {
    json!({"http": {"port": port, "token": token}})
}

/// 32 bytes from the kernel's generator, as hex.
fn random_token() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| format!("reading /dev/urandom: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// What to paste into MCP clients. The token itself is not printed: it stays in the file.
pub fn instructions(binary: &Path, port: u16, config: &Path) -> String {
    let desktop = json!({"mcpServers": {"alphascout": {"command": binary, "args": ["stdio"]}}});
    format!(
        "Switch on AlphaScout's Settings → Allow MCP clients, then point clients at it:\n\n\
         A desktop MCP client (stdio), in its MCP servers configuration:\n{desktop:#}\n\n\
         A local agent over streamable HTTP:\n  \
         URL:    http://127.0.0.1:{port}/mcp\n  \
         Header: Authorization: Bearer <the \"token\" in {}>",
        config.display()
    )
}

fn uninstall(places: &Places) -> Result<(), String> {
    let files = places
        .host_dirs
        .iter()
        .map(|dir| native_host::manifest_path(dir))
        .chain([places.binary.clone(), places.config_file()]);
    for file in files {
        match std::fs::remove_file(&file) {
            Ok(()) => println!("removed {}", file.display()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("removing {}: {e}", file.display())),
        }
    }
    // Folders install may have made, if nothing else is left in them (a browser's own
    // folder that holds a profile stays).
    let host_dirs = places.host_dirs.iter().flat_map(|dir| [Some(dir.as_path()), dir.parent()]);
    let others = [places.binary.parent(), Some(places.mcp_dir.as_path())];
    for dir in host_dirs.chain(others).flatten() {
        let _ = std::fs::remove_dir(dir);
    }
    println!("A host still running goes when its browser closes.");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&str, &str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    }

    #[test]
    fn places_follow_xdg_and_the_binarys_own_folder_rule() {
        let places = Places::from(env(&[("HOME", "/home/u")])).unwrap();
        assert_eq!(places.binary, Path::new("/home/u/.local/share/alphascout/alphascout-mcp"));
        assert_eq!(
            places.host_dirs,
            [
                Path::new("/home/u/.config/chromium/NativeMessagingHosts"),
                Path::new("/home/u/.config/google-chrome/NativeMessagingHosts")
            ]
        );
        assert_eq!(places.mcp_dir, Path::new("/home/u/.config/alphascout"));
        let places = Places::from(env(&[
            ("HOME", "/home/u"),
            ("XDG_CONFIG_HOME", "/cfg"),
            ("XDG_DATA_HOME", ""),
            ("ALPHASCOUT_MCP_DIR", "/tmp/mcp"),
        ]))
        .unwrap();
        assert_eq!(places.host_dirs[0], Path::new("/cfg/chromium/NativeMessagingHosts"));
        assert_eq!(places.binary, Path::new("/home/u/.local/share/alphascout/alphascout-mcp"));
        assert_eq!(places.mcp_dir, Path::new("/tmp/mcp"));
        assert!(Places::from(env(&[])).is_err());
    }

    #[test]
    fn a_fresh_config_gets_a_private_file_with_a_new_token_and_a_port_change_keeps_it() {
        let dir = std::env::temp_dir().join(format!("xtask-mcp-{}", std::process::id()));
        let path = dir.join("mcp.json");
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(write_config(&path, None).unwrap(), DEFAULT_PORT);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let first: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(first["http"]["token"].as_str().unwrap().len(), 64);

        assert_eq!(write_config(&path, None).unwrap(), DEFAULT_PORT);
        assert_eq!(write_config(&path, Some(4321)).unwrap(), 4321);
        let moved: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(moved["http"]["token"], first["http"]["token"]);
        assert_eq!(moved["http"]["port"], 4321);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_instructions_name_the_command_the_url_and_where_the_token_is_not_the_token() {
        let text = instructions(
            Path::new("/home/u/.local/share/alphascout/alphascout-mcp"),
            4321,
            Path::new("/home/u/.config/alphascout/mcp.json"),
        );
        assert!(text.contains(r#""command": "/home/u/.local/share/alphascout/alphascout-mcp""#));
        assert!(text.contains(r#""stdio""#));
        assert!(text.contains("http://127.0.0.1:4321/mcp"));
        assert!(text.contains("/home/u/.config/alphascout/mcp.json"));
    }
}
