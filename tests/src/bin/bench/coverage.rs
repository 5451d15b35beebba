//! Text coverage of the page state: what share of the words a person sees in the viewport
//! reach the model, and at what cost in characters, beside a reference state built the
//! simple way (the anchor's habit: every interactive element with its attributes cut to 15
//! characters, and every visible text node on a line of its own).

use std::collections::HashMap;

use serde_json::Value;

/// Runs in the page's main world. Returns `{seen, reference}`: the text a person sees in
/// the viewport (text nodes that are rendered, in view, not clipped away and not covered,
/// plus what fields show: typed values, placeholders, chosen options, button labels) and
/// the reference state. Text the page marks `aria-hidden` (decoration) is not counted.
pub const SEEN_AND_REFERENCE: &str = r#"(() => {
  const seen = [];
  const reference = [];
  const vw = innerWidth, vh = innerHeight;
  const inView = (r) => r.width > 0 && r.height > 0 && r.bottom > 0 && r.top < vh && r.right > 0 && r.left < vw;
  const onTop = (el, r) => {
    const x = Math.min(Math.max(r.left + Math.min(r.width / 2, 8), 0), vw - 1);
    const y = Math.min(Math.max(r.top + r.height / 2, 0), vh - 1);
    const hit = document.elementFromPoint(x, y);
    return !hit || hit === el || el.contains(hit) || hit.contains(el);
  };
  const interactive = "a[href],button,input:not([type=hidden]),select,textarea,summary,[role=button]," +
    "[role=link],[role=option],[role=menuitem],[role=tab],[role=checkbox],[role=radio],[onclick]," +
    "[tabindex]:not([tabindex='-1'])";
  // Clipped to nothing by itself or an ancestor (screen-reader-only text).
  const clipped = (el) => {
    for (let e = el; e && e !== document.body; e = e.parentElement) {
      const r = e.getBoundingClientRect();
      if (r.width <= 1 && r.height <= 1) return true;
    }
    return false;
  };
  const cut = (v) => (v.length > 15 ? v.slice(0, 15) + "..." : v);
  let index = 0;
  for (const el of document.querySelectorAll(interactive)) {
    const r = el.getBoundingClientRect();
    if (!inView(r) || !el.checkVisibility({ opacityProperty: true, visibilityProperty: true })) continue;
    const attrs = ["title", "type", "name", "role", "value", "placeholder", "alt", "aria-label",
      "aria-expanded", "aria-checked", "href"]
      .map((a) => [a, el.getAttribute(a)]).filter(([, v]) => v)
      .map(([a, v]) => `${a}='${cut(v)}'`);
    if (el.type === "checkbox" || el.type === "radio") attrs.push(`checked=${el.checked}`);
    const text = (el.innerText || "").replace(/\s+/g, " ").trim();
    reference.push(`[${index++}]<${el.tagName.toLowerCase()} ${attrs.join(" ")}>${text} />`);
    if (el.tagName === "TEXTAREA" || (el.tagName === "INPUT" &&
      !/^(password|checkbox|radio|file|hidden|image|range|color)$/.test(el.type))) {
      seen.push(el.value || el.placeholder || "");
    } else if (el.tagName === "SELECT") {
      seen.push([...el.selectedOptions].map((o) => o.textContent).join(" "));
    }
  }
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.data.replace(/\s+/g, " ").trim();
    const el = node.parentElement;
    if (!text || !el || /^(SCRIPT|STYLE|NOSCRIPT|OPTION|TEXTAREA)$/.test(el.tagName)) continue;
    range.selectNodeContents(node);
    const r = range.getBoundingClientRect();
    if (!inView(r) || !el.checkVisibility({ opacityProperty: true, visibilityProperty: true })) continue;
    if (clipped(el) || el.closest("[aria-hidden=true]") || !onTop(el, r)) continue;
    seen.push(text);
    if (!el.closest(interactive)) reference.push(text);
  }
  return { seen: seen.join("\n"), reference: reference.join("\n") };
})()"#;

fn words(text: &str) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        *counts.entry(word.to_lowercase()).or_insert(0) += 1;
    }
    counts
}

/// The share of `seen`'s words (counted with repeats) that `state` also has.
pub fn coverage(seen: &str, state: &str) -> f64 {
    let seen = words(seen);
    let state = words(state);
    let total: usize = seen.values().sum();
    if total == 0 {
        return 1.0;
    }
    let found: usize = seen.iter().map(|(w, n)| (*n).min(state.get(w).copied().unwrap_or(0))).sum();
    found as f64 / total as f64
}

/// `(words seen, our coverage, reference coverage, reference characters)` for a page whose
/// state text is `ours`.
pub fn measure(page: &e2e::browser::Page, ours: &str) -> (usize, f64, f64, usize) {
    let measured: Value = page.eval(SEEN_AND_REFERENCE);
    let seen = measured["seen"].as_str().unwrap_or_default();
    let reference = measured["reference"].as_str().unwrap_or_default();
    let total = words(seen).values().sum();
    (total, coverage(seen, ours), coverage(seen, reference), reference.chars().count())
}

/// The state without its header (title, url, view and tabs lines): what it says of the page.
pub fn body(state: &str) -> String {
    let mut lines = state.lines().peekable();
    lines.next(); // the title
    while lines
        .next_if(|l| l.starts_with("url: ") || l.starts_with("view: ") || l.starts_with("tabs:"))
        .is_some()
    {}
    lines.collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::{body, coverage};

    #[test]
    fn the_body_is_the_state_without_its_header() {
        let state = "Shop\nurl: http://x/\nview: y 0–900 of 900\n# Shop\n[1]<a>Home\n";
        assert_eq!(body(state), "# Shop\n[1]<a>Home");
    }

    #[test]
    fn coverage_counts_repeated_words_and_ignores_case_and_punctuation() {
        assert_eq!(coverage("The cat, the hat.", "[1]<a>the CAT\nthe hat"), 1.0);
        assert_eq!(coverage("the the the cat", "the cat"), 0.5);
        assert_eq!(coverage("", "anything"), 1.0);
    }
}
