//! Chrome's registration of `alphascout-mcp` as the native messaging host
//! `com.alphascout.mcp`: the host manifest, and the extension id it lets in, computed from
//! the `key` in manifest.json (never written down twice). `cargo xtask mcp install` writes
//! it for the user's Chromium and Chrome; a test launch writes it into its throw-away
//! profile.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The name the worker passes to `chrome.runtime.connectNative`.
pub use mcp_tools::bridge::HOST_NAME;

/// The id Chrome gives an extension whose manifest has `key` (base64 of its public key's
/// DER): SHA-256 of the key, its first 32 hex digits written with `a`–`p` for 0–f.
pub fn extension_id(key: &str) -> Result<String, String> {
    let der =
        BASE64.decode(key.trim()).map_err(|e| format!("manifest.json's key is not base64: {e}"))?;
    let digest = Sha256::digest(der);
    Ok(digest[..16]
        .iter()
        .flat_map(|byte| [byte >> 4, byte & 0xf])
        .map(|nibble| char::from(b'a' + nibble))
        .collect())
}

/// The id of the extension whose `manifest.json` is at `manifest`.
pub fn extension_id_of(manifest: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(manifest)
        .map_err(|e| format!("reading {}: {e}", manifest.display()))?;
    let manifest: Value = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not JSON: {e}", manifest.display()))?;
    let key = manifest["key"]
        .as_str()
        .ok_or("manifest.json has no `key`, so the extension's id is not fixed")?;
    extension_id(key)
}

/// The host manifest: `binary` runs when the extension `extension_id`, and only it, connects.
pub fn host_manifest(binary: &Path, extension_id: &str) -> Value {
    json!({
        "name": HOST_NAME,
        "description": "AlphaScout's MCP server: lets other agents drive AlphaScout",
        "path": binary,
        "type": "stdio",
        "allowed_origins": [format!("chrome-extension://{extension_id}/")],
    })
}

/// Writes the host manifest into `dir` (a browser's `NativeMessagingHosts`), creating it.
pub fn install(dir: &Path, binary: &Path, extension_id: &str) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let path = manifest_path(dir);
    let text = serde_json::to_string_pretty(&host_manifest(binary, extension_id))
        .expect("a manifest is JSON");
    std::fs::write(&path, text + "\n").map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok(path)
}

/// Where [`install`] writes in `dir`.
pub fn manifest_path(dir: &Path) -> PathBuf {
    dir.join(format!("{HOST_NAME}.json"))
}

/// The host's own folder (its socket, lock and `mcp.json`), from these variables:
/// `$ALPHASCOUT_MCP_DIR`, else `$XDG_CONFIG_HOME/alphascout`, else `~/.config/alphascout`; an
/// empty one counts as unset. One rule for the host and `cargo xtask mcp install`.
pub fn host_dir_from(
    explicit: Option<OsString>,
    xdg_config: Option<OsString>,
    home: Option<OsString>,
) -> Option<PathBuf> {
    let set = |v: Option<OsString>| v.filter(|v| !v.is_empty()).map(PathBuf::from);
    set(explicit)
        .or_else(|| set(xdg_config).map(|c| c.join("alphascout")))
        .or_else(|| set(home).map(|h| h.join(".config/alphascout")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_dir_is_the_explicit_one_then_xdg_then_home() {
        let os = |s: &str| Some(OsString::from(s));
        assert_eq!(host_dir_from(os("/t/x"), os("/c"), os("/h")), Some("/t/x".into()));
        assert_eq!(host_dir_from(os(""), os("/c"), os("/h")), Some("/c/alphascout".into()));
        assert_eq!(host_dir_from(None, None, os("/h")), Some("/h/.config/alphascout".into()));
        assert_eq!(host_dir_from(None, None, None), None);
    }

    #[test]
    fn the_id_is_the_keys_hash_in_letters_a_to_p() {
        // The id Chromium gives the project's key, which e2e's `extension` module checks
        // against a real launch.
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../manifest.json");
        assert_eq!(extension_id_of(&manifest).unwrap(), "cibocdioghpkimbibadndbacnjpdchki");
        assert!(extension_id("not base64!").is_err());
    }

    #[test]
    fn the_manifest_lets_in_only_that_extension() {
        let manifest =
            host_manifest(Path::new("/opt/alphascout-mcp"), "abcdefghijklmnopabcdefghijklmnop");
        assert_eq!(manifest["name"], HOST_NAME);
        assert_eq!(manifest["type"], "stdio");
        assert_eq!(manifest["path"], "/opt/alphascout-mcp");
        assert_eq!(
            manifest["allowed_origins"],
            json!(["chrome-extension://abcdefghijklmnopabcdefghijklmnop/"])
        );
    }
}
