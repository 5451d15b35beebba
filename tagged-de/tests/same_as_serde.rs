//! Each enum is declared twice, once read by serde's derive and once by ours, and both read
//! the same inputs: what serde accepts ours accepts with the same value, and what serde
//! refuses ours refuses.

use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, PartialEq, Deserialize)]
struct Inner {
    a: u32,
    #[serde(default)]
    b: Option<String>,
}

fn three() -> u32 {
    3
}

/// Declares an item twice: `$serde` read by serde's derive, `$ours` by the derive named.
macro_rules! twins {
    ($item:ident $derive:ident $(+ $more:ident)*: $serde:ident, $ours:ident, [$($attr:meta),*], { $($body:tt)* }) => {
        // A variant only ever read (or never read) is not constructed.
        #[allow(dead_code)]
        #[derive(Debug, PartialEq, $($more,)* Deserialize)]
        #[serde($($attr),*)]
        $item $serde { $($body)* }

        #[allow(dead_code)]
        #[derive(Debug, PartialEq, $($more,)* tagged_de::$derive)]
        #[serde($($attr),*)]
        $item $ours { $($body)* }
    };
}

twins!(enum TaggedDeserialize: SerdeEvent, OurEvent, [tag = "type", rename_all = "snake_case"], {
    Hello,
    PageState { id: u32, #[serde(default)] text: String, #[serde(default = "three")] tries: u32 },
    #[serde(rename = "debug.act")]
    Act { #[serde(rename = "tabId")] tab_id: i32 },
    #[serde(alias = "older_name")]
    Wrapped(Inner),
    URLFetched { url: String },
});

twins!(enum TaggedDeserialize: SerdeNarrow, OurNarrow, [tag = "kind", rename_all = "camelCase"], {
    FirstOne { n: u32 },
    #[serde(skip_deserializing)]
    NotRead { n: u32 },
    #[serde(other)]
    Other,
});

twins!(enum TaggedDeserialize: SerdeStrict, OurStrict, [tag = "op", deny_unknown_fields], {
    Move { from: u32, to: u32 },
});

fn same<S, O>(inputs: &[Value], show: impl Fn(&S) -> String, show_ours: impl Fn(&O) -> String)
where
    S: for<'de> Deserialize<'de>,
    O: for<'de> Deserialize<'de>,
{
    for input in inputs {
        let theirs = serde_json::from_value::<S>(input.clone());
        let ours = serde_json::from_value::<O>(input.clone());
        match (&theirs, &ours) {
            (Ok(t), Ok(o)) => assert_eq!(show(t), show_ours(o), "{input}"),
            (Err(_), Err(_)) => {}
            _ => panic!("{input}: serde {:?}, ours {:?}", theirs.is_ok(), ours.is_ok()),
        }
        // From text too, as the pages read it.
        let text = input.to_string();
        assert_eq!(
            serde_json::from_str::<S>(&text).is_ok(),
            serde_json::from_str::<O>(&text).is_ok(),
            "{text}"
        );
    }
}

#[test]
fn reads_what_serde_reads_and_refuses_what_it_refuses() {
    let events = [
        json!({"type": "hello"}),
        json!({"type": "hello", "extra": 1}),
        json!({"type": "page_state", "id": 7}),
        json!({"id": 7, "text": "x", "type": "page_state", "tries": 1}),
        json!({"type": "page_state"}),
        json!({"type": "page_state", "id": "seven"}),
        json!({"type": "debug.act", "tabId": 4}),
        json!({"type": "act", "tabId": 4}),
        json!({"type": "wrapped", "a": 1}),
        json!({"type": "older_name", "a": 1, "b": "z"}),
        json!({"type": "wrapped"}),
        json!({"type": "u_r_l_fetched", "url": "https://example.com"}),
        json!({"type": "nothing"}),
        json!({"type": 3}),
        json!({"id": 1}),
        json!("hello"),
        json!([1, 2]),
        json!(null),
    ];
    same::<SerdeEvent, OurEvent>(&events, |e| format!("{e:?}"), |e| format!("{e:?}"));

    let narrow = [
        json!({"kind": "firstOne", "n": 1}),
        json!({"kind": "first_one", "n": 1}),
        json!({"kind": "anything", "n": 1}),
        json!({"kind": "firstOne"}),
        json!({"kind": "notRead", "n": 1}),
    ];
    same::<SerdeNarrow, OurNarrow>(&narrow, |e| format!("{e:?}"), |e| format!("{e:?}"));

    let strict = [
        json!({"op": "Move", "from": 1, "to": 2}),
        json!({"op": "Move", "from": 1, "to": 2, "by": 3}),
        json!({"op": "move", "from": 1, "to": 2}),
    ];
    same::<SerdeStrict, OurStrict>(&strict, |e| format!("{e:?}"), |e| format!("{e:?}"));
}

#[test]
fn errors_name_the_tag_and_the_variants() {
    let missing = serde_json::from_value::<OurEvent>(json!({"id": 1})).unwrap_err().to_string();
    assert_eq!(missing, "missing field `type`");
    let unknown = serde_json::from_value::<OurEvent>(json!({"type": "nothing"})).unwrap_err();
    assert!(
        unknown.to_string().starts_with("unknown variant `nothing`, expected one of"),
        "{unknown}"
    );
    let field = serde_json::from_value::<OurEvent>(json!({"type": "page_state"})).unwrap_err();
    assert_eq!(field.to_string(), "missing field `id`");
}

fn yes() -> bool {
    true
}

twins!(struct FieldsDeserialize: SerdeRun, OurRun, [rename_all = "camelCase"], {
    run_id: String,
    #[serde(default)]
    steps: Vec<Inner>,
    note: Option<String>,
    #[serde(default = "yes")]
    shown: bool,
    #[serde(rename = "type", alias = "kind")]
    kind_of: String,
    #[serde(skip)]
    cache: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    quality: Option<u8>,
});

twins!(struct FieldsDeserialize + Default: SerdeLoose, OurLoose, [default], {
    a: u32,
    b: String,
});

twins!(struct FieldsDeserialize: SerdeTight, OurTight, [deny_unknown_fields], {
    a: u32,
});

/// A struct's Debug without its name, which differs between the twins.
fn fields(value: &impl std::fmt::Debug) -> String {
    let text = format!("{value:?}");
    text.split_once(' ').map_or(text.clone(), |(_, rest)| rest.to_owned())
}

#[test]
fn structs_read_what_serde_reads_and_refuse_what_it_refuses() {
    let runs = [
        json!({"runId": "r1", "type": "task"}),
        json!({"runId": "r1", "kind": "task", "steps": [{"a": 1}], "note": null, "quality": 80}),
        json!({"runId": "r1", "type": "task", "shown": false, "cache": 9, "other": [1]}),
        json!({"run_id": "r1", "type": "task"}),
        json!({"runId": "r1"}),
        json!({"runId": 5, "type": "task"}),
        json!({"runId": "r1", "type": "task", "steps": null}),
        json!({"runId": "r1", "type": "task", "quality": 300}),
        json!("r1"),
        json!(null),
    ];
    same::<SerdeRun, OurRun>(&runs, fields, fields);
    let loose = [json!({}), json!({"a": 2}), json!({"b": "x", "c": 1}), json!({"a": "2"})];
    same::<SerdeLoose, OurLoose>(&loose, fields, fields);
    let tight = [json!({"a": 1}), json!({"a": 1, "b": 2}), json!({})];
    same::<SerdeTight, OurTight>(&tight, fields, fields);
    let missing = serde_json::from_value::<OurRun>(json!({"runId": "r"})).unwrap_err();
    assert_eq!(missing.to_string(), "missing field `type`");
}

twins!(enum UnitDeserialize: SerdeStatus, OurStatus, [rename_all = "snake_case"], {
    InReview,
    #[serde(rename = "ok")]
    Approved,
    #[serde(alias = "gone")]
    Deleted,
});

twins!(enum UnitDeserialize: SerdeKind, OurKind, [rename_all = "lowercase"], {
    Anthropic,
    #[serde(other)]
    Unknown,
});

#[test]
fn unit_enums_read_what_serde_reads_and_refuse_what_it_refuses() {
    let statuses = [
        json!("in_review"),
        json!("ok"),
        json!("approved"),
        json!("gone"),
        json!("deleted"),
        json!("InReview"),
        json!(3),
        json!(null),
    ];
    same::<SerdeStatus, OurStatus>(&statuses, |e| format!("{e:?}"), |e| format!("{e:?}"));
    let kinds = [json!("anthropic"), json!("mistral"), json!(1)];
    same::<SerdeKind, OurKind>(&kinds, |e| format!("{e:?}"), |e| format!("{e:?}"));
    let unknown = serde_json::from_value::<OurStatus>(json!("lost")).unwrap_err().to_string();
    assert!(unknown.starts_with("unknown variant `lost`, expected one of"), "{unknown}");
}

#[derive(Debug, PartialEq, Default, Deserialize)]
struct SerdeMoment {
    at: u64,
}

#[derive(Debug, PartialEq, Default, tagged_de::FieldsDeserialize)]
struct OurMoment {
    at: u64,
}

fn null_as_zero<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    Ok(Option::<u32>::deserialize(d)?.unwrap_or(0))
}

// Read through Debug only.
#[allow(dead_code)]
#[derive(Debug, Deserialize)]
struct SerdeRecord {
    id: String,
    #[serde(default, deserialize_with = "null_as_zero")]
    count: u32,
    #[serde(flatten)]
    moment: SerdeMoment,
    #[serde(flatten)]
    extra: serde_json::Map<String, Value>,
}

#[allow(dead_code)]
#[derive(Debug, tagged_de::FieldsDeserialize)]
struct OurRecord {
    id: String,
    #[serde(default, deserialize_with = "null_as_zero")]
    count: u32,
    #[serde(flatten)]
    moment: OurMoment,
    #[serde(flatten)]
    extra: serde_json::Map<String, Value>,
}

/// Debug without any type's name, which differ between the twins.
fn plain(value: &impl std::fmt::Debug) -> String {
    format!("{value:?}")
        .replace("SerdeMoment", "Moment")
        .replace("OurMoment", "Moment")
        .replace("SerdeRecord", "Record")
        .replace("OurRecord", "Record")
}

#[test]
fn flattened_fields_read_what_the_others_left() {
    let records = [
        json!({"id": "a", "at": 5}),
        json!({"id": "a", "at": 5, "count": null, "kept": [1, {"x": 2}]}),
        json!({"id": "a", "at": 5, "count": 3}),
        json!({"id": "a"}),
        json!({"at": 5}),
    ];
    same::<SerdeRecord, OurRecord>(&records, plain, plain);
}
