//! The agent's hands beyond clicking and typing: drag, select text, set a slider, hover
//! menus, right- and double-clicks, copy and paste. Each test runs a fixture task
//! (`e2e::tasks`) with a model that decides from its prompt alone; the page itself judges
//! the result ("Correct"), so the events a person's hand makes must have reached it.

use e2e::tasks::{self, Solved};

fn solve(page: &str) -> Solved {
    let solved = tasks::solve_alone(page);
    solved.assert_solved();
    solved
}

#[test]
fn a_sortable_list_is_put_in_order_by_dragging() {
    let solved = solve("sortable.html");
    // The items were listed as things to drag, so the model could name them.
    assert!(solved.state(0).contains(" draggable>Step 3: Pour the water"), "{}", solved.state(0));
    solved.assert_said(&["Dragged ["]);
}

#[test]
fn a_kanban_card_is_dragged_onto_another_column_by_its_heading() {
    let solved = solve("kanban.html");
    solved.assert_said(&["onto \"Done\""]);
}

#[test]
fn a_phrase_is_highlighted_with_the_mouse() {
    let solved = solve("highlight.html");
    solved.assert_said(&["Selected \"solar panels on every roof\""]);
}

#[test]
fn a_custom_slider_is_set_to_a_value_and_the_page_shows_it() {
    let solved = solve("slider.html");
    // The state shows the slider's value as a person reads it off the widget, before and after.
    assert!(solved.state(0).contains("value=5"), "{}", solved.state(0));
    solved.assert_said(&["Moved slider [", "it shows 13"]);
    let last = solved.state(solved.navigator_calls - 1);
    assert!(last.contains("Volume: 13") && last.contains("value=13"), "{last}");
}

#[test]
fn a_two_level_hover_menu_stays_open_for_the_click() {
    let solved = solve("hover-menu.html");
    // Kettles appeared only once both menus were open under the pointer.
    assert!(!solved.state(0).contains(">Kettles"), "{}", solved.state(0));
    assert!(solved.navigator_calls >= 3, "hover, hover, click");
}

#[test]
fn a_context_menu_item_is_chosen_after_a_right_click() {
    let solved = solve("context-menu.html");
    solved.assert_said(&["Right-clicked ["]);
}

#[test]
fn a_table_cell_is_edited_after_a_double_click() {
    let solved = solve("edit-cell.html");
    solved.assert_said(&["Double-clicked ["]);
}

#[test]
fn a_value_is_copied_and_pasted_between_fields_with_clipboard_events() {
    // The page accepts only a paste whose clipboard data holds the order number.
    let solved = solve("paste.html");
    solved.assert_said(&["Copied \"ORD-58213-KX\""]);
}
