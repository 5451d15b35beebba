//! Fixture tasks (`tests/fixtures/tasks/`) that need what a page *says*: a table, a
//! paragraph (also right above a box), a code to type, feedback, labels that are plain text,
//! a datepicker's month, a list's items.
//! Each is solved by the real worker with a model that decides from its prompt alone
//! ([`crate::agent::reader`]): it finds the page state in the Navigator's prompt and acts on
//! what it reads there, so a task succeeds only if the state carries what a person sees.
//! The e2e tests and `bench prompt` share them.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::agent::reader::{self, Asker, approve, id_of, page_state, text_lines};
use crate::agent::settings;
use crate::browser::{Browser, Tab};
use crate::fixtures::FixtureSites;
use crate::llm::{Reply, ScriptedLlm};

/// The fixture tasks, by page.
pub const PAGES: [&str; 20] = [
    "table.html",
    "paragraph.html",
    "paragraph-above.html",
    "code-above.html",
    "number-game.html",
    "form-table.html",
    "form-grid.html",
    "datepicker.html",
    "autocomplete.html",
    "dropdown.html",
    "checkboxes.html",
    "consent.html",
    "sortable.html",
    "kanban.html",
    "highlight.html",
    "slider.html",
    "hover-menu.html",
    "context-menu.html",
    "edit-cell.html",
    "paste.html",
];

/// What a task left behind.
pub struct Solved {
    /// Every prompt the model was sent, in order.
    pub prompts: Vec<String>,
    pub navigator_calls: usize,
    /// The page's `#result` text: "Correct" when the page accepted the answer ("won" for
    /// the number game, whose feedback line says so).
    pub result: String,
    /// How the task ended (`done`, or the state it was left in).
    pub status: String,
    pub tab: Tab,
}

impl Solved {
    pub fn model_calls(&self) -> usize {
        self.prompts.len()
    }

    /// The page state of the `n`th Navigator call.
    pub fn state(&self, n: usize) -> &str {
        let prompt = self
            .prompts
            .iter()
            .filter(|p| reader::asker(p) == Asker::Navigator)
            .nth(n)
            .expect("that many Navigator calls");
        page_state(prompt)
    }

    pub fn solved(&self) -> bool {
        self.result == "Correct" || self.result == "won"
    }

    /// Every outcome the Navigator was shown of its last actions, in order.
    pub fn outcomes(&self) -> Vec<String> {
        self.prompts
            .iter()
            .filter_map(|p| p.split("Its outcome:\n").nth(1))
            .filter_map(|rest| rest.split("\n\n").next())
            .map(str::to_owned)
            .collect()
    }

    /// Some outcome the Navigator was shown holds every one of `parts`; on failure, all of
    /// them are shown.
    pub fn assert_said(&self, parts: &[&str]) {
        let said = self.outcomes();
        assert!(said.iter().any(|o| parts.iter().all(|p| o.contains(p))), "{parts:?}: {said:#?}");
    }

    /// The page accepted the answer, within the Navigator's calls + 2 model calls (a
    /// Planner call, then the ThinkingAgent's exit gate). On failure it shows what the model
    /// was told and saw last.
    pub fn assert_solved(&self) {
        let last = self.state(self.navigator_calls.saturating_sub(1));
        let said = self.outcomes();
        assert!(self.solved(), "the page did not accept it ({:?}): {said:#?}\n{last}", self.result);
        assert!(
            self.model_calls() <= self.navigator_calls + 2,
            "{} model calls for {} Navigator calls",
            self.model_calls(),
            self.navigator_calls
        );
    }
}

/// Solves fixture `page` in a browser of its own (12 Navigator steps at most) and checks
/// the task finished.
pub fn solve_alone(page: &str) -> Solved {
    let sites = FixtureSites::serve();
    let mut browser = Browser::launch();
    let solved = solve(&mut browser, &sites, page, 12);
    assert_eq!(solved.status, "done", "the task did not finish: {:#?}", solved.outcomes());
    solved
}

/// Runs the task of fixture `page` in `browser`: the Planner plans once, the Navigator reads
/// the state and acts, the ThinkingAgent approves a claim of done. Gives up after
/// `max_steps` Navigator steps (the task is then left paused, not failed by the test).
pub fn solve(browser: &mut Browser, sites: &FixtureSites, page: &str, max_steps: u32) -> Solved {
    let tab = browser.open_tab(&sites.url(&format!("/tasks/{page}")));
    let mut navigate = navigator(page);
    let prompts = Arc::new(Mutex::new(Vec::new()));
    let seen = prompts.clone();
    let llm = ScriptedLlm::responding(move |prompt| {
        seen.lock().expect("prompts").push(prompt.to_owned());
        answer_agent(prompt, &mut navigate)
    });
    let mut config = settings(llm.base_url());
    config["agent"]["max_steps"] = json!(max_steps);
    browser.configure_agent(config);
    let started = browser.agent_request(
        json!({"type": "start_task", "tab_id": tab.id, "task": "Do what the page asks."}),
    );
    assert_eq!(started["type"], "done", "{started}");
    let status = browser.wait_for_task_to_stop();
    let prompts = prompts.lock().expect("prompts").clone();
    let navigator_calls = prompts.iter().filter(|p| reader::asker(p) == Asker::Navigator).count();
    let result = tab.page.eval(
        "document.getElementById('result')?.textContent ?? \
         (document.getElementById('feedback')?.textContent.startsWith('Correct') ? 'won' : '')",
    );
    let result = result.as_str().unwrap_or_default().to_owned();
    Solved { prompts, navigator_calls, result, status, tab }
}

/// How the Navigator's reports of done begin, so the Planner can tell it finished.
const FINISHED: &str = "Finished: ";

/// What the ThinkingAgent answers when it approves a fixture task's claim of done.
pub const APPROVED: &str = "Done as the page asked.";

/// The answer of a model that reads its prompt, for whichever agent `prompt` is for: the
/// Planner plans once and declares done once the Navigator reported it, the Navigator
/// `navigate`s from the page state, the ThinkingAgent approves with [`APPROVED`].
pub fn answer_agent(prompt: &str, navigate: impl FnOnce(&str) -> Reply) -> Reply {
    match reader::asker(prompt) {
        // Like a model, the Planner declares done once the Navigator reported it.
        Asker::Planner if prompt.contains(FINISHED) => reader::plan_done(FINISHED),
        Asker::Planner => reader::plan("1. Read the page\n2. Fill in what it asks\n3. Submit"),
        Asker::Navigator => navigate(page_state(prompt)),
        Asker::Thinking => approve(APPROVED),
    }
}

fn done(text: &str) -> Reply {
    let text = format!("{FINISHED}{text}");
    reader::act("Report", json!([{"action": "done", "text": text}]))
}

fn click(id: u64) -> Value {
    json!({"action": "click", "id": id})
}

fn type_into(id: u64, text: &str) -> Value {
    json!({"action": "type", "id": id, "text": text})
}

/// The element line of `state` whose name is exactly `name` (inferred or not).
pub fn named(state: &str, name: &str) -> Option<u64> {
    state.lines().find_map(|line| {
        let line = line.strip_prefix('+').unwrap_or(line);
        let (id, rest) = line.strip_prefix('[')?.split_once(']')?;
        let shown = rest.rsplit_once('>')?.1;
        (shown == name || shown.strip_prefix('~') == Some(name)).then(|| id.parse().ok()).flatten()
    })
}

/// The line of page text right before the first element line that contains `element`.
fn line_before<'a>(state: &'a str, element: &str) -> Option<&'a str> {
    let mut before = None;
    for line in state.lines() {
        let listed = line.starts_with('[') || line.starts_with("+[");
        if listed && line.contains(element) {
            return before;
        }
        before = (!listed).then_some(line);
    }
    None
}

/// Acts on `name`, or says done when the page does not show it: a model cannot act on
/// what it is not shown.
fn with(state: &str, name: &str, act: impl FnOnce(u64) -> Reply) -> Reply {
    match named(state, name) {
        Some(id) => act(id),
        None => done(&format!("The page shows no {name:?}")),
    }
}

/// Fills fields (name → value) and submits, or says done once the page says "Correct".
fn fill_and_submit(state: &str, fields: &[(&str, String)], submit: &str) -> Reply {
    if state.contains("Correct") {
        return done("The page says Correct");
    }
    let mut actions = Vec::new();
    for (name, value) in fields {
        match named(state, name) {
            Some(id) => actions.push(type_into(id, value)),
            None => return done(&format!("The page shows no field {name:?}")),
        }
    }
    with(state, submit, |id| {
        actions.push(click(id));
        reader::act("Fill in the answer and submit", Value::Array(actions))
    })
}

/// Fills the page's one unnamed text field with `value` and submits.
fn answer(state: &str, value: Option<String>) -> Reply {
    if state.contains("Correct") {
        return done("The page says Correct");
    }
    let (Some(value), Some(input)) = (value, id_of(state, "<input")) else {
        return done("The page does not show what it asks about");
    };
    with(state, "Submit", |submit| {
        reader::act("Answer and submit", json!([type_into(input, &value), click(submit)]))
    })
}

/// A task the page itself judges: once it says "Correct" the model reports `answer`; until
/// then `act` decides from the state.
fn until_correct(
    answer: &'static str,
    act: impl Fn(&str) -> Reply + Send + 'static,
) -> Box<dyn FnMut(&str) -> Reply + Send> {
    Box::new(move |state: &str| if state.contains("Correct") { done(answer) } else { act(state) })
}

/// The Navigator of a model that reads the state of fixture `page`.
pub fn navigator(page: &str) -> Box<dyn FnMut(&str) -> Reply + Send> {
    match page {
        "table.html" => Box::new(|state: &str| {
            let row = text_lines(state).into_iter().find(|l| l.starts_with("| Last name |"));
            let value =
                row.map(|r| r.trim_matches('|').split('|').nth(1).unwrap_or("").trim().into());
            answer(state, value)
        }),
        "paragraph.html" => Box::new(|state: &str| {
            let lines = text_lines(state);
            let asks = lines.iter().any(|l| l.contains("Find the 2nd word in the paragraph"));
            let paragraph = lines.iter().find(|l| l.starts_with("Quietly"));
            let word = paragraph.filter(|_| asks).and_then(|p| p.split_whitespace().nth(1));
            answer(state, word.map(str::to_owned))
        }),
        "paragraph-above.html" => Box::new(|state: &str| {
            let asks = text_lines(state).iter().any(|l| l.contains("6th word of the paragraph"));
            // The paragraph is the text standing right above the box.
            let paragraph = line_before(state, "<input").filter(|l| !l.starts_with('#'));
            let word = paragraph.filter(|_| asks).and_then(|p| p.split_whitespace().nth(5));
            answer(state, word.map(|w| w.trim_end_matches(['.', ',']).to_owned()))
        }),
        "code-above.html" => until_correct("The page says Correct", |state: &str| {
            let lines = text_lines(state);
            let below = lines.iter().skip_while(|l| !l.contains("Type the text below")).nth(1);
            let code = below.filter(|l| !l.trim().is_empty());
            let (Some(code), Some(input)) = (code, id_of(state, "<input")) else {
                return done("The page shows no text below its instruction");
            };
            // Typed already: submit once the box holds what the page still shows.
            let typed = [format!("value={code}>"), format!("value={code:?}>")];
            if state.lines().any(|l| l.contains("<input") && typed.iter().any(|t| l.contains(t))) {
                return with(state, "Submit", |id| reader::act("Submit", json!([click(id)])));
            }
            reader::act("Type the text", json!([type_into(input, code)]))
        }),
        "number-game.html" => {
            let mut bounds = (0, 9);
            Box::new(move |state: &str| {
                if state.contains("Correct! The number was") {
                    return done("Won");
                }
                for line in text_lines(state) {
                    let number = |rest: &str| rest.trim_end_matches('.').parse::<i32>().ok();
                    if let Some(g) = line.strip_prefix("The number is lower than ").and_then(number)
                    {
                        bounds.1 = bounds.1.min(g - 1);
                    }
                    if let Some(g) =
                        line.strip_prefix("The number is higher than ").and_then(number)
                    {
                        bounds.0 = bounds.0.max(g + 1);
                    }
                }
                let guess = (bounds.0 + bounds.1) / 2;
                let Some(input) = id_of(state, "<input type=number") else {
                    return done("No field to guess in");
                };
                with(state, "Submit", |submit| {
                    reader::act(
                        &format!("Guess {guess}"),
                        json!([type_into(input, &guess.to_string()), click(submit)]),
                    )
                })
            })
        }
        "form-table.html" => Box::new(|state: &str| {
            let fields = [("Last name", "Hopper".into()), ("City", "Arlington".into())];
            fill_and_submit(state, &fields, "Submit")
        }),
        "form-grid.html" => Box::new(|state: &str| {
            fill_and_submit(state, &[("Quantity", "42".into()), ("Colour", "Blue".into())], "Save")
        }),
        "datepicker.html" => until_correct("Date chosen", |state: &str| {
            if state.contains("value=11/15/2016") {
                return with(state, "Submit", |id| reader::act("Submit", json!([click(id)])));
            }
            let Some(prev) = named(state, "Prev") else {
                return with(state, "Date:", |id| {
                    reader::act("Open the calendar", json!([click(id)]))
                });
            };
            let month = text_lines(state).into_iter().find(|l| l.ends_with(" 2016")).unwrap_or("");
            match month {
                "November 2016" => {
                    with(state, "15", |id| reader::act("Pick the 15th", json!([click(id)])))
                }
                "December 2016" => reader::act("Go back a month", json!([click(prev)])),
                _ => done("The calendar shows no month I can read"),
            }
        }),
        "autocomplete.html" => until_correct("Airport entered", |state: &str| {
            if state.contains("value=\"Bowling Green, KY (BWG)\"") {
                return with(state, "Submit", |id| reader::act("Submit", json!([click(id)])));
            }
            if let Some(item) = named(state, "Bowling Green, KY (BWG)") {
                return reader::act("Pick the suggestion", json!([click(item)]));
            }
            if state.contains("value=Bo") {
                return done("No suggestions appeared");
            }
            with(state, "From:", |id| {
                reader::act("Type to get suggestions", json!([type_into(id, "Bo")]))
            })
        }),
        "dropdown.html" => until_correct("Colour chosen", |state: &str| {
            let open = state.contains(" scroll=");
            // Closed again and showing Green: chosen.
            if named(state, "Green").is_some() && !open {
                return with(state, "Submit", |id| reader::act("Submit", json!([click(id)])));
            }
            if let Some(green) = named(state, "Green") {
                return reader::act("Pick Green", json!([click(green)]));
            }
            // Open it, or scroll the open list to its hidden items.
            match state.lines().find(|l| l.contains(" scroll=")).and_then(|l| id_of(l, "scroll=")) {
                Some(list) => {
                    reader::act("Scroll the list", json!([{"action": "scroll", "id": list}]))
                }
                None => with(state, "Choose a colour", |id| {
                    reader::act("Open the dropdown", json!([click(id)]))
                }),
            }
        }),
        "checkboxes.html" => until_correct("Selected", |state: &str| {
            let mut actions: Vec<Value> = Vec::new();
            for line in state.lines().filter(|l| l.contains("<input type=checkbox")) {
                let want = line.ends_with(">Apple") || line.ends_with(">Cherry");
                let on = line.contains(" checked");
                if want != on {
                    actions.extend(id_of(line, "checkbox").map(click));
                }
            }
            with(state, "Submit", |id| {
                actions.push(click(id));
                reader::act("Set the boxes and submit", Value::Array(actions))
            })
        }),
        "consent.html" => until_correct("Agreed", |state: &str| {
            let (Some(agree), Some(go)) =
                (named(state, "I agree to the terms"), named(state, "Continue"))
            else {
                return done("The form is not in view");
            };
            reader::act("Agree and continue", json!([click(agree), click(go)]))
        }),
        "sortable.html" => until_correct("The steps are in order", |state: &str| {
            // The listed steps in page order: (id, its number).
            let steps: Vec<(u64, char)> = state
                .lines()
                .filter(|l| l.contains("draggable") && l.contains(">Step "))
                .filter_map(|l| Some((id_of(l, "<li")?, l.split("Step ").nth(1)?.chars().next()?)))
                .collect();
            let wanted = ['1', '2', '3', '4'];
            match (0..steps.len()).find(|&i| steps[i].1 != wanted[i]) {
                // Each drop puts the next step before the one standing in its place.
                Some(i) => match steps.iter().find(|(_, n)| *n == wanted[i]) {
                    Some((id, _)) => reader::act(
                        &format!("Move step {} up", wanted[i]),
                        json!([{"action": "drag", "id": id, "to": steps[i].0}]),
                    ),
                    None => done("A step is missing from the list"),
                },
                None if steps.len() == 4 => {
                    with(state, "Check", |id| reader::act("Check", json!([click(id)])))
                }
                None => done("The list does not show four steps"),
            }
        }),
        "kanban.html" => until_correct("The card is in Done", |state: &str| {
            with(state, "Fix the login bug", |card| {
                reader::act(
                    "Drag the card to the Done column",
                    json!([{"action": "drag", "id": card, "to_text": "Done"}]),
                )
            })
        }),
        "highlight.html" => until_correct("Highlighted", |state: &str| {
            let phrase = "solar panels on every roof";
            let shown =
                text_lines(state).iter().any(|l| l.contains(phrase) && l.contains("council"));
            if !shown {
                return done("The article does not show the phrase");
            }
            reader::act("Highlight the phrase", json!([{"action": "select_text", "text": phrase}]))
        }),
        "slider.html" => until_correct("Saved at 13", |state: &str| {
            let Some(line) = state.lines().find(|l| l.contains("role=slider")) else {
                return done("The page shows no slider");
            };
            let slider = id_of(line, "role=slider").expect("a listed slider");
            if line.contains("value=13 ") || line.contains("value=13>") {
                return with(state, "Save", |id| reader::act("Save", json!([click(id)])));
            }
            reader::act(
                "Set the volume",
                json!([{"action": "set_slider", "id": slider, "value": 13}]),
            )
        }),
        "hover-menu.html" => until_correct("Kettles opened", |state: &str| {
            // Deepest first: whatever the hovers have opened so far.
            if let Some(kettles) = named(state, "Kettles") {
                return reader::act("Open Kettles", json!([click(kettles)]));
            }
            if let Some(kitchen) = named(state, "Kitchen") {
                return reader::act(
                    "Open the Kitchen menu",
                    json!([{"action": "hover", "id": kitchen}]),
                );
            }
            with(state, "Products", |id| {
                reader::act("Open the Products menu", json!([{"action": "hover", "id": id}]))
            })
        }),
        "context-menu.html" => until_correct("Deleted", |state: &str| {
            if let Some(delete) = named(state, "Delete") {
                return reader::act("Delete", json!([click(delete)]));
            }
            with(state, "report.pdf", |id| {
                reader::act("Open its menu", json!([{"action": "right_click", "id": id}]))
            })
        }),
        "edit-cell.html" => until_correct("Bob is 42", |state: &str| {
            if let Some(field) = named(state, "Age of Bob") {
                return reader::act(
                    "Enter the new age",
                    json!([type_into(field, "42"), {"action": "send_keys", "keys": "Enter"}]),
                );
            }
            // Bob's row: `| Bob | [7] |`, the cell's id in the second column.
            let row = text_lines(state).into_iter().find(|l| l.starts_with("| Bob |"));
            let cell = row.and_then(|r| r.split('[').nth(1)).and_then(|r| r.split(']').next());
            match cell.and_then(|c| c.parse::<u64>().ok()) {
                Some(id) => {
                    reader::act("Edit the age", json!([{"action": "double_click", "id": id}]))
                }
                None => done("The table shows no cell for Bob's age"),
            }
        }),
        "paste.html" => until_correct("Confirmed", |state: &str| {
            let (Some(order), Some(confirm)) =
                (named(state, "Order number"), named(state, "Confirmation"))
            else {
                return done("The form is not in view");
            };
            with(state, "Confirm", |go| {
                reader::act(
                    "Copy, paste and confirm",
                    json!([{"action": "copy", "id": order}, {"action": "paste", "id": confirm}, click(go)]),
                )
            })
        }),
        other => panic!("no fixture task {other}"),
    }
}
