//! Several jobs at once, each in its own tab, through the panels a person uses: tasks from
//! three tabs' panels run together and each sees only its own page; one is paused and
//! steered while the others go on; a killed worker brings every one back; a replay and a
//! pipeline's task run as jobs too; questions wait in their own panels; a closed tab ends
//! only its job; a rate limit is waited out in view; the limit refuses a fourth task.
//! The model reads each prompt and answers after 500 ms (`e2e::jobs::model`), so the jobs
//! really overlap.

use std::time::Duration;

use crate::support::pipeline_request;
use agent_engine::jobs::TAB_CLOSED;
use e2e::agent::reader::{self, Asker};
use e2e::agent::settings;
use e2e::browser::Browser;
use e2e::fixtures::FixtureSites;
use e2e::jobs::{self, Model, TaskTab, asking_task, question, running};
use e2e::llm::Reply;
use e2e::tasks::APPROVED;
use e2e::workflows;
use serde_json::{Value, json};

const DELAY: Duration = Duration::from_millis(500);

/// The three fixture pages most tests run side by side, and a line of text only each shows.
const PAGES: [(&str, &str); 3] =
    [("table.html", "Lovelace"), ("paragraph.html", "marmalade"), ("form-table.html", "Arlington")];

struct Setup {
    sites: FixtureSites,
    browser: Browser,
    model: Model,
}

/// The browser with the agent configured (then `change`d) for the slow reading model.
fn setup(change: impl FnOnce(&mut Value)) -> Setup {
    let (sites, mut browser) = e2e::launch_with_fixtures();
    let model = jobs::model(DELAY);
    let mut config = settings(model.llm.base_url());
    change(&mut config);
    browser.configure_agent(config);
    Setup { sites, browser, model }
}

impl Setup {
    fn open(&mut self, pages: &[&'static str]) -> Vec<TaskTab> {
        pages.iter().map(|page| TaskTab::open(&mut self.browser, &self.sites, page)).collect()
    }

    /// The three pages' tabs, their tasks started from their panels, all running at once.
    fn three_running(&mut self) -> Vec<TaskTab> {
        let tabs = self.open(&PAGES.map(|(page, _)| page));
        for tab in &tabs {
            tab.start();
        }
        self.browser.wait_for_jobs("three tasks running", |jobs| running(jobs, "task") == 3);
        tabs
    }
}

#[test]
fn three_tasks_from_three_panels_run_at_once_and_each_sees_only_its_own_tab() {
    let mut s = setup(|_| {});
    let tabs = s.three_running();
    // Any panel's Jobs view lists the three, each in its tab.
    let first = &tabs[0];
    first.press("jobs-toggle");
    first
        .panel
        .wait_for("document.querySelectorAll('[data-testid=job-row]').length === 3", "3 jobs");
    let mut listed: Vec<i64> =
        jobs::job_rows(&first.panel).iter().filter_map(|r| r["tab"].as_i64()).collect();
    listed.sort();
    let mut ids: Vec<i64> = tabs.iter().map(|t| i64::from(t.tab.id)).collect();
    ids.sort();
    assert_eq!(listed, ids, "a row per tab");
    assert!(first.panel.text("[data-testid=jobs-toggle]").contains('3'), "the count");
    first.press("jobs-toggle");

    for tab in &tabs {
        tab.finish();
        assert_eq!(tab.user_messages(), [tab.task()], "each panel shows its own task only");
    }
    for (tab, (page, seen)) in tabs.iter().zip(PAGES) {
        let navigator: Vec<String> = s
            .model
            .prompts_of(&tab.task())
            .into_iter()
            .filter(|p| reader::asker(p) == Asker::Navigator)
            .collect();
        assert!(!navigator.is_empty(), "{page}'s Navigator was asked");
        for prompt in navigator {
            let state = reader::page_state(&prompt);
            assert_eq!(jobs::page_of(state), Some(page), "{state}");
            assert!(state.contains(seen), "{page}'s own text: {state}");
            for (other, unseen) in PAGES.iter().filter(|(other, _)| *other != page) {
                assert!(
                    !state.contains(unseen) && !state.contains(&format!("/tasks/{other}")),
                    "{page}'s state shows nothing of {other}: {state}"
                );
            }
        }
    }
}

#[test]
fn one_task_is_paused_and_steered_while_the_other_two_finish() {
    let mut s = setup(|_| {});
    let tabs = s.three_running();
    let (steered, others) = tabs.split_first().unwrap();
    steered.press("pause");
    steered.panel.wait_for_status("paused");
    for tab in others {
        tab.finish();
    }
    assert_eq!(steered.status(), "paused", "it waits for its person meanwhile");
    // Paused by its person, it asks nothing of anyone: the Jobs badge stays hidden.
    let row = s.browser.jobs().into_iter().find(|j| j["tab_id"] == json!(steered.tab.id));
    assert_eq!(row.as_ref().map(|j| j["paused_by_user"].clone()), Some(json!(true)), "{row:?}");
    assert!(
        steered.panel.eval("document.querySelector('[data-testid=jobs-needs-you]').hidden")
            == json!(true)
    );

    const STEER: &str = "Copy the surname exactly as the table shows it.";
    let before = s.model.prompts_of(&steered.task()).len();
    steered.send(STEER);
    steered.finish();
    let steered_prompts = s.model.prompts_of(&steered.task());
    assert!(
        steered_prompts[before].contains(STEER),
        "its next prompt: {}",
        steered_prompts[before]
    );
    for tab in others {
        assert!(s.model.prompts_of(&tab.task()).iter().all(|p| !p.contains(STEER)), "{}", tab.page);
    }
    assert!(
        s.model.prompts().iter().filter(|p| p.contains(STEER)).all(|p| p.contains(&steered.task()))
    );
}

#[test]
fn after_the_worker_is_killed_every_task_comes_back_paused_and_resumes_from_its_panel() {
    let mut s = setup(|_| {});
    let tabs = s.three_running();
    // Mid-way: each task's Navigator has read its page.
    s.model.wait_for("each Navigator asked", |prompts| {
        tabs.iter().all(|t| {
            prompts.iter().any(|p| p.contains(&t.task()) && reader::asker(p) == Asker::Navigator)
        })
    });
    s.browser.kill_extension_worker();

    for tab in &tabs {
        tab.panel.wait_for_status("paused");
        let banner = tab.panel.wait_for_text("[data-testid=paused-banner]", "Chrome stopped");
        assert!(banner.contains("press Resume"), "{banner}");
        assert_eq!(tab.user_messages(), [tab.task()], "{}'s panel shows its own task", tab.page);
    }
    for tab in &tabs {
        tab.press("resume-anyway");
    }
    for tab in &tabs {
        tab.finish();
    }
}

#[test]
fn a_replay_in_one_tab_and_a_task_in_another_run_at_once() {
    let mut s = setup(|_| {});
    workflows::seed_recording(&mut s.browser, &s.sites);
    let workflow_id = workflows::reflect(&mut s.browser);
    workflows::save_with_dependency(&mut s.browser, &workflow_id);
    let shop = s.browser.open_tab(&s.sites.url("/shop/index.html"));
    let table = TaskTab::open(&mut s.browser, &s.sites, "table.html");

    table.start();
    let started = s.browser.agent_request(json!({"type": "start_replay",
        "workflow_id": workflow_id, "version": 2, "tab_id": shop.id, "params": {"query": "tea"}}));
    assert_eq!(started["type"], "replay", "{started}");
    let run_id = started["replay"]["run_id"].clone();
    s.browser.wait_for_jobs("a replay and a task running", |jobs| {
        running(jobs, "replay") == 1 && running(jobs, "task") == 1
    });

    table.finish();
    let ended = s.browser.wait_for_message("the replay's end", |m| {
        m["type"] == "replay"
            && m["replay"]["run_id"] == run_id
            && !["running", "paused"].contains(&m["replay"]["status"].as_str().unwrap_or("running"))
    });
    assert_eq!(ended["replay"]["status"], "done", "{ended:#}");
    assert_eq!(ended["replay"]["extracts"]["cheapest"], "French press");
    workflows::wait_for_url(&shop, "product.html?sku=press");
}

#[test]
fn a_pipeline_step_awaits_the_task_it_started_in_its_tab() {
    let mut s = setup(|_| {});
    let table = TaskTab::open(&mut s.browser, &s.sites, "table.html");
    let pipeline = "id: ask_agent\nallow_tools: [agent_task]\nsteps:\n  - id: ask\n    type: tool\n    tool: agent_task\n    input:\n      task: \"{{input.task}}\"\n  - id: answer\n    type: transform\n    output: {answer: \"{{steps.ask.output.answer}}\"}\n";
    let run = s.browser.agent_send(pipeline_request(
        "run_pipeline",
        pipeline,
        json!({"input": {"task": table.task()}, "tab_id": table.tab.id}),
    ));
    s.browser.wait_for_jobs("the pipeline waiting for its task", |jobs| {
        jobs::in_tab(jobs, "pipeline", &table.tab).is_some_and(|j| j["status"] == "running")
            && jobs::in_tab(jobs, "task", &table.tab).is_some_and(|j| j["status"] == "running")
    });

    // The tab's panel shows the task as its own, as if typed there.
    table.finish();
    assert_eq!(table.user_messages(), [table.task()]);
    let done = s.browser.wait_for_message("the pipeline's end", |m| m["id"] == run);
    assert_eq!(done["run"]["status"], "ok", "{done}");
    assert_eq!(done["run"]["output"]["answer"], APPROVED);
}

#[test]
fn two_questions_at_once_are_each_answered_in_their_own_panel() {
    let mut s = setup(|_| {});
    let tabs = s.open(&["table.html", "paragraph.html"]);
    for tab in &tabs {
        tab.send(&asking_task(tab.page));
    }
    for tab in &tabs {
        tab.panel.wait_for_status("paused");
        tab.panel.wait_for_text("[data-testid=message][data-kind=question]", &question(tab.page));
    }
    // The Jobs view marks both as needing the person.
    let first = &tabs[0];
    first.press("jobs-toggle");
    first.panel.wait_for_text("[data-testid=jobs-needs-you]", "2");
    first.panel.wait_for(
        "document.querySelectorAll('[data-testid=job-row][data-needs-you=true]').length === 2",
        "both rows needing you",
    );
    let rows = jobs::job_rows(&first.panel);
    for tab in &tabs {
        let row = rows.iter().find(|r| r["tab"] == tab.tab.id).expect("its row");
        assert_eq!((&row["status"], &row["needs_you"]), (&json!("paused"), &json!(true)));
    }
    first.press("jobs-toggle");

    let answer = |page: &str| format!("Yes, go ahead with {page}");
    for tab in &tabs {
        tab.send(&answer(tab.page));
    }
    for tab in &tabs {
        tab.finish();
        let answered: Vec<String> =
            s.model.prompts().into_iter().filter(|p| p.contains(&answer(tab.page))).collect();
        assert!(!answered.is_empty(), "{}'s answer reached its model", tab.page);
        assert!(answered.iter().all(|p| p.contains(&asking_task(tab.page))), "and no other task");
    }
}

#[test]
fn closing_a_jobs_tab_ends_that_job_keeping_what_it_captured() {
    let mut s = setup(|_| {});
    let tabs = s.open(&["table.html", "paragraph.html"]);
    for tab in &tabs {
        tab.start();
    }
    let (closed, other) = (&tabs[0], &tabs[1]);
    let jobs = s.browser.wait_for_jobs("a step taken in the first tab", |jobs| {
        jobs::in_tab(jobs, "task", &closed.tab).is_some_and(|j| j["step"].as_u64() >= Some(1))
    });
    let job_id = jobs::in_tab(&jobs, "task", &closed.tab).unwrap()["id"].clone();
    closed.tab.page.call("Page.close", json!({})).unwrap();

    closed.panel.wait_for_status("failed");
    closed.wait_for_words(TAB_CLOSED);
    other.finish();
    let ended = s.browser.wait_for_jobs("the closed tab's job ended", |jobs| {
        jobs.iter().any(|j| j["id"] == job_id && j["status"] == "failed")
    });
    let ended = ended.iter().find(|j| j["id"] == job_id).unwrap();
    assert_eq!(ended["why"], TAB_CLOSED);

    let stored = s.browser.stored_runs();
    let runs: Vec<&Value> =
        stored["runs"].as_array().unwrap().iter().filter(|r| r["taskId"] == job_id).collect();
    assert_eq!(runs.len(), 1, "its run is kept");
    assert_eq!(runs[0]["agentStatus"], "failed");
    let steps = stored["steps"].as_array().unwrap().iter().filter(|t| t["runId"] == runs[0]["id"]);
    assert!(steps.count() >= 1, "with its steps");
}

#[test]
fn a_rate_limit_is_waited_out_in_the_panel_and_the_task_finishes() {
    let mut s = setup(|config| {
        for role in ["planner", "navigator", "thinking"] {
            config["models"][role]["max_retries"] = json!(2);
        }
    });
    let tabs = s.open(&["table.html", "paragraph.html"]);
    let (limited, other) = (&tabs[0], &tabs[1]);
    s.model.llm.push(Reply::rate_limited(2));
    limited.start();
    limited.wait_for_provider_wait(Some("Waiting for the provider (rate limit, HTTP 429)"));
    other.start();
    other.panel.wait_for_status("running");
    assert_eq!(other.provider_wait(), None, "only the waiting job's panel says so");
    limited.wait_for_provider_wait(None);
    for tab in &tabs {
        tab.finish();
    }
    let sent: Vec<Value> = s
        .model
        .llm
        .requests()
        .into_iter()
        .map(|r| r.body)
        .filter(|body| body.to_string().contains(&limited.task()))
        .collect();
    assert!(sent.len() > 2 && sent[0] == sent[1], "the refused call was made again: {sent:#?}");
}

#[test]
fn a_fourth_task_is_refused_while_three_run_and_starts_once_they_end() {
    let mut s = setup(|_| {});
    let mut tabs = s.open(&["table.html", "paragraph.html", "form-table.html", "form-grid.html"]);
    let fourth = tabs.pop().unwrap();
    for tab in &tabs {
        tab.start();
    }
    s.browser.wait_for_jobs("three tasks running", |jobs| running(jobs, "task") == 3);
    fourth.start();
    fourth.wait_for_words("jobs are running");
    assert_ne!(fourth.status(), "running");
    assert!(s.model.prompts_of(&fourth.task()).is_empty(), "the model never heard of it");

    for tab in &tabs {
        tab.finish();
    }
    fourth.start();
    fourth.finish();
}
