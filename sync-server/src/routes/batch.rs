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
use crate::store::{Tx, get_json};
use crate::validate::{self, Check, join};

pub async fn upsert(
    State(state): State<AppState>,
    user: User,
    JsonBody(body, _): JsonBody,
) -> Result<Reply> {
    // The envelope only: each item is checked, and may be rejected, on its own.
    let mut c = Check::default();
    let spec = crate::schema::spec();
    let item = |path: &str| {
        let rest = path.strip_prefix("items.")?;
        (!rest.contains('.')).then(|| spec.any())
    };
    spec.check_with("BatchUpsertRequest", &body, "", &mut c, &item);
    let items = if c.ok() { body["items"].as_array().cloned().unwrap_or_default() } else { vec![] };
    for (i, item) in items.iter().enumerate() {
        let kind = item.get("kind").and_then(Value::as_str);
        if !matches!(kind, Some("run" | "step" | "trace")) {
            c.err(&format!("items.{i}.kind"), "must be run, step or trace");
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
    let mut open: Option<(String, Tx)> = None;
    for item in prepared {
        let (result, write) = match item {
            Prepared::Rejected(result) => {
                results.push(result);
                continue;
            }
            Prepared::Write { result, write } => (result, write),
        };
        let tx = match open.take() {
            Some((run_id, tx)) if run_id == write.run_id => &mut open.insert((run_id, tx)).1,
            previous => {
                if let Some((_, tx)) = previous {
                    tx.commit().await?;
                }
                let mut tx = state.store.begin().await?;
                // The run's lock is the transaction's first statement (see `store`).
                lock_run(&mut tx, &write.run_id).await?;
                &mut open.insert((write.run_id.clone(), tx)).1
            }
        };
        results.push(apply(tx, &user, result, write).await?);
    }
    if let Some((_, tx)) = open {
        tx.commit().await?;
    }
    Ok(Reply::ok(json!({"results": results})))
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
    /// `mutationId` may still be a replay, so this is read after the mutation is looked up.
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
    let prefix = format!("items.{i}");

    // The envelope of the item; its record goes through its own PUT's checks below.
    let mut c = Check::default();
    let record_path = join(&prefix, kind);
    let record = |path: &str| (path == record_path).then(|| crate::schema::spec().any());
    crate::schema::spec().check_with("BatchItem", item, &prefix, &mut c, &record);
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
                let problem = Problem::invalid(&format!("{prefix}.trace.id"), "must be an id");
                return Prepared::Rejected(rejected(result, problem));
            }
            traces::check_trace(user, &run_id, &trace_id, &record)
                .map(|()| What::Trace(trace_id, record))
        }
    };
    Prepared::Write { result, write: Write { run_id, mutation, what } }
}

/// Applies one item in `tx`: its kept result if its `mutationId` was applied before, else
/// the write, kept under its `mutationId` in the same transaction when it is `ok`.
async fn apply(
    tx: &mut Tx,
    user: &User,
    mut result: Map<String, Value>,
    write: Write,
) -> Result<Value> {
    let i = result.get("item").cloned().unwrap_or(Value::Null);
    let kind = result.get("kind").and_then(Value::as_str).unwrap_or("").to_owned();
    if let Some(mutation) = &write.mutation {
        let row =
            sqlx::query("SELECT result FROM mutations WHERE user_id = $1 AND mutation_id = $2")
                .bind(user.id.clone())
                .bind(mutation.clone())
                .fetch_optional(&mut **tx)
                .await?;
        if let Some(row) = row {
            let mut stored = get_json(&row, "result")?;
            stored["item"] = i;
            return Ok(stored);
        }
    }
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
            let result = Value::Object(result);
            if let Some(mutation) = write.mutation {
                sqlx::query(
                    "INSERT INTO mutations (user_id, mutation_id, result, created_at) \
                     VALUES ($1, $2, $3, $4) ON CONFLICT (user_id, mutation_id) DO NOTHING",
                )
                .bind(user.id.clone())
                .bind(mutation)
                .bind(result.to_string())
                .bind(crate::time::now())
                .execute(&mut **tx)
                .await?;
            }
            Ok(result)
        }
        Err(problem) if problem.status.is_server_error() => Err(problem),
        Err(problem) if problem.status == 409 => {
            result.insert("outcome".into(), json!("conflict"));
            result.insert("problem".into(), problem.to_json());
            Ok(Value::Object(result))
        }
        Err(mut problem) => {
            let record_prefix = format!("items.{i}.{kind}");
            problem.errors = problem
                .errors
                .into_iter()
                .map(|e| FieldError::new(join(&record_prefix, &e.path), e.message))
                .collect();
            Ok(rejected(result, problem))
        }
    }
}

fn rejected(mut result: Map<String, Value>, problem: Problem) -> Value {
    result.insert("outcome".into(), json!("rejected"));
    result.insert("problem".into(), problem.to_json());
    Value::Object(result)
}
