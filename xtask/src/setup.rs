//! Installs what the build and tests need, only when missing: the wasm32 target, the
//! `wasm-bindgen-cli` matching `Cargo.lock`, Chromium, and (optionally) `wasm-opt`.

use std::path::PathBuf;

use crate::shell::{self, first_line, which};

/// Where the tools we found or installed live.
pub struct Tools {
    pub wasm_bindgen: PathBuf,
    pub wasm_opt: Option<PathBuf>,
    pub chromium: PathBuf,
    /// Debian's `hunspell-en-us`: the folder holding `en_US.aff` and `en_US.dic`, which the
    /// annotation page bundles for offline spelling.
    pub dictionary: PathBuf,
}

/// binaryen's npm release that provides `wasm-opt`; pinned so sizes are comparable.
const BINARYEN_VERSION: &str = "132.0.0";

pub fn all() -> Result<Tools, String> {
    wasm_target()?;
    Ok(Tools {
        wasm_bindgen: wasm_bindgen()?,
        wasm_opt: wasm_opt(),
        chromium: chromium()?,
        dictionary: dictionary()?,
    })
}

fn wasm_target() -> Result<(), String> {
    let installed = first_line_all("rustup", &["target", "list", "--installed"]);
    if installed.lines().any(|l| l.trim() == "wasm32-unknown-unknown") {
        return Ok(());
    }
    shell::run("rustup", &["target", "add", "wasm32-unknown-unknown"])
}

fn first_line_all(program: &str, args: &[&str]) -> String {
    std::process::Command::new(program)
        .args(args)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

/// The `wasm-bindgen` version the lock file pins: the CLI must match it exactly.
pub fn locked_wasm_bindgen_version() -> Result<String, String> {
    let lock = std::fs::read_to_string(shell::root().join("Cargo.lock"))
        .map_err(|e| format!("Cargo.lock: {e}"))?;
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line == "name = \"wasm-bindgen\"" {
            let version = lines.next().unwrap_or_default();
            if let Some(v) = version.strip_prefix("version = \"") {
                return Ok(v.trim_end_matches('"').to_owned());
            }
        }
    }
    Err("Cargo.lock has no wasm-bindgen entry".into())
}

/// twiggy, for `cargo xtask dist --sizes` only: the gate does not need it.
const TWIGGY_VERSION: &str = "0.8.0";

pub fn twiggy() -> Result<PathBuf, String> {
    let current = first_line("twiggy", &["--version"]).unwrap_or_default();
    // It calls itself `twiggy-opt` in `--version`.
    if !(current.starts_with("twiggy") && current.ends_with(TWIGGY_VERSION)) {
        eprintln!("twiggy {TWIGGY_VERSION} is missing (found {current:?}); installing, ~1 min");
        shell::cargo(&["install", "twiggy", "--version", TWIGGY_VERSION, "--locked", "--force"])?;
    }
    installed("twiggy")
}

/// A binary `cargo install` put in $CARGO_HOME/bin, which a fresh shell may not have on PATH.
fn installed(program: &str) -> Result<PathBuf, String> {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")));
    which(program)
        .or_else(|| cargo_home.map(|home| home.join("bin").join(program)).filter(|p| p.is_file()))
        .ok_or_else(|| format!("{program} is not on PATH after install"))
}

fn wasm_bindgen() -> Result<PathBuf, String> {
    let wanted = locked_wasm_bindgen_version()?;
    let current = first_line("wasm-bindgen", &["--version"]).unwrap_or_default();
    if current != format!("wasm-bindgen {wanted}") {
        eprintln!("wasm-bindgen-cli {wanted} is missing (found {current:?}); installing, ~7 min");
        shell::cargo(&["install", "wasm-bindgen-cli", "--version", &wanted, "--force"])?;
    }
    installed("wasm-bindgen")
}

/// `wasm-opt` from PATH, or from the pinned npm `binaryen` under `target/tools`. Optional:
/// without it the build still works, only larger.
fn wasm_opt() -> Option<PathBuf> {
    if let Some(found) = which("wasm-opt") {
        return Some(found);
    }
    let prefix = shell::root().join("target/tools");
    let local = prefix.join("node_modules/.bin/wasm-opt");
    if !local.exists() && which("npm").is_some() {
        let prefix = prefix.to_string_lossy().into_owned();
        let package = format!("binaryen@{BINARYEN_VERSION}");
        let args = ["install", "--no-audit", "--no-fund", "--prefix", &prefix, &package];
        if let Err(error) = shell::run("npm", &args) {
            eprintln!("warning: wasm-opt unavailable ({error}); bundles stay unoptimized");
        }
    }
    local.exists().then_some(local)
}

/// Debian's Chromium, or the one `CHROMIUM` names (a person's own Chrome, for instance).
fn chromium() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("CHROMIUM") {
        return Ok(path.into());
    }
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        if let Some(path) = which(name) {
            return Ok(path);
        }
    }
    apt_install(&["chromium"], "Chromium is missing")?;
    which("chromium").ok_or_else(|| "chromium is not on PATH after apt-get install".into())
}

/// Debian's US English Hunspell dictionary, or the folder `HUNSPELL_DIR` names.
pub fn dictionary() -> Result<PathBuf, String> {
    let dir: PathBuf =
        std::env::var_os("HUNSPELL_DIR").map_or_else(|| "/usr/share/hunspell".into(), Into::into);
    if !dir.join("en_US.dic").exists() {
        apt_install(&["hunspell-en-us"], "The en_US Hunspell dictionary is missing")?;
    }
    if dir.join("en_US.dic").exists() && dir.join("en_US.aff").exists() {
        Ok(dir)
    } else {
        Err(format!("{} has no en_US.aff/en_US.dic after apt-get install", dir.display()))
    }
}

/// Installs Debian packages with apt-get (through sudo unless root), saying why first.
pub fn apt_install(packages: &[&str], why: &str) -> Result<(), String> {
    eprintln!("{why}; installing Debian's {}", packages.join(", "));
    let sudo: &[&str] =
        if first_line("id", &["-u"]).as_deref() == Some("0") { &[] } else { &["sudo"] };
    let apt = |args: &[&str]| {
        let mut command: Vec<&str> = sudo.to_vec();
        command.extend_from_slice(args);
        shell::run(command[0], &command[1..])
    };
    apt(&["apt-get", "update", "-q"])?;
    let mut install =
        vec!["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "-q"];
    install.extend_from_slice(packages);
    apt(&install)
}
