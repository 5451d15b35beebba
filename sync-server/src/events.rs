//! What a write tells people and other systems, in the write's own transaction: the
//! notifications of the users it concerns, and an event in the webhook outbox for every hook
//! subscribed to it (`webhooks` delivers them). Nothing here can fail a write for a reason
//! of its own: it only inserts rows.

use serde_json::{Value, json};
use sqlx::AnyConnection;

use crate::auth::new_id;
use crate::model::{RunRow, Status};
use crate::problem::Result;
use crate::store::{Tx, get_str};

/// The webhook events, as `WebhookEventName` spells them.
pub const EVENTS: [&str; 5] =
    ["run.submitted", "run.approved", "run.rejected", "comment.added", "assignment.changed"];

/// Puts `event` in the outbox of every hook subscribed to it (paused hooks too: their
/// deliveries wait until they are resumed) and wakes the delivery task.
pub async fn fire(
    conn: &mut AnyConnection,
    event: &str,
    actor: &str,
    run_id: Option<&str>,
    data: Value,
) -> Result<()> {
    let hooks = sqlx::query("SELECT id, events FROM webhooks").fetch_all(&mut *conn).await?;
    let now = crate::time::now();
    let event_id = new_id();
    let body = json!({"id": event_id, "event": event, "at": now, "actor": actor,
        "runId": run_id, "data": data})
    .to_string();
    let mut queued = false;
    for hook in hooks {
        let events: Vec<String> =
            serde_json::from_str(&get_str(&hook, "events")?).unwrap_or_default();
        if !events.iter().any(|e| e == event) {
            continue;
        }
        sqlx::query(
            "INSERT INTO webhook_deliveries (id, hook_id, event_id, event, body, status, \
             attempts, next_attempt_at, created_at) VALUES ($1, $2, $3, $4, $5, 'pending', 0, \
             $6, $6)",
        )
        .bind(new_id())
        .bind(get_str(&hook, "id")?)
        .bind(event_id.clone())
        .bind(event.to_owned())
        .bind(body.clone())
        .bind(now.clone())
        .execute(&mut *conn)
        .await?;
        queued = true;
    }
    if queued {
        crate::webhooks::wake();
    }
    Ok(())
}

/// Tells `user` something: one notification.
pub async fn notify(
    conn: &mut AnyConnection,
    user: &str,
    kind: &str,
    run_id: Option<&str>,
    comment_id: Option<&str>,
    actor: &str,
    text: &str,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO notifications (id, user_id, kind, run_id, comment_id, actor, body_text, \
         created_at, read_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL)",
    )
    .bind(new_id())
    .bind(user.to_owned())
    .bind(kind.to_owned())
    .bind(run_id.map(str::to_owned))
    .bind(comment_id.map(str::to_owned))
    .bind(actor.to_owned())
    .bind(text.to_owned())
    .bind(crate::time::now())
    .execute(conn)
    .await?;
    Ok(())
}

/// The people a run's outcome concerns: its annotator and everyone assigned to it.
async fn run_people(conn: &mut AnyConnection, run: &RunRow) -> Result<Vec<String>> {
    let rows = sqlx::query("SELECT annotator FROM assignments WHERE run_id = $1")
        .bind(run.id.clone())
        .fetch_all(&mut *conn)
        .await?;
    let mut people = vec![run.annotator.clone()];
    for row in rows {
        let id = get_str(&row, "annotator")?;
        if !people.contains(&id) {
            people.push(id);
        }
    }
    Ok(people)
}

/// What a status change (a transition, a batch item, the last overlap version handed in)
/// does besides the version: review rounds, assignments' state, notifications, webhooks.
pub async fn status_changed(
    tx: &mut Tx,
    run: &RunRow,
    from: Status,
    to: Status,
    actor: &str,
    version: i64,
) -> Result<()> {
    let data = json!({"from": from.as_str(), "to": to.as_str(), "version": version});
    let task = run.header.get("taskPrompt").and_then(Value::as_str).unwrap_or("");
    let short: String = task.chars().take(60).collect();
    match to {
        Status::InReview => {
            sqlx::query("UPDATE runs SET review_rounds = review_rounds + 1 WHERE id = $1")
                .bind(run.id.clone())
                .execute(&mut **tx)
                .await?;
            if !run.in_overlap() {
                let now = crate::time::now();
                sqlx::query(
                    "UPDATE assignments SET state = 'submitted', submitted_at = $2 \
                     WHERE run_id = $1 AND state = 'open'",
                )
                .bind(run.id.clone())
                .bind(now)
                .execute(&mut **tx)
                .await?;
            }
            let reviewers = sqlx::query(
                "SELECT id FROM users WHERE role IN ('reviewer', 'qa_manager') ORDER BY id",
            )
            .fetch_all(&mut **tx)
            .await?;
            for row in reviewers {
                let reviewer = get_str(&row, "id")?;
                if reviewer != actor {
                    let text = format!("Review requested: \"{short}\" ({})", run.id);
                    notify(tx, &reviewer, "review-requested", Some(&run.id), None, actor, &text)
                        .await?;
                }
            }
            fire(tx, "run.submitted", actor, Some(&run.id), data).await
        }
        Status::Draft if !run.in_overlap() => {
            // Sent back or reworked: the run is in its annotator's queue again.
            sqlx::query(
                "UPDATE assignments SET state = 'open', submitted_at = NULL WHERE run_id = $1",
            )
            .bind(run.id.clone())
            .execute(&mut **tx)
            .await?;
            Ok(())
        }
        Status::Approved | Status::Rejected => {
            let (kind, event, word) = match to {
                Status::Approved => ("run-approved", "run.approved", "approved"),
                _ => ("run-rejected", "run.rejected", "rejected"),
            };
            for person in run_people(tx, run).await? {
                if person != actor {
                    let text = format!("Your run \"{short}\" ({}) was {word}.", run.id);
                    notify(tx, &person, kind, Some(&run.id), None, actor, &text).await?;
                }
            }
            fire(tx, event, actor, Some(&run.id), data).await
        }
        _ => Ok(()),
    }
}
