//! `GET /analytics/annotators` and `GET /analytics/agreement`: per-annotator figures
//! computed from the server's data. Only admins see peers by name; everyone else sees their
//! own row and peers as `Annotator 1…n`, numbered by their figures.

use std::collections::BTreeMap;

use axum::extract::State;
use run_contract::agreement::{by_week, mean, std_dev};
use serde_json::{Value, json};

use crate::AppState;
use crate::auth::{Role, User};
use crate::http::{Query, Reply};
use crate::problem::{Problem, Result};
use crate::store::{get_i64, get_opt_i64, get_str};

#[derive(Default)]
struct Figures {
    runs: i64,
    qualities: Vec<f64>,
    agreements: Vec<f64>,
    reviewed: i64,
    completed: i64,
}

pub async fn annotators(State(state): State<AppState>, user: User) -> Result<Reply> {
    let mut conn = state.store.pool.acquire().await?;
    let mut figures: BTreeMap<String, Figures> = BTreeMap::new();
    for row in
        sqlx::query("SELECT id FROM users WHERE role = 'annotator'").fetch_all(&mut *conn).await?
    {
        figures.entry(get_str(&row, "id")?).or_default();
    }
    // A run counts for its annotator; an overlap run for each of its annotators.
    let runs = sqlx::query(
        "SELECT r.id, r.annotator, r.status, r.review_rounds, m.quality FROM runs r \
         LEFT JOIN run_metrics m ON m.run_id = r.id",
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut overlap: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for row in
        sqlx::query("SELECT run_id, annotator FROM annotation_sets WHERE state <> 'unassigned'")
            .fetch_all(&mut *conn)
            .await?
    {
        overlap.entry(get_str(&row, "run_id")?).or_default().push(get_str(&row, "annotator")?);
    }
    for row in &runs {
        let id = get_str(row, "id")?;
        let people = overlap
            .get(&id)
            .cloned()
            .unwrap_or_else(|| vec![get_str(row, "annotator").unwrap_or_default()]);
        let quality = get_opt_i64(row, "quality")?;
        let status = get_str(row, "status")?;
        let reviewed = get_i64(row, "review_rounds")? > 0;
        let completed = matches!(status.as_str(), "approved" | "rejected" | "archived");
        for person in people {
            let f = figures.entry(person).or_default();
            f.runs += 1;
            if let Some(q) = quality {
                f.qualities.push(q as f64);
            }
            if reviewed {
                f.reviewed += 1;
                f.completed += i64::from(completed);
            }
        }
    }
    for pair in super::overlap::all_pairs(&mut conn).await? {
        for person in [&pair.a, &pair.b] {
            figures.entry(person.clone()).or_default().agreements.push(pair.score);
        }
    }
    let mut rows: Vec<(String, Value)> = figures
        .into_iter()
        .map(|(id, f)| {
            let average = mean(f.qualities.iter().copied());
            let value = json!({
                "runs": f.runs,
                "scoredRuns": f.qualities.len(),
                "averageQuality": average,
                "consistency": std_dev(&f.qualities).map(|s| 100.0 - s),
                "agreement": mean(f.agreements.iter().copied()),
                "reviewCompletionRate": (f.reviewed > 0).then(|| f.completed as f64 / f.reviewed as f64),
            });
            (id, value)
        })
        .collect();
    // Peers are numbered by their figures (best average quality first), never by name.
    rows.sort_by(|a, b| {
        let q = |v: &Value| v["averageQuality"].as_f64().unwrap_or(-1.0);
        q(&b.1).total_cmp(&q(&a.1)).then_with(|| b.1["runs"].as_i64().cmp(&a.1["runs"].as_i64()))
    });
    let named = user.role == Role::Admin;
    let mut n = 0;
    let items: Vec<Value> = rows
        .into_iter()
        .map(|(id, mut value)| {
            let you = id == user.id;
            let (label, annotator) = if named || you {
                (id.clone(), Some(id))
            } else {
                n += 1;
                (format!("Annotator {n}"), None)
            };
            value["label"] = json!(label);
            value["annotator"] = json!(annotator);
            value["you"] = json!(you);
            value
        })
        .collect();
    Ok(Reply::ok(json!({"items": items})))
}

pub async fn agreement(
    State(state): State<AppState>,
    user: User,
    mut query: Query,
) -> Result<Reply> {
    let wanted = query.one("annotator")?;
    query.finish()?;
    let wanted = wanted.map(|name| user.named(&name)).transpose();
    let wanted = wanted.map_err(|why| Problem::bad_param("query.annotator", why))?;
    let wanted = if user.role == Role::Annotator {
        if wanted.as_ref().is_some_and(|w| *w != user.id) {
            return Err(Problem::forbidden("Annotators see their own agreement only."));
        }
        Some(user.id.clone())
    } else {
        wanted
    };
    let mut conn = state.store.pool.acquire().await?;
    let mut points: BTreeMap<String, Vec<(String, f64)>> = BTreeMap::new();
    for pair in super::overlap::all_pairs(&mut conn).await? {
        for person in [&pair.a, &pair.b] {
            if wanted.as_ref().is_none_or(|w| w == person) {
                points.entry(person.clone()).or_default().push((pair.at.clone(), pair.score));
            }
        }
    }
    let items: Vec<Value> = points
        .into_iter()
        .map(|(annotator, points)| {
            let weeks: Vec<Value> = by_week(&points)
                .into_iter()
                .map(|(week, runs, value)| json!({"weekStart": week, "runs": runs, "agreement": value}))
                .collect();
            json!({"annotator": annotator, "points": weeks})
        })
        .collect();
    Ok(Reply::ok(json!({"items": items})))
}
