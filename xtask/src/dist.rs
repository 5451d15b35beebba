//! `cargo xtask dist`: the unpacked MV3 extension in `dist/`.
//!
//! Layout of dist/:
//!   manifest.json, background.js, side-panel.js, *.css, icons/ (from extension/)
//!   side-panel.html, annotation.html, studio.html, workflows.html (from extension/page.html)
//!   background/      wasm-bindgen output of background-worker
//!   side-panel/      wasm-bindgen output of side-panel
//!   annotation/      wasm-bindgen output of annotation-page (annotation.html, .js, .css)
//!   studio/          wasm-bindgen output of prompt-studio (studio.html, .js, .css)
//!   workflows/       wasm-bindgen output of workflows-page (workflows.html, .js, .css)
//!   dictionaries/    en_US.aff/.dic from Debian's hunspell-en-us, for offline spelling
//! content-script/ is not copied: the worker embeds it and injects it over CDP on first need.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::setup::{self, Tools};
use crate::shell::{self, first_line, root};
use crate::sizes;
use crate::stamp::{self, Stamp};

#[derive(Clone, Copy, PartialEq)]
pub enum Profile {
    Dev,
    Release,
}

impl Profile {
    /// cargo's folder for the profile under target/wasm32-unknown-unknown/.
    fn dir(self) -> &'static str {
        match self {
            Profile::Dev => "debug",
            Profile::Release => "release",
        }
    }

    /// The wasm-opt level, or None to ship wasm-bindgen's output as it is. Release ships the
    /// smallest bundles; dev skips wasm-opt, which would only slow the edit-reload loop (npm's
    /// binaryen takes ~9 s at -O1 on the smallest debug bundle, ~35 s for the three) and strip
    /// the names that make a debug build's stack traces readable.
    fn wasm_opt_level(self) -> Option<&'static str> {
        match self {
            Profile::Dev => None,
            Profile::Release => Some("-Oz"),
        }
    }
}

/// (crate's wasm file stem, folder in dist/). `authoring`, `spelling` and `transfer` are not
/// pages: the worker instantiates its authoring module on the first pipeline, reflection,
/// Studio run, AI draft or MCP test; the annotation page imports the others when it loads the
/// dictionary and when an export, an import or a sync round starts.
const BUNDLES: [(&str, &str); 8] = [
    ("background_worker", "background"),
    ("authoring_engine", "authoring"),
    ("side_panel", "side-panel"),
    ("annotation_page", "annotation"),
    ("annotation_spelling", "spelling"),
    ("annotation_transfer", "transfer"),
    ("prompt_studio", "studio"),
    ("workflows_page", "workflows"),
];

/// The extension's pages: (name, title). Each one's HTML is `extension/page.html` with these
/// filled in, so the pages share one head; `{page}.js` mounts its bundle, `{page}.css` styles it.
const PAGES: [(&str, &str); 4] = [
    ("side-panel", "AlphaScout"),
    ("annotation", "AlphaScout · Annotation"),
    ("studio", "AlphaScout · Prompt Studio"),
    ("workflows", "AlphaScout · Workflows"),
];

/// The pages' HTML template in extension/; it is not shipped itself.
const PAGE_TEMPLATE: &str = "page.html";

const BINDGEN_FLAGS: [&str; 3] = ["--target", "web", "--no-typescript"];

/// The features rustc's wasm32 target emits by default; wasm-opt must accept them.
const WASM_OPT_FEATURES: [&str; 6] = [
    "--enable-bulk-memory",
    "--enable-nontrapping-float-to-int",
    "--enable-sign-ext",
    "--enable-reference-types",
    "--enable-multivalue",
    "--enable-mutable-globals",
];

/// Builds dist/. Each bundle's wasm-bindgen and wasm-opt steps run only when their inputs
/// changed since the last successful run or their outputs are not the recorded ones (see
/// `stamp`): wasm-bindgen writes to `target/dist-stamps/<profile>/<bundle>/`, and the
/// optimised (or, for dev, copied) result goes to `dist/<bundle>/`. Static files are copied
/// when they differ, and anything else in dist/ is removed, so the result is the same bytes a
/// build from an empty dist/ gives.
pub fn build(tools: &Tools, profile: Profile) -> Result<(), String> {
    let mut args = vec!["build", "--target", "wasm32-unknown-unknown"];
    args.extend(["-p", "background-worker", "-p", "authoring-engine"]);
    args.extend(["-p", "side-panel", "-p", "annotation-page"]);
    args.extend(["-p", "annotation-spelling", "-p", "annotation-transfer"]);
    args.extend(["-p", "prompt-studio"]);
    args.extend(["-p", "workflows-page"]);
    if profile == Profile::Release {
        args.push("--release");
    }
    shell::cargo(&args)?;

    let dist = root().join("dist");
    if dist.exists() && !dist.is_dir() {
        fs::remove_file(&dist).map_err(|e| format!("dist: {e}"))?;
    }
    fs::create_dir_all(&dist).map_err(|e| format!("dist/: {e}"))?;
    let target = root().join("target/wasm32-unknown-unknown").join(profile.dir());
    let stamps = root().join("target/dist-stamps");
    let bindgen_settings = format!(
        "{} ({}) {}",
        first_line(&tools.wasm_bindgen.to_string_lossy(), &["--version"]).unwrap_or_default(),
        tool_identity(&tools.wasm_bindgen),
        BINDGEN_FLAGS.join(" ")
    );
    let opt_settings = match (profile.wasm_opt_level(), &tools.wasm_opt) {
        (Some(level), Some(wasm_opt)) => format!(
            "{}: wasm-opt ({}) {level} --strip-debug {}",
            profile.dir(),
            tool_identity(wasm_opt),
            WASM_OPT_FEATURES.join(" ")
        ),
        _ => format!("{}: copy", profile.dir()),
    };
    for (stem, folder) in BUNDLES {
        let staged = stamps.join(profile.dir()).join(folder);
        let bindgen_kept = step(
            &stamps.join(profile.dir()).join(format!("{folder}.stamp")),
            &bindgen_settings,
            &[("wasm".into(), target.join(format!("{stem}.wasm")))],
            &staged,
            |out| {
                let out = out.to_string_lossy();
                let wasm = target.join(format!("{stem}.wasm"));
                let wasm = wasm.to_string_lossy();
                let mut args = BINDGEN_FLAGS.to_vec();
                args.extend(["--out-dir", &*out, &*wasm]);
                shell::run(&tools.wasm_bindgen.to_string_lossy(), &args)
            },
        )?;
        let staged_files = stamp::list_files(&staged).map_err(|e| format!("{folder}: {e}"))?;
        let staged_inputs: Vec<(String, PathBuf)> =
            staged_files.iter().map(|rel| (rel.clone(), staged.join(rel))).collect();
        let optimised = format!("{stem}_bg.wasm");
        let opt_kept = step(
            &stamps.join(format!("{folder}.stamp")),
            &opt_settings,
            &staged_inputs,
            &dist.join(folder),
            |out| {
                for (rel, from) in &staged_inputs {
                    let to = out.join(rel);
                    if let Some(parent) = to.parent() {
                        fs::create_dir_all(parent).map_err(|e| format!("{rel}: {e}"))?;
                    }
                    match (profile.wasm_opt_level(), &tools.wasm_opt) {
                        (Some(level), Some(wasm_opt)) if *rel == optimised => {
                            let (from, to) = (from.to_string_lossy(), to.to_string_lossy());
                            let mut args = vec![level, "--strip-debug", "-o", &*to, &*from];
                            args.extend(WASM_OPT_FEATURES);
                            shell::run(&wasm_opt.to_string_lossy(), &args)?;
                        }
                        _ => {
                            fs::copy(from, &to).map_err(|e| format!("{rel}: {e}"))?;
                        }
                    }
                }
                Ok(())
            },
        )?;
        match (bindgen_kept, opt_kept) {
            (true, true) => println!("{folder}: unchanged, kept dist/{folder}"),
            (true, false) => println!("{folder}: wasm-bindgen skipped, its input is unchanged"),
            (false, true) => {
                println!("{folder}: wasm-bindgen output unchanged, kept dist/{folder}")
            }
            (false, false) => {}
        }
    }

    let files = static_files(tools)?;
    let bundles: BTreeSet<PathBuf> = BUNDLES.iter().map(|(_, folder)| folder.into()).collect();
    if let Some(clash) = files.keys().find(|rel| bundles.iter().any(|b| rel.starts_with(b))) {
        return Err(format!("{} would land in a bundle's folder", clash.display()));
    }
    for (rel, from) in &files {
        copy_if_changed(from, &dist.join(rel))?;
    }
    let mut keep_dirs: BTreeSet<PathBuf> = bundles.clone();
    keep_dirs.extend(files.keys().flat_map(|rel| rel.ancestors().skip(1).map(Path::to_owned)));
    prune(&dist, Path::new(""), &files, &bundles, &keep_dirs)?;
    print_sizes(&dist)
}

/// Runs `run(out_dir)` unless the stamp at `stamp_path` says the same settings and inputs
/// already produced what `out_dir` holds. Returns whether it was skipped. The old stamp goes
/// before the step runs and the new one is written after it succeeded, so a failed step is
/// never taken for done.
fn step(
    stamp_path: &Path,
    settings: &str,
    inputs: &[(String, PathBuf)],
    out_dir: &Path,
    run: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<bool, String> {
    let describe = |e: std::io::Error| format!("{}: {e}", stamp_path.display());
    if let Some(old) = Stamp::load(stamp_path)
        && let Some(now) = stamp::fresh(&old, settings, inputs, out_dir)
    {
        if now != old {
            now.save(stamp_path).map_err(describe)?;
        }
        return Ok(true);
    }
    Stamp::remove(stamp_path).map_err(describe)?;
    // Marked before the step, so an input that changes while it runs counts as changed.
    let marked = stamp::mark_inputs(inputs).map_err(|e| format!("input: {e}"))?;
    remove_path(out_dir)?;
    fs::create_dir_all(out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    run(out_dir)?;
    let outputs = stamp::mark_dir(out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    Stamp { settings: settings.to_owned(), inputs: marked, outputs }
        .save(stamp_path)
        .map_err(describe)?;
    Ok(false)
}

/// A tool's resolved path with its size and mtime, so a reinstalled tool counts as a change.
fn tool_identity(path: &Path) -> String {
    let resolved = fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    let meta = fs::metadata(&resolved).ok();
    let mtime = meta
        .as_ref()
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    format!("{} {} {mtime}", resolved.display(), meta.map_or(0, |m| m.len()))
}

/// Where a file of dist/ comes from: copied, or written by the build.
enum Source {
    File(PathBuf),
    Text(String),
}

/// dist/'s files other than the bundles: path in dist/ → source. extension/ (but its notes and
/// the pages' template), each page's HTML from that template, the manifest, and Debian's en_US
/// Hunspell dictionary for the annotation page's offline spelling.
fn static_files(tools: &Tools) -> Result<BTreeMap<PathBuf, Source>, String> {
    let extension = root().join("extension");
    let mut files = BTreeMap::new();
    for rel in stamp::list_files(&extension).map_err(|e| format!("extension/: {e}"))? {
        if !rel.ends_with(".md") && rel != PAGE_TEMPLATE {
            files.insert(PathBuf::from(&rel), Source::File(extension.join(&rel)));
        }
    }
    let template = fs::read_to_string(extension.join(PAGE_TEMPLATE))
        .map_err(|e| format!("extension/{PAGE_TEMPLATE}: {e}"))?;
    for (page, title) in PAGES {
        files
            .insert(format!("{page}.html").into(), Source::Text(page_html(&template, page, title)));
    }
    for file in ["en_US.aff", "en_US.dic"] {
        files.insert(
            Path::new("dictionaries").join(file),
            Source::File(tools.dictionary.join(file)),
        );
    }
    files.insert("manifest.json".into(), Source::File(root().join("manifest.json")));
    Ok(files)
}

/// One page's HTML: the template with its `{page}` and `{title}` filled in.
fn page_html(template: &str, page: &str, title: &str) -> String {
    template.replace("{page}", page).replace("{title}", title)
}

fn copy_if_changed(from: &Source, to: &Path) -> Result<(), String> {
    let bytes = match from {
        Source::File(from) => fs::read(from).map_err(|e| format!("{}: {e}", from.display()))?,
        Source::Text(text) => text.as_bytes().to_vec(),
    };
    if to.is_file() && fs::read(to).ok().as_deref() == Some(&bytes[..]) {
        return Ok(());
    }
    remove_path(to)?;
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    fs::write(to, bytes).map_err(|e| format!("{}: {e}", to.display()))
}

/// Removes a file or folder; nothing to do when it is missing.
fn remove_path(path: &Path) -> Result<(), String> {
    let result = match fs::symlink_metadata(path) {
        Err(_) => return Ok(()),
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
    };
    result.map_err(|e| format!("removing {}: {e}", path.display()))
}

/// Removes from dist/ whatever a build from scratch would not put there: files that are not
/// static files and folders that neither hold one nor are a bundle's (those the stamps check).
fn prune(
    dist: &Path,
    rel: &Path,
    files: &BTreeMap<PathBuf, Source>,
    bundles: &BTreeSet<PathBuf>,
    keep_dirs: &BTreeSet<PathBuf>,
) -> Result<(), String> {
    let dir = dist.join(rel);
    for entry in fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let entry = entry.map_err(|e| e.to_string())?;
        let path = rel.join(entry.file_name());
        let is_dir = entry.file_type().map_err(|e| e.to_string())?.is_dir();
        if is_dir && bundles.contains(&path) {
            continue;
        } else if is_dir && keep_dirs.contains(&path) {
            prune(dist, &path, files, bundles, keep_dirs)?;
        } else if is_dir || !files.contains_key(&path) {
            remove_path(&entry.path())?;
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
/// Each bundle's wasm, gzipped, may weigh at most this (KiB): what a user waits for when a
/// page or the worker starts. Issue 24 set them; `cargo xtask dist --sizes` names what weighs.
const BUDGETS_KIB: [(&str, f64); 5] = [
    ("background", 600.0),
    ("side-panel", 300.0),
    ("annotation", 600.0),
    ("studio", 400.0),
    ("workflows", 300.0),
];

fn print_sizes(dist: &Path) -> Result<(), String> {
    println!("{:<44} {:>10} {:>10} {:>10}", "bundle", "raw", "gzipped", "budget");
    let mut files = Vec::new();
    collect_code(dist, &mut files);
    files.sort();
    for file in files {
        let bytes = fs::read(&file).map_err(|e| e.to_string())?;
        let name = file.strip_prefix(dist).unwrap_or(&file).display().to_string();
        let gzipped = gzipped_len(&bytes) as f64 / 1024.0;
        let budget = BUDGETS_KIB
            .iter()
            .find(|(folder, _)| name.starts_with(&format!("{folder}/")) && name.ends_with(".wasm"))
            .map_or(String::new(), |(_, budget)| {
                let verdict = if gzipped <= *budget { "ok" } else { "OVER" };
                format!("{budget:.0} KiB {verdict} ({:.2}×)", gzipped / budget)
            });
        println!(
            "{name:<44} {:>10} {:>10} {budget:>10}",
            kib(bytes.len()),
            kib(gzipped_len(&bytes))
        );
    }
    Ok(())
}

/// `--sizes`: what weighs most in each bundle, by `twiggy top` over wasm-bindgen's output
/// (before wasm-opt strips the function names), grouped by crate and then by function.
pub fn report_sizes(profile: Profile) -> Result<(), String> {
    let twiggy = setup::twiggy()?;
    let staged = root().join("target/dist-stamps").join(profile.dir());
    for (stem, folder) in BUNDLES {
        let wasm = staged.join(folder).join(format!("{stem}_bg.wasm"));
        let wasm = wasm.to_string_lossy();
        let csv = shell::output(
            &twiggy.to_string_lossy(),
            &["top", "-n", "1000000", "--format", "csv", &wasm],
        )?;
        let rows = sizes::parse_top(&csv);
        println!("\n{folder}: the biggest crates (code and data before wasm-opt)");
        for (name, bytes, share) in sizes::by_crate(&rows).into_iter().take(12) {
            println!("  {:>10} {share:>5.1}%  {name}", kib(bytes));
        }
        println!("{folder}: the biggest items");
        for (name, bytes, share) in sizes::top_items(&rows, 12) {
            println!("  {:>10} {share:>5.1}%  {name}", kib(bytes));
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every page's HTML is what the hand-written file said before the template: its own
    /// title, stylesheet and bootstrap, the shared head.
    #[test]
    fn each_page_is_the_template_with_its_name_and_title() {
        let template = fs::read_to_string(root().join("extension").join(PAGE_TEMPLATE)).unwrap();
        let html = page_html(&template, "annotation", "AlphaScout · Annotation");
        assert_eq!(
            html,
            "<!doctype html>\n<html lang=\"en\">\n<head>\n  <meta charset=\"utf-8\">\n  \
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n  \
             <meta name=\"color-scheme\" content=\"light dark\">\n  \
             <title>AlphaScout · Annotation</title>\n  \
             <link rel=\"stylesheet\" href=\"annotation.css\">\n  \
             <script type=\"module\" src=\"annotation.js\"></script>\n</head>\n<body></body>\n</html>\n"
        );
        for (page, title) in PAGES {
            let html = page_html(&template, page, title);
            assert!(!html.contains('{'), "{page}: a placeholder is left");
            assert!(html.contains(&format!("<title>{title}</title>")), "{page}");
            assert!(root().join("extension").join(format!("{page}.js")).is_file(), "{page}.js");
            assert!(root().join("extension").join(format!("{page}.css")).is_file(), "{page}.css");
        }
    }
}
