//! `POST /runs:batchUpsert`: the offline queue, item by item, each through the same code
//! (and so the same checks and writes) as its single-record PUT.

use axum::extract::State;
use serde_json::{Map, Value, json};

use crate::AppState;
use crate::auth::User;
use crate::http::{JsonBody, Precondition, Reply};
use crate::model::lock_run;
use crate::problem::{FieldError, Problem, Result};
use crate::routes::{runs, steps, traces};
use crate::store::{Sql, Tx, get_json, get_str};
use crate::validate::{self, Check, under};

pub async fn upsert(
    State(state): State<AppState>,
    user: User,
    JsonBody(body, _): JsonBody,
) -> Result<Reply> {
    // The envelope only: each item is checked, and may be rejected, on its own.
    let mut c = Check::default();
    let item = |path: &str| path.starts_with("/items/");
    let envelope = hollow(&body, "items");
    crate::schema::spec().check_except("BatchUpsertRequest", &envelope, "", &mut c, &item);
    let items = if c.ok() { body["items"].as_array().cloned().unwrap_or_default() } else { vec![] };
    for (i, item) in items.iter().enumerate() {
        let kind = item.get("kind").and_then(Value::as_str);
        if !matches!(kind, Some("run" | "step" | "trace")) {
            c.err(&format!("/items/{i}/kind"), "must be run, step or trace");
        }
    }
    if !c.ok() {
        return Err(Problem::validation(c.errors));
    }
    // Every item is checked before the first is written, so no transaction waits on that.
    let prepared: Vec<Prepared> =
        items.iter().enumerate().map(|(i, item)| prepare(&user, i, item)).collect();

    // Consecutive items on one run share a transaction, and so one commit: a queue sends a
    // run and then its steps. Each item is still all or nothing, since a refused write
    // writes nothing (`runs::write_run`); a server error fails the request, and the items
    // of earlier runs stay written (their mutation ids answer the retry).
    let mut results = Vec::with_capacity(prepared.len());
    let mut prepared = prepared.into_iter().peekable();
    while let Some(item) = prepared.next() {
        let (result, write) = match item {
            Prepared::Rejected(result) => {
                results.push(result);
                continue;
            }
            Prepared::Write { result, write } => (result, write),
        };
        let mut group = vec![(result, write)];
        while let Some(Prepared::Write { write: next, .. }) = prepared.peek()
            && next.run_id == group[0].1.run_id
        {
            let Some(Prepared::Write { result, write }) = prepared.next() else { unreachable!() };
            group.push((result, write));
        }
        results.extend(apply_group(&state, &user, group).await?);
    }
    Ok(Reply::ok(json!({"results": results})))
}

/// Applies items on one run in one transaction: the run's lock first, then the results kept
/// for any of their mutation ids, then each item (its kept result if it was applied before),
/// then the new results under their mutation ids, then the commit.
async fn apply_group(
    state: &AppState,
    user: &User,
    group: Vec<(Map<String, Value>, Write)>,
) -> Result<Vec<Value>> {
    let mut tx = state.store.begin().await?;
    // The run's lock is the transaction's first statement (see `store`).
    lock_run(&mut tx, &group[0].1.run_id).await?;
    let ids: Vec<&str> = group.iter().filter_map(|(_, w)| w.mutation.as_deref()).collect();
    let mut kept: Vec<(String, Value)> = Vec::new();
    if !ids.is_empty() {
        let mut sql = Sql::new("SELECT mutation_id, result FROM mutations WHERE user_id = ");
        sql.text(&user.id).push(" AND mutation_id IN ").texts(&ids);
        for row in sql.query().fetch_all(&mut *tx).await? {
            kept.push((get_str(&row, "mutation_id")?, get_json(&row, "result")?));
        }
    }
    let mut results = Vec::with_capacity(group.len());
    let mut new = Vec::new();
    for (result, write) in group {
        let replay = write.mutation.as_ref().and_then(|m| kept.iter().find(|(id, _)| id == m));
        if let Some((_, stored)) = replay {
            let mut stored = stored.clone();
            stored["item"] = result.get("item").cloned().unwrap_or(Value::Null);
            results.push(stored);
            continue;
        }
        let mutation = write.mutation.clone();
        let out = apply(&mut tx, user, result, write).await?;
        if let Some(mutation) = mutation.filter(|_| out["outcome"] == "ok") {
            // A second item with the same id in this batch is a replay of this one.
            kept.push((mutation.clone(), out.clone()));
            new.push((mutation, out.to_string()));
        }
        results.push(out);
    }
    if !new.is_empty() {
        let now = crate::time::now();
        let mut sql =
            Sql::new("INSERT INTO mutations (user_id, mutation_id, result, created_at) VALUES ");
        for (i, (mutation, result)) in new.into_iter().enumerate() {
            sql.push(if i == 0 { "(" } else { ", (" }).text(&user.id).push(", ").text(mutation);
            sql.push(", ").text(result).push(", ").text(&now).push(")");
        }
        sql.push(" ON CONFLICT (user_id, mutation_id) DO NOTHING");
        sql.query().execute(&mut *tx).await?;
    }
    tx.commit().await?;
    Ok(results)
}

/// One item after the checks that need no database.
enum Prepared {
    /// Refused already: its result.
    Rejected(Value),
    /// To apply: the result so far (`item`, `kind` and the ids) and the write.
    Write { result: Map<String, Value>, write: Write },
}

struct Write {
    run_id: String,
    mutation: Option<String>,
    /// The record's checks: the write to make, or why it is refused. A refused item with a
    /// `mutationId` may still be a replay, so this is read after its kept result is looked
    /// up.
    what: Result<What>,
}

enum What {
    Run(Precondition, validate::RunWrite),
    Step(Precondition, i64, Map<String, Value>),
    Trace(String, Value),
}

fn prepare(user: &User, i: usize, item: &Value) -> Prepared {
    let kind = item.get("kind").and_then(Value::as_str).unwrap_or("");
    let mut result = Map::new();
    result.insert("item".into(), json!(i));
    result.insert("kind".into(), json!(kind));
    for key in ["mutationId", "runId", "index"] {
        if let Some(value) = item.get(key) {
            result.insert(key.into(), value.clone());
        }
    }
    if let Some(trace_id) = item.pointer("/trace/id") {
        result.insert("traceId".into(), trace_id.clone());
    }
    let prefix = format!("/items/{i}");

    // The envelope of the item; its record goes through its own PUT's checks below.
    let mut c = Check::default();
    let record_path = format!("/{kind}");
    let record = |path: &str| under(path, &record_path);
    let envelope = hollow(item, kind);
    crate::schema::spec().check_except("BatchItem", &envelope, &prefix, &mut c, &record);
    if !c.ok() {
        return Prepared::Rejected(rejected(result, Problem::validation(c.errors)));
    }
    let mutation = validate::text(item, "mutationId");
    let run_id = validate::text(item, "runId").unwrap_or_default();
    let pre = match item.get("baseVersion").and_then(Value::as_i64) {
        Some(base) => Precondition::Match(base),
        None => Precondition::Create,
    };
    let record = item.get(kind).cloned().unwrap_or(Value::Null);
    let what = match kind {
        "run" => runs::check_run(user, &run_id, &record).map(|w| What::Run(pre, w)),
        "step" => {
            let index = item.get("index").and_then(Value::as_i64).unwrap_or(0);
            steps::check_step(&run_id, index, &record).map(|r| What::Step(pre, index, r))
        }
        _ => {
            let trace_id = record.get("id").and_then(Value::as_str).unwrap_or("").to_owned();
            if !validate::is_id(&trace_id) {
                let problem = Problem::invalid(&format!("{prefix}/trace/id"), "must be an id");
                return Prepared::Rejected(rejected(result, problem));
            }
            traces::check_trace(user, &run_id, &trace_id, &record)
                .map(|()| What::Trace(trace_id, record))
        }
    };
    Prepared::Write { result, write: Write { run_id, mutation, what } }
}

/// Applies one item in `tx` and says how it went.
async fn apply(
    tx: &mut Tx,
    user: &User,
    mut result: Map<String, Value>,
    write: Write,
) -> Result<Value> {
    let i = result.get("item").cloned().unwrap_or(Value::Null);
    let kind = result.get("kind").and_then(Value::as_str).unwrap_or("").to_owned();
    let run_id = write.run_id.as_str();
    let outcome = match write.what {
        Ok(What::Run(pre, w)) => runs::write_run(tx, user, run_id, pre, &w).await,
        Ok(What::Step(pre, index, r)) => steps::write_step(tx, user, run_id, index, pre, r).await,
        Ok(What::Trace(id, body)) => traces::write_trace(tx, user, run_id, &id, &body).await,
        Err(problem) => Err(problem),
    };
    match outcome {
        Ok(reply) => {
            result.insert("outcome".into(), json!("ok"));
            if let Some(version) = reply.body.get("version").filter(|_| kind != "trace") {
                result.insert("version".into(), version.clone());
            }
            result.insert("record".into(), reply.body);
            Ok(Value::Object(result))
        }
        Err(problem) if problem.status.is_server_error() => Err(problem),
        Err(problem) if problem.status == 409 => {
            result.insert("outcome".into(), json!("conflict"));
            result.insert("problem".into(), problem.to_json());
            Ok(Value::Object(result))
        }
        Err(mut problem) => {
            // The record's pointers, from the item list; `query.…` and the like stay as they are.
            let record_prefix = format!("/items/{i}/{kind}");
            let in_body = |path: &str| path.is_empty() || path.starts_with('/');
            problem.errors = problem
                .errors
                .into_iter()
                .map(|e| {
                    if in_body(&e.path) {
                        FieldError::new(format!("{record_prefix}{}", e.path), e.message)
                    } else {
                        e
                    }
                })
                .collect();
            Ok(rejected(result, problem))
        }
    }
}

/// `value` with its member `part`, checked on its own, as null (an array, as as many nulls):
/// what a check of the rest says of it is passed over, so it is not walked twice.
fn hollow(value: &Value, part: &str) -> Value {
    let Value::Object(map) = value else { return value.clone() };
    let hollowed = |v: &Value| match v {
        Value::Array(items) => Value::Array(vec![Value::Null; items.len()]),
        _ => Value::Null,
    };
    let members =
        map.iter().map(|(k, v)| (k.clone(), if k == part { hollowed(v) } else { v.clone() }));
    Value::Object(members.collect())
}

fn rejected(mut result: Map<String, Value>, problem: Problem) -> Value {
    result.insert("outcome".into(), json!("rejected"));
    result.insert("problem".into(), problem.to_json());
    Value::Object(result)
}
