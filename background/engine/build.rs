//! Ships the page-side scripts of `content-script/` without their comment lines, blank
//! lines and indentation. The worker embeds them and sends them over CDP into each tab
//! that needs them, so their prose would only weigh on the bundle; the files keep it.
//!
//! Only whole lines are dropped, so no token changes. That is safe because the scripts
//! have no string or template literal that spans lines (checked here: such a file fails
//! the build rather than ship changed).

use std::fs;
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let dir = manifest.join("../../content-script");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo"));
    for name in ["page-agent.js", "page-hands.js", "recorder.js"] {
        let path = dir.join(name);
        println!("cargo:rerun-if-changed={}", path.display());
        let text = fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("content-script/{name} is not readable: {e}"));
        fs::write(out.join(name), strip(name, &text)).expect("OUT_DIR is writable");
    }
}

fn strip(name: &str, text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_block = false;
    for (number, line) in text.lines().enumerate() {
        let code = line.trim();
        if in_block {
            in_block = !code.ends_with("*/");
            continue;
        }
        if code.is_empty() || code.starts_with("//") {
            continue;
        }
        if code.starts_with("/*") {
            if code.contains("*/") && !code.ends_with("*/") {
                panic!("content-script/{name}:{}: code after a comment on one line", number + 1);
            }
            in_block = !code.contains("*/");
            continue;
        }
        if code.ends_with('\\') || code.matches('`').count() % 2 == 1 {
            panic!("content-script/{name}:{}: a literal that spans lines", number + 1);
        }
        out.push_str(code);
        out.push('\n');
    }
    out
}
