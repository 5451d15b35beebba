//! The agent reads the page as a person does. Each test opens a fixture page whose task needs
//! what the page *says* (a table, a paragraph, feedback, labels that are plain text, a
//! datepicker's month, a list's items), checks that the page state carries it, and then has
//! the real worker solve the task with a model that decides from its prompt alone.

use std::sync::{Arc, Mutex};

use e2e::agent::reader::{self, Asker, approve, id_of, page_state, text_lines};
use e2e::agent::settings;
use e2e::browser::{Browser, Tab};
use e2e::fixtures::FixtureSites;
use e2e::llm::{Reply, ScriptedLlm};
use serde_json::{Value, json};

/// What a solved task left behind.
struct Solved {
    /// Every prompt the model was sent, in order.
    prompts: Vec<String>,
    navigator_calls: usize,
    result: String,
}

impl Solved {
    fn model_calls(&self) -> usize {
        self.prompts.len()
    }

    /// The page state of the `n`th Navigator call.
    fn state(&self, n: usize) -> &str {
        let prompt = self
            .prompts
            .iter()
            .filter(|p| reader::asker(p) == Asker::Navigator)
            .nth(n)
            .expect("that many Navigator calls");
        page_state(prompt)
    }
}

/// Runs `task` on fixture `page` with a model whose Navigator answers `navigate(state)`; the
/// Planner plans once and the ThinkingAgent approves a claim of done.
fn solve(
    page: &str,
    task: &str,
    mut navigate: impl FnMut(&str) -> Reply + Send + 'static,
) -> (Solved, Browser, Tab, FixtureSites) {
    let sites = FixtureSites::serve();
    let mut browser = Browser::launch();
    let tab = browser.open_tab(&sites.url(&format!("/tasks/{page}")));
    let prompts = Arc::new(Mutex::new(Vec::new()));
    let seen = prompts.clone();
    let llm = ScriptedLlm::responding(move |prompt| {
        seen.lock().unwrap().push(prompt.to_owned());
        match reader::asker(prompt) {
            Asker::Planner => reader::plan("1. Read the page\n2. Fill in what it asks\n3. Submit"),
            Asker::Navigator => navigate(page_state(prompt)),
            Asker::Thinking => approve("Done as the page asked."),
        }
    });
    browser.configure_agent(settings(llm.base_url()));
    let started = browser.agent_request(json!({"type": "start_task", "tab_id": tab.id, "task": task}));
    assert_eq!(started["type"], "done", "{started}");
    browser.wait_for_task("done");
    let prompts = prompts.lock().unwrap().clone();
    let navigator_calls = prompts.iter().filter(|p| reader::asker(p) == Asker::Navigator).count();
    let result = tab.page.eval("document.getElementById('result')?.textContent ?? ''");
    let result = result.as_str().unwrap_or_default().to_owned();
    (Solved { prompts, navigator_calls, result }, browser, tab, sites)
}

fn done(text: &str) -> Reply {
    reader::act("Report", json!([{"action": "done", "text": text}]))
}

fn click(id: u64) -> Value {
    json!({"action": "click", "id": id})
}

fn type_into(id: u64, text: &str) -> Value {
    json!({"action": "type", "id": id, "text": text})
}

/// The element line of `state` whose name is exactly `name` (inferred or not).
fn named(state: &str, name: &str) -> Option<u64> {
    state.lines().find_map(|line| {
        let line = line.strip_prefix('+').unwrap_or(line);
        let (id, rest) = line.strip_prefix('[')?.split_once(']')?;
        let shown = rest.rsplit_once('>')?.1;
        (shown == name || shown.strip_prefix('~') == Some(name)).then(|| id.parse().ok()).flatten()
    })
}

fn must(state: &str, name: &str) -> u64 {
    named(state, name).unwrap_or_else(|| panic!("no element named {name:?} in\n{state}"))
}

/// A step that fills fields and submits, or says done once the page says "Correct".
fn fill_and_submit(state: &str, fields: &[(&str, &str)], submit: &str) -> Reply {
    if state.contains("Correct") {
        return done("The page says Correct");
    }
    let mut actions: Vec<Value> = fields.iter().map(|(n, v)| type_into(must(state, n), v)).collect();
    actions.push(click(must(state, submit)));
    reader::act("Fill in the answer and submit", Value::Array(actions))
}

fn assert_solved(solved: &Solved) {
    assert_eq!(solved.result, "Correct", "the page did not accept the answer");
    assert!(
        solved.model_calls() <= solved.navigator_calls + 2,
        "{} model calls for {} Navigator calls",
        solved.model_calls(),
        solved.navigator_calls
    );
}

#[test]
fn a_table_lookup_reads_the_row_the_task_names() {
    let (solved, ..) =
        solve("table.html", "Do what the page asks.", |state| {
            // The model reads the value off the row, as a person would.
            let row = text_lines(state).into_iter().find(|l| l.starts_with("| Last name |"));
            let Some(row) = row else { return done("No Last name row in view") };
            let value = row.trim_matches('|').split('|').nth(1).unwrap_or("").trim().to_owned();
            let input = id_of(state, "<input").expect("the answer field");
            fill_and_submit(state, &[], "Submit").pipe_if_unsolved(input, &value)
        });
    let state = solved.state(0);
    for row in ["| Field | Value |", "| Last name | Lovelace |", "| Country | United Kingdom |"] {
        assert!(state.contains(row), "{row} missing from\n{state}");
    }
    assert!(state.contains("Enter the value of Last name into the text field"));
    for hidden in ["Screen-reader only note", "Hidden sentence", "Decorative sentence"] {
        assert!(!state.contains(hidden), "{hidden} is not visible, yet in\n{state}");
    }
    assert_solved(&solved);
}

/// Fills `input` before submitting, unless the step already says done.
trait PipeIfUnsolved {
    fn pipe_if_unsolved(self, input: u64, value: &str) -> Reply;
}

impl PipeIfUnsolved for Reply {
    fn pipe_if_unsolved(self, input: u64, value: &str) -> Reply {
        match self {
            Reply::Json(mut answer) if answer["actions"][0]["action"] == "click" => {
                let actions = answer["actions"].as_array_mut().expect("actions");
                actions.insert(0, type_into(input, value));
                Reply::Json(answer)
            }
            other => other,
        }
    }
}

#[test]
fn a_paragraph_question_is_answered_from_the_text() {
    let (solved, ..) = solve("paragraph.html", "Do what the page asks.", |state| {
        let lines = text_lines(state);
        let asks = lines.iter().any(|l| l.starts_with("## Find the 2nd word in the paragraph"));
        let paragraph = lines.iter().find(|l| l.starts_with("Quietly"));
        let (true, Some(paragraph)) = (asks, paragraph) else { return done("Nothing to read") };
        let word = paragraph.split_whitespace().nth(1).unwrap_or("").to_owned();
        let input = id_of(state, "<input").expect("the answer field");
        fill_and_submit(state, &[], "Submit").pipe_if_unsolved(input, &word)
    });
    assert!(solved.state(0).contains("\nQuietly marmalade drifts over the harbour"));
    assert_solved(&solved);
}

#[test]
fn a_number_game_is_won_by_reading_the_feedback() {
    let bounds = Arc::new(Mutex::new((0, 9)));
    let (solved, _browser, tab, _sites) = solve("number-game.html", "Win the number game.", {
        let bounds = bounds.clone();
        move |state| {
            if state.contains("Correct! The number was") {
                return done("Won");
            }
            let mut b = bounds.lock().unwrap();
            for line in text_lines(state) {
                let number = |rest: &str| rest.trim_end_matches('.').parse::<i32>().ok();
                if let Some(g) = line.strip_prefix("The number is lower than ").and_then(number) {
                    b.1 = b.1.min(g - 1);
                }
                if let Some(g) = line.strip_prefix("The number is higher than ").and_then(number) {
                    b.0 = b.0.max(g + 1);
                }
            }
            let guess = (b.0 + b.1) / 2;
            let input = id_of(state, "<input type=number").expect("the guess field");
            reader::act(
                &format!("Guess {guess}"),
                json!([type_into(input, &guess.to_string()), click(must(state, "Submit"))]),
            )
        }
    });
    let feedback = tab.page.eval("document.getElementById('feedback').textContent");
    assert_eq!(feedback, "Correct! The number was 3.");
    // The feedback line reached the model: a later state carries it.
    assert!(solved.prompts.iter().any(|p| page_state(p).contains("The number is ")));
    assert!(solved.state(0).contains("min=0 max=9"), "{}", solved.state(0));
    assert!(solved.navigator_calls <= 5, "binary search over 0..9: {}", solved.navigator_calls);
}

#[test]
fn fields_in_a_table_layout_are_named_by_the_text_beside_them() {
    let (solved, ..) = solve("form-table.html", "Do what the page asks.", |state| {
        fill_and_submit(state, &[("Last name", "Hopper"), ("City", "Arlington")], "Submit")
    });
    let state = solved.state(0);
    for field in ["~First name", "~Last name", "~City", "~Phone"] {
        assert!(state.contains(&format!("<input value=\"\">{field}\n")), "{field} in\n{state}");
    }
    assert_solved(&solved);
}

#[test]
fn fields_in_a_grid_layout_are_named_by_the_text_beside_them() {
    let (solved, ..) = solve("form-grid.html", "Do what the page asks.", |state| {
        fill_and_submit(state, &[("Quantity", "42"), ("Colour", "Blue")], "Save")
    });
    let state = solved.state(0);
    assert!(state.contains("<input value=Kettle>~Product\n"), "{state}");
    assert!(!text_lines(state).contains(&"Quantity"), "a label is said once:\n{state}");
    assert_solved(&solved);
}

#[test]
fn a_datepicker_shows_its_month_and_icon_only_prev_next() {
    let (solved, ..) = solve("datepicker.html", "Do what the page asks.", |state| {
        if state.contains("Correct") {
            return done("Date chosen");
        }
        if state.contains("value=11/15/2016") {
            return reader::act("Submit", json!([click(must(state, "Submit"))]));
        }
        let Some(prev) = named(state, "Prev") else {
            return reader::act("Open the calendar", json!([click(must(state, "Date:"))]));
        };
        let month = text_lines(state).into_iter().find(|l| l.ends_with(" 2016")).unwrap_or("");
        if month == "November 2016" {
            return reader::act("Pick the 15th", json!([click(must(state, "15"))]));
        }
        reader::act("Go back a month", json!([click(prev)]))
    });
    let opened = solved.state(1);
    assert!(opened.contains("\nDecember 2016\n"), "the month title:\n{opened}");
    assert!(named(opened, "Next").is_some(), "Next:\n{opened}");
    assert!(opened.contains("| Su | Mo | Tu | We | Th | Fr | Sa |"), "{opened}");
    assert!(solved.prompts.iter().any(|p| page_state(p).contains("\nNovember 2016\n")));
    assert_solved(&solved);
}

#[test]
fn autocomplete_suggestions_that_come_later_are_each_clickable() {
    let (solved, ..) = solve("autocomplete.html", "Do what the page asks.", |state| {
        if state.contains("Correct") {
            return done("Airport entered");
        }
        if state.contains("value=\"Bowling Green, KY (BWG)\"") {
            return reader::act("Submit", json!([click(must(state, "Submit"))]));
        }
        if let Some(item) = named(state, "Bowling Green, KY (BWG)") {
            return reader::act("Pick the suggestion", json!([click(item)]));
        }
        reader::act("Type to get suggestions", json!([type_into(must(state, "From:"), "Bo")]))
    });
    let after_typing = solved.state(1);
    for item in ["Bowling Green, KY (BWG)", "Boston, MA (BOS)", "Bozeman, MT (BZN)"] {
        assert!(named(after_typing, item).is_some(), "{item} as its own element:\n{after_typing}");
    }
    assert_solved(&solved);
}

#[test]
fn a_styled_dropdown_lists_each_item_once_open() {
    let (solved, ..) = solve("dropdown.html", "Do what the page asks.", |state| {
        if state.contains("Correct") {
            return done("Colour chosen");
        }
        // Closed again and showing Green: chosen.
        if named(state, "Green").is_some() && !state.contains(" scroll=") {
            return reader::act("Submit", json!([click(must(state, "Submit"))]));
        }
        if let Some(green) = named(state, "Green") {
            return reader::act("Pick Green", json!([click(green)]));
        }
        // Open, or scroll the open list to its hidden items.
        match state.lines().find(|l| l.contains(" scroll=")).and_then(|l| id_of(l, "scroll=")) {
            Some(list) => reader::act("Scroll the list", json!([{"action": "scroll", "id": list}])),
            None => reader::act("Open the dropdown", json!([click(must(state, "Choose a colour"))])),
        }
    });
    let closed = solved.state(0);
    assert!(closed.contains("<div pointer>Choose a colour\n"), "closed, items hidden:\n{closed}");
    let open = solved.state(1);
    for item in ["Red", "Orange", "Yellow"] {
        assert!(named(open, item).is_some(), "{item}:\n{open}");
    }
    assert_solved(&solved);
}

#[test]
fn a_checkbox_list_shows_each_state_and_is_set_in_one_step() {
    let (solved, ..) = solve("checkboxes.html", "Do what the page asks.", |state| {
        if state.contains("Correct") {
            return done("Selected");
        }
        let mut actions: Vec<Value> = Vec::new();
        for line in state.lines().filter(|l| l.contains("<input type=checkbox")) {
            let want = line.ends_with(">Apple") || line.ends_with(">Cherry");
            let on = line.contains(" checked");
            if want != on {
                actions.push(click(id_of(line, "checkbox").expect("an id")));
            }
        }
        actions.push(click(must(state, "Submit")));
        reader::act("Set the boxes and submit", Value::Array(actions))
    });
    let state = solved.state(0);
    for line in [
        "<input type=checkbox unchecked>Apple",
        "<input type=checkbox checked>Banana",
        "<input type=checkbox checked>Cherry",
        "<input type=checkbox unchecked>~Date",
        "<input type=checkbox mixed>Elderberry",
    ] {
        assert!(state.contains(line), "{line} in\n{state}");
    }
    assert_solved(&solved);
    assert_eq!(solved.navigator_calls, 2, "one step to act, one to say done");
}

#[test]
fn a_two_click_form_is_done_in_one_navigator_step() {
    let (solved, ..) = solve("consent.html", "Do what the page asks.", |state| {
        if state.contains("Correct") {
            return done("Agreed");
        }
        reader::act(
            "Agree and continue",
            json!([click(must(state, "I agree to the terms")), click(must(state, "Continue"))]),
        )
    });
    assert_solved(&solved);
    assert_eq!(solved.navigator_calls, 2, "one step to act, one to say done");
}
