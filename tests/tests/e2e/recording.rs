//! Recording a task (seed 004 §Record) in real Chromium: the side panel's Record button, the
//! person acting in the fixture shop with real input events, Ctrl+I Extract and Details,
//! and what was stored in IndexedDB — also when Chrome stops the worker mid-recording.

use std::collections::HashSet;

use e2e::browser::Browser;
use e2e::recording::{
    key, sort_low_to_high, start_recording, start_recording_at, stop, type_search, wait_for_events,
};
use serde_json::{Value, json};

fn screenshot_keys(browser: &mut Browser) -> HashSet<String> {
    let keys = browser.eval_in_extension(
        r#"new Promise((ok, fail) => {
             const open = indexedDB.open("alphascout");
             open.onerror = () => fail(open.error);
             open.onsuccess = () => {
               const request = open.result.transaction("screenshots").objectStore("screenshots").getAllKeys();
               request.onsuccess = () => { ok(request.result); open.result.close(); };
             };
           })"#,
    );
    keys.as_array().unwrap().iter().map(|k| k.as_str().unwrap().to_owned()).collect()
}

/// Saves the stored screenshot `key` under `target/recording-shots/` for a person to look at,
/// and answers its size in bytes.
fn save_screenshot(browser: &mut Browser, key: &str, name: &str) -> usize {
    let data = browser.eval_in_extension(&format!(
        r#"new Promise((ok, fail) => {{
             const open = indexedDB.open("alphascout");
             open.onerror = () => fail(open.error);
             open.onsuccess = () => {{
               const request = open.result.transaction("screenshots").objectStore("screenshots").get({});
               request.onsuccess = () => {{
                 const reader = new FileReader();
                 reader.onload = () => ok(reader.result.split(",")[1]);
                 reader.readAsDataURL(request.result);
                 open.result.close();
               }};
             }};
           }})"#,
        Value::from(key)
    ));
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD.decode(data.as_str().unwrap()).unwrap();
    let dir = e2e::workspace_root().join("target/recording-shots");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.jpg")), &bytes).unwrap();
    bytes.len()
}

fn described(steps: &[Value]) -> Vec<String> {
    steps
        .iter()
        .map(|s| {
            let action = &s["action"];
            let value = action["text"]
                .as_str()
                .or(action["key"].as_str())
                .or(action["option"].as_str())
                .or(action["query"].as_str())
                .map(|v| format!(" {v:?}"))
                .unwrap_or_default();
            format!("{}{}", action["type"].as_str().unwrap(), value)
        })
        .collect()
}

#[test]
fn a_recorded_search_select_extract_and_note_are_stored_as_steps_with_screenshots() {
    let (sites, mut browser) = e2e::launch_with_fixtures();
    // Another tab the person will switch to.
    let kettle = browser.open_tab(&sites.url("/shop/product.html?sku=kettle"));
    let (shop, panel) = start_recording(&mut browser, &sites);

    type_search(&shop.page, &panel, "coffee");
    shop.page.press_enter();
    shop.page.wait_for("location.pathname.endsWith('/search.html')", "the results");
    shop.page.wait_for_text("#count", "3 products");
    wait_for_events(&panel, 4); // Enter and the navigation it caused
    sort_low_to_high(&shop.page);
    wait_for_events(&panel, 5);

    // Ctrl+I in the page: the panel offers Extract.
    key(&shop.page, "i", "KeyI", 73, 2);
    panel.wait_for("document.querySelector('[data-testid=record-offer]')", "the Ctrl+I offer");
    // While the offer is open, what happens in the page is not recorded.
    shop.page.click("#heading");
    panel.type_into("[data-testid=record-extract-query]", "the cheapest price");
    panel.type_into("[data-testid=record-extract-candidates]", "€24.50, €32.00");
    // A look at the offer as a person sees it (the panel must be in front to be drawn); the
    // panel is no web page, so the recording does not follow it there.
    panel.call("Page.bringToFront", json!({})).unwrap();
    panel.screenshot(&e2e::workspace_root().join("target/recording-shots/panel-offer.png"));
    shop.page.call("Page.bringToFront", json!({})).unwrap();
    panel.click("[data-testid=record-extract-save]");
    panel.wait_for("!document.querySelector('[data-testid=record-offer]')", "the offer to close");
    wait_for_events(&panel, 6);

    // Ctrl+I in the panel: Details, a note for the next step.
    assert!(
        panel
            .eval("!!document.querySelector('[data-testid=record-offer-open]')")
            .as_bool()
            .unwrap()
    );
    key(&panel, "i", "KeyI", 73, 2);
    panel.wait_for("document.querySelector('[data-testid=record-offer]')", "the Ctrl+I offer");
    panel.type_into("[data-testid=record-details-text]", "Open the cheapest one");
    panel.click("[data-testid=record-details-save]");
    panel.wait_for("!document.querySelector('[data-testid=record-offer]')", "the offer to close");
    wait_for_events(&panel, 7);

    shop.page.click("#results li:first-child a");
    shop.page.wait_for("location.pathname.endsWith('/product.html')", "the product page");
    wait_for_events(&panel, 9);
    // A tab switch, and the recording follows to that tab.
    kettle.page.call("Page.bringToFront", json!({})).unwrap();
    wait_for_events(&panel, 10);
    kettle.page.click("#add");
    kettle.page.wait_for_text("#cart", "1 item");
    wait_for_events(&panel, 11);
    stop(&panel);

    let stored = browser.debug(json!({"type": "debug.recording"}));
    assert_eq!(stored["status"], "stopped", "{stored:#}");
    let recording = &stored["recording"];
    let steps = recording["steps"].as_array().unwrap();
    assert_eq!(
        described(steps),
        [
            "click",
            "type \"coffee\"",
            "key \"Enter\"",
            "select \"Price: low to high\"",
            "extract \"the cheapest price\"",
            "click",
            "switch_tab",
            "click",
        ],
        "{:#}",
        recording
    );
    // How a person would name what was clicked, and a selector to find it again.
    let field = &steps[0]["action"]["target"];
    assert_eq!(field["name"], "Search products");
    assert_eq!(field["selector"], "input[name=\"q\"]");
    assert_eq!(steps[1]["action"]["target"]["selector"], field["selector"]);
    let link = &steps[5]["action"]["target"];
    assert_eq!(link["name"], "Coffee scale", "the cheapest after sorting: {link:#}");
    assert!(link["href"].as_str().unwrap().ends_with("sku=scale"));
    assert_eq!(steps[3]["action"]["target"]["label"], "Sort by");
    assert_eq!(steps[4]["action"]["candidates"], json!(["€24.50", "€32.00"]));
    assert_eq!(steps[5]["details"], "Open the cheapest one", "the note goes to the next step");
    assert!(steps[3]["url"].as_str().unwrap().contains("search.html?q=coffee"));
    assert_eq!(steps[6]["action"]["tab_id"], kettle.id);
    assert_eq!(steps[7]["tabId"], kettle.id);
    assert_eq!(steps[7]["action"]["target"]["name"], "Add to cart");
    // Each step also has the page state text a model without vision reads, in which the
    // target's id names the element clicked.
    let state = |i: usize| steps[i]["pageState"].as_str().unwrap_or_else(|| panic!("step {i}"));
    let id = field["stateId"].as_u64().unwrap();
    assert!(state(0).contains(&format!("[{id}]")), "{id} in {}", state(0));
    assert!(state(2).contains("coffee"), "the typed text before Enter: {}", state(2));
    assert!(state(4).contains("Coffee scale"), "{}", state(4));
    assert!(recording["endPageState"].as_str().unwrap().contains("Cart: 1 item"));

    // Every step has its pre-action screenshot, stored under its SHA-256.
    let keys = screenshot_keys(&mut browser);
    let shot = |i: usize| steps[i]["screenshot"].as_str().unwrap_or_else(|| panic!("step {i}"));
    for i in 0..steps.len() {
        assert!(keys.contains(shot(i)), "step {i}'s screenshot is stored");
        assert_eq!(shot(i).len(), 64);
        assert!(save_screenshot(&mut browser, shot(i), &format!("step-{i}")) > 1000, "a real JPEG");
    }
    for key in ["startScreenshot", "endScreenshot"] {
        assert!(keys.contains(recording[key].as_str().unwrap()), "{key}");
    }
    // The page changed between these steps, so did what the screenshots show.
    assert_ne!(shot(2), shot(3), "Enter loaded the results");
    assert_ne!(shot(3), shot(4), "sorting reordered them");
    assert_ne!(shot(5), shot(6), "the click opened a page");
    assert_ne!(shot(6), shot(7), "the switch showed the other tab");
    assert_ne!(shot(7), recording["endScreenshot"].as_str().unwrap(), "the cart count changed");

    // JSONL: a header, then one step per line.
    let jsonl = stored["jsonl"].as_str().unwrap();
    let lines: Vec<Value> = jsonl.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 1 + steps.len());
    assert_eq!(lines[0]["recording"]["id"], recording["id"]);
    assert_eq!(lines[2]["action"]["text"], "coffee");
    assert_eq!(lines[2]["screenshot"], steps[1]["screenshot"]);
}

#[test]
fn a_worker_stopped_mid_recording_loses_nothing_and_recording_goes_on() {
    let (sites, mut browser) = e2e::launch_with_fixtures();
    let (shop, panel) = start_recording(&mut browser, &sites);

    type_search(&shop.page, &panel, "coffee");
    // The panel is closed (an open one would start the worker again at once), then Chrome
    // stops the worker.
    panel.close();
    browser.stop_extension_worker();
    // Typed while no worker runs: the page keeps it until the worker is back.
    shop.page.call("Input.insertText", json!({"text": " scale"})).unwrap();
    // Reopening the panel starts the worker; it picks the recording up where it was.
    let panel = browser.open_side_panel(&shop);
    shop.page.call("Page.bringToFront", json!({})).unwrap();
    panel.wait_for_text("[data-testid=record-status]", "Recording tab");
    assert_eq!(panel.text("[data-testid=record-toggle]").trim(), "Stop");
    wait_for_events(&panel, 3);

    shop.page.press_enter();
    shop.page.wait_for("location.pathname.endsWith('/search.html')", "the results");
    shop.page.wait_for_text("#count", "1 product");
    sort_low_to_high(&shop.page);
    wait_for_events(&panel, 5);
    stop(&panel);

    let stored = browser.debug(json!({"type": "debug.recording"}));
    let steps = stored["recording"]["steps"].as_array().unwrap();
    assert_eq!(
        described(steps),
        ["click", "type \"coffee scale\"", "key \"Enter\"", "select \"Price: low to high\""],
        "{stored:#}"
    );
    let seqs: Vec<u64> =
        stored["events"].as_array().unwrap().iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (0..seqs.len() as u64).collect::<Vec<_>>(), "numbered on, none twice");
    let keys = screenshot_keys(&mut browser);
    assert!(steps.iter().all(|s| keys.contains(s["screenshot"].as_str().unwrap())));
}

#[test]
fn typing_into_secret_fields_is_recorded_masked_and_never_stored() {
    let (sites, mut browser) = e2e::launch_with_fixtures();
    let (page, panel) = start_recording_at(&mut browser, &sites.url("/controls/widgets.html"));

    page.page.click("input[name=password]");
    wait_for_events(&panel, 1);
    page.page.call("Input.insertText", json!({"text": "zebra-horse-42"})).unwrap();
    wait_for_events(&panel, 2);
    page.page.click("input[name=cardnumber]");
    wait_for_events(&panel, 3);
    page.page.call("Input.insertText", json!({"text": "5555444433331111"})).unwrap();
    wait_for_events(&panel, 4);
    stop(&panel);

    let stored = browser.debug(json!({"type": "debug.recording"}));
    let steps = stored["recording"]["steps"].as_array().unwrap();
    assert_eq!(described(steps), ["click", "type \"[secret]\"", "click", "type \"[secret]\""]);
    assert_eq!(steps[3]["action"]["target"]["secret"], true, "a card number is a secret");
    // Neither the folded steps, the raw events nor the export hold what was typed.
    let everything = stored.to_string();
    for secret in ["zebra-horse-42", "5555444433331111", "hunter2", "4111111111111111"] {
        assert!(!everything.contains(secret), "{secret} leaked: {everything}");
    }
}

#[test]
fn a_scroll_that_moves_the_page_is_a_step_and_a_nudge_is_not() {
    let (sites, mut browser) = e2e::launch_with_fixtures();
    let (page, panel) = start_recording_at(&mut browser, &sites.url("/generated.html?n=1500"));

    let wheel = |dy: f64| {
        page.page
            .call(
                "Input.dispatchMouseEvent",
                json!({"type": "mouseWheel", "x": 200, "y": 200, "deltaX": 0, "deltaY": dy}),
            )
            .unwrap();
    };
    let height = page.page.eval("innerHeight").as_f64().unwrap();
    wheel(height * 1.5);
    page.page.wait_for(&format!("scrollY >= {}", height * 1.4), "the page to scroll");
    wait_for_events(&panel, 1);
    // A click where the mouse is (the harness's click would scroll its target into view).
    for kind in ["mousePressed", "mouseReleased"] {
        page.page
            .call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": 200, "y": 200, "button": "left", "clickCount": 1}),
            )
            .unwrap();
    }
    wait_for_events(&panel, 2);
    // A nudge of a tenth of a screen: reported, but too small to be a step.
    wheel(height * 0.1);
    wait_for_events(&panel, 3);
    stop(&panel);

    let stored = browser.debug(json!({"type": "debug.recording"}));
    let steps = stored["recording"]["steps"].as_array().unwrap();
    assert_eq!(described(steps), ["scroll", "click"], "{stored:#}");
    let screens = steps[0]["action"]["screens"].as_f64().unwrap();
    assert!((1.3..=1.7).contains(&screens), "about a screen and a half down: {screens}");
}
