//! Agent actions in real Chromium, each through `debug.act`: the same `Hands::perform` the
//! Navigator uses, with ids taken from the page state the model would have read.

use e2e::browser::Tab;
use e2e::listed;
use serde_json::{Value, json};

fn message(outcome: &Value) -> &str {
    outcome["message"].as_str().unwrap_or_default()
}

#[test]
fn clicking_a_link_navigates_and_says_where_it_went() {
    let (_sites, mut browser, shop) = e2e::open_fixture("/shop/index.html");

    let outcome = browser.click_named(&shop, "Steel kettle");

    assert_eq!(outcome["ok"], true, "{outcome}");
    assert_eq!(outcome["page_changed"], true);
    assert!(message(&outcome).contains("navigated to") && message(&outcome).contains("sku=kettle"));
    assert_eq!(shop.page.eval("document.title"), "Fixture Shop — Steel kettle");

    let back = browser.act(&shop, json!({"action": "back"}));
    assert_eq!(back["ok"], true, "{back}");
    assert_eq!(shop.page.eval("document.title"), "Fixture Shop — Home");
}

#[test]
fn a_click_lands_on_the_element_and_its_effect_is_seen() {
    let (_sites, mut browser, product) = e2e::open_fixture("/shop/product.html?sku=grinder");

    let outcome = browser.click_named(&product, "Add to cart");

    assert_eq!(outcome["ok"], true, "{outcome}");
    assert_eq!(product.page.eval("document.getElementById('cart').textContent"), "Cart: 1 item");
    assert!(!message(&outcome).contains("nothing on the page changed"), "{outcome}");
    assert_eq!(outcome["page_changed"], false, "a new cart line leaves every id meaning the same");
}

#[test]
fn an_id_from_before_a_rerender_reports_gone_instead_of_hitting_another_element() {
    let (_sites, mut browser, spa) = e2e::open_fixture("/controls/spa.html");
    let alpha = browser.id_of(&spa, "Open Alpha");

    spa.page.eval("shuffle()"); // the app re-renders between observing and acting
    let outcome = browser.act(&spa, json!({"action": "click", "id": alpha}));

    assert_eq!(outcome["ok"], false);
    assert!(message(&outcome).contains("is gone"), "{outcome}");
    assert_eq!(outcome["stale"], true, "the plan was made on a page that changed");
    assert_eq!(spa.page.eval("document.getElementById('log').textContent"), "nothing yet");

    let fresh = browser.id_of(&spa, "Open Alpha");
    assert_ne!(fresh, alpha, "a new element gets a new id");
    browser.act(&spa, json!({"action": "click", "id": fresh}));
    assert_eq!(spa.page.eval("document.getElementById('log').textContent"), "opened Alpha");
}

#[test]
fn typing_replaces_the_value_and_checks_it_landed() {
    let (_sites, mut browser, shop) = e2e::open_fixture("/shop/index.html");
    shop.page.eval("document.querySelector('input[name=q]').value = 'old text'");

    let search = browser.id_of(&shop, "Search products");
    let outcome = browser.act(&shop, json!({"action": "type", "id": search, "text": "kettle"}));

    assert_eq!(outcome["ok"], true, "{outcome}");
    assert!(message(&outcome).contains("\"kettle\""), "{outcome}");
    assert_eq!(shop.page.eval("document.querySelector('input[name=q]').value"), "kettle");
}

#[test]
fn typing_works_in_contenteditable_and_in_shadow_dom() {
    let (sites, mut browser, widgets) = e2e::open_fixture("/controls/widgets.html");
    let editor = browser.page_state(&widgets)["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["editable"] == true)
        .map(|e| e["id"].clone())
        .expect("the editor is listed");
    let outcome =
        browser.act(&widgets, json!({"action": "type", "id": editor, "text": "Hello editor"}));
    assert_eq!(outcome["ok"], true, "{outcome}");
    assert_eq!(widgets.page.eval("document.querySelector('.editor').textContent"), "Hello editor");

    let shadow = browser.open_tab(&sites.url("/controls/shadow.html"));
    let nickname = browser.id_of(&shadow, "");
    let outcome = browser.act(&shadow, json!({"action": "type", "id": nickname, "text": "ada"}));
    assert_eq!(outcome["ok"], true, "{outcome}");
    let typed = "document.querySelector('user-card').shadowRoot.querySelector('input').value";
    assert_eq!(shadow.page.eval(typed), "ada");
}

#[test]
fn native_selects_and_aria_dropdowns_are_chosen_and_verified() {
    let (_sites, mut browser, widgets) = e2e::open_fixture("/controls/widgets.html");

    let size = browser.id_of(&widgets, "Size");
    let listed = browser.act(&widgets, json!({"action": "list_options", "id": size}));
    assert!(message(&listed).contains("2. Medium (selected)"), "{listed}");
    let chosen =
        browser.act(&widgets, json!({"action": "select_option", "id": size, "option": "Large"}));
    assert_eq!(chosen["ok"], true, "{chosen}");
    assert_eq!(widgets.page.eval("document.getElementById('size').value"), "Large");

    let colour = browser.id_of(&widgets, "Colour: choose");
    let listed = browser.act(&widgets, json!({"action": "list_options", "id": colour}));
    assert!(
        message(&listed).contains("3 options") && message(&listed).contains("Green"),
        "{listed}"
    );
    let chosen =
        browser.act(&widgets, json!({"action": "select_option", "id": colour, "option": "green"}));
    assert_eq!(chosen["ok"], true, "{chosen}");
    assert_eq!(widgets.page.eval("document.getElementById('colour-value').textContent"), "Green");

    let missing =
        browser.act(&widgets, json!({"action": "select_option", "id": size, "option": "XXL"}));
    assert_eq!(missing["ok"], false);
    assert!(message(&missing).contains("Small"), "the real options are named: {missing}");
}

#[test]
fn a_click_on_a_covered_element_names_the_cover() {
    let (_sites, mut browser, page) = e2e::open_fixture("/controls/modal.html");
    page.page.eval("document.querySelector('.overlay').style.display = 'none'");
    let behind = browser.id_of(&page, "Behind the modal 1");
    page.page.eval("document.querySelector('.overlay').style.display = 'flex'");

    let outcome = browser.act(&page, json!({"action": "click", "id": behind}));
    assert_eq!(outcome["ok"], false);
    assert!(message(&outcome).contains("covered by"), "{outcome}");

    let accept = browser.id_of(&page, "Accept cookies");
    assert_eq!(browser.act(&page, json!({"action": "click", "id": accept}))["ok"], true);
    let outcome = browser.act(&page, json!({"action": "click", "id": behind}));
    assert_eq!(outcome["ok"], true, "{outcome}");
}

#[test]
fn a_link_that_opens_a_new_tab_says_so_and_the_agent_can_switch_to_it() {
    let (_sites, mut browser, shop) = e2e::open_fixture("/shop/index.html");

    let outcome = browser.click_named(&shop, "Help (opens a new tab)");

    assert!(message(&outcome).contains("opened a new tab"), "{outcome}");
    let new_tab: i64 = message(&outcome)
        .split("new tab ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|id| id.parse().ok())
        .expect("the new tab's id");
    let switched = browser.act(&shop, json!({"action": "switch_tab", "tab_id": new_tab}));
    assert_eq!(switched["ok"], true, "{switched}");
    assert_eq!(switched["tab"], new_tab);
}

#[test]
fn scrolling_an_infinite_feed_loads_more_over_the_network() {
    let (_sites, mut browser, feed) = e2e::open_fixture("/controls/infinite.html");
    feed.page.wait_for("document.querySelectorAll('.post').length >= 5", "the first page");

    for _ in 0..3 {
        let outcome = browser.act(&feed, json!({"action": "scroll", "screens": 3}));
        assert_eq!(outcome["ok"], true, "{outcome}");
    }

    let posts = feed.page.eval("document.querySelectorAll('.post').length").as_u64().unwrap();
    assert!(posts >= 10, "scrolling loaded more posts: {posts}");
    let state = browser.page_state(&feed);
    assert!(!state["text"].as_str().unwrap().contains("Post 1\n"), "the top scrolled away");
}

#[test]
fn a_button_in_a_same_origin_frame_is_clicked_where_it_is() {
    let (_sites, mut browser, page) = e2e::open_fixture("/controls/frames.html");
    page.page.wait_for(
        "document.querySelector('iframe').contentDocument.getElementById('in-frame').textContent",
        "the frame's button",
    );

    let outcome = browser.click_named(&page, "Same-origin button");

    assert_eq!(outcome["ok"], true, "{outcome}");
    assert_eq!(page.page.eval("document.querySelector('iframe').contentDocument.title"), "clicked");
}

#[test]
fn a_button_in_a_cross_site_frame_is_clicked_through_the_top_page() {
    let (_sites, mut browser, page) = e2e::open_fixture("/controls/frames.html");
    let mut framed = None;
    for _ in 0..50 {
        let state = browser.page_state(&page);
        framed = listed(&state, "Cross-origin button").and_then(|e| e["id"].as_u64());
        if framed.is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let framed = framed.expect("the cross-site button is listed");

    let outcome = browser.act(&page, json!({"action": "click", "id": framed}));

    assert_eq!(outcome["ok"], true, "{outcome}");
    // The frame is cross-site, so only CDP can see its title: attach to it directly.
    let frame = browser.call("Target.getTargets", json!({})).unwrap()["targetInfos"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["type"] == "iframe" && t["url"].as_str().unwrap_or("").contains("Cross-origin"))
        .map(|t| t["targetId"].as_str().unwrap().to_owned())
        .expect("the cross-site frame's target");
    let frame = browser.attach(&frame);
    frame.wait_for("document.title === 'clicked'", "the framed button's click handler");
}

/// The input and change events `field` of `inputs.html` heard, in order.
fn heard(tab: &Tab, field: &str) -> Value {
    tab.page.eval(&format!("heard[{}]", Value::from(field)))
}

#[test]
fn every_input_type_takes_its_own_format_and_the_page_hears_the_change() {
    let (_sites, mut browser, form) = e2e::open_fixture("/controls/inputs.html");

    // (label, field id, what the model types, what the field then holds)
    let cases = [
        ("Departure date", "date", "12/25/2016", "2016-12-25"),
        ("Meeting time", "time", "2:30 PM", "14:30"),
        ("Reminder at", "reminder", "2016-12-25T09:15", "2016-12-25T09:15"),
        ("Billing month", "month", "2017-03", "2017-03"),
        ("Sprint week", "week", "2017-W09", "2017-W09"),
        ("Accent colour", "colour", "#1E90FF", "#1e90ff"),
        ("Volume", "volume", "7", "7"),
        ("Guests", "guests", "4", "4"),
        ("Email", "email", "ada@example.org", "ada@example.org"),
        ("Search the site", "query", "kettle", "kettle"),
        ("Notes", "notes", "Ring twice", "Ring twice"),
    ];
    for (label, field, typed, holds) in cases {
        let id = browser.id_of(&form, label);
        let outcome = browser.act(&form, json!({"action": "type", "id": id, "text": typed}));

        assert_eq!(outcome["ok"], true, "{label}: {outcome}");
        assert!(message(&outcome).contains(&format!("reads {holds:?}")), "{label}: {outcome}");
        let value = format!("document.getElementById({}).value", Value::from(field));
        assert_eq!(form.page.eval(&value), holds, "{label}");
        let events = heard(&form, field);
        assert!(
            events.as_array().is_some_and(|e| e.contains(&json!("input"))),
            "{label}: the page heard {events}"
        );
        if !["email", "query", "notes"].contains(&field) {
            assert_eq!(events, json!(["input", "change"]), "{label}: as its picker would");
        }
        assert_eq!(outcome["page_changed"], false, "{label}: {outcome}");
    }
}

#[test]
fn a_value_a_field_cannot_take_is_refused_with_the_format_it_takes() {
    let (_sites, mut browser, form) = e2e::open_fixture("/controls/inputs.html");

    let date = browser.id_of(&form, "Departure date");
    let outcome = browser.act(&form, json!({"action": "type", "id": date, "text": "next Friday"}));
    assert_eq!(outcome["ok"], false, "{outcome}");
    assert!(message(&outcome).contains("YYYY-MM-DD"), "names the format: {outcome}");
    assert_eq!(form.page.eval("document.getElementById('date').value"), "");
    assert_eq!(heard(&form, "date"), json!([]), "the field was not touched");

    let volume = browser.id_of(&form, "Volume");
    let outcome = browser.act(&form, json!({"action": "type", "id": volume, "text": "15"}));
    assert_eq!(outcome["ok"], false, "{outcome}");
    assert!(message(&outcome).contains("outside the slider's range, 0 to 10"), "{outcome}");
    assert_eq!(form.page.eval("document.getElementById('volume').value"), "5", "unchanged");

    let guests = browser.id_of(&form, "Guests");
    let outcome = browser.act(&form, json!({"action": "type", "id": guests, "text": "12"}));
    assert!(message(&outcome).contains("maximum, 9"), "{outcome}");

    // In the format, but outside the dates this field allows: the field itself says so.
    let checkin = browser.id_of(&form, "Check-in");
    let outcome =
        browser.act(&form, json!({"action": "type", "id": checkin, "text": "2025-02-01"}));
    assert_eq!(outcome["ok"], false, "{outcome}");
    assert!(message(&outcome).contains("maximum is 2024-12-31"), "{outcome}");
}

#[test]
fn a_react_style_controlled_input_keeps_the_value_set() {
    let (_sites, mut browser, form) = e2e::open_fixture("/controls/inputs.html");

    let delivery = browser.id_of(&form, "Delivery date");
    let outcome =
        browser.act(&form, json!({"action": "type", "id": delivery, "text": "March 3, 2025"}));

    assert_eq!(outcome["ok"], true, "{outcome}");
    assert_eq!(
        form.page.eval("document.getElementById('delivery-state').textContent"),
        "2025-03-03"
    );
    assert_eq!(form.page.eval("document.getElementById('delivery').value"), "2025-03-03");
}

#[test]
fn a_multiple_select_adds_and_removes_choices_and_lists_them_all() {
    let (_sites, mut browser, pizza) = e2e::open_fixture("/controls/multi-select.html");
    let toppings = browser.id_of(&pizza, "Toppings");
    let select =
        |option: &str| json!({"action": "select_option", "id": toppings, "option": option});

    let listed = browser.act(&pizza, json!({"action": "list_options", "id": toppings}));
    assert!(message(&listed).contains("several can be selected"), "{listed}");

    let olives = browser.act(&pizza, select("Olives"));
    assert_eq!(olives["ok"], true, "{olives}");
    // Above one already selected: the first selected value is no longer the one just chosen.
    let mushrooms = browser.act(&pizza, select("mushrooms"));
    assert_eq!(mushrooms["ok"], true, "{mushrooms}");
    assert!(
        message(&mushrooms).ends_with("selected now: \"Mushrooms\", \"Olives\""),
        "{mushrooms}"
    );
    assert_eq!(
        pizza.page.eval("document.getElementById('chosen').textContent"),
        "Mushrooms, Olives"
    );

    let mut deselect = select("Olives");
    deselect["deselect"] = json!(true);
    let removed = browser.act(&pizza, deselect);
    assert_eq!(removed["ok"], true, "{removed}");
    assert_eq!(
        message(&removed),
        format!("Deselected \"Olives\" in [{toppings}]; selected now: \"Mushrooms\"")
    );
    assert_eq!(pizza.page.eval("document.getElementById('chosen').textContent"), "Mushrooms");
    assert_eq!(pizza.page.eval("changes"), 3, "a change event each time, as for a person");
    for outcome in [olives, mushrooms, removed] {
        assert_eq!(outcome["page_changed"], false, "{outcome}");
    }
}

#[test]
fn an_aria_listbox_of_several_choices_toggles_only_what_is_asked() {
    let (_sites, mut browser, pizza) = e2e::open_fixture("/controls/multi-select.html");
    let sauces = browser.id_of(&pizza, "Sauces");
    let act = |option: &str, deselect: bool| json!({"action": "select_option", "id": sauces, "option": option, "deselect": deselect});
    let selected = "[...document.querySelectorAll('#sauces [aria-selected=true]')]\
        .map(o => o.textContent).join(', ')";

    for option in ["Pesto", "Garlic"] {
        let outcome = browser.act(&pizza, act(option, false));
        assert_eq!(outcome["ok"], true, "{outcome}");
    }
    let again = browser.act(&pizza, act("Pesto", false));
    assert!(message(&again).contains("already selected"), "not toggled off: {again}");
    assert_eq!(pizza.page.eval(selected), "Pesto, Garlic");

    let removed = browser.act(&pizza, act("pesto", true));
    assert_eq!(removed["ok"], true, "{removed}");
    assert!(message(&removed).ends_with("selected now: \"Garlic\""), "{removed}");
    assert_eq!(pizza.page.eval(selected), "Garlic");
}

#[test]
fn suggestions_that_open_after_typing_are_in_the_next_state() {
    let (_sites, mut browser, page) = e2e::open_fixture("/controls/autocomplete.html");

    let product = browser.id_of(&page, "Product");
    let typed = browser.act(&page, json!({"action": "type", "id": product, "text": "kett"}));
    assert_eq!(typed["ok"], true, "{typed}");
    let state = browser.page_state(&page);
    let text = state["text"].as_str().unwrap_or_default();
    for suggestion in ["Steel kettle", "Electric kettle", "Kettle descaler"] {
        assert!(text.contains(suggestion), "{suggestion:?} right after typing in\n{text}");
    }
    assert!(!text.contains("Teapot"), "only the matching suggestions");

    let city = browser.id_of(&page, "City");
    let typed = browser.act(&page, json!({"action": "type", "id": city, "text": "Par"}));
    assert_eq!(typed["ok"], true, "{typed}");
    let state = browser.page_state(&page);
    let text = state["text"].as_str().unwrap_or_default();
    assert!(text.contains("Paris") && text.contains("Parma"), "the listbox opened:\n{text}");
}

#[test]
fn a_click_that_only_changes_a_class_does_not_end_the_sequence() {
    let (_sites, mut browser, form) = e2e::open_fixture("/controls/inputs.html");

    let outcome = browser.click_named(&form, "Star this form");

    assert_eq!(outcome["ok"], true, "{outcome}");
    assert_eq!(form.page.eval("document.getElementById('star').className"), "on");
    assert_eq!(outcome["page_changed"], false, "{outcome}");
    assert_eq!(outcome["stale"], false, "{outcome}");
}
