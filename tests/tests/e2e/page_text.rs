//! The agent reads the page as a person does. Each test runs a fixture task whose answer is
//! in what the page *says* (`e2e::tasks`): it checks that the page state the Navigator was
//! sent carries what a person sees, then that a model deciding from that prompt alone solved
//! the task, within Navigator calls + 2 model calls.

use e2e::agent::reader::text_lines;
use e2e::tasks::{self, named};

#[test]
fn a_table_lookup_reads_the_row_the_task_names() {
    let solved = tasks::solve_alone("table.html");
    let state = solved.state(0);
    for row in ["| Field | Value |", "| Last name | Lovelace |", "| Country | United Kingdom |"] {
        assert!(state.contains(row), "{row} missing from\n{state}");
    }
    assert!(state.contains("Enter the value of Last name into the text field"));
    // Icon-only controls: screen-reader text, else what the icon's class says (inferred).
    assert!(state.contains("<button>Clear answer\n"), "{state}");
    assert!(state.contains("<a href=#top>~Close\n"), "{state}");
    for hidden in ["Screen-reader only note", "Hidden sentence", "Decorative sentence"] {
        assert!(!state.contains(hidden), "{hidden} is not visible, yet in\n{state}");
    }
    solved.assert_solved();
}

#[test]
fn a_paragraph_question_is_answered_from_the_text() {
    let solved = tasks::solve_alone("paragraph.html");
    assert!(solved.state(0).contains("\nQuietly marmalade drifts over the harbour"));
    assert!(solved.state(0).contains("\n## Find the 2nd word in the paragraph"));
    solved.assert_solved();
}

#[test]
fn a_paragraph_right_above_a_box_stays_page_text_and_does_not_name_it() {
    let solved = tasks::solve_alone("paragraph-above.html");
    let state = solved.state(0);
    let paragraph = "Dolor varius amet tellus. Magna porta fusce.";
    assert!(text_lines(state).contains(&paragraph), "{paragraph} as a line of\n{state}");
    assert!(state.contains("<input value=\"\">\n"), "the box has no name:\n{state}");
    solved.assert_solved();
}

#[test]
fn a_code_above_a_box_is_page_text_and_stays_once_typed_into_it() {
    let solved = tasks::solve_alone("code-above.html");
    let code = "XK7-PQ2";
    let before = solved.state(0);
    assert!(text_lines(before).contains(&code), "the code as a line of\n{before}");
    assert!(before.contains("<input value=\"\">\n"), "the code names nothing:\n{before}");
    // What a person still sees stays, though the box now holds the same text.
    let typed = solved.state(1);
    assert!(typed.contains("<input value=XK7-PQ2>"), "{typed}");
    assert!(text_lines(typed).contains(&code), "the code is still a line of\n{typed}");
    solved.assert_solved();
}

#[test]
fn a_number_game_is_won_by_reading_the_feedback() {
    let solved = tasks::solve_alone("number-game.html");
    assert_eq!(solved.result, "won", "the feedback line says Correct");
    // The feedback line reached the model, and the change was reported as new text.
    assert!(solved.state(1).contains("\nThe number is "), "{}", solved.state(1));
    assert!(solved.prompts.iter().any(|p| p.contains("lines of new text")));
    assert!(solved.state(0).contains("min=0 max=9"), "{}", solved.state(0));
    assert!(solved.navigator_calls <= 5, "binary search over 0..9: {}", solved.navigator_calls);
}

#[test]
fn fields_in_a_table_layout_are_named_by_the_text_beside_them() {
    let solved = tasks::solve_alone("form-table.html");
    let state = solved.state(0);
    for field in ["~First name", "~Last name", "~City", "~Phone"] {
        assert!(state.contains(&format!("<input value=\"\">{field}\n")), "{field} in\n{state}");
    }
    solved.assert_solved();
}

#[test]
fn fields_in_a_grid_layout_are_named_by_the_text_beside_them() {
    let solved = tasks::solve_alone("form-grid.html");
    let state = solved.state(0);
    assert!(state.contains("<input value=Kettle>~Product\n"), "{state}");
    assert!(!text_lines(state).contains(&"Quantity"), "a label is said once:\n{state}");
    solved.assert_solved();
}

#[test]
fn a_datepicker_shows_its_month_and_icon_only_prev_next() {
    let solved = tasks::solve_alone("datepicker.html");
    let opened = solved.state(1);
    assert!(opened.contains("\nDecember 2016\n"), "the month title:\n{opened}");
    assert!(named(opened, "Prev").is_some() && named(opened, "Next").is_some(), "{opened}");
    assert!(opened.contains("| Su | Mo | Tu | We | Th | Fr | Sa |"), "{opened}");
    assert!(solved.state(2).contains("\nNovember 2016\n"), "{}", solved.state(2));
    solved.assert_solved();
}

#[test]
fn autocomplete_suggestions_that_come_later_are_each_clickable() {
    let solved = tasks::solve_alone("autocomplete.html");
    let after_typing = solved.state(1);
    for item in ["Bowling Green, KY (BWG)", "Boston, MA (BOS)", "Bozeman, MT (BZN)"] {
        assert!(named(after_typing, item).is_some(), "{item} as its own element:\n{after_typing}");
    }
    solved.assert_solved();
}

#[test]
fn a_styled_dropdown_lists_each_item_once_open() {
    let solved = tasks::solve_alone("dropdown.html");
    let closed = solved.state(0);
    assert!(closed.contains("<div pointer>Choose a colour\n"), "closed, items hidden:\n{closed}");
    let open = solved.state(1);
    for item in ["Red", "Orange", "Yellow"] {
        assert!(named(open, item).is_some(), "{item}:\n{open}");
    }
    assert!(named(open, "Choose a colour").is_some(), "the box keeps its own name:\n{open}");
    solved.assert_solved();
}

#[test]
fn a_checkbox_list_shows_each_state_and_is_set_in_one_step() {
    let solved = tasks::solve_alone("checkboxes.html");
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
    solved.assert_solved();
    assert_eq!(solved.navigator_calls, 2, "one step to act, one to say done");
}

#[test]
fn a_two_click_form_is_done_in_one_navigator_step() {
    let solved = tasks::solve_alone("consent.html");
    solved.assert_solved();
    assert_eq!(solved.navigator_calls, 2, "one step to act, one to say done");
}
