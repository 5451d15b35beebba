//! Annotation for teams (issue 29), the page's side: what it reads from the sync server's
//! team routes (`sync-server/openapi.yaml`, "Teams") and the bodies it sends. The server
//! is the judge of who may do what; this module only reads its answers for the page and
//! builds requests from what a person chose.

use std::collections::BTreeMap;

use run_contract::agreement::{StepText, mean, pair_score};
use serde::Serialize;
use serde_json::{Value, json};

use crate::query::Filter;
use crate::record::ReviewStatus;

fn text(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_owned()
}

fn maybe(value: &Value) -> Option<String> {
    value.as_str().map(str::to_owned)
}

fn items(page: &Value) -> &[Value] {
    page["items"].as_array().map_or(&[], Vec::as_slice)
}

// ------------------------------------------------------------------ project

/// The project's settings (`GET /project`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Project {
    /// Annotators per run.
    pub overlap: u32,
    pub guidelines_url: Option<String>,
    pub guidelines_markdown: Option<String>,
    pub version: i64,
}

impl Project {
    pub fn from_server(value: &Value) -> Project {
        Project {
            overlap: value["overlap"].as_u64().unwrap_or(1).max(1) as u32,
            guidelines_url: maybe(&value["guidelinesUrl"]).filter(|u| !u.trim().is_empty()),
            guidelines_markdown: maybe(&value["guidelinesMarkdown"])
                .filter(|m| !m.trim().is_empty()),
            version: value["version"].as_i64().unwrap_or(0),
        }
    }

    /// The `PUT /project` body for settings as typed: the overlap as a number from 1 to 10,
    /// the link `http(s)://` or empty; a problem for a person otherwise.
    pub fn write(overlap: &str, url: &str, markdown: &str) -> Result<Value, String> {
        let overlap: u32 =
            overlap.trim().parse().ok().filter(|n| (1..=10).contains(n)).ok_or(
                "Overlap is how many annotators annotate each run: a number from 1 to 10.",
            )?;
        let url = url.trim();
        if !url.is_empty()
            && (!(url.starts_with("https://") || url.starts_with("http://"))
                || url.contains(char::is_whitespace))
        {
            return Err("The guidelines link must be an http:// or https:// address.".into());
        }
        let none_if_empty = |s: &str| if s.is_empty() { Value::Null } else { Value::from(s) };
        Ok(json!({
            "overlap": overlap,
            "guidelinesUrl": none_if_empty(url),
            "guidelinesMarkdown": none_if_empty(markdown.trim()),
        }))
    }

    /// The guidelines link, when it is a web address (only then is it a link).
    pub fn link(&self) -> Option<&str> {
        self.guidelines_url
            .as_deref()
            .filter(|u| u.starts_with("https://") || u.starts_with("http://"))
    }
}

/// A block of the guidelines' markdown, shown as text: headings, list items and
/// paragraphs. Nothing in it becomes markup or a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    Heading(String),
    Item(String),
    Paragraph(String),
}

/// The guidelines' markdown read into blocks. Emphasis marks and a link's target are left
/// out (`[the rules](https://…)` reads "the rules"); lines of a paragraph join.
pub fn guideline_blocks(markdown: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut paragraph: Vec<String> = Vec::new();
    let flush = |paragraph: &mut Vec<String>, blocks: &mut Vec<Block>| {
        if !paragraph.is_empty() {
            blocks.push(Block::Paragraph(paragraph.join(" ")));
            paragraph.clear();
        }
    };
    for line in markdown.lines() {
        let line = line.trim();
        if line.is_empty() {
            flush(&mut paragraph, &mut blocks);
        } else if let Some(heading) = line.strip_prefix('#') {
            flush(&mut paragraph, &mut blocks);
            blocks.push(Block::Heading(inline(heading.trim_start_matches('#').trim())));
        } else if let Some(item) = ["- ", "* ", "+ "].iter().find_map(|m| line.strip_prefix(m)) {
            flush(&mut paragraph, &mut blocks);
            blocks.push(Block::Item(inline(item.trim())));
        } else {
            paragraph.push(inline(line));
        }
    }
    flush(&mut paragraph, &mut blocks);
    blocks
}

/// A line's text without emphasis marks, code ticks and link targets.
fn inline(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        match (after.find("]("), after.find(')')) {
            (Some(close), Some(end)) if close < end => {
                out.push_str(&rest[..open]);
                out.push_str(&after[..close]);
                rest = &after[end + 1..];
            }
            _ => {
                out.push_str(&rest[..=open]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out.replace("**", "").replace("__", "").replace('`', "")
}

// ------------------------------------------------------------------ assignments

/// A run of the caller's queue (`GET /users/me/queue`).
#[derive(Debug, Clone, PartialEq)]
pub struct QueueEntry {
    pub run_id: String,
    pub task_prompt: String,
    pub status: String,
    /// The steps the server holds of the run.
    pub steps: u32,
    pub assigned_by: String,
    pub assigned_at: String,
}

pub fn queue_from_server(items: &[Value]) -> Vec<QueueEntry> {
    items
        .iter()
        .filter_map(|item| {
            Some(QueueEntry {
                run_id: item["assignment"]["runId"].as_str()?.to_owned(),
                task_prompt: text(&item["run"]["taskPrompt"]),
                status: text(&item["run"]["status"]),
                steps: item["run"]["storedSteps"].as_u64().unwrap_or(0) as u32,
                assigned_by: text(&item["assignment"]["assignedBy"]),
                assigned_at: text(&item["assignment"]["assignedAt"]),
            })
        })
        .collect()
}

/// A row of "My queue" as the page shows it: the server's entry, its place in the queue
/// (1 is next), and the progress this browser knows of the run.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueRow {
    pub entry: QueueEntry,
    pub position: usize,
    pub status: ReviewStatus,
    pub steps: u32,
    /// Steps marked complete, when the run is in this browser.
    pub done: Option<u32>,
    /// The assignment's day and time, `YYYY-MM-DD HH:MM`.
    pub assigned: String,
}

/// The queue's rows, in the server's order (oldest assignment first: that is the due
/// order), with what the local run summaries add.
pub fn queue_rows(queue: &[QueueEntry], local: &[crate::query::RunSummary]) -> Vec<QueueRow> {
    queue
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            let here = local.iter().find(|s| s.run_id == entry.run_id);
            let at = entry.assigned_at.replace('T', " ");
            QueueRow {
                position: i + 1,
                status: ReviewStatus::parse(&entry.status).unwrap_or_default(),
                steps: here.map_or(entry.steps, |s| s.steps.max(entry.steps)),
                done: here.map(|s| s.done),
                assigned: at.get(..16).unwrap_or(&at).to_owned(),
                entry: entry.clone(),
            }
        })
        .collect()
}

/// Who a run is assigned to (`GET`/`PUT /runs/{runId}/assignees`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Assignees {
    pub run_id: String,
    /// How many annotators the run was assigned to (0: never).
    pub overlap: u32,
    /// Each annotator, and whether their work is handed in.
    pub annotators: Vec<(String, bool)>,
}

impl Assignees {
    pub fn from_server(value: &Value) -> Assignees {
        Assignees {
            run_id: text(&value["runId"]),
            overlap: value["overlap"].as_u64().unwrap_or(0) as u32,
            annotators: items(value)
                .iter()
                .map(|a| (text(&a["annotator"]), a["state"] == "submitted"))
                .collect(),
        }
    }
}

/// User ids as typed, separated by commas or spaces, each once, in order.
pub fn user_list(typed: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in typed.split(|c: char| c == ',' || c.is_whitespace()).filter(|n| !n.is_empty()) {
        if !out.iter().any(|n| n == name) {
            out.push(name.to_owned());
        }
    }
    out
}

/// The annotators to offer when assigning. The server has no list of its users, so these
/// are the ids the page has seen: the run's assignees, the runs' annotators and (for an
/// admin) the figures' annotators; sorted, each once.
pub fn known_annotators<'a>(seen: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let set: lean::SortedSet<&str> = lean::SortedSet::from_iter(
        seen.into_iter().map(str::trim).filter(|n| !n.is_empty() && !n.contains([',', ' '])),
    );
    set.into_iter().map(str::to_owned).collect()
}

/// The assign field's text after picking or unpicking `who`: the ids as typed, with `who`
/// added at the end or taken out.
pub fn toggle_user(typed: &str, who: &str) -> String {
    let mut users = user_list(typed);
    match users.iter().position(|u| u == who) {
        Some(at) => {
            users.remove(at);
        }
        None => users.push(who.to_owned()),
    }
    users.join(", ")
}

/// The `PUT /runs/{runId}/assignees` body for annotators as typed.
pub fn assign_body(typed: &str) -> Result<Value, String> {
    let annotators = user_list(typed);
    if annotators.is_empty() {
        return Err("Name at least one annotator (their user ids, separated by commas).".into());
    }
    Ok(json!({ "annotators": annotators }))
}

/// The `POST /assignments:roundRobin` body for the runs list's filter. The server filters
/// by status, annotator, tags and words only, so a filter using anything else (dates,
/// quality, collections, action types, issues) is refused here rather than assigning runs
/// the list does not show.
pub fn round_robin_body(filter: &Filter, typed: &str) -> Result<Value, String> {
    let annotators = user_list(typed);
    if annotators.is_empty() {
        return Err("Name the annotators to take turns (user ids, separated by commas).".into());
    }
    let unsupported = [
        (filter.from.is_some() || filter.to.is_some(), "dates"),
        (filter.min_quality.is_some() || filter.max_quality.is_some(), "quality"),
        (filter.action_type.is_some(), "action type"),
        (filter.collection.is_some(), "collection"),
        (filter.issue.is_some(), "issues"),
        (filter.driven_by.is_some(), "driven by"),
    ];
    let used: Vec<&str> = unsupported.iter().filter(|(on, _)| *on).map(|(_, n)| *n).collect();
    if !used.is_empty() {
        return Err(format!(
            "The server assigns by status, annotator, tags and words only; clear the {} filter first.",
            used.join(", ")
        ));
    }
    let mut server = serde_json::Map::new();
    if !filter.statuses.is_empty() {
        server.insert(
            "status".into(),
            filter.statuses.iter().map(|s| s.as_str()).collect::<Vec<_>>().into(),
        );
    }
    if let Some(annotator) = &filter.annotator {
        server.insert("annotator".into(), annotator.clone().into());
    }
    if !filter.tags.is_empty() {
        server.insert("tag".into(), filter.tags.clone().into());
    }
    let words = filter.text.trim();
    if !words.is_empty() {
        server.insert("q".into(), words.into());
    }
    Ok(json!({ "filter": server, "annotators": annotators, "onlyUnassigned": true }))
}

/// What a round-robin answer says, for a person.
pub fn round_robin_text(answer: &Value) -> String {
    let assigned = answer["assigned"].as_array().map_or(0, Vec::len);
    let skipped = answer["skipped"].as_array().map_or(0, Vec::len);
    let runs = |n: usize| if n == 1 { "1 run".to_owned() } else { format!("{n} runs") };
    match skipped {
        0 => format!("Assigned {} in turn.", runs(assigned)),
        n => {
            format!("Assigned {} in turn; {} skipped (already assigned).", runs(assigned), runs(n))
        }
    }
}

/// An overlap run the caller annotates in a version of their own (overlap above 1): its
/// steps are saved to `/runs/{runId}/annotations/me/…`, never to the run's own steps, and
/// it is handed in with `…/submit`. Kept in this browser beside the sync queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, tagged_de::FieldsDeserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct OwnVersion {
    pub run_id: String,
    pub annotator: String,
    pub overlap: u32,
    pub submitted: bool,
    /// Each step saved in the version, with its version there (`If-Match` for the next).
    pub steps: BTreeMap<u32, i64>,
    /// What the server holds of the version has been read into this browser's copy.
    #[serde(default)]
    pub fetched: bool,
}

impl OwnVersion {
    /// The server's saved step of this version (`AnnotatedStep`) read into the local
    /// step: its thoughts, action, extended thoughts and notes; its version kept here.
    pub fn take_step(
        &mut self,
        saved: &Value,
        step: &mut crate::record::Step,
    ) -> Result<(), String> {
        let mut value = serde_json::to_value(&*step).map_err(|e| e.to_string())?;
        for key in ["thoughts", "action", "extendedThoughts", "navigator"] {
            if let Some(field) = saved.get(key).filter(|v| !v.is_null()) {
                value[key] = field.clone();
            }
        }
        *step = serde_json::from_value(value).map_err(|e| format!("the saved step: {e}"))?;
        if let (Some(index), Some(version)) = (saved["index"].as_u64(), saved["version"].as_i64()) {
            self.steps.insert(index as u32, version);
        }
        Ok(())
    }

    /// The body of a step of the version: its annotatable part.
    pub fn step_body(step: &crate::record::Step) -> Value {
        let value = serde_json::to_value(step).unwrap_or(Value::Null);
        let mut body = json!({ "thoughts": value["thoughts"], "action": value["action"] });
        if let Some(extended) = value.get("extendedThoughts").filter(|v| v.is_array()) {
            body["extendedThoughts"] = extended.clone();
        }
        if let Some(notes) = value.get("navigator").filter(|v| v.is_object()) {
            body["navigator"] = notes.clone();
        }
        body
    }
}

// ------------------------------------------------------------------ agreement

/// One step of `GET /runs/{runId}/agreement`.
#[derive(Debug, Clone, PartialEq)]
pub struct StepAgreement {
    pub index: u32,
    pub action_equal: bool,
    pub thoughts: [f64; 3],
    pub score: f64,
    /// Each annotator's text of the step.
    pub versions: BTreeMap<String, StepText>,
}

/// The annotators' agreement on a run, for the reviewer.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Agreement {
    pub run_id: String,
    pub annotators: Vec<String>,
    pub score: Option<f64>,
    pub steps: Vec<StepAgreement>,
}

fn step_text(value: &Value) -> StepText {
    let t = &value["thoughts"];
    StepText {
        action: value["action"].clone(),
        thoughts: [text(&t["thought1"]), text(&t["thought2"]), text(&t["thought3"])],
    }
}

impl Agreement {
    pub fn from_server(value: &Value) -> Agreement {
        let steps = value["steps"].as_array().map_or(&[][..], Vec::as_slice);
        Agreement {
            run_id: text(&value["runId"]),
            annotators: value["annotators"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(maybe)
                .collect(),
            score: value["score"].as_f64(),
            steps: steps
                .iter()
                .map(|s| {
                    let t = &s["thoughts"];
                    StepAgreement {
                        index: s["index"].as_u64().unwrap_or(0) as u32,
                        action_equal: s["actionEqual"].as_bool().unwrap_or(false),
                        thoughts: ["thought1", "thought2", "thought3"]
                            .map(|k| t[k].as_f64().unwrap_or(0.0)),
                        score: s["score"].as_f64().unwrap_or(0.0),
                        versions: s["versions"]
                            .as_object()
                            .into_iter()
                            .flatten()
                            .map(|(who, v)| (who.clone(), step_text(v)))
                            .collect(),
                    }
                })
                .collect(),
        }
    }

    /// Each annotator's agreement with the others on this run: the mean of their pair
    /// scores (`run_contract::agreement::pair_score`) over the steps both versions hold.
    pub fn per_annotator(&self) -> Vec<(String, Option<f64>)> {
        let version = |who: &str| -> Vec<Option<&StepText>> {
            self.steps.iter().map(|s| s.versions.get(who)).collect()
        };
        self.annotators
            .iter()
            .map(|me| {
                let mine = version(me);
                let pairs = self.annotators.iter().filter(|o| *o != me).filter_map(|other| {
                    let theirs = version(other);
                    let (a, b): (Vec<StepText>, Vec<StepText>) = mine
                        .iter()
                        .zip(&theirs)
                        .filter_map(|(a, b)| Some(((*a)?.clone(), (*b)?.clone())))
                        .unzip();
                    pair_score(&a, &b)
                });
                (me.clone(), mean(pairs))
            })
            .collect()
    }
}

/// An action named the way the rest of the page names one: its type, target and value.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ActionWords {
    pub kind: String,
    pub target: String,
    pub value: Option<String>,
}

impl ActionWords {
    /// Reads an action's JSON (`{"type", "target", "value"}`); a value that is not text is
    /// shown as its JSON, an empty one not at all.
    pub fn read(action: &Value) -> ActionWords {
        let value = match &action["value"] {
            Value::Null => None,
            Value::String(s) => Some(s.clone()),
            other => Some(other.to_string()),
        };
        ActionWords {
            kind: text(&action["type"]),
            target: text(&action["target"]),
            value: value.filter(|v| !v.is_empty()),
        }
    }
}

/// Where one annotator's version of a step differs from at least one other annotator's.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct VersionDiff {
    pub kind: bool,
    pub target: bool,
    pub value: bool,
    pub thoughts: [bool; 3],
}

impl VersionDiff {
    pub fn action(&self) -> bool {
        self.kind || self.target || self.value
    }
}

impl StepAgreement {
    /// What `who` wrote differently from the others on this step. Thoughts are compared
    /// as a reader sees them: surrounding space and runs of spaces do not count.
    pub fn differences(&self, who: &str) -> VersionDiff {
        let Some(mine) = self.versions.get(who) else { return VersionDiff::default() };
        let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
        let me = ActionWords::read(&mine.action);
        let mut diff = VersionDiff::default();
        for (_, theirs) in self.versions.iter().filter(|(other, _)| *other != who) {
            let them = ActionWords::read(&theirs.action);
            diff.kind |= me.kind != them.kind;
            diff.target |= me.target != them.target;
            diff.value |= me.value != them.value;
            for (i, differs) in diff.thoughts.iter_mut().enumerate() {
                *differs |= words(&mine.thoughts[i]) != words(&theirs.thoughts[i]);
            }
        }
        diff
    }
}

/// A score from 0 to 1 as a percentage for a person.
pub fn percent(score: Option<f64>) -> String {
    score.map_or_else(|| "—".to_owned(), |s| format!("{:.0}%", s * 100.0))
}

/// The reviewer's resolution of an overlap run: one annotator's version for every step,
/// or a choice per step (which wins over the pick for that step).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Merge {
    pub pick: Option<String>,
    pub steps: lean::SortedMap<u32, String>,
}

impl Merge {
    /// Whose version step `index` takes, if anyone's.
    pub fn source(&self, index: u32) -> Option<&str> {
        self.steps.get(&index).or(self.pick.as_ref()).map(String::as_str)
    }

    /// Takes step `index` from `annotator`.
    pub fn choose(&mut self, index: u32, annotator: &str) {
        self.steps.insert(index, annotator.to_owned());
    }

    /// Takes every step from `annotator`, forgetting per-step choices.
    pub fn pick_all(&mut self, annotator: &str) {
        self.pick = Some(annotator.to_owned());
        self.steps.clear();
    }

    /// The `POST /runs/{runId}/resolve` body; `None` when nothing is chosen yet.
    pub fn body(&self) -> Option<Value> {
        if self.pick.is_none() && self.steps.is_empty() {
            return None;
        }
        let mut body = json!({});
        if let Some(pick) = &self.pick {
            body["pick"] = pick.clone().into();
        }
        if !self.steps.is_empty() {
            body["steps"] = self
                .steps
                .iter()
                .map(|(index, from)| json!({"index": index, "from": from}))
                .collect::<Vec<_>>()
                .into();
        }
        Some(body)
    }
}

// ------------------------------------------------------------------ notifications

#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    pub id: String,
    pub kind: String,
    pub run_id: Option<String>,
    pub actor: String,
    pub text: String,
    pub created_at: String,
    pub read: bool,
}

pub fn notifications_from_server(items: &[Value]) -> Vec<Notification> {
    items
        .iter()
        .filter_map(|n| {
            Some(Notification {
                id: n["id"].as_str()?.to_owned(),
                kind: text(&n["kind"]),
                run_id: maybe(&n["runId"]),
                actor: text(&n["actor"]),
                text: text(&n["text"]),
                created_at: text(&n["createdAt"]),
                read: !n["readAt"].is_null(),
            })
        })
        .collect()
}

/// What the badge says: the count, with 99+ for more.
pub fn badge(unread: u32) -> Option<String> {
    match unread {
        0 => None,
        1..=99 => Some(unread.to_string()),
        _ => Some("99+".into()),
    }
}

// ------------------------------------------------------------------ audit log

#[derive(Debug, Clone, PartialEq)]
pub struct AuditEntry {
    pub seq: i64,
    pub at: String,
    pub user: String,
    pub action: String,
    pub run_id: Option<String>,
    pub target: String,
    pub before: Value,
    pub after: Value,
}

pub fn audit_from_server(items: &[Value]) -> Vec<AuditEntry> {
    items
        .iter()
        .map(|e| AuditEntry {
            seq: e["seq"].as_i64().unwrap_or(0),
            at: text(&e["at"]),
            user: text(&e["user"]),
            action: text(&e["action"]),
            run_id: maybe(&e["runId"]),
            target: text(&e["target"]),
            before: e["before"].clone(),
            after: e["after"].clone(),
        })
        .collect()
}

/// Short text of an entry's before or after value.
pub fn audit_value(value: &Value) -> String {
    match value {
        Value::Null => "—".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// One changed field of an audit entry, both sides as short text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditChange {
    /// Dotted path into the value (`guidelinesUrl`, `thoughts.thought2`); empty when the
    /// value is not an object.
    pub field: String,
    pub before: String,
    pub after: String,
}

/// What an audit entry changed: for objects, each field (nested objects by dotted path)
/// whose value differs, in path order (an object made or deleted: each of its fields);
/// otherwise the value itself, when it differs.
/// Long text is cut to `MAX` characters: the full JSON is a click away.
pub fn audit_changes(before: &Value, after: &Value) -> Vec<AuditChange> {
    const MAX: usize = 60;
    fn short(value: Option<&Value>) -> String {
        let text = value.map_or_else(|| "—".to_owned(), audit_value);
        match text.char_indices().nth(MAX) {
            Some((at, _)) => format!("{}…", &text[..at]),
            None => text,
        }
    }
    fn walk(path: String, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<AuditChange>) {
        // An object made or deleted reads field by field, against nothing on the other side.
        let empty = serde_json::Map::new();
        let absent = |v: Option<&Value>| v.is_none_or(Value::is_null);
        let (x, y) = (a.and_then(Value::as_object), b.and_then(Value::as_object));
        let (x, y) = match (x, y) {
            (None, Some(y)) if absent(a) => (Some(&empty), Some(y)),
            (Some(x), None) if absent(b) => (Some(x), Some(&empty)),
            pair => pair,
        };
        if let (Some(x), Some(y)) = (x, y) {
            let keys: lean::SortedSet<&String> = x.keys().chain(y.keys()).collect();
            for key in keys {
                let inner = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                walk(inner, x.get(key), y.get(key), out);
            }
        } else if a.filter(|v| !v.is_null()) != b.filter(|v| !v.is_null()) {
            out.push(AuditChange { field: path, before: short(a), after: short(b) });
        }
    }
    let mut out = Vec::new();
    walk(String::new(), Some(before), Some(after), &mut out);
    out
}

/// The audit log's filters as typed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AuditFilter {
    pub user: String,
    pub action: String,
    pub run_id: String,
    /// YYYY-MM-DD, inclusive.
    pub since: String,
    /// YYYY-MM-DD, inclusive.
    pub until: String,
}

impl AuditFilter {
    /// The query string (`?user=…&…`, empty without filters) for `/audit` and
    /// `/audit:export`; dates become the day's start (`since`) or the next day's (`until`).
    pub fn query(&self) -> Result<String, String> {
        let mut params: Vec<String> = Vec::new();
        let mut add = |key: &str, value: &str| {
            if !value.is_empty() {
                params.push(format!("{key}={}", run_contract::url::form_encode(value)));
            }
        };
        add("user", self.user.trim());
        add("action", self.action.trim());
        add("runId", self.run_id.trim());
        let day = |typed: &str, next: bool| -> Result<String, String> {
            let typed = typed.trim();
            if typed.is_empty() {
                return Ok(String::new());
            }
            let ms = run_contract::time::parse_ms(&format!("{typed}T00:00:00.000Z"))
                .ok_or_else(|| format!("{typed} is not a date (YYYY-MM-DD)."))?;
            Ok(run_contract::time::format_ms(ms + if next { 86_400_000 } else { 0 }))
        };
        add("since", &day(&self.since, false)?);
        add("until", &day(&self.until, true)?);
        Ok(if params.is_empty() { String::new() } else { format!("?{}", params.join("&")) })
    }
}

// ------------------------------------------------------------------ webhooks

/// The events a hook may ask for.
pub const WEBHOOK_EVENTS: [&str; 5] =
    ["run.submitted", "run.approved", "run.rejected", "comment.added", "assignment.changed"];

#[derive(Debug, Clone, PartialEq)]
pub struct Webhook {
    pub id: String,
    pub url: String,
    pub events: Vec<String>,
    pub description: String,
    pub paused: bool,
    pub pending: u64,
    pub delivered: u64,
    pub failed: u64,
}

pub fn webhook_from_server(h: &Value) -> Webhook {
    Webhook {
        id: text(&h["id"]),
        url: text(&h["url"]),
        events: h["events"].as_array().into_iter().flatten().filter_map(maybe).collect(),
        description: text(&h["description"]),
        paused: h["paused"].as_bool().unwrap_or(false),
        pending: h["pending"].as_u64().unwrap_or(0),
        delivered: h["delivered"].as_u64().unwrap_or(0),
        failed: h["failed"].as_u64().unwrap_or(0),
    }
}

/// The `POST /webhooks` body as typed; a problem for a person when the address will not do.
pub fn webhook_create(url: &str, events: &[String], description: &str) -> Result<Value, String> {
    let url = url.trim();
    let loopback = ["http://localhost", "http://127.", "http://[::1]"];
    if !(url.starts_with("https://") || loopback.iter().any(|p| url.starts_with(p))) {
        return Err(
            "A webhook's address must be https://, or http:// on this computer (localhost).".into(),
        );
    }
    if events.is_empty() {
        return Err("Choose at least one event to send.".into());
    }
    Ok(json!({ "url": url, "events": events, "description": description.trim() }))
}

#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    pub id: String,
    pub event: String,
    pub status: String,
    pub attempts: u64,
    pub last_status_code: Option<u64>,
    pub last_error: Option<String>,
    pub next_attempt_at: Option<String>,
    pub created_at: String,
}

pub fn deliveries_from_server(items: &[Value]) -> Vec<Delivery> {
    items
        .iter()
        .map(|d| Delivery {
            id: text(&d["id"]),
            event: text(&d["event"]),
            status: text(&d["status"]),
            attempts: d["attempts"].as_u64().unwrap_or(0),
            last_status_code: d["lastStatusCode"].as_u64(),
            last_error: maybe(&d["lastError"]),
            next_attempt_at: maybe(&d["nextAttemptAt"]),
            created_at: text(&d["createdAt"]),
        })
        .collect()
}

// ------------------------------------------------------------------ figures

/// A row of `GET /analytics/annotators`: an annotator by id (admins, or your own row) or an
/// anonymised peer (`Annotator k`).
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub label: String,
    /// The annotator's id: admins only see ids.
    pub annotator: Option<String>,
    pub you: bool,
    pub runs: u64,
    pub average_quality: Option<f64>,
    pub consistency: Option<f64>,
    pub agreement: Option<f64>,
    pub review_completion: Option<f64>,
}

pub fn figures_from_server(items: &[Value]) -> Vec<Figure> {
    items
        .iter()
        .map(|f| Figure {
            label: text(&f["label"]),
            annotator: maybe(&f["annotator"]),
            you: f["you"].as_bool().unwrap_or(false),
            runs: f["runs"].as_u64().unwrap_or(0),
            average_quality: f["averageQuality"].as_f64(),
            consistency: f["consistency"].as_f64(),
            agreement: f["agreement"].as_f64(),
            review_completion: f["reviewCompletionRate"].as_f64(),
        })
        .collect()
}

/// One week of an annotator's agreement (`GET /analytics/agreement`).
#[derive(Debug, Clone, PartialEq)]
pub struct WeekPoint {
    /// The week's Monday, `YYYY-MM-DD`.
    pub week: String,
    pub runs: u64,
    pub agreement: f64,
}

/// A line of the agreement-over-time view.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub label: String,
    pub you: bool,
    pub points: Vec<WeekPoint>,
}

/// The agreement series as the page shows them. Admins see each annotator by id; anyone
/// else sees their own series ("you") and the others only as one anonymised line, the
/// peers' mean of each week weighted by runs (annotators get no peers' series from the
/// server, so theirs is their own alone).
pub fn agreement_series(answer: &Value, me: &str, admin: bool) -> Vec<Series> {
    let read = |item: &Value| -> Vec<WeekPoint> {
        item["points"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| {
                Some(WeekPoint {
                    week: p["weekStart"].as_str()?.to_owned(),
                    runs: p["runs"].as_u64().unwrap_or(0),
                    agreement: p["agreement"].as_f64()?,
                })
            })
            .collect()
    };
    let mut out = Vec::new();
    let mut peers: lean::SortedMap<String, (f64, u64)> = lean::SortedMap::new();
    for item in items(answer) {
        let who = text(&item["annotator"]);
        let points = read(item);
        if admin || who == me {
            out.push(Series { label: who.clone(), you: who == me, points });
        } else {
            for p in points {
                let week = peers.entry_or_default(p.week);
                week.0 += p.agreement * p.runs.max(1) as f64;
                week.1 += p.runs.max(1);
            }
        }
    }
    lean::sort_by_key(&mut out, |s| !s.you);
    if !peers.is_empty() {
        let points = peers
            .into_iter()
            .map(|(week, (sum, runs))| WeekPoint { week, runs, agreement: sum / runs as f64 })
            .collect();
        out.push(Series { label: "Peers (anonymised mean)".into(), you: false, points });
    }
    out
}

/// Every week any series has, in order.
pub fn series_weeks(series: &[Series]) -> Vec<String> {
    let weeks: lean::SortedSet<&String> =
        lean::SortedSet::from_iter(series.iter().flat_map(|s| s.points.iter().map(|p| &p.week)));
    weeks.into_iter().cloned().collect()
}

// ------------------------------------------------------------------ batch review

/// The `POST /runs:batchTransition` body: each run with the server version it was seen at.
pub fn batch_transition_body(to: ReviewStatus, runs: &[(String, i64)]) -> Value {
    let items: Vec<Value> =
        runs.iter().map(|(id, version)| json!({"runId": id, "baseVersion": version})).collect();
    json!({ "to": to.as_str(), "items": items })
}

/// One run of a batch transition's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum BatchMoved {
    /// Moved: the run as the server has it now.
    Moved { run_id: String, run: Value },
    /// Not moved, with the server's reason (pending suggestions, a newer version, the role).
    Refused { run_id: String, why: String },
}

pub fn batch_moved(answer: &Value) -> Vec<BatchMoved> {
    answer["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let run_id = text(&r["runId"]);
            match r["outcome"].as_str() {
                Some("ok") => BatchMoved::Moved { run_id, run: r["run"].clone() },
                _ => BatchMoved::Refused { run_id, why: crate::sync::problem_text(&r["problem"]) },
            }
        })
        .collect()
}

/// A number to one decimal, or a dash.
pub fn figure(value: Option<f64>) -> String {
    value.map_or_else(|| "—".to_owned(), |v| format!("{v:.1}"))
}

/// Whether a run in `status` may still be assigned (the server assigns drafts and runs in
/// review).
pub fn assignable(status: ReviewStatus) -> bool {
    matches!(status, ReviewStatus::Draft | ReviewStatus::InReview)
}

#[cfg(test)]
#[path = "team_tests.rs"]
mod tests;
