//! `cargo xtask dist`: the unpacked MV3 extension in `dist/`.
//!
//! Layout of dist/:
//!   manifest.json, background.js, side-panel.html, side-panel.js, *.css, icons/ (from extension/)
//!   background/      wasm-bindgen output of background-worker
//!   side-panel/      wasm-bindgen output of side-panel
//!   annotation/      wasm-bindgen output of annotation-page (annotation.html, .js, .css)
//!   dictionaries/    en_US.aff/.dic from Debian's hunspell-en-us, for offline spelling
//! content-script/ is not copied: the worker embeds it and injects it over CDP on first need.

use std::fs;
use std::io::Write;
use std::path::Path;

use crate::setup::Tools;
use crate::shell::{self, root};

#[derive(Clone, Copy, PartialEq)]
pub enum Profile {
    Dev,
    Release,
}

/// (crate's wasm file stem, folder in dist/)
const BUNDLES: [(&str, &str); 3] = [
    ("background_worker", "background"),
    ("side_panel", "side-panel"),
    ("annotation_page", "annotation"),
];

pub fn build(tools: &Tools, profile: Profile) -> Result<(), String> {
    let mut args = vec!["build", "--target", "wasm32-unknown-unknown"];
    args.extend(["-p", "background-worker", "-p", "side-panel", "-p", "annotation-page"]);
    if profile == Profile::Release {
        args.push("--release");
    }
    shell::cargo(&args)?;

    let dist = root().join("dist");
    if dist.exists() {
        fs::remove_dir_all(&dist).map_err(|e| format!("clearing dist/: {e}"))?;
    }
    let target = root().join("target/wasm32-unknown-unknown").join(match profile {
        Profile::Dev => "debug",
        Profile::Release => "release",
    });
    for (stem, folder) in BUNDLES {
        let wasm = target.join(format!("{stem}.wasm"));
        let out = dist.join(folder);
        let bindgen = tools.wasm_bindgen.to_string_lossy();
        shell::run(
            &bindgen,
            &[
                "--target",
                "web",
                "--no-typescript",
                "--out-dir",
                &out.to_string_lossy(),
                &wasm.to_string_lossy(),
            ],
        )?;
        if let (Profile::Release, Some(wasm_opt)) = (profile, &tools.wasm_opt) {
            let file = out.join(format!("{stem}_bg.wasm"));
            let file = file.to_string_lossy();
            // The features rustc's wasm32 target emits by default; wasm-opt must accept them.
            let features = [
                "--enable-bulk-memory",
                "--enable-nontrapping-float-to-int",
                "--enable-sign-ext",
                "--enable-reference-types",
                "--enable-multivalue",
                "--enable-mutable-globals",
            ];
            let mut args = vec!["-Oz", "--strip-debug", "-o", &*file, &*file];
            args.extend(features);
            shell::run(&wasm_opt.to_string_lossy(), &args)?;
        }
    }
    copy_dir(&root().join("extension"), &dist)?;
    // The annotation page's offline spelling reads Debian's en_US Hunspell dictionary.
    let dictionaries = dist.join("dictionaries");
    fs::create_dir_all(&dictionaries).map_err(|e| format!("dist/dictionaries: {e}"))?;
    for file in ["en_US.aff", "en_US.dic"] {
        fs::copy(tools.dictionary.join(file), dictionaries.join(file))
            .map_err(|e| format!("{file}: {e}"))?;
    }
    fs::copy(root().join("manifest.json"), dist.join("manifest.json"))
        .map_err(|e| format!("manifest.json: {e}"))?;
    print_sizes(&dist)
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    for entry in fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))? {
        let entry = entry.map_err(|e| e.to_string())?;
        let path = entry.path();
        if path.is_dir() {
            copy_dir(&path, &to.join(entry.file_name()))?;
        } else if path.extension().is_none_or(|ext| ext != "md") {
            fs::copy(&path, to.join(entry.file_name()))
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(())
}

fn gzipped_len(bytes: &[u8]) -> usize {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(bytes).expect("writing to memory");
    encoder.finish().expect("writing to memory").len()
}

/// Prints each shipped code file's size, raw and gzipped.
fn print_sizes(dist: &Path) -> Result<(), String> {
    println!("{:<44} {:>10} {:>10}", "bundle", "raw", "gzipped");
    let mut files = Vec::new();
    collect_code(dist, &mut files);
    files.sort();
    for file in files {
        let bytes = fs::read(&file).map_err(|e| e.to_string())?;
        let name = file.strip_prefix(dist).unwrap_or(&file).display().to_string();
        println!("{name:<44} {:>10} {:>10}", kib(bytes.len()), kib(gzipped_len(&bytes)));
    }
    Ok(())
}

fn collect_code(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_code(&path, out);
        } else if path.extension().is_some_and(|e| e == "wasm" || e == "js") {
            out.push(path);
        }
    }
}

fn kib(bytes: usize) -> String {
    format!("{:.1} KiB", bytes as f64 / 1024.0)
}
