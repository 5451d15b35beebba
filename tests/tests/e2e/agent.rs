//! The agent end to end: the real worker runs the executor against the scripted model over
//! HTTP, drives a fixture shop over CDP, and stores the run in IndexedDB. Tests talk to it
//! over the panel's port protocol.

use std::time::Duration;

use e2e::agent::replies::{decide, navigate, plan, report, verdict};
use e2e::agent::{TEST_KEY, settings};
use e2e::browser::Browser;
use e2e::fixtures::FixtureSites;
use e2e::listed;
use e2e::llm::{Reply, ScriptedLlm};
use serde_json::{Value, json};

/// [`Browser::id_of`] once `text` is listed: a cross-site frame loads in its own process, after
/// its page.
fn id_of_eventually(browser: &mut Browser, tab: &e2e::browser::Tab, text: &str) -> u64 {
    for _ in 0..50 {
        let state = browser.page_state(tab);
        if let Some(id) = listed(&state, text).and_then(|e| e["id"].as_u64()) {
            return id;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("{text} is never listed")
}

/// A model that clicks each of `ids` (one a step, for `goals`) and then reports: four steps
/// on one page, after which the stagnation detector asks for a review and the Planner plans
/// again from it.
fn four_ways_out(ids: &[u64], goals: [&str; 4]) -> Vec<Reply> {
    let clicks = ids.iter().map(|id| json!({"action": "click", "id": id}));
    four_tries(clicks.zip(goals).collect())
}

/// [`four_ways_out`] with any four actions, each with its goal.
fn four_tries(tries: Vec<(Value, &str)>) -> Vec<Reply> {
    let mut replies = vec![plan(false, "1. Try each way out", "")];
    replies.extend(
        tries.into_iter().map(|(action, goal)| {
            navigate("Start: the page lists ways out", goal, json!([action]))
        }),
    );
    replies.extend([
        verdict(false, "", ""),
        plan(false, "1. Report that every way out is refused", ""),
        navigate(
            "Failure: every way out was stopped",
            "Report",
            json!([{"action": "done", "text": "Every way out was stopped"}]),
        ),
        verdict(true, "", "Every way out was stopped."),
    ]);
    replies
}

/// What each action of the task reported, in order (what the model read of it).
fn action_outcomes(browser: &mut Browser) -> Vec<String> {
    browser
        .agent_messages()
        .into_iter()
        .filter(|m| m["type"] == "agent" && m["event"]["detail"]["type"] == "action_ended")
        .map(|m| m["event"]["details"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Runs `task` in `tab` on `llm`'s script with `deny` as the deny list, until it is done.
/// Failures in a row are these tests' point, not a streak for the ThinkingAgent.
fn run_denying(browser: &mut Browser, tab: &e2e::browser::Tab, llm: &ScriptedLlm, deny: Value) {
    let mut settings = settings(llm.base_url());
    settings["deny"] = deny;
    settings["agent"]["max_consecutive_failures"] = json!(10);
    settings["agent"]["planning_interval"] = json!(50);
    browser.configure_agent(settings);
    let started = browser.agent_request(json!({"type": "start_task", "tab_id": tab.id,
        "task": "Try to reach the secret page"}));
    assert_eq!(started["type"], "done", "{started}");
    browser.wait_for_task("done");
}

/// Fails if the other (denied) site was asked for its secret page.
fn assert_secret_never_asked(sites: &FixtureSites) {
    let secret: Vec<String> =
        sites.other_requests().into_iter().filter(|path| path.contains("secret")).collect();
    assert!(secret.is_empty(), "the denied site was asked for {secret:?}");
}

#[test]
fn a_multi_step_task_on_the_shop_is_done_and_captured_in_indexeddb() {
    let (_sites, mut browser, shop) = e2e::open_fixture("/shop/index.html");
    let kettle = browser.id_of(&shop, "Steel kettle");
    let llm = ScriptedLlm::start([
        plan(false, "1. Open the Steel kettle page\n2. Read its price", ""),
        navigate(
            "Start: the shop's home page lists the kettle",
            "Open the kettle's page; I expect its price",
            json!([{"action": "click", "id": kettle}]),
        ),
        report("Success: the kettle's page is open", "The kettle costs €39.00"),
        // The Navigator's done goes straight to the exit gate.
        verdict(true, "", "The steel kettle costs **€39.00**."),
    ]);
    browser.configure_agent(settings(llm.base_url()));

    let started = browser.agent_request(json!({"type": "start_task", "tab_id": shop.id,
        "task": "What does the steel kettle cost?"}));
    assert_eq!(started["type"], "done", "{started}");
    let done = browser.wait_for_task("done");
    assert_eq!(done["status"]["answer"], "The steel kettle costs **€39.00**.");
    assert!(
        shop.page.eval("location.href").as_str().unwrap().contains("sku=kettle"),
        "it really clicked"
    );

    // Events came to the port live, each with its actor.
    let events: Vec<Value> = browser
        .agent_messages()
        .into_iter()
        .filter(|m| m["type"] == "agent")
        .map(|m| m["event"].clone())
        .collect();
    let seen = |actor: &str, state: &str| {
        events.iter().any(|e| e["actor"] == actor && e["state"] == state)
    };
    assert!(
        seen("user", "TASK_START")
            && seen("planner", "STEP_OK")
            && seen("navigator", "ACT_START")
            && seen("navigator", "ACT_OK")
            && seen("thinking", "TASK_OK"),
        "{events:#?}"
    );

    // The model saw the page, as untrusted data inside its prompt.
    let requests = llm.requests();
    assert_eq!(requests.len(), 4);
    let navigator_prompt = requests[1].body["messages"][0]["content"].as_str().unwrap().to_owned();
    assert!(
        navigator_prompt.contains("Steel kettle") && navigator_prompt.contains("untrusted_page")
    );
    assert_eq!(requests[1].header("authorization"), Some(format!("Bearer {TEST_KEY}").as_str()));

    let stored = browser.stored_runs();
    let runs = stored["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{stored:#}");
    let run = &runs[0];
    assert_eq!(
        (run["agentStatus"].as_str(), run["status"].as_str()),
        (Some("done"), Some("draft"))
    );
    assert_eq!(run["taskPrompt"], "What does the steel kettle cost?");
    assert_eq!(run["totalSteps"], 2);
    assert_eq!(run["finalAnswer"], "The steel kettle costs **€39.00**.");
    assert_eq!(run["subtasks"][0]["title"], "Open the Steel kettle page");
    let steps = stored["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0]["action"]["type"], "click");
    assert!(
        steps[0]["action"]["target"].as_str().unwrap().contains("Steel kettle"),
        "{}",
        steps[0]["action"]
    );
    // Seed 000's thought 1 is the Navigator's own "what changed", not its memory.
    assert_eq!(
        steps[0]["thoughts"]["thought1"],
        "I checked my last step: Start: the shop's home page lists the kettle"
    );
    assert_eq!(steps[1]["url"].as_str().map(|u| u.contains("sku=kettle")), Some(true));
    let shots = stored["screenshots"].as_array().unwrap();
    assert_eq!(shots.len(), 2);
    assert!(
        shots.iter().all(|s| s["blob"] == true
            && s["type"] == "image/jpeg"
            && s["size"].as_u64() > Some(2000)),
        "{shots:?}"
    );
    assert_eq!(stored["screenshotKeys"][0], steps[0]["screenshot"]["key"]);
    let traces = stored["traces"].as_array().unwrap();
    assert_eq!(traces.len(), 4);
    assert!(traces.iter().all(|t| t["promptHash"].as_str().map(str::len) == Some(64)));
    let text = stored.to_string();
    assert!(!text.contains(TEST_KEY), "the API key never reaches storage");

    let roles: Vec<&str> = traces.iter().filter_map(|t| t["role"].as_str()).collect();
    assert_eq!(roles.iter().filter(|r| **r == "navigator").count(), 2, "{roles:?}");
    for navigator in traces.iter().filter(|t| t["role"] == "navigator") {
        let chars = &navigator["chars"];
        assert!(chars["state"].as_u64() > Some(100), "the page state is measured: {chars}");
        eprintln!(
            "navigator prompt at step {}: system {} + state {} + history {} = {} chars",
            navigator["step"].as_u64().unwrap() + 1,
            chars["system"],
            chars["state"],
            chars["history"],
            chars["total"]
        );
    }
}

#[test]
fn the_agent_asks_and_the_answer_resumes_it() {
    let (_sites, mut browser, shop) = e2e::open_fixture("/shop/index.html");
    let llm = ScriptedLlm::start([
        plan(true, "", "Which one?"),
        Reply::json(json!({
            "approved": false, "replan": true, "missing_pieces": "which product", "instructions_for_planner": "",
            "instructions_for_navigator": "", "should_pause_for_user": true,
            "question_for_user": "Which product do you mean: the kettle, the grinder or the scale?",
            "final_answer": ""
        })),
    ]);
    browser.configure_agent(settings(llm.base_url()));
    browser
        .agent_request(json!({"type": "start_task", "tab_id": shop.id, "task": "How much is it?"}));
    let paused = browser.wait_for_task("paused");
    assert_eq!(
        paused["status"]["question"],
        "Which product do you mean: the kettle, the grinder or the scale?"
    );
    let question = paused["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "question")
        .cloned()
        .unwrap();
    assert_eq!(
        (question["actor"].as_str(), question["state"].as_str()),
        (Some("system"), Some("TASK_PAUSE"))
    );

    llm.push(decide(true, "", "The user means the burr grinder"));
    llm.push(plan(true, "", "€89.00"));
    llm.push(verdict(true, "", "The burr grinder costs €89.00."));
    let session = paused["session_id"].clone();
    browser
        .agent_request(json!({"type": "follow_up", "session_id": session, "text": "The grinder"}));
    browser.agent_request(json!({"type": "resume", "session_id": session}));
    let done = browser.wait_for_task("done");
    assert_eq!(done["status"]["answer"], "The burr grinder costs €89.00.");
    // The answer reaches the ThinkingAgent first, then the Planner with its reading of it.
    let gate = llm.requests()[2].body["messages"][0]["content"].as_str().unwrap().to_owned();
    assert!(gate.contains("The user has just answered the question"), "{gate}");
    let planner = llm.requests()[3].body["messages"][0]["content"].as_str().unwrap().to_owned();
    assert!(planner.contains("The user means the burr grinder"), "{planner}");
    assert!(
        planner.contains("answering \"Which product do you mean"),
        "the answer is marked as the user's: {planner}"
    );
    assert!(planner.contains("] The grinder"));
}

#[test]
fn a_worker_stopped_mid_task_comes_back_paused_and_finishes() {
    let (_sites, mut browser, shop) = e2e::open_fixture("/shop/index.html");
    let kettle = browser.id_of(&shop, "Steel kettle");
    let llm = ScriptedLlm::start([
        plan(false, "1. Open the Steel kettle page", ""),
        navigate("Start", "Open the kettle", json!([{"action": "click", "id": kettle}])),
        // The worker is stopped while it waits for this answer.
        plan(false, "1. Read the price", "").after(Duration::from_secs(4)),
    ]);
    browser.configure_agent(settings(llm.base_url()));
    browser
        .agent_request(json!({"type": "start_task", "tab_id": shop.id, "task": "Kettle price?"}));
    browser.wait_for_message("the first step", |m| {
        m["event"]["state"] == "STEP_OK" && m["event"]["actor"] == "navigator"
    });
    while llm.requests().len() < 3 {
        std::thread::sleep(Duration::from_millis(20));
    }
    browser.kill_extension_worker();

    // The test's port reconnects, which starts a fresh worker; it restores the task.
    let restored = browser.wait_for_task("paused");
    assert!(
        restored["status"]["reason"].as_str().unwrap().contains("Chrome stopped"),
        "{restored:#}"
    );
    assert_eq!(restored["step"], 1, "the finished step is kept");
    assert!(
        restored["events"].as_array().unwrap().iter().any(|e| e["state"] == "ACT_OK"),
        "its events too"
    );

    llm.push(plan(false, "1. Read the price", ""));
    llm.push(navigate(
        "Success: on the kettle page",
        "Report",
        json!([{"action": "done", "text": "€39.00"}]),
    ));
    llm.push(verdict(true, "", "€39.00"));
    browser.agent_request(json!({"type": "resume", "session_id": restored["session_id"]}));
    let done = browser.wait_for_task("done");
    assert_eq!(done["status"]["answer"], "€39.00");
    let stored = browser.stored_runs();
    let steps: Vec<u64> =
        stored["steps"].as_array().unwrap().iter().map(|s| s["index"].as_u64().unwrap()).collect();
    assert_eq!(steps, [0, 1], "one run, numbered on across the restart");
    assert_eq!(stored["runs"].as_array().unwrap().len(), 1);
}

/// The deny list holds before a request leaves: a link, a link to a new tab, a script's
/// navigation and a redirect to a denied site are all stopped, and the denied site never
/// hears of them (the fixture server logs every request it gets).
#[test]
fn a_denied_site_is_never_requested_however_the_page_tries_to_go_there() {
    let (sites, mut browser, page) = e2e::open_fixture("/firewall/index.html");
    let ids: Vec<u64> =
        ["Secret by a link", "Secret in a new tab", "Secret by a script", "Secret by a redirect"]
            .iter()
            .map(|name| browser.id_of(&page, name))
            .collect();
    let goals =
        ["Follow the link", "Open the new tab", "Press the script button", "Follow the redirect"];
    let llm = ScriptedLlm::start(four_ways_out(&ids, goals));
    run_denying(&mut browser, &page, &llm, json!(["localhost"]));
    assert_secret_never_asked(&sites);
    // Each attempt failed with why, for the model.
    let outcomes = action_outcomes(&mut browser);
    assert_eq!(outcomes.len(), 5, "{outcomes:#?}");
    for outcome in &outcomes[..2] {
        assert!(outcome.contains("Not clicked") && outcome.contains("deny list"), "{outcome}");
    }
    for outcome in &outcomes[2..4] {
        assert!(outcome.contains("stopped before the request left"), "{outcome}");
    }
}

/// The worker reads an address with the browser's own URL parser: spelled in capitals with a
/// trailing dot, percent-encoded, with backslashes or in full-width letters, a denied host is the host Chrome
/// would visit, and each visit is refused before any request leaves.
#[test]
fn a_denied_host_is_refused_however_its_address_is_spelled() {
    let (sites, mut browser, page) = e2e::open_fixture("/firewall/index.html");
    let port = sites.other_url("/").trim_end_matches('/').rsplit(':').next().unwrap().to_owned();
    let spellings = [
        format!("http://LOCALHOST.:{port}/firewall/secret.html"),
        format!("http://loc%61lhost:{port}/firewall/secret.html"),
        format!("HTTP://LocalHost:{port}\\firewall\\secret.html"),
        format!(
            "http://\u{ff4c}\u{ff4f}\u{ff43}\u{ff41}\u{ff4c}\u{ff48}\u{ff4f}\u{ff53}\u{ff54}:{port}/firewall/secret.html"
        ),
    ];
    let visits = spellings.iter().map(|url| (json!({"action": "go_to_url", "url": url}), "Visit"));
    let llm = ScriptedLlm::start(four_tries(visits.collect()));
    run_denying(&mut browser, &page, &llm, json!(["localhost"]));
    assert_secret_never_asked(&sites);
    let outcomes = action_outcomes(&mut browser);
    for (url, outcome) in spellings.iter().zip(&outcomes) {
        assert!(outcome.contains("deny list"), "{url} was not refused: {outcome}");
    }
    assert_eq!(outcomes.len(), spellings.len() + 1, "{outcomes:#?}");
}

/// A tab the task's tab opens is held before its first request and checked like a
/// navigation, however it is opened: a form posting into a new tab, a link to an allowed
/// page that redirects, a link whose address changes as it is pressed (after the pre-click
/// look at it) and a script's `window.open`. The denied site never hears of any of them;
/// the allowed first hop of the redirect is loaded, through the firewall.
#[test]
fn a_new_tab_the_page_opens_is_checked_before_its_first_request() {
    let (sites, mut browser, page) = e2e::open_fixture("/firewall/tabs.html");
    let names = [
        "Post a form to a new tab",
        "Redirect in a new tab",
        "Harmless in a new tab",
        "Open a window",
    ];
    let ids: Vec<u64> = names.iter().map(|name| browser.id_of(&page, name)).collect();
    let goals =
        ["Post the form", "Follow the redirect", "Open the harmless link", "Open the window"];
    let llm = ScriptedLlm::start(four_ways_out(&ids, goals));
    run_denying(&mut browser, &page, &llm, json!(["localhost"]));
    assert_secret_never_asked(&sites);
    // The held tab's first page was asked for again once it was guarded: the allowed hop.
    let replayed = sites.requests().into_iter().any(|path| path.contains("blank-redirect"));
    assert!(replayed, "the redirect's first hop was never loaded: {:?}", sites.requests());
}

/// `click_at` names no element, so no look at a link comes before it: the new tab it opens
/// is held all the same. And a link's ping never goes out (the link itself is followed).
#[test]
fn a_click_at_a_point_and_a_links_ping_reach_no_denied_site() {
    let (sites, mut browser, page) = e2e::open_fixture("/firewall/press.html");
    let pinged = browser.id_of(&page, "A link that pings");
    let centre = page.page.eval(
        "(() => { const r = document.getElementById('blank').getBoundingClientRect(); \
         return [r.x + r.width / 2, r.y + r.height / 2]; })()",
    );
    let (x, y) = (centre[0].as_f64().unwrap(), centre[1].as_f64().unwrap());
    let llm = ScriptedLlm::start([
        plan(false, "1. Press the link\n2. Follow the other", ""),
        navigate("Start", "Press the link", json!([{"action": "click_at", "x": x, "y": y}])),
        navigate("Success", "Follow the other", json!([{"action": "click", "id": pinged}])),
        navigate("Success", "Report", json!([{"action": "done", "text": "Both pressed"}])),
        verdict(true, "", "Both pressed."),
    ]);
    run_denying(&mut browser, &page, &llm, json!(["localhost"]));
    assert_secret_never_asked(&sites);
    assert!(sites.requests().iter().any(|p| p.contains("pinged")), "{:?}", sites.requests());
}

/// While a task holds the tabs its tab opens, the person's own new tabs load as ever: one
/// they open themselves, and one opened from a tab the agent does not work in.
#[test]
fn the_persons_own_new_tabs_load_while_a_task_runs() {
    let (sites, mut browser, own) = e2e::open_fixture("/shop/index.html");
    let page = browser.open_tab(&sites.url("/firewall/tabs.html"));
    let llm = ScriptedLlm::start([
        // The task is under way (its tabs guarded) while the Planner takes its time.
        plan(false, "1. Report", "").after(Duration::from_secs(3)),
        navigate("Start", "Report", json!([{"action": "done", "text": "Nothing to do"}])),
        verdict(true, "", "Nothing to do."),
    ]);
    browser.configure_agent(settings(llm.base_url()));
    let started = browser.agent_request(json!({"type": "start_task", "tab_id": page.id,
        "task": "Wait a moment"}));
    assert_eq!(started["type"], "done", "{started}");
    std::thread::sleep(Duration::from_millis(500));
    let opened = [
        browser.open_tab(&sites.url("/shop/product.html?sku=grinder")),
        browser.open_tab_from(&sites.url("/shop/product.html?sku=kettle"), &own),
    ];
    for (tab, sku) in opened.iter().zip(["grinder", "kettle"]) {
        tab.page.wait_for(
            &format!("location.href.endsWith('sku={sku}') && document.readyState === 'complete'"),
            &format!("the {sku} page to load in the person's tab"),
        );
    }
    browser.wait_for_task("done");
}

/// A cross-site frame is guarded in its own process: it navigating itself to a denied
/// page, and a frame it creates that redirects there, are stopped before the request.
#[test]
fn a_cross_site_frame_cannot_reach_a_denied_page_either() {
    let (sites, mut browser, page) = e2e::open_fixture("/firewall/frames.html");
    let go = id_of_eventually(&mut browser, &page, "Go to the secret");
    let frame = id_of_eventually(&mut browser, &page, "Frame the secret");
    let click = |id: u64, goal: &str| {
        navigate("Start: the frame lists ways out", goal, json!([{"action": "click", "id": id}]))
    };
    let llm = ScriptedLlm::start([
        plan(false, "1. Try each way out", ""),
        click(frame, "Frame the secret"),
        click(go, "Go to the secret in the frame"),
        navigate(
            "Failure: the frame did not reach the secret",
            "Report",
            json!([{"action": "done", "text": "Both ways were stopped"}]),
        ),
        verdict(true, "", "Both ways were stopped."),
    ]);
    // The other site is allowed (it is the frame's), its secret page is not.
    let secret = format!("{}*", sites.other_url("/firewall/secret.html"));
    run_denying(&mut browser, &page, &llm, json!([secret]));
    assert_secret_never_asked(&sites);
    let asked = sites.other_requests();
    assert!(asked.iter().any(|p| p.contains("frame.html")), "the frame loaded: {asked:?}");
    // The nested frame's first hop (an allowed site) was let through; only its redirect
    // to the secret page was stopped.
    assert!(sites.requests().iter().any(|p| p.contains("via%3Dnested")), "{:?}", sites.requests());
}
