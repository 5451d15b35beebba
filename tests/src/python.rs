//! A Python of the tests' own, for checks that need a Python library (the Hugging Face
//! `datasets` loader): a virtual environment under `target/py/<name>`, made with the
//! machine's `python3` and filled from PyPI with exact versions the first time a test asks,
//! so a fresh machine needs nothing installed by hand.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `python` of environment `name`, with `packages` (`name==version`) installed; each
/// is installed only when importing `modules` fails.
///
/// Tests that share an environment run at once, so making it is held under a file lock:
/// without it a second `pip install` rewrites the packages while the first one imports them.
pub fn environment(name: &str, packages: &[&str], modules: &[&str]) -> PathBuf {
    let root = crate::workspace_root().join("target/py");
    std::fs::create_dir_all(&root).expect("target/py can be made");
    let lock =
        std::fs::File::create(root.join(format!("{name}.lock"))).expect("the lock file opens");
    lock.lock().expect("the environment's lock is taken");
    let dir = root.join(name);
    let python = dir.join("bin/python");
    let imports = modules.iter().map(|m| format!("import {m}")).collect::<Vec<_>>().join("; ");
    let ready = || {
        python.exists()
            && Command::new(&python)
                .args(["-c", &imports])
                .output()
                .is_ok_and(|o| o.status.success())
    };
    if ready() {
        return python;
    }
    if !python.exists() {
        let made = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&dir)
            .status()
            .expect("python3 runs (it ships with the machine)");
        assert!(made.success(), "python3 -m venv {} failed", dir.display());
    }
    let installed = Command::new(&python)
        .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
        .args(packages)
        .status()
        .expect("pip runs");
    assert!(installed.success(), "pip install {packages:?} into {} failed", dir.display());
    assert!(ready(), "{imports} still fails in {}", dir.display());
    python
}

/// Unpacks `zip` into `dir`/`unpacked` with the machine's `python3` (Python's own reader,
/// not ours), after checking every member's CRC; returns that folder.
pub fn unzip(zip: &Path, dir: &Path) -> PathBuf {
    let unpacked = dir.join("unpacked");
    let script = "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); \
                  assert z.testzip() is None; z.extractall(sys.argv[2])";
    let status = Command::new("python3")
        .args(["-c", script])
        .arg(zip)
        .arg(&unpacked)
        .status()
        .expect("python3 unzips");
    assert!(status.success(), "python3 could not unpack {}", zip.display());
    unpacked
}
