//! Several jobs at once, each in its own tab: fixture tasks (`crate::tasks`) started from
//! their tabs' panels, and a model that reads each prompt and answers it after a delay, as
//! a real provider takes its time, so the jobs really overlap. The e2e tests in
//! `tests/jobs.rs` and `bench jobs` share it.
//!
//! Each task's text names its fixture page ([`task`]), so every prompt can be told apart by
//! the task it carries, and the model finds the page it acts on from the page state's `url`
//! line, never from anything shared between jobs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::agent::reader::{self, Asker};
use crate::agent::replies::verdict;
use crate::browser::{Browser, Page, Tab};
use crate::fixtures::FixtureSites;
use crate::llm::{Reply, ScriptedLlm};
use crate::tasks;
use crate::workflows::{self, Prompt};

/// The task a panel sends for fixture `page`.
pub fn task(page: &str) -> String {
    format!("Do what the page asks ({page}).")
}

const ASK_FIRST: &str = "but ask me first";

/// A task whose model asks the person [`question`] before it acts.
pub fn asking_task(page: &str) -> String {
    format!("Do what the page asks ({page}), {ASK_FIRST}.")
}

/// What the model asks about an [`asking_task`] on `page`.
pub fn question(page: &str) -> String {
    format!("Shall I go ahead on {page}?")
}

/// The scripted model and every prompt it answered itself (replies queued with
/// [`ScriptedLlm::push`] go out without it seeing their prompts).
pub struct Model {
    pub llm: ScriptedLlm,
    prompts: Arc<Mutex<Vec<String>>>,
}

impl Model {
    /// The prompts it answered, in the order they came.
    pub fn prompts(&self) -> Vec<String> {
        self.prompts.lock().expect("prompts").clone()
    }

    /// The prompts that carry the task `text` (those of its job), in order.
    pub fn prompts_of(&self, text: &str) -> Vec<String> {
        self.prompts().into_iter().filter(|p| p.contains(text)).collect()
    }

    /// Waits (up to 30 s) until the prompts so far satisfy `test`.
    pub fn wait_for(&self, what: &str, test: impl Fn(&[String]) -> bool) {
        let started = Instant::now();
        while !test(&self.prompts()) {
            assert!(started.elapsed() < Duration::from_secs(30), "the model never saw {what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Each fixture page's Navigator, made when a prompt first shows that page.
type Navigators = HashMap<String, Box<dyn FnMut(&str) -> Reply + Send>>;

/// A model that solves the fixture tasks from what each prompt shows, for any number of
/// tabs at once, and answers each request after `delay`. It also reflects and replays the
/// fixture shop's recorded workflow as `crate::workflows` scripts it, and asks first in an
/// [`asking_task`] until the person's answer is in the prompt.
pub fn model(delay: Duration) -> Model {
    let prompts = Arc::new(Mutex::new(Vec::new()));
    let log = prompts.clone();
    let mut navigators = Navigators::new();
    let mut reflect_steps = workflows::reflect_step_replies().into_iter();
    let llm = ScriptedLlm::responding(move |prompt| {
        log.lock().expect("prompts").push(prompt.to_owned());
        let reply = match workflows::prompt_kind(prompt) {
            Prompt::ReflectStep => {
                reflect_steps.next().unwrap_or_else(|| Reply::error(400, "no step left to explain"))
            }
            Prompt::ReflectTask => workflows::reflect_task_reply(),
            Prompt::Replay => workflows::replay_reply(prompt),
            Prompt::Other => agent_reply(prompt, &mut navigators),
        };
        reply.after(delay)
    });
    Model { llm, prompts }
}

fn agent_reply(prompt: &str, navigators: &mut Navigators) -> Reply {
    let asks = prompt.contains(ASK_FIRST) && !prompt.contains("answering \"");
    let page = tasks::PAGES.iter().find(|page| prompt.contains(&format!("({page})")));
    match (reader::asker(prompt), page) {
        // Done at once with nothing to show, so the ThinkingAgent asks.
        (Asker::Planner, _) if asks => reader::plan_done("?"),
        (Asker::Thinking, Some(page)) if asks => verdict(false, &question(page), ""),
        _ => tasks::answer_agent(prompt, |state| match page_of(state) {
            Some(page) => {
                navigators.entry(page.to_owned()).or_insert_with(|| tasks::navigator(page))(state)
            }
            None => Reply::error(400, "the page state shows no fixture task"),
        }),
    }
}

/// The fixture task page a page state shows, from its `url` line.
pub fn page_of(state: &str) -> Option<&str> {
    let url = state.lines().find_map(|line| line.strip_prefix("url: "))?;
    let file = url.split(['?', '#']).next()?.rsplit('/').next()?;
    tasks::PAGES.iter().find(|page| **page == file).copied()
}

/// A fixture task's tab, and its panel open beside it (`side-panel.html?tabId=N`, a tab
/// of its own here).
pub struct TaskTab {
    pub page: &'static str,
    pub tab: Tab,
    pub panel: Page,
}

impl TaskTab {
    /// Opens fixture `page` and its panel, connected to the worker.
    pub fn open(browser: &mut Browser, sites: &FixtureSites, page: &'static str) -> TaskTab {
        let tab = browser.open_tab(&sites.url(&format!("/tasks/{page}")));
        let panel = browser.open_side_panel(&tab);
        panel.wait_for_text("[data-testid=worker-link]", "Agent ready");
        TaskTab { page, tab, panel }
    }

    /// The task [`TaskTab::start`] sends.
    pub fn task(&self) -> String {
        task(self.page)
    }

    /// Sends this tab's task from its panel.
    pub fn start(&self) {
        self.send(&self.task());
    }

    /// Types `text` into the panel's chat box, in place of what it holds, and presses
    /// Enter, with the panel in front as a person would have it.
    pub fn send(&self, text: &str) {
        self.panel.bring_to_front();
        self.panel.click("[data-testid=chat-input]");
        self.panel.eval("document.querySelector('[data-testid=chat-input]').select()");
        self.panel
            .call("Input.insertText", json!({"text": text}))
            .unwrap_or_else(|e| panic!("typing into the panel of {}: {e}", self.page));
        self.panel.press_enter();
    }

    /// Clicks the panel's button `testid`, with the panel in front.
    pub fn press(&self, testid: &str) {
        self.panel.bring_to_front();
        self.panel.click(&format!("[data-testid={testid}]"));
    }

    /// The panel's status (`data-state`): idle, running, paused, done, failed, cancelled.
    pub fn status(&self) -> String {
        let state =
            self.panel.eval("document.querySelector('[data-testid=status]')?.dataset.state");
        state.as_str().unwrap_or_default().to_owned()
    }

    /// Waits until the panel says done, and checks the page took the answer.
    pub fn finish(&self) {
        self.panel.wait_for_status("done");
        assert_eq!(self.result(), "Correct", "{} was not solved", self.page);
    }

    /// The page's verdict on what was entered: "Correct", "Wrong" or empty.
    pub fn result(&self) -> String {
        let result = self.tab.page.eval("document.getElementById('result')?.textContent ?? ''");
        result.as_str().unwrap_or_default().to_owned()
    }

    /// Waits until the panel's visible text contains `text`.
    pub fn wait_for_words(&self, text: &str) {
        self.panel.wait_for(
            &format!("document.body.innerText.includes({})", json!(text)),
            &format!("the panel of {} to say {text:?}", self.page),
        );
    }

    /// What the panel's status bar says while its job waits on the provider (a rate limit),
    /// when it shows that.
    pub fn provider_wait(&self) -> Option<String> {
        self.panel.eval(PROVIDER_WAIT).as_str().map(str::to_owned)
    }

    /// Waits until the panel shows a wait on the provider that says `text`, or none (`None`).
    pub fn wait_for_provider_wait(&self, text: Option<&str>) {
        let (condition, what) = match text {
            Some(text) => (format!("({PROVIDER_WAIT} ?? '').includes({})", json!(text)), text),
            None => (format!("{PROVIDER_WAIT} === null"), "no wait"),
        };
        self.panel.wait_for(&condition, &format!("the panel of {} to show {what}", self.page));
    }

    /// The messages the person sent in this panel, in order.
    pub fn user_messages(&self) -> Vec<String> {
        let found = self.panel.eval(
            "[...document.querySelectorAll('[data-testid=message][data-actor=user]')].map(m => m.innerText.trim())",
        );
        serde_json::from_value(found).unwrap_or_default()
    }
}

/// The text of the panel's provider-wait element when it is shown, else null.
const PROVIDER_WAIT: &str = "(() => { const e = document.querySelector('[data-testid=provider-wait]'); \
    return e && e.checkVisibility() && e.textContent.trim() ? e.textContent : null; })()";

/// The rows of a panel's Jobs view, each as `{id, kind, status, tab, needs_you}` from its
/// data attributes (`tab` a number, `needs_you` a boolean).
pub fn job_rows(panel: &Page) -> Vec<Value> {
    let rows = panel.eval(
        "[...document.querySelectorAll('[data-testid=job-row]')].map(r => ({id: r.dataset.jobId, \
         kind: r.dataset.kind, status: r.dataset.status, tab: Number(r.dataset.tab), \
         needs_you: r.dataset.needsYou === 'true'}))",
    );
    rows.as_array().cloned().unwrap_or_default()
}

/// How many jobs of `kind` are running in a `jobs` list.
pub fn running(jobs: &[Value], kind: &str) -> usize {
    jobs.iter().filter(|j| j["kind"] == kind && j["status"] == "running").count()
}

/// The job of `kind` in `tab`, if the list has one.
pub fn in_tab<'a>(jobs: &'a [Value], kind: &str, tab: &Tab) -> Option<&'a Value> {
    jobs.iter().find(|j| j["kind"] == kind && j["tab_id"] == tab.id)
}

impl Browser {
    /// Waits (up to 30 s) until one of the worker's `jobs` broadcasts so far satisfies
    /// `test`, and returns that list. Every broadcast is kept, so a moment that has passed
    /// still counts.
    pub fn wait_for_jobs(&mut self, what: &str, test: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let started = Instant::now();
        let (mut seen, mut last) = (0, Vec::new());
        loop {
            // Only the lists not looked at yet cross over.
            let lists = self.eval_in_extension(&format!(
                "(window.agent?.messages ?? []).filter(m => m.type === 'jobs').slice({seen})\
                 .map(m => m.jobs)"
            ));
            for list in lists.as_array().into_iter().flatten() {
                seen += 1;
                last = list.as_array().cloned().unwrap_or_default();
                if test(&last) {
                    return last;
                }
            }
            if started.elapsed() > Duration::from_secs(30) {
                panic!("no jobs list with {what}; the last was {last:#?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The worker's jobs now (`list_jobs`).
    pub fn jobs(&mut self) -> Vec<Value> {
        let answer = self.agent_request(json!({"type": "list_jobs"}));
        assert_eq!(answer["type"], "jobs", "{answer}");
        answer["jobs"].as_array().cloned().unwrap_or_default()
    }
}
