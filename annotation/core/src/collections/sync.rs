//! Collections on the team's sync server (`/collections`, issue 29). Here a run names the
//! collections it is in (`Run::collections`); the server keeps the runs on the collection
//! (`runIds`) and computes its metadata. A round sends what changed here since the server's
//! copy was last read ([`Shared`]): runs added or removed, the description, an export, a
//! deletion, a collection the server has not got. Then it takes the server's list as it is
//! ([`merge`]) and gives every run the server holds the server's membership
//! ([`memberships`]). Work done offline is the difference between the runs' names and the
//! last copy read, so nothing needs queueing: it goes up on the next round.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::{Value, json};

use super::Collection;

/// The server's copy of a collection as of the last round.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Shared {
    pub id: String,
    pub version: i64,
    pub description: String,
    /// The runs in it on the server.
    pub run_ids: BTreeSet<String>,
    #[serde(default)]
    pub metadata: SharedMetadata,
}

/// What the server computes of a collection from its own data.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct SharedMetadata {
    pub runs: u64,
    pub steps: u64,
    pub average_quality: Option<f64>,
    pub domains: Vec<String>,
    pub annotators: Vec<String>,
    pub average_time_per_step_ms: Option<f64>,
    pub last_exported_at: Option<String>,
}

/// A collection as the server sent it (`Collection`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ServerCollection {
    pub name: String,
    pub created_at: String,
    pub created_by: String,
    pub shared: Shared,
}

fn strings(value: &Value) -> impl Iterator<Item = String> + '_ {
    value.as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_owned)
}

/// The items of `GET /collections` (or one collection's answer).
pub fn read(items: &[Value]) -> Vec<ServerCollection> {
    items
        .iter()
        .filter_map(|c| {
            let m = &c["metadata"];
            Some(ServerCollection {
                name: c["name"].as_str()?.to_owned(),
                created_at: c["createdAt"].as_str().unwrap_or_default().to_owned(),
                created_by: c["createdBy"].as_str().unwrap_or_default().to_owned(),
                shared: Shared {
                    id: c["id"].as_str()?.to_owned(),
                    version: c["version"].as_i64()?,
                    description: c["description"].as_str().unwrap_or_default().to_owned(),
                    run_ids: lean::set_of(strings(&c["runIds"])),
                    metadata: SharedMetadata {
                        runs: m["runs"].as_u64().unwrap_or(0),
                        steps: m["steps"].as_u64().unwrap_or(0),
                        average_quality: m["averageQuality"].as_f64(),
                        domains: strings(&m["domains"]).collect(),
                        annotators: strings(&m["annotators"]).collect(),
                        average_time_per_step_ms: m["averageTimePerStepMs"].as_f64(),
                        last_exported_at: m["lastExportedAt"].as_str().map(str::to_owned),
                    },
                },
            })
        })
        .collect()
}

/// Before writing: a collection made here under a name the server has already (made in
/// another browser meanwhile) becomes that one. Its copy is read as holding no runs, so
/// every run named here is added and none removed; an empty description here takes theirs.
pub fn adopt(local: &mut [Collection], server: &[ServerCollection]) {
    for collection in local.iter_mut().filter(|c| c.shared.is_none() && !c.deleted) {
        if let Some(theirs) = server.iter().find(|s| s.name == collection.name) {
            if collection.description.trim().is_empty() {
                collection.description = theirs.shared.description.clone();
            }
            collection.shared = Some(Shared { run_ids: BTreeSet::new(), ..theirs.shared.clone() });
        }
    }
}

/// A write to the server.
#[derive(Debug, Clone, PartialEq)]
pub enum Write {
    /// `POST /collections`.
    Create { name: String, body: Value },
    /// `PATCH /collections/{id}`, `If-Match` on `version`.
    Edit { name: String, id: String, version: i64, body: Value },
    /// `DELETE /collections/{id}`, `If-Match` on `version`.
    Delete { name: String, id: String, version: i64 },
}

impl Write {
    pub fn name(&self) -> &str {
        match self {
            Write::Create { name, .. } | Write::Edit { name, .. } | Write::Delete { name, .. } => {
                name
            }
        }
    }
}

/// The runs here in each collection, by name, from the runs' own names.
pub fn members<'a>(
    runs: impl IntoIterator<Item = (&'a str, &'a [String])>,
) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (run, names) in runs {
        for name in names {
            out.entry(name.clone()).or_default().insert(run.to_owned());
        }
    }
    out
}

/// What goes up this round. `on_server` are the runs here the server holds: only they can
/// be added (the server refuses unknown ids), and only their absence here removes them (a
/// run not stored here says nothing about its collections).
pub fn writes(
    local: &[Collection],
    members: &BTreeMap<String, BTreeSet<String>>,
    on_server: &BTreeSet<String>,
) -> Vec<Write> {
    let empty = BTreeSet::new();
    let mut out = Vec::new();
    for c in local {
        let mine: BTreeSet<&String> = lean::set_of(
            members.get(&c.name).unwrap_or(&empty).iter().filter(|r| on_server.contains(*r)),
        );
        match &c.shared {
            Some(shared) if c.deleted => out.push(Write::Delete {
                name: c.name.clone(),
                id: shared.id.clone(),
                version: shared.version,
            }),
            None if c.deleted => {}
            None => {
                let mut body = json!({ "name": c.name, "runIds": mine });
                if !c.description.is_empty() {
                    body["description"] = json!(c.description);
                }
                out.push(Write::Create { name: c.name.clone(), body });
            }
            Some(shared) => {
                let add: Vec<&String> =
                    mine.iter().copied().filter(|r| !shared.run_ids.contains(*r)).collect();
                let remove: Vec<&String> = shared
                    .run_ids
                    .iter()
                    .filter(|r| on_server.contains(*r) && !mine.contains(r))
                    .collect();
                let mut body = serde_json::Map::new();
                if !add.is_empty() {
                    body.insert("addRuns".into(), json!(add));
                }
                if !remove.is_empty() {
                    body.insert("removeRuns".into(), json!(remove));
                }
                if c.description != shared.description {
                    body.insert("description".into(), json!(c.description));
                }
                if c.export_unsent {
                    body.insert("exported".into(), json!(true));
                }
                if !body.is_empty() {
                    out.push(Write::Edit {
                        name: c.name.clone(),
                        id: shared.id.clone(),
                        version: shared.version,
                        body: Value::Object(body),
                    });
                }
            }
        }
    }
    out
}

/// After writing: the collections as the server has them now. `kept` names collections
/// whose write the server refused: they keep what was done here (to be shown, and sent
/// again). A collection only made here stays; one the server no longer has goes.
pub fn merge(
    local: &[Collection],
    server: &[ServerCollection],
    kept: &BTreeSet<String>,
) -> Vec<Collection> {
    let mut out: Vec<Collection> = server
        .iter()
        .map(|s| {
            let mine = local.iter().find(|c| {
                c.shared.as_ref().is_some_and(|m| m.id == s.shared.id) || c.name == s.name
            });
            match mine {
                Some(mine) if kept.contains(&mine.name) && !mine.deleted => mine.clone(),
                _ => Collection {
                    name: s.name.clone(),
                    description: s.shared.description.clone(),
                    created_at: s.created_at.clone(),
                    created_by: s.created_by.clone(),
                    exported_at: s.shared.metadata.last_exported_at.clone(),
                    export_unsent: false,
                    deleted: false,
                    shared: Some(s.shared.clone()),
                },
            }
        })
        .collect();
    for c in local.iter().filter(|c| c.shared.is_none() && !c.deleted) {
        if !out.iter().any(|o| o.name == c.name) {
            out.push(c.clone());
        }
    }
    lean::sort_by(&mut out, |a, b| a.name.cmp(&b.name));
    out
}

/// Each run whose names change once the server's membership is taken: a run the server
/// holds is in the shared collections the server says, and keeps its names of collections
/// only made here or whose write was refused (`kept`); a run only here keeps its names of
/// collections that still exist.
pub fn memberships<'a>(
    runs: impl IntoIterator<Item = (&'a str, &'a [String])>,
    merged: &[Collection],
    on_server: &BTreeSet<String>,
    kept: &BTreeSet<String>,
) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for (run, names) in runs {
        let mut now: BTreeSet<String> = BTreeSet::new();
        for c in merged {
            let local_only = c.shared.is_none() || kept.contains(&c.name);
            let named = names.contains(&c.name);
            let inside = if !on_server.contains(run) || local_only {
                named
            } else {
                c.shared.as_ref().is_some_and(|s| s.run_ids.contains(run))
            };
            if inside {
                now.insert(c.name.clone());
            }
        }
        let before: BTreeSet<String> = lean::set_of(names.iter().cloned());
        if now != before {
            out.push((run.to_owned(), now.into_iter().collect()));
        }
    }
    out
}

/// What a round stores: `merged`, except that a collection changed here while the round
/// ran (stored now unlike `before`, what the round read) keeps that change (made, described,
/// exported or deleted) over the server's copy, to go up on the next round.
pub fn meanwhile(
    merged: Vec<Collection>,
    before: &[Collection],
    now: &[Collection],
) -> Vec<Collection> {
    let mut out = merged;
    for changed in now.iter().filter(|c| !before.contains(c)) {
        match out.iter_mut().find(|o| o.name == changed.name) {
            Some(o) => {
                o.description = changed.description.clone();
                o.export_unsent |= changed.export_unsent;
                o.exported_at = changed.exported_at.clone().or(o.exported_at.take());
                o.deleted = changed.deleted;
            }
            None => out.push(changed.clone()),
        }
    }
    lean::sort_by(&mut out, |a, b| a.name.cmp(&b.name));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared(id: &str, version: i64, runs: &[&str]) -> Shared {
        Shared {
            id: id.into(),
            version,
            run_ids: runs.iter().map(|r| r.to_string()).collect(),
            ..Shared::default()
        }
    }

    fn set(ids: &[&str]) -> BTreeSet<String> {
        ids.iter().map(|r| r.to_string()).collect()
    }

    fn named(name: &str) -> Collection {
        Collection { name: name.into(), ..Collection::default() }
    }

    #[test]
    fn a_new_collection_is_created_with_the_runs_the_server_holds() {
        let local = vec![Collection { description: "hard ones".into(), ..named("hard") }];
        let runs = [("a", vec!["hard".to_owned()]), ("b", vec!["hard".to_owned()])];
        let members = members(runs.iter().map(|(r, n)| (*r, n.as_slice())));
        let writes = writes(&local, &members, &set(&["a"]));
        assert_eq!(
            writes,
            vec![Write::Create {
                name: "hard".into(),
                body: json!({"name": "hard", "runIds": ["a"], "description": "hard ones"}),
            }]
        );
    }

    #[test]
    fn offline_changes_go_up_as_adds_removes_description_and_export() {
        let local = vec![Collection {
            description: "new words".into(),
            export_unsent: true,
            shared: Some(shared("c1", 3, &["a", "gone-here", "elsewhere"])),
            ..named("hard")
        }];
        // "a" left the collection here, "b" joined; "elsewhere" is not stored here.
        let runs = [("a", vec![]), ("b", vec!["hard".to_owned()]), ("gone-here", vec![])];
        let members = members(runs.iter().map(|(r, n)| (*r, n.as_slice())));
        let writes = writes(&local, &members, &set(&["a", "b", "gone-here"]));
        assert_eq!(
            writes,
            vec![Write::Edit {
                name: "hard".into(),
                id: "c1".into(),
                version: 3,
                body: json!({"addRuns": ["b"], "removeRuns": ["a", "gone-here"],
                    "description": "new words", "exported": true}),
            }]
        );
        let unchanged = vec![Collection { shared: Some(shared("c1", 3, &["b"])), ..named("hard") }];
        assert!(super::writes(&unchanged, &members, &set(&["b"])).is_empty());
    }

    #[test]
    fn a_deletion_goes_up_only_for_a_collection_the_server_has() {
        let local = vec![
            Collection { deleted: true, shared: Some(shared("c1", 2, &[])), ..named("old") },
            Collection { deleted: true, ..named("never-sent") },
        ];
        assert_eq!(
            writes(&local, &BTreeMap::new(), &BTreeSet::new()),
            vec![Write::Delete { name: "old".into(), id: "c1".into(), version: 2 }]
        );
    }

    #[test]
    fn a_name_made_in_two_browsers_is_one_collection() {
        let mut local = vec![named("hard")];
        let theirs = ServerCollection {
            name: "hard".into(),
            shared: Shared { description: "theirs".into(), ..shared("c9", 4, &["x"]) },
            ..ServerCollection::default()
        };
        adopt(&mut local, &[theirs]);
        assert_eq!(local[0].description, "theirs");
        let runs = [("a", vec!["hard".to_owned()])];
        let members = members(runs.iter().map(|(r, n)| (*r, n.as_slice())));
        let w = writes(&local, &members, &set(&["a", "x"]));
        assert_eq!(
            w,
            vec![Write::Edit {
                name: "hard".into(),
                id: "c9".into(),
                version: 4,
                body: json!({"addRuns": ["a"]}),
            }]
        );
    }

    #[test]
    fn the_server_list_is_taken_and_runs_follow_it() {
        let local = vec![
            Collection { shared: Some(shared("c1", 1, &["a"])), ..named("old-name") },
            Collection { shared: Some(shared("c2", 1, &["a"])), ..named("deleted-elsewhere") },
            named("local-only"),
        ];
        let server = vec![ServerCollection {
            name: "renamed".into(),
            created_by: "ada".into(),
            shared: shared("c1", 2, &["a", "b"]),
            ..ServerCollection::default()
        }];
        let merged = merge(&local, &server, &BTreeSet::new());
        let names: Vec<&str> = merged.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["local-only", "renamed"]);
        let runs = [
            ("a", vec!["old-name".to_owned(), "deleted-elsewhere".to_owned()]),
            ("b", vec!["local-only".to_owned()]),
            ("here-only", vec!["local-only".to_owned(), "deleted-elsewhere".to_owned()]),
        ];
        let changed = memberships(
            runs.iter().map(|(r, n)| (*r, n.as_slice())),
            &merged,
            &set(&["a", "b"]),
            &BTreeSet::new(),
        );
        assert_eq!(
            changed,
            vec![
                ("a".to_owned(), vec!["renamed".to_owned()]),
                ("b".to_owned(), vec!["local-only".to_owned(), "renamed".to_owned()]),
                ("here-only".to_owned(), vec!["local-only".to_owned()]),
            ]
        );
    }

    #[test]
    fn a_refused_write_keeps_what_was_done_here() {
        let local = vec![Collection {
            description: "mine".into(),
            shared: Some(shared("c1", 1, &[])),
            ..named("hard")
        }];
        let server = vec![ServerCollection {
            name: "hard".into(),
            shared: shared("c1", 1, &[]),
            ..ServerCollection::default()
        }];
        let kept = set(&["hard"]);
        let merged = merge(&local, &server, &kept);
        assert_eq!(merged[0].description, "mine");
        let runs = [("a", vec!["hard".to_owned()])];
        let changed =
            memberships(runs.iter().map(|(r, n)| (*r, n.as_slice())), &merged, &set(&["a"]), &kept);
        assert!(changed.is_empty(), "{changed:?}");
    }

    #[test]
    fn the_servers_answer_is_read_with_its_metadata() {
        let answer = json!({"id": "c1", "name": "hard", "description": "d", "runIds": ["a"],
            "createdBy": "ada", "createdAt": "2026-01-01T00:00:00.000Z", "version": 2,
            "metadata": {"runs": 1, "steps": 4, "averageQuality": 80.0, "domains": ["shop.test"],
                "annotators": ["ann"], "averageTimePerStepMs": 1500.0, "lastExportedAt": null}});
        let read = read(&[answer]);
        assert_eq!(read[0].shared.metadata.average_time_per_step_ms, Some(1500.0));
        assert_eq!(read[0].shared.run_ids, set(&["a"]));
        assert_eq!(read[0].created_by, "ada");
    }

    #[test]
    fn a_change_made_while_the_round_ran_is_kept_for_the_next() {
        let before = vec![named("hard")];
        let merged = vec![Collection { shared: Some(shared("c1", 1, &["a"])), ..named("hard") }];
        let now = vec![
            Collection { description: "typed meanwhile".into(), ..named("hard") },
            named("new"),
        ];
        let kept = meanwhile(merged, &before, &now);
        assert_eq!(kept.len(), 2);
        assert_eq!(kept[0].description, "typed meanwhile");
        assert_eq!(kept[0].shared.as_ref().map(|s| s.version), Some(1));
        assert_eq!(kept[1].name, "new");
    }
}
