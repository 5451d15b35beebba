//! `bench studio`: the annotation page (`annotation.html`) over 1,000 runs × 20 steps in the
//! extension's real IndexedDB. Every figure is timed inside the page with `performance.now()`
//! (a MutationObserver notes when the DOM first shows the awaited state), except the
//! download-on-disk times, which can only be seen from outside.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use e2e::annotation::{allow_downloads, choose, find_file, open_annotation};
use e2e::browser::{Browser, Page};
use serde_json::{Value, json};

use crate::stats;

const RUNS: usize = 1000;
const STEPS: usize = 20;
/// Repetitions of the cheap figures.
const REPS: usize = 7;
/// Repetitions of the first open (it recomputes every summary) and of each export.
const HEAVY_REPS: usize = 3;
/// The run timed for step switches: a draft with no step complete, so it opens on step 1.
const BENCH_RUN: &str = "run-0000";
/// A word in the prompts and thoughts of about one run in twenty.
const SEARCH_TERM: &str = "espresso";

const LIST_TARGET_MS: f64 = 300.0;
const SEARCH_TARGET_MS: f64 = 150.0;
const STEP_TARGET_MS: f64 = 50.0;
const EXPORT_TARGET_MS: f64 = 3000.0;

/// One printed line: samples in ms, the target they answer to, and a floor measured in the
/// same run.
struct Row {
    name: String,
    values: Vec<f64>,
    target: Option<f64>,
    floor: Option<f64>,
    note: String,
}

impl Row {
    fn new(name: impl Into<String>, values: Vec<f64>) -> Row {
        Row { name: name.into(), values, target: None, floor: None, note: String::new() }
    }
    fn target(mut self, ms: f64) -> Row {
        self.target = Some(ms);
        self
    }
    fn floor(mut self, floor: &[f64]) -> Row {
        self.floor = (!floor.is_empty()).then(|| stats(floor).1);
        self
    }
    fn note(mut self, note: impl Into<String>) -> Row {
        self.note = note.into();
        self
    }
}

fn print_header(title: &str) {
    println!();
    println!("{title}");
    println!(
        "{:<46} {:>3} {:>9} {:>9} {:>9} {:>8} {:>7} {:>9}  note",
        "figure (ms)", "n", "min", "median", "max", "target", "ratio", "floor"
    );
}

fn print_row(row: &Row) {
    if row.values.is_empty() {
        println!("{:<46}   0  (no samples) {}", row.name, row.note);
        return;
    }
    let (min, median, max) = stats(&row.values);
    let target = row.target.map_or("–".to_owned(), |t| format!("≤{t:.0}"));
    let ratio = row.target.map_or("–".to_owned(), |t| format!("{:.2}x", median / t));
    let floor = row.floor.map_or("–".to_owned(), |f| format!("{f:.1}"));
    println!(
        "{:<46} {:>3} {min:>9.1} {median:>9.1} {max:>9.1} {target:>8} {ratio:>7} {floor:>9}  {}",
        row.name,
        row.values.len(),
        row.note
    );
}

pub fn run() {
    let mut browser = super::launch();
    // The page creates the database at its current version; seeding then fills it.
    let page = open_annotation(&mut browser, "");
    let started = Instant::now();
    let seeded = page.eval(&seed_script());
    println!(
        "seeded {} runs, {} steps ({:.1} MB of step JSON, {} distinct screenshots, {:.0} KB) in {:.1} s (one IndexedDB transaction, setup only)",
        seeded["runs"],
        seeded["steps"],
        seeded["stepBytes"].as_f64().unwrap_or(0.0) / 1e6,
        seeded["shots"],
        seeded["shotBytes"].as_f64().unwrap_or(0.0) / 1e3,
        started.elapsed().as_secs_f64()
    );
    page.call("Page.enable", json!({})).expect("Page.enable");
    page.call("Page.addScriptToEvaluateOnNewDocument", json!({"source": watch_script()}))
        .expect("Page.addScriptToEvaluateOnNewDocument");
    page.eval(&watch_script());

    let rows: Vec<(String, Vec<Row>)> = vec![
        (
            "open the runs list (navigation start → \"1000 of 1000 runs\")".into(),
            open_list(&browser, &page),
        ),
        ("search and filter (event dispatched → new count in the DOM)".into(), search(&page)),
        (
            "step switch on a 20-step run (click / Alt+↑ → heading shows the step)".into(),
            step_switch(&browser, &page),
        ),
        (
            "export all 1,000 runs / 20,000 steps (click Export → file complete on disk)".into(),
            exports(&browser, &page),
        ),
    ];
    for (title, group) in &rows {
        print_header(title);
        for row in group {
            print_row(row);
        }
    }
    println!();
    println!(
        "ratio: median / target. dom: when a MutationObserver first saw the state; frame: the"
    );
    println!(
        "requestAnimationFrame after that (the next paint). floors are measured in the same run:"
    );
    println!(
        "list — boot (navigation → the page's top bar) and a plain JS getAll of runs + summaries;"
    );
    println!(
        "search — a plain JS substring scan of the same summaries' search text; step switch — a"
    );
    println!(
        "no-op requestAnimationFrame round; export — a Blob of a pre-made string of the same size,"
    );
    println!(
        "downloaded the same way. Disk times are seen from the harness (one CDP call + 2 ms polls)."
    );
}

/// Navigates `page` to `annotation.html{query}` and returns what the watch script saw there:
/// `{open: {dom, frame}, boot: {dom, frame}}`, ms since navigation start.
fn navigate_timed(browser: &Browser, page: &Page, query: &str) -> Value {
    let url = browser.extension_url(&format!("annotation.html{query}"));
    page.eval(&format!("window.__leaving = true; location.replace({})", Value::from(url)));
    poll(
        page,
        "!window.__leaving && window.__open ? {open: window.__open, boot: window.__boot} : null",
        Duration::from_secs(60),
        "the annotation page to open",
    )
}

/// Evaluates `expression` until it is neither null nor false, and returns it.
fn poll(page: &Page, expression: &str, limit: Duration, what: &str) -> Value {
    page.poll(expression, limit, Duration::from_millis(10)).unwrap_or_else(|| {
        let seen = page.eval(
            "JSON.stringify({until: typeof window.__until, open: window.__open, boot: window.__boot, leaving: window.__leaving, url: location.href})",
        );
        panic!("timed out waiting for {what} ({seen})");
    })
}

fn ms(value: &Value) -> f64 {
    value.as_f64().unwrap_or(f64::NAN)
}

fn open_list(browser: &Browser, page: &Page) -> Vec<Row> {
    let (mut first, mut first_boot) = (Vec::new(), Vec::new());
    for _ in 0..HEAVY_REPS {
        page.eval(&idb(
            "db.transaction('summaries', 'readwrite').objectStore('summaries').clear()",
        ));
        let seen =
            profiled(page, "a first open of the runs list", || navigate_timed(browser, page, ""));
        first.push(ms(&seen["open"]["dom"]));
        first_boot.push(ms(&seen["boot"]["dom"]));
    }
    let stored = page.eval(&idb("db.transaction('summaries').objectStore('summaries').count()"));
    assert_eq!(stored.as_u64(), Some(RUNS as u64), "the first open stores every summary");
    let (mut warm, mut warm_frame, mut boot) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..REPS {
        let seen = navigate_timed(browser, page, "");
        warm.push(ms(&seen["open"]["dom"]));
        warm_frame.push(ms(&seen["open"]["frame"]));
        boot.push(ms(&seen["boot"]["dom"]));
    }
    profiled(page, "a warm open of the runs list", || navigate_timed(browser, page, ""));
    let mut read = Vec::new();
    for _ in 0..REPS {
        read.push(ms(&page.eval(
            "(async () => { const t = performance.now();
                const db = await new Promise((ok, fail) => { const r = indexedDB.open('alphascout'); r.onsuccess = () => ok(r.result); r.onerror = () => fail(r.error); });
                const all = s => new Promise((ok, fail) => { const r = db.transaction(s).objectStore(s).getAll(); r.onsuccess = () => ok(r.result); r.onerror = () => fail(r.error); });
                await all('runs'); await all('summaries'); db.close();
                return performance.now() - t; })()",
        )));
    }
    vec![
        Row::new("first open, no stored summaries (dom)", first)
            .target(LIST_TARGET_MS)
            .floor(&first_boot)
            .note("computes and stores all 1,000 summaries; floor = boot"),
        Row::new("warm open (dom)", warm).target(LIST_TARGET_MS).floor(&boot).note("floor = boot"),
        Row::new("warm open (frame)", warm_frame).target(LIST_TARGET_MS),
        Row::new("  boot: navigation → top bar rendered", boot),
        Row::new("  JS getAll runs + summaries (IDB floor)", read),
    ]
}

/// Code run with `db`, the extension's database open in the page; resolves to the result
/// of the request `expression` makes.
fn idb(expression: &str) -> String {
    format!(
        "(async () => {{
            {open_db}
            const request = {expression};
            const result = await new Promise((ok, fail) => {{ request.onsuccess = () => ok(request.result); request.onerror = () => fail(request.error); }});
            db.close();
            return result ?? true;
        }})()",
        open_db = e2e::OPEN_DB,
    )
}

/// Dispatches what `act` does in the page and times the runs count changing.
fn timed_count_change(page: &Page, act: &str) -> (f64, f64, String) {
    let reply = page.eval(&format!(
        "(async () => {{
            const count = () => document.querySelector('[data-testid=runs-count]').textContent;
            const before = count();
            const changed = __until(() => count() !== before);
            const t0 = performance.now();
            {act}
            const r = await changed;
            return {{dom: r.dom - t0, frame: r.frame - t0, count: count()}};
        }})()"
    ));
    (ms(&reply["dom"]), ms(&reply["frame"]), reply["count"].as_str().unwrap_or_default().to_owned())
}

fn search(page: &Page) -> Vec<Row> {
    let set_text = |text: &str| {
        format!(
            "const input = document.querySelector('[data-testid=search]');
             input.value = {}; input.dispatchEvent(new InputEvent('input', {{bubbles: true}}));",
            Value::from(text)
        )
    };
    let toggle = "document.querySelector('[data-testid=filter-approved]').click();";
    let (mut apply, mut apply_frame, mut clear, mut on, mut off) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut matched, mut approved) = (String::new(), String::new());
    for _ in 0..REPS {
        let (dom, frame, count) = timed_count_change(page, &set_text(SEARCH_TERM));
        apply.push(dom);
        apply_frame.push(frame);
        matched = count;
        clear.push(timed_count_change(page, &set_text("")).0);
        let (dom, _, count) = timed_count_change(page, toggle);
        on.push(dom);
        approved = count;
        off.push(timed_count_change(page, toggle).0);
    }
    // The floor: the same substring scan in plain JS over the same summaries.
    page.eval(&format!(
        "(async () => {{ window.__summaries = await {}; return true; }})()",
        idb("db.transaction('summaries').objectStore('summaries').getAll()")
    ));
    let mut scan = Vec::new();
    for _ in 0..REPS {
        scan.push(ms(&page.eval(&format!(
            "(() => {{ const t = performance.now(); const term = {};
                const n = window.__summaries.filter(s => (s.searchText ?? '').includes(term)).length;
                window.__n = n; return performance.now() - t; }})()",
            Value::from(SEARCH_TERM)
        ))));
    }
    vec![
        Row::new(format!("search {SEARCH_TERM:?} (dom)"), apply)
            .target(SEARCH_TARGET_MS)
            .floor(&scan)
            .note(format!("→ {matched}; floor = JS scan")),
        Row::new(format!("search {SEARCH_TERM:?} (frame)"), apply_frame).target(SEARCH_TARGET_MS),
        Row::new("clear the search (dom)", clear)
            .target(SEARCH_TARGET_MS)
            .note("→ 1000 of 1000 runs"),
        Row::new("status filter Approved on (dom)", on)
            .target(SEARCH_TARGET_MS)
            .note(format!("→ {approved}")),
        Row::new("status filter Approved off (dom)", off).target(SEARCH_TARGET_MS),
    ]
}

fn step_switch(browser: &Browser, page: &Page) -> Vec<Row> {
    let (mut cold, mut cold_frame, mut cold_shot) = (Vec::new(), Vec::new(), Vec::new());
    let (mut warm, mut warm_frame, mut warm_shot) = (Vec::new(), Vec::new(), Vec::new());
    let mut opened = Vec::new();
    for _ in 0..2 {
        // A fresh document each pass: no screenshot has been read yet.
        let seen = navigate_timed(browser, page, &format!("?agentRunId={BENCH_RUN}&qa=false"));
        opened.push(ms(&seen["open"]["dom"]));
        let heading = page.text("[data-testid=step-heading]");
        assert_eq!(heading, format!("Step 1 of {STEPS}"), "the bench run opens on its first step");
        page.wait_for(
            "document.querySelector('[data-testid=screenshot-img]')?.complete",
            "the first screenshot",
        );
        let forward = "document.querySelector('[data-testid=next-step]').click();";
        let back = "window.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowUp', code: 'ArrowUp', altKey: true, bubbles: true}));";
        for (to, act) in
            (2..=STEPS).map(|n| (n, forward)).chain((1..STEPS).rev().map(|n| (n, back)))
        {
            let reply = page.eval(&format!(
                "(async () => {{
                    const heading = () => document.querySelector('[data-testid=step-heading]')?.textContent ?? '';
                    const img = () => document.querySelector('[data-testid=screenshot-img]');
                    const before = img()?.getAttribute('src');
                    let loaded = null;
                    const onLoad = e => {{ if (e.target === img() && e.target.getAttribute('src') !== before) loaded = performance.now(); }};
                    document.addEventListener('load', onLoad, true);
                    const shown = __until(() => heading() === {want});
                    const swapped = __until(() => img() && img().getAttribute('src') !== before);
                    const t0 = performance.now();
                    {act}
                    const h = await shown;
                    await swapped;
                    const i = img();
                    if (loaded === null) await new Promise(ok => {{ if (i.complete && loaded === null) loaded = performance.now(); if (loaded !== null) ok(); else i.addEventListener('load', () => {{ loaded = performance.now(); ok(); }}, {{once: true}}); }});
                    document.removeEventListener('load', onLoad, true);
                    return {{dom: h.dom - t0, frame: h.frame - t0, shot: loaded - t0}};
                }})()",
                want = Value::from(format!("Step {to} of {STEPS}"))
            ));
            let forward_pass = act == forward;
            let (dom, frame, shot) = if forward_pass {
                (&mut cold, &mut cold_frame, &mut cold_shot)
            } else {
                (&mut warm, &mut warm_frame, &mut warm_shot)
            };
            dom.push(ms(&reply["dom"]));
            frame.push(ms(&reply["frame"]));
            shot.push(ms(&reply["shot"]));
        }
    }
    profiled(page, "five next-step clicks", || {
        navigate_timed(browser, page, &format!("?agentRunId={BENCH_RUN}&qa=false"));
        for to in 2..=6 {
            page.eval("document.querySelector('[data-testid=next-step]').click()");
            page.wait_for_text("[data-testid=step-heading]", &format!("Step {to} of {STEPS}"));
        }
    });
    let mut raf = Vec::new();
    for _ in 0..2 * (STEPS - 1) {
        raf.push(ms(&page.eval(
            "(async () => { const t = performance.now(); await new Promise(r => requestAnimationFrame(r)); return performance.now() - t; })()",
        )));
    }
    vec![
        Row::new("open the run (navigation → heading)", opened).note("not a target; for reference"),
        Row::new("next step, click (dom)", cold).target(STEP_TARGET_MS),
        Row::new("next step, click (frame)", cold_frame)
            .target(STEP_TARGET_MS)
            .floor(&raf)
            .note("floor = no-op rAF round"),
        Row::new("  screenshot loaded, first time read", cold_shot).target(STEP_TARGET_MS),
        Row::new("previous step, Alt+↑ (dom)", warm).target(STEP_TARGET_MS),
        Row::new("previous step, Alt+↑ (frame)", warm_frame)
            .target(STEP_TARGET_MS)
            .floor(&raf)
            .note("floor = no-op rAF round"),
        Row::new("  screenshot loaded, URL cached", warm_shot).target(STEP_TARGET_MS),
    ]
}

/// Waits for a finished file ending with `suffix` in `dir`, looking every 2 ms.
fn wait_for_file(dir: &Path, suffix: &str, limit: Duration) -> Option<PathBuf> {
    find_file(dir, suffix, limit, Duration::from_millis(2))
}

fn exports(browser: &Browser, page: &Page) -> Vec<Row> {
    navigate_timed(browser, page, "");
    let mut rows = Vec::new();
    for (format, reps, limit) in [
        ("jsonl", HEAVY_REPS, 120),
        ("csv", HEAVY_REPS, 120),
        ("json", HEAVY_REPS, 120),
        ("zip", HEAVY_REPS, 600),
    ] {
        let (mut disk, mut notice, mut sizes) = (Vec::new(), Vec::new(), Vec::new());
        let mut failed = None;
        for rep in 0..reps {
            let dir = allow_downloads(browser, &format!("studio-{format}-{rep}"));
            page.eval("document.querySelector('[data-testid=notice] button')?.click(); true");
            page.wait_for("!document.querySelector('[data-testid=notice]')", "the notice to go");
            page.eval("document.querySelector('[data-testid=export-open]').click(); true");
            choose(page, "[data-testid=export-format]", format);
            page.wait_for(
                &format!(
                    "document.querySelector('[data-testid=export-format]').value === {}",
                    Value::from(format)
                ),
                "the export format",
            );
            let started = Instant::now();
            page.eval(
                "(() => { window.__exported = null;
                    const notice = () => document.querySelector('[data-testid=notice]')?.textContent ?? '';
                    const done = __until(() => /Export(ed| failed)/.test(notice()), 600000);
                    const t0 = performance.now();
                    document.querySelector('[data-testid=export-go]').click();
                    done.then(r => window.__exported = {ms: r.dom - t0, text: notice()});
                    return true; })()",
            );
            let Some(file) = wait_for_file(&dir, &format!(".{format}"), Duration::from_secs(limit))
            else {
                failed = Some(format!("no file within {limit} s"));
                break;
            };
            disk.push(started.elapsed().as_secs_f64() * 1e3);
            let seen =
                poll(page, "window.__exported", Duration::from_secs(limit), "the export notice");
            if !seen["text"].as_str().unwrap_or_default().contains("Exported") {
                failed = Some(seen["text"].to_string());
                break;
            }
            notice.push(ms(&seen["ms"]));
            sizes.push(std::fs::metadata(&file).map_or(0, |m| m.len()));
        }
        if format == "jsonl" {
            profiled(page, "one JSONL export", || {
                let dir = allow_downloads(browser, "studio-profile");
                page.eval("document.querySelector('[data-testid=notice] button')?.click(); true");
                page.eval("document.querySelector('[data-testid=export-open]').click(); true");
                choose(page, "[data-testid=export-format]", format);
                page.eval("document.querySelector('[data-testid=export-go]').click(); true");
                wait_for_file(&dir, ".jsonl", Duration::from_secs(limit));
            });
        }
        let size = sizes.iter().copied().max().unwrap_or(0);
        // The floor: a Blob of as many bytes from a string made beforehand, downloaded alike.
        let mut floor = Vec::new();
        if size > 0 {
            page.eval(&format!("window.__payload = 'x'.repeat({size}); true"));
            for rep in 0..reps {
                let dir = allow_downloads(browser, &format!("studio-floor-{format}-{rep}"));
                let started = Instant::now();
                page.eval(
                    "(() => { const a = document.createElement('a');
                        a.href = URL.createObjectURL(new Blob([window.__payload]));
                        a.download = 'floor.bin'; a.click(); return true; })()",
                );
                if wait_for_file(&dir, "floor.bin", Duration::from_secs(limit)).is_some() {
                    floor.push(started.elapsed().as_secs_f64() * 1e3);
                }
            }
            page.eval("window.__payload = null; true");
        }
        let mb = size as f64 / 1e6;
        rows.push(
            Row::new(format!("{} on disk", format.to_uppercase()), disk)
                .target(EXPORT_TARGET_MS)
                .floor(&floor)
                .note(match &failed {
                    Some(why) => format!("FAILED: {why}"),
                    None => format!("{mb:.1} MB; floor = Blob of {mb:.1} MB"),
                }),
        );
        rows.push(
            Row::new(format!("  {} \"Exported\" notice (in page)", format.to_uppercase()), notice)
                .target(EXPORT_TARGET_MS),
        );
    }
    rows
}

/// Kept for every document the bench page loads: `__until(cond)` resolves with
/// `{dom, frame}` (performance.now()) when `cond()` is first true after a DOM change, and
/// on `annotation.html` `__open` / `__boot` note when the list (or a run) and the top bar
/// first showed.
fn watch_script() -> String {
    format!(
        r#"(() => {{
            window.__until = (cond, limit = 300000) => new Promise((ok, fail) => {{
                let done = false;
                const finish = () => {{
                    done = true; observer.disconnect(); clearTimeout(timer);
                    const dom = performance.now();
                    requestAnimationFrame(() => ok({{dom, frame: performance.now()}}));
                }};
                const observer = new MutationObserver(() => {{ if (!done && cond()) finish(); }});
                observer.observe(document, {{subtree: true, childList: true, characterData: true, attributes: true}});
                const timer = setTimeout(() => {{ if (!done) {{ observer.disconnect(); fail(new Error('timed out')); }} }}, limit);
                if (cond()) finish();
            }});
            if (!location.pathname.endsWith('/annotation.html')) return;
            window.__open = null; window.__boot = null;
            const text = s => document.querySelector(s)?.textContent ?? '';
            const opened = new URLSearchParams(location.search).get('agentRunId')
                ? () => /^Step \d+ of/.test(text('[data-testid=step-heading]'))
                : () => text('[data-testid=runs-count]') === {expected};
            window.__until(opened).then(r => window.__open = r);
            window.__until(() => document.querySelector('.topbar')).then(r => window.__boot = r);
        }})()"#,
        expected = Value::from(format!("{RUNS} of {RUNS} runs"))
    )
}

/// Fills the database in one transaction with `RUNS` runs of `STEPS` steps: varied prompts,
/// statuses, tags, annotators, action types and ~300-character thoughts, and one JPEG per
/// step position (20 distinct images, stored once each under their SHA-256 and shared by
/// every run). Deterministic: a seeded generator picks everything.
fn seed_script() -> String {
    format!(
        r#"(async () => {{
  const RUNS = {RUNS}, STEPS = {STEPS};
  let state = 20261120;
  const rnd = () => {{ state = (state + 0x6D2B79F5) | 0; let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t; return ((t ^ (t >>> 14)) >>> 0) / 4294967296; }};
  const pick = a => a[Math.floor(rnd() * a.length)];
  const sites = [['shop.test', 'Fixture Shop'], ['travel.example', 'Trips and Flights'], ['news.example', 'Daily News'],
    ['bank.example', 'Online Banking'], ['forms.example', 'Sign-up Forms'], ['docs.example', 'Developer Docs'],
    ['maps.example', 'City Maps'], ['jobs.example', 'Job Board']];
  const products = ['kettle', 'espresso grinder', 'laptop stand', 'running shoes', 'desk lamp', 'winter jacket', 'phone case',
    'coffee beans', 'water bottle', 'headphones', 'backpack', 'air purifier', 'toaster', 'yoga mat', 'monitor arm',
    'rice cooker', 'bike helmet', 'umbrella', 'notebook', 'tea set'];
  const goals = [p => `Find the price of the ${{p}} and add it to the cart`, p => `Compare two ${{p}} offers and report the cheaper one`,
    p => `Check whether the ${{p}} is in stock in the blue colour`, p => `Search for a ${{p}} under 50 euros with free delivery`,
    p => `Read the reviews of the ${{p}} and summarise the complaints`, p => `Subscribe to price alerts for the ${{p}}`];
  const statuses = ['draft', 'draft', 'draft', 'draft', 'in-review', 'in-review', 'approved', 'approved', 'rejected', 'archived'];
  const tags = ['shopping', 'travel', 'forms', 'search', 'news', 'banking', 'edge-case', 'login', 'multi-tab', 'slow-page'];
  const collections = ['batch-a', 'batch-b', 'gold-set'];
  const people = ['ann', 'bob', 'chen', 'dana'];
  const kinds = ['click', 'click', 'click', 'click', 'type', 'type', 'scroll', 'scroll', 'navigate', 'select', 'wait'];
  const targets = ['{{p}} link', 'Add to cart button', 'search box', 'colour select', 'Next page link', 'Reviews tab',
    'Sign in button', 'cookie banner Accept button', 'price filter', 'Checkout button'];
  const observed = [
    'I clicked the {{t}} and the page changed as expected: the {{p}} details opened in the main panel.',
    'The previous action worked: after typing into the {{t}}, the results list refreshed and now shows matching {{p}} offers.',
    'I scrolled down one screen and the {{t}} came into view below the product photos and the delivery box.',
    'The page on {{s}} loaded fully; the header, the search bar and the {{t}} are all visible and nothing is greyed out.',
    'My last click on the {{t}} did not change anything visible, so the page may still be loading or the click missed.',
    'I navigated to {{s}} and the landing page shows a cookie banner that I dismissed before going on with the task.'];
  const seen = [
    'I can see the {{t}}, a price of {{n}}.99 euros next to it, and a rating of 4 stars from {{n}} reviews.',
    'I see a list of {{n}} results; the first three are {{p}} offers from different sellers, each with a delivery estimate.',
    'There is a filter panel on the left with price, colour and brand, and the {{t}} sits at the top right of the results.',
    'The page shows an error banner saying the session expired, but the {{p}} is still visible in the list below it.',
    'I notice the {{t}} is greyed out, which usually means a required option such as size or colour has not been chosen.'];
  const planned = [
    'I should click the {{t}} next, because it leads to the {{p}} details where the final price is shown.',
    'I will type the {{p}} into the search box and press Enter, expecting a shorter list of matching products.',
    'Next I need to choose the blue colour from the select, since the task asks about that variant specifically.',
    'I should scroll down to the reviews section and read the most recent complaints before summarising them.',
    'I will report the price as the answer, because every condition in the task is now confirmed on the page.'];
  const fill = (text, c) => text.replace(/\{{(\w)\}}/g, (_, k) => c[k]);
  const thought = (pool, c) => {{ let s = fill(pick(pool), c); while (s.length < 270) s += ' ' + fill(pick(pool), c); return s; }};

  // Twenty distinct screenshots, one per step position, each stored once under its SHA-256.
  const shots = [];
  for (let i = 0; i < STEPS; i++) {{
    const canvas = new OffscreenCanvas(480, 300);
    const g = canvas.getContext('2d');
    const grad = g.createLinearGradient(0, 0, 480, 300);
    grad.addColorStop(0, `hsl(${{i * 37 % 360}} 60% 75%)`); grad.addColorStop(1, `hsl(${{(i * 37 + 120) % 360}} 50% 40%)`);
    g.fillStyle = grad; g.fillRect(0, 0, 480, 300);
    g.fillStyle = '#fff'; g.fillRect(20, 20, 440, 40); g.fillRect(20, 80, 200, 180);
    g.fillStyle = '#000'; g.font = '28px sans-serif'; g.fillText('page at step ' + (i + 1), 240, 160);
    const blob = await canvas.convertToBlob({{type: 'image/jpeg', quality: 0.8}});
    const hash = new Uint8Array(await crypto.subtle.digest('SHA-256', await blob.arrayBuffer()));
    shots.push({{key: Array.from(hash, b => b.toString(16).padStart(2, '0')).join(''), blob}});
  }}

  const runs = [], steps = [];
  let stepBytes = 0;
  for (let r = 0; r < RUNS; r++) {{
    const id = 'run-' + String(r).padStart(4, '0');
    const p = products[(r * 7 + Math.floor(rnd() * 3)) % products.length];
    const [host, siteTitle] = pick(sites);
    const status = r === 0 ? 'draft' : pick(statuses);
    const month = 1 + (r * 7) % 11, day = 1 + (r * 13) % 28, hour = (r * 5) % 24;
    const created = `2026-${{String(month).padStart(2, '0')}}-${{String(day).padStart(2, '0')}}T${{String(hour).padStart(2, '0')}}:00:00.000Z`;
    const updated = created.replace(':00:00', ':07:30');
    const run = {{
      id, taskId: 'session-' + id, taskPrompt: pick(goals)(p) + ` on ${{host}}`, followUps: rnd() < 0.2 ? ['Also check the delivery time'] : [],
      status, agentStatus: rnd() < 0.85 ? 'done' : pick(['failed', 'cancelled']), finalAnswer: `The ${{p}} costs ${{10 + Math.floor(rnd() * 90)}}.99 euros.`,
      createdAt: created, updatedAt: updated, createdBy: 'agent', reviewedBy: ['approved', 'rejected'].includes(status) ? 'rev' : null,
      subtasks: [
        {{id: 'plan-1', title: `Open ${{siteTitle}}`, description: '', stepRange: [0, 5], status: 'pending'}},
        {{id: 'plan-2', title: `Find the ${{p}}`, description: '', stepRange: [6, 13], status: 'pending'}},
        {{id: 'plan-3', title: 'Report the answer', description: '', stepRange: [14, STEPS - 1], status: 'pending'}}],
      totalSteps: STEPS, startUrl: `https://${{host}}/`, models: {{navigator: 'gpt-4o-mini', planner: 'gpt-4o'}},
      usage: {{input_tokens: 20000 + Math.floor(rnd() * 40000), output_tokens: 1500 + Math.floor(rnd() * 3000)}}, cost: Math.round(rnd() * 300) / 1000,
      version: 0,
    }};
    if (status !== 'draft' || rnd() < 0.3) run.annotator = pick(people);
    const t = []; for (const tag of tags) if (rnd() < 0.12) t.push(tag);
    if (t.length) run.tags = t;
    if (rnd() < 0.25) run.collections = [pick(collections)];
    if (status !== 'draft') run.quality = 40 + Math.floor(rnd() * 61);
    runs.push(run);
    const done = r === 0 ? 0 : status === 'draft' ? Math.floor(rnd() * (STEPS + 1)) : STEPS;
    for (let i = 0; i < STEPS; i++) {{
      const kind = i === 0 ? 'navigate' : i === STEPS - 1 ? 'done' : pick(kinds);
      const target = fill(pick(targets), {{p}});
      const c = {{p, t: target, s: host, n: String(2 + Math.floor(rnd() * 40))}};
      const failed = rnd() < 0.03;
      const step = {{
        runId: id, index: i, url: `https://${{host}}/${{i === 0 ? '' : 'item/' + (r * STEPS + i)}}`, title: `${{siteTitle}} · ${{p}}`,
        screenshot: {{key: shots[i].key, timestamp: created, mime: 'image/jpeg', bytes: shots[i].blob.size}},
        action: {{type: kind, target, value: kind === 'type' ? p : kind === 'select' ? 'blue' : kind === 'navigate' ? `https://${{host}}/` : null}},
        actions: [{{action: {{action: kind === 'type' ? 'input_text' : kind, id: 3 + i}}, target, ok: !failed, message: failed ? 'element not found' : 'ok'}}],
        thoughts: {{thought1: thought(observed, c), thought2: thought(seen, c), thought3: thought(planned, c)}},
        extendedThoughts: rnd() < 0.1 ? ['The page took a while to load, so I waited before acting.'] : [],
        verified: i < done, issues: rnd() < 0.03 ? [{{type: 'logic', severity: 'major', description: 'The thought does not match the screenshot', flaggedBy: 'rev', flaggedAt: updated}}] : [],
        lastEditedBy: 'agent', lastEditedAt: created, outcome: failed ? 'failed' : 'ok', traceIds: [`trace-${{id}}-${{i}}`], durationMs: 400 + Math.floor(rnd() * 2000),
      }};
      stepBytes += JSON.stringify(step).length;
      steps.push(step);
    }}
  }}
  const db = await new Promise((ok, fail) => {{ const q = indexedDB.open('alphascout'); q.onsuccess = () => ok(q.result); q.onerror = () => fail(q.error); }});
  const tx = db.transaction(['runs', 'steps', 'screenshots'], 'readwrite');
  for (const run of runs) tx.objectStore('runs').put(run);
  for (const step of steps) tx.objectStore('steps').put(step);
  for (const s of shots) tx.objectStore('screenshots').put(s.blob, s.key);
  await new Promise((ok, fail) => {{ tx.oncomplete = ok; tx.onerror = () => fail(tx.error); }});
  db.close();
  return {{runs: runs.length, steps: steps.length, stepBytes, shots: shots.length, shotBytes: shots.reduce((n, s) => n + s.blob.size, 0)}};
}})()"#
    )
}

/// With `BENCH_PROFILE` set, runs `work` under the V8 CPU profiler of `page` and prints the
/// functions with the most self time (wasm functions are named when the build keeps its
/// name section, e.g. a `wasm-bindgen` output without `wasm-opt`).
fn profiled<T>(page: &Page, label: &str, work: impl FnOnce() -> T) -> T {
    if std::env::var_os("BENCH_PROFILE").is_none() {
        return work();
    }
    page.call("Profiler.enable", json!({})).expect("Profiler.enable");
    page.call("Profiler.setSamplingInterval", json!({"interval": 200})).expect("sampling interval");
    page.call("Profiler.start", json!({})).expect("Profiler.start");
    let out = work();
    let profile = page.call("Profiler.stop", json!({})).expect("Profiler.stop");
    let nodes = profile["profile"]["nodes"].as_array().cloned().unwrap_or_default();
    let samples = profile["profile"]["samples"].as_array().cloned().unwrap_or_default();
    let deltas = profile["profile"]["timeDeltas"].as_array().cloned().unwrap_or_default();
    let mut by_id = std::collections::HashMap::new();
    for node in &nodes {
        let frame = &node["callFrame"];
        let name = match frame["functionName"].as_str().unwrap_or_default() {
            "" => format!(
                "({})",
                frame["url"].as_str().unwrap_or("anonymous").rsplit('/').next().unwrap_or_default()
            ),
            name => name.to_owned(),
        };
        by_id.insert(node["id"].as_i64().unwrap_or(0), name);
    }
    let mut self_ms: std::collections::HashMap<String, f64> = std::collections::HashMap::new();
    let mut total = 0.0;
    for (sample, delta) in samples.iter().zip(&deltas) {
        let ms = delta.as_f64().unwrap_or(0.0) / 1e3;
        total += ms;
        let name = by_id.get(&sample.as_i64().unwrap_or(0)).cloned().unwrap_or_default();
        *self_ms.entry(name).or_default() += ms;
    }
    let mut top: Vec<(String, f64)> = self_ms.into_iter().collect();
    top.sort_by(|a, b| b.1.total_cmp(&a.1));
    println!("profile: {label} ({total:.0} ms sampled), self time:");
    for (name, ms) in top.iter().take(25) {
        let name: String = name.chars().take(110).collect();
        println!("  {ms:>9.1} ms  {name}");
    }
    out
}
