//! Bundles every `templates/*.md` (but the README) into the crate, so the template library
//! ships with the page and a new template file needs no code change. A file without front
//! matter or without its three thought sections fails the build here; `templates::tests`
//! parses each one fully.

use std::fs;
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let dir = manifest.join("../../templates").canonicalize().expect("templates/ exists");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .expect("templates/ is readable")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "md")
                && p.file_name().is_some_and(|n| n != "README.md")
        })
        .collect();
    files.sort();
    let mut code = String::from(
        "/// Every templates/*.md but the README, as (file name, contents).\npub const BUNDLED: &[(&str, &str)] = &[\n",
    );
    for path in files {
        println!("cargo:rerun-if-changed={}", path.display());
        let name = path.file_name().expect("a file").to_string_lossy().into_owned();
        let text = fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("templates/{name} is not readable text: {e}"));
        if !text.trim_start().starts_with("---") {
            panic!("templates/{name} must start with a front matter block between --- lines");
        }
        for n in 1..=3 {
            if !text.lines().any(|l| l.trim() == format!("## Thought {n}")) {
                panic!("templates/{name} has no `## Thought {n}` section");
            }
        }
        code.push_str(&format!(
            "    ({name:?}, include_str!({:?})),\n",
            path.display().to_string()
        ));
    }
    code.push_str("];\n");
    let out =
        PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo")).join("bundled_templates.rs");
    fs::write(out, code).expect("OUT_DIR is writable");
}
