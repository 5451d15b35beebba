use super::*;

fn scrub(text: &str) -> String {
    Anonymizer::new().text(text)
}

#[test]
fn phone_numbers_in_their_usual_forms_are_replaced() {
    for (text, expected) in [
        ("call +44 20 7946 0958 now", "call [phone 1] now"),
        ("call +14155552671.", "call [phone 1]."),
        ("+1 (415) 555-2671", "[phone 1]"),
        ("0049 30 1234567", "[phone 1]"),
        ("(415) 555-2671, 415-555-2671 or 415.555.2671", "[phone 1], [phone 1] or [phone 1]"),
        ("020 7946 0958", "[phone 1]"),
        ("tel: 06 12 34 56 78;", "tel: [phone 1];"),
        ("0151-12345678", "[phone 1]"),
        ("(030) 1234567", "[phone 1]"),
    ] {
        assert_eq!(scrub(text), expected, "{text}");
    }
}

#[test]
fn other_numbers_stay() {
    for text in [
        "Step 3 of 10",
        "25.99 € or $1,299.00 or 1 299,00 €",
        "on 2026-11-22 at 10:30, or 22.11.2026",
        "order 123456789 and 0612345678",
        "run-0123-4567-8901, v2.0.10, 10.0.0.1",
        "550e8400-e29b-41d4-a716-446655440000",
        "prices 10 20 30 40 50 60",
        "+5 points, -3 °C, 1 2 3 4 5 6 7 8 9",
        "ISBN 978-3-16-148410-0",
    ] {
        assert_eq!(scrub(text), text);
    }
}

#[test]
fn email_addresses_are_replaced_and_numbered_by_address() {
    let mut a = Anonymizer::new();
    assert_eq!(
        a.text("Write to Jane.Doe+shop@mail.example.co.uk. Or jane.doe+shop@MAIL.example.co.uk"),
        "Write to [email 1]. Or [email 1]"
    );
    assert_eq!(a.text("cc bob@example.org"), "cc [email 2]", "numbering carries on");
    for text in ["@mention", "a @ b", "user@localhost", "x@y.1"] {
        assert_eq!(scrub(text), text);
    }
}

#[test]
fn urls_keep_host_and_path_only() {
    for (text, expected) in [
        (
            "https://user:pw@shop.example.com:8443/a/b?q=kettle&sid=1#frag",
            "https://shop.example.com:8443/a/b",
        ),
        (
            "See HTTP://Shop.test/s/sess_9f8e7d6c5b4a3928/c?x=1.",
            "See HTTP://Shop.test/s/[token]/c.",
        ),
        (
            "(https://x.test/reset/eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0)",
            "(https://x.test/reset/[token])",
        ),
        // Words, numbers and UUIDs in a path are not tokens.
        (
            "https://shop.test/p/acme-super-kettle-2000/123456789/550e8400-e29b-41d4-a716-446655440000",
            "https://shop.test/p/acme-super-kettle-2000/123456789/550e8400-e29b-41d4-a716-446655440000",
        ),
        ("about:blank and httpx://a?b", "about:blank and httpx://a?b"),
        ("Go to WWW.shop.test/reset?token=abc#x, then", "Go to WWW.shop.test/reset, then"),
        ("awww.nope?x and a.www.b?c", "awww.nope?x and a.www.b?c"),
    ] {
        assert_eq!(scrub(text), expected, "{text}");
    }
}

#[test]
fn known_people_are_replaced_as_whole_words_in_any_case() {
    let mut a = Anonymizer::new();
    a.know("alice.annotator");
    a.know("Ann Lee");
    a.know("Ann");
    a.know("al");
    assert_eq!(
        a.text("Alice.Annotator asked ann lee; Ann too, not Annabel, al or malice.annotator2"),
        "[person 1] asked [person 2]; [person 3] too, not Annabel, al or malice.annotator2"
    );
}

#[test]
fn keys_that_name_people_or_times_are_recognised() {
    for key in [
        "createdBy",
        "created_by",
        "userId",
        "user_id",
        "username",
        "reviewerEmail",
        "phone",
        "annotator",
        "owner",
        "flaggedAt",
        "created_at",
        "timestamp",
    ] {
        assert!(personal_key(key), "{key}");
    }
    for key in ["description", "source", "usage", "type", "status", "Abstract", "format"] {
        assert!(!personal_key(key), "{key}");
    }
}

#[test]
fn names_match_in_any_case_beyond_ascii_and_longest_first() {
    let mut a = Anonymizer::new();
    a.know("Zoë Ångström");
    a.know("Zoë");
    assert_eq!(
        a.text("ZOË ÅNGSTRÖM, zoë, Zoëlla and ångström"),
        "[person 1], [person 2], Zoëlla and ångström"
    );
}

#[test]
fn the_engine_is_nobody_and_its_secret_mask_stays() {
    let run = Run { created_by: "agent".into(), ..Run::default() };
    let step = Step {
        last_edited_by: "agent".into(),
        action: crate::record::StepAction {
            kind: "type".into(),
            target: "Password".into(),
            value: Some(SECRET.into()),
        },
        actions: vec![serde_json::json!({"action": {"action": "type", "id": 1, "text": "secret"}})],
        ..Step::default()
    };
    let mut a = Anonymizer::new();
    a.learn(&run, &[step]);
    assert_eq!(
        a.text("The agent typed [secret]; the word secret is typed text here."),
        "The agent typed [secret]; the word [typed text] is typed text here."
    );
}

#[test]
fn the_navigators_notes_are_anonymized_like_the_thoughts() {
    let run = Run { id: "r".into(), created_by: "Alice Smith".into(), ..Run::default() };
    let mut steps = vec![Step {
        navigator: Some(crate::record::NavigatorNotes {
            memory: "Alice Smith's address is alice@example.com".into(),
            ..Default::default()
        }),
        ..Step::default()
    }];
    let mut a = Anonymizer::new();
    a.learn(&run, &steps);
    a.apply(&mut run.clone(), &mut steps);
    let memory = &steps[0].navigator.as_ref().unwrap().memory;
    assert!(!memory.contains("alice@example.com") && !memory.contains("Alice"), "{memory}");
}
