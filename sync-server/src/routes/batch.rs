//! `POST /runs:batchUpsert`: the offline queue, item by item, each through the same code
//! (and so the same checks and transaction) as its single-record PUT.

use axum::extract::State;
use serde_json::{Map, Value, json};

use crate::AppState;
use crate::auth::User;
use crate::http::{JsonBody, Precondition, Reply};
use crate::problem::{FieldError, Problem, Result};
use crate::routes::{runs, steps, traces};
use crate::store::get_json;
use crate::validate::{self, Check, join};

const KEEP_MS: i64 = 7 * 24 * 3600 * 1000;

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
    let cutoff = crate::time::format_ms(crate::time::now_ms() - KEEP_MS);
    sqlx::query("DELETE FROM mutations WHERE created_at < $1")
        .bind(cutoff)
        .execute(&state.store.pool)
        .await?;
    let mut results = Vec::new();
    for (i, item) in items.iter().enumerate() {
        results.push(apply_item(&state, &user, i, item).await?);
    }
    Ok(Reply::ok(json!({"results": results})))
}

async fn apply_item(state: &AppState, user: &User, i: usize, item: &Value) -> Result<Value> {
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
        return Ok(rejected(result, Problem::validation(c.errors)));
    }
    let mutation = validate::text(item, "mutationId");
    let run_id = validate::text(item, "runId").unwrap_or_default();
    let index = item.get("index").and_then(Value::as_i64);
    let pre = match item.get("baseVersion").and_then(Value::as_i64) {
        Some(base) => Precondition::Match(base),
        None => Precondition::Create,
    };

    if let Some(mutation) = &mutation {
        let row =
            sqlx::query("SELECT result FROM mutations WHERE user_id = $1 AND mutation_id = $2")
                .bind(user.id.clone())
                .bind(mutation.clone())
                .fetch_optional(&state.store.pool)
                .await?;
        if let Some(row) = row {
            let mut stored = get_json(&row, "result")?;
            stored["item"] = json!(i);
            return Ok(stored);
        }
    }

    let record = item.get(kind).cloned().unwrap_or(Value::Null);
    let outcome = match kind {
        "run" => runs::put_run(state, user, &run_id, pre, &record).await,
        "step" => steps::put_step(state, user, &run_id, index.unwrap_or(0), pre, &record).await,
        _ => {
            let trace_id = record.get("id").and_then(Value::as_str).unwrap_or("").to_owned();
            if !validate::is_id(&trace_id) {
                let problem = Problem::invalid(&format!("{prefix}.trace.id"), "must be an id");
                return Ok(rejected(result, problem));
            }
            traces::put_trace(state, user, &run_id, &trace_id, &record).await
        }
    };
    match outcome {
        Ok(reply) => {
            result.insert("outcome".into(), json!("ok"));
            if let Some(version) = reply.body.get("version").filter(|_| kind != "trace") {
                result.insert("version".into(), version.clone());
            }
            result.insert("record".into(), reply.body);
            let result = Value::Object(result);
            if let Some(mutation) = mutation {
                sqlx::query(
                    "INSERT INTO mutations (user_id, mutation_id, result, created_at) \
                     VALUES ($1, $2, $3, $4) ON CONFLICT (user_id, mutation_id) DO NOTHING",
                )
                .bind(user.id.clone())
                .bind(mutation)
                .bind(result.to_string())
                .bind(crate::time::now())
                .execute(&state.store.pool)
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
            let record_prefix = format!("{prefix}.{kind}");
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
