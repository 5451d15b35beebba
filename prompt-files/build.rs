//! Bundles every file under `prompts/` into the engine, so the worker ships them and a new
//! prompt file needs no code change.

use std::fs;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, root: &Path, out: &mut Vec<(String, PathBuf)>) {
    let mut entries: Vec<PathBuf> =
        fs::read_dir(dir).expect("prompts/ is readable").flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, root, out);
        } else if path.file_name().is_some_and(|n| n != "README.md") {
            let relative = path
                .strip_prefix(root)
                .expect("inside prompts/")
                .to_string_lossy()
                .replace('\\', "/");
            out.push((relative, path));
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let prompts = manifest.join("../prompts").canonicalize().expect("prompts/ exists");
    println!("cargo:rerun-if-changed={}", prompts.display());
    let mut files = Vec::new();
    collect(&prompts, &prompts, &mut files);
    let mut code = String::from(
        "/// Every file under prompts/, as (path relative to prompts/, contents).\npub const BUNDLED: &[(&str, &str)] = &[\n",
    );
    for (relative, path) in files {
        println!("cargo:rerun-if-changed={}", path.display());
        code.push_str(&format!(
            "    ({relative:?}, include_str!({:?})),\n",
            path.display().to_string()
        ));
    }
    code.push_str("];\n");
    let out =
        PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo")).join("bundled_prompts.rs");
    fs::write(out, code).expect("OUT_DIR is writable");
}
