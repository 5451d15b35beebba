//! Driving the annotation page: seeding captured runs into the extension's real IndexedDB
//! (as the worker stores them, screenshots as JPEG Blobs under their SHA-256), opening the
//! page by URL, reading what it stored, and catching its downloads.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::browser::{Browser, Page};

/// A captured run of `steps` steps, in the engine's record shapes (camelCase).
pub fn run_record(id: &str, prompt: &str, steps: u32) -> Value {
    json!({
        "id": id, "taskId": format!("session-{id}"), "taskPrompt": prompt, "followUps": [],
        "status": "draft", "agentStatus": "done", "finalAnswer": "The kettle costs 24.99 €.",
        "createdAt": "2026-11-20T09:00:00.000Z", "updatedAt": "2026-11-20T09:05:00.000Z",
        "createdBy": "agent", "reviewedBy": null,
        "subtasks": [{"id": "plan-1", "title": "Find the kettle", "description": "", "stepRange": [0, steps.saturating_sub(1)], "status": "pending"}],
        "totalSteps": steps, "startUrl": "http://shop.test/",
        "models": {"navigator": "scripted"}, "usage": {"input_tokens": 100, "output_tokens": 20}, "cost": 0.01
    })
}

/// Step `index` of run `run_id`; its screenshot key is filled in by [`seed`].
pub fn step_record(run_id: &str, index: u32, thoughts: [&str; 3]) -> Value {
    json!({
        "runId": run_id, "index": index, "url": "http://shop.test/", "title": "Fixture Shop",
        "screenshot": null,
        "action": {"type": "click", "target": format!("Kettles link {index}"), "value": null},
        "actions": [{"action": {"action": "click", "id": index + 3}, "target": "Kettles", "ok": true, "message": "clicked"}],
        "thoughts": {"thought1": thoughts[0], "thought2": thoughts[1], "thought3": thoughts[2]},
        "extendedThoughts": [], "verified": false, "issues": [],
        "lastEditedBy": "agent", "lastEditedAt": "2026-11-20T09:01:00.000Z",
        "outcome": "ok", "traceIds": [], "durationMs": 900.0
    })
}

/// A run's steps, numbered from 0, each with its three thoughts.
pub fn step_records(run_id: &str, thoughts: &[[&str; 3]]) -> Vec<Value> {
    (0..).zip(thoughts).map(|(index, thoughts)| step_record(run_id, index, *thoughts)).collect()
}

/// Opens `annotation.html` (which creates the database at its current version) and waits
/// for it to render.
pub fn open_annotation(browser: &mut Browser, query: &str) -> Page {
    let url = browser.extension_url(&format!("annotation.html{query}"));
    let page = browser.open_tab(&url).page;
    page.wait_for(
        "document.querySelector('[data-testid=runs-list], [data-testid=run-view], [data-testid=missing]') !== null",
        "the annotation page to render",
    );
    page
}

/// How most annotation tests begin: Chromium launched and the annotation page open on its
/// runs list.
pub fn launch_annotation() -> (Browser, Page) {
    let mut browser = Browser::launch();
    let page = open_annotation(&mut browser, "");
    (browser, page)
}

/// Loads `annotation.html{query}` afresh in `page` and waits for it to render.
pub fn navigate(browser: &Browser, page: &Page, query: &str) {
    let url = browser.extension_url(&format!("annotation.html{query}"));
    // A mark on the old document tells it apart from the new one.
    page.eval(&format!("window.__leaving = true; location.replace({})", Value::from(url)));
    page.wait_for(
        "!window.__leaving && document.querySelector('[data-testid=runs-list], [data-testid=run-view], [data-testid=missing]') !== null",
        "the annotation page to load and render",
    );
}

/// Stores `runs` and their `steps` the way the worker does, each step with a JPEG screenshot
/// drawn in the page (a coloured box with the step's number), keyed by its SHA-256.
pub fn seed(page: &Page, runs: &[Value], steps: &[Value]) {
    let script = format!(
        r#"(async () => {{
            const runs = {runs}, steps = {steps};
            {open_db}
            const shots = [];
            for (const step of steps) {{
                // A page-sized shot with page-sized text, so a screenshot's readability is seen.
                const canvas = new OffscreenCanvas(1280, 800);
                const g = canvas.getContext('2d');
                g.fillStyle = '#fff'; g.fillRect(0, 0, 1280, 800);
                g.fillStyle = `hsl(${{step.index * 47 % 360}} 60% 70%)`; g.fillRect(0, 0, 1280, 64);
                g.fillStyle = '#000'; g.font = 'bold 28px sans-serif'; g.fillText('Fixture Shop · step ' + step.index, 32, 42);
                g.font = '18px sans-serif';
                ['Kettles', 'Steel kettle — 24.99 €', 'Glass kettle — 32.00 €', 'Add to basket'].forEach((t, i) => g.fillText(t, 48, 140 + i * 40));
                const blob = await canvas.convertToBlob({{type: 'image/jpeg', quality: 0.8}});
                const hash = new Uint8Array(await crypto.subtle.digest('SHA-256', await blob.arrayBuffer()));
                const key = Array.from(hash, b => b.toString(16).padStart(2, '0')).join('');
                step.screenshot = {{key, timestamp: '2026-11-20T09:01:00.000Z', mime: 'image/jpeg', bytes: blob.size}};
                shots.push([key, blob]);
            }}
            const tx = db.transaction(['runs', 'steps', 'screenshots'], 'readwrite');
            for (const run of runs) tx.objectStore('runs').put(run);
            for (const step of steps) tx.objectStore('steps').put(step);
            for (const [key, blob] of shots) tx.objectStore('screenshots').put(blob, key);
            await new Promise((ok, fail) => {{ tx.oncomplete = ok; tx.onerror = () => fail(tx.error); }});
            db.close();
            return true;
        }})()"#,
        runs = Value::from(runs.to_vec()),
        steps = Value::from(steps.to_vec()),
        open_db = crate::OPEN_DB,
    );
    assert_eq!(page.eval(&script), Value::Bool(true), "seeding IndexedDB");
}

/// Every record of `store` in the extension's database, as JSON.
pub fn stored(page: &Page, store: &str) -> Vec<Value> {
    page.eval(&crate::all_records_js(store)).as_array().cloned().unwrap_or_default()
}

/// The stored step `index` of run `run_id`, among `steps` (as [`stored`] read them).
pub fn step_of<'a>(steps: &'a [Value], run_id: &str, index: u64) -> &'a Value {
    steps.iter().find(|s| s["runId"] == run_id && s["index"] == index).expect("the step is stored")
}

/// Opens the sync dialog, enters the server and the token, and saves.
pub fn configure_sync(page: &Page, endpoint: &str, token: &str) {
    page.click("[data-testid=sync-state]");
    replace_text(page, "[data-testid=sync-endpoint]", endpoint);
    replace_text(page, "[data-testid=sync-token]", token);
    page.click("[data-testid=sync-save]");
}

/// Waits until the sync pill says `state` (`synced`, `offline`, `conflict`…).
pub fn wait_sync(page: &Page, state: &str) {
    page.wait_for(
        &format!("document.querySelector('[data-testid=sync-state]')?.dataset.state === '{state}'"),
        &format!("the sync state to be {state}"),
    );
}

/// Lets the browser save downloads into a fresh folder, and returns it.
pub fn allow_downloads(browser: &Browser, name: &str) -> PathBuf {
    let dir = crate::workspace_root().join("target/tmp/downloads").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a downloads folder");
    browser
        .call(
            "Browser.setDownloadBehavior",
            json!({"behavior": "allow", "downloadPath": dir.to_string_lossy(), "eventsEnabled": true}),
        )
        .expect("Browser.setDownloadBehavior");
    dir
}

/// Waits for a finished download whose name ends with `suffix` in `dir`, and returns it.
pub fn wait_for_download(dir: &Path, suffix: &str) -> PathBuf {
    find_file(dir, suffix, Duration::from_secs(30), Duration::from_millis(50))
        .unwrap_or_else(|| panic!("no *{suffix} download appeared in {}", dir.display()))
}

/// Looks `every` so often for a file whose name ends with `suffix` in `dir` (Chrome writes
/// `.crdownload` first and renames it when done); `None` once `limit` has passed.
pub fn find_file(dir: &Path, suffix: &str, limit: Duration, every: Duration) -> Option<PathBuf> {
    let deadline = Instant::now() + limit;
    loop {
        let found = std::fs::read_dir(dir)
            .ok()
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.to_string_lossy().ends_with(suffix));
        if found.is_some() || Instant::now() > deadline {
            return found;
        }
        std::thread::sleep(every);
    }
}

/// Puts `path` into the file input matching `selector`, as choosing it in the dialog does.
pub fn choose_file(page: &Page, selector: &str, path: &Path) {
    let document = page.call("DOM.getDocument", json!({})).expect("DOM.getDocument");
    let node = page
        .call(
            "DOM.querySelector",
            json!({"nodeId": document["root"]["nodeId"], "selector": selector}),
        )
        .expect("DOM.querySelector");
    page.call(
        "DOM.setFileInputFiles",
        json!({"nodeId": node["nodeId"], "files": [path.to_string_lossy()]}),
    )
    .expect("DOM.setFileInputFiles");
}

/// Sets a text field's value as typing would (select all, then insert), firing input and
/// change events.
pub fn replace_text(page: &Page, selector: &str, text: &str) {
    page.click(selector);
    page.eval(&format!("document.querySelector({}).select()", Value::from(selector)));
    page.call("Input.insertText", json!({"text": text})).expect("Input.insertText");
    // Yew listens to `change` on inputs; leaving the field fires it.
    page.eval(&format!(
        "document.querySelector({}).dispatchEvent(new Event('change', {{bubbles: true}}))",
        Value::from(selector)
    ));
}

/// Runs a sync round now from the sync dialog, and closes it again.
pub fn sync_now(page: &Page) {
    page.click("[data-testid=sync-state]");
    page.click("[data-testid=sync-now]");
    page.click("[data-testid=sync-close]");
}

/// Chooses `value` in the `<select>` matching `selector`.
pub fn choose(page: &Page, selector: &str, value: &str) {
    page.wait_for(&format!("document.querySelector({})", Value::from(selector)), selector);
    page.eval(&format!(
        "(() => {{ const s = document.querySelector({}); s.value = {}; s.dispatchEvent(new Event('change', {{bubbles: true}})); }})()",
        Value::from(selector),
        Value::from(value)
    ));
}

/// The text of thought `n` (1 to 3) in the step editor.
pub fn thought(page: &Page, n: u8) -> String {
    page.eval(&format!("document.querySelector('[data-testid=thought{n}]').value"))
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A key pressed and released, with CDP `modifiers` (1 Alt, 2 Ctrl, 4 Meta, 8 Shift).
pub fn press(page: &Page, key: &str, code: &str, modifiers: u8) {
    for kind in ["keyDown", "keyUp"] {
        page.call(
            "Input.dispatchKeyEvent",
            json!({"type": kind, "key": key, "code": code, "modifiers": modifiers}),
        )
        .expect("a key press");
    }
}

/// Waits until `expression` (run in an extension page against the open database `db`)
/// is true: for what the page writes in the background.
pub fn wait_stored(page: &Page, expression: &str, what: &str) {
    let script = format!(
        r#"new Promise((ok) => {{
            const open = indexedDB.open("alphascout");
            open.onsuccess = async () => {{
                const db = open.result;
                const get = (store, key) => new Promise((done) => {{
                    const r = db.transaction(store).objectStore(store).get(key);
                    r.onsuccess = () => done(r.result); r.onerror = () => done(undefined);
                }});
                try {{ ok(!!(await ({expression}))); }} catch (_) {{ ok(false); }} finally {{ db.close(); }}
            }};
            open.onerror = () => ok(false);
        }})"#
    );
    let deadline = Instant::now() + Duration::from_secs(15);
    while page.eval(&script) != true {
        assert!(Instant::now() < deadline, "never stored: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sets who the page thinks you are, and waits until it has stored it (a reload right
/// after would read the previous user otherwise).
pub fn set_user(page: &Page, name: &str, role: &str) {
    replace_text(page, "[data-testid=user-name]", name);
    choose(page, "[data-testid=user-role]", role);
    wait_stored(
        page,
        &format!(
            "get('annotation', 'user').then(u => u && u.name === {name:?} && u.role === {role:?})"
        ),
        "who you are",
    );
}

/// The score in a quality label such as `quality 73` (the run header, the step's checks),
/// or `None` when it shows none (`quality —`, not scored yet).
pub fn quality_in(page: &Page, selector: &str) -> Option<u64> {
    let text = page.text(selector);
    text.trim().trim_start_matches("quality").trim().parse().ok()
}

/// How many pixels within 40 of `rgb` on each channel a person sees over the element
/// matching `selector`, its box grown by `below` px at the bottom (a text decoration is
/// drawn under the glyphs), and how many of `ink`, the text's colour, for a check that the
/// box holds the text at all. Read from a real screenshot, decoded in the page itself, of
/// the page as it is: scroll the element into view first.
pub fn pixels_over(
    page: &Page,
    selector: &str,
    below: f64,
    rgb: [u8; 3],
    ink: [u8; 3],
) -> (u64, u64) {
    let rect = page.eval(&format!(
        "(() => {{ const r = document.querySelector({}).getBoundingClientRect();
           return [r.x + scrollX, r.y + scrollY, r.width, r.height]; }})()",
        Value::from(selector)
    ));
    let at = |i: usize| rect[i].as_f64().unwrap_or_else(|| panic!("{selector}'s box: {rect}"));
    let clip = json!({"x": at(0), "y": at(1), "width": at(2), "height": at(3) + below, "scale": 1});
    let shot = page
        .call("Page.captureScreenshot", json!({"format": "png", "clip": clip}))
        .unwrap_or_else(|e| panic!("screenshot of {selector}: {e}"));
    let data = shot["data"].as_str().unwrap_or_default();
    let counts = page.eval(&format!(
        r#"(async () => {{
            const bytes = Uint8Array.from(atob({data}), c => c.charCodeAt(0));
            const bitmap = await createImageBitmap(new Blob([bytes], {{type: 'image/png'}}));
            const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
            const g = canvas.getContext('2d');
            g.drawImage(bitmap, 0, 0);
            const px = g.getImageData(0, 0, bitmap.width, bitmap.height).data;
            const near = (i, [r, gr, b]) =>
                Math.abs(px[i] - r) < 40 && Math.abs(px[i + 1] - gr) < 40 && Math.abs(px[i + 2] - b) < 40;
            let hits = 0, inked = 0;
            for (let i = 0; i < px.length; i += 4) {{
                if (near(i, {rgb:?})) hits++;
                if (near(i, {ink:?})) inked++;
            }}
            return [hits, inked];
        }})()"#,
        data = Value::from(data),
    ));
    (counts[0].as_u64().unwrap_or(0), counts[1].as_u64().unwrap_or(0))
}
