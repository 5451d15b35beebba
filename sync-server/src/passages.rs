//! Passage anchors kept on their text (issue 29): when a step is saved, every passage comment
//! and pending passage suggestion on it is found again in the field's new text
//! (`run_contract::passage::reanchor`); where the quote survives the range moves with it,
//! where it is gone the comment or suggestion is flagged outdated and keeps its last range.
//! Called by `model::save_step`, so every path that changes a step (an edit, an accepted
//! suggestion, a rollback, a resolution of overlap versions) applies it.

use run_contract::passage::{Passage, reanchor};
use serde_json::{Map, Value, json};

use crate::problem::Result;
use crate::store::{Tx, get_i64, get_json, get_opt_str, get_str};

/// The text of a step field (a dot path such as `thoughts.thought2`), if it is text.
pub fn field_text<'a>(step: &'a Map<String, Value>, field: &str) -> Option<&'a str> {
    crate::validate::value_at(step, field).and_then(Value::as_str)
}

/// A passage as an anchor or suggestion stores it (`range`, `quote`, `prefix`, `suffix`).
pub fn from_anchor(anchor: &Value) -> Option<Passage> {
    let range = anchor.get("range")?;
    Some(Passage {
        start: range.get("start")?.as_u64()? as usize,
        end: range.get("end")?.as_u64()? as usize,
        quote: anchor.get("quote")?.as_str()?.to_owned(),
        prefix: anchor.get("prefix").and_then(Value::as_str).unwrap_or("").to_owned(),
        suffix: anchor.get("suffix").and_then(Value::as_str).unwrap_or("").to_owned(),
    })
}

/// Writes `passage` back into an anchor.
fn into_anchor(anchor: &mut Value, passage: &Passage) {
    anchor["range"] = json!({"start": passage.start, "end": passage.end});
    anchor["quote"] = json!(passage.quote);
    anchor["prefix"] = json!(passage.prefix);
    anchor["suffix"] = json!(passage.suffix);
}

pub fn passage_json(passage: &Passage) -> Value {
    json!({"start": passage.start, "end": passage.end, "quote": passage.quote,
        "prefix": passage.prefix, "suffix": passage.suffix})
}

pub fn passage_from_json(value: &Value) -> Option<Passage> {
    Some(Passage {
        start: value.get("start")?.as_u64()? as usize,
        end: value.get("end")?.as_u64()? as usize,
        quote: value.get("quote")?.as_str()?.to_owned(),
        prefix: value.get("prefix")?.as_str()?.to_owned(),
        suffix: value.get("suffix")?.as_str()?.to_owned(),
    })
}

/// Re-anchors the passages on step `index` of a run against its new `body`.
pub async fn reanchor_step(
    tx: &mut Tx,
    run_id: &str,
    index: i64,
    body: &Map<String, Value>,
) -> Result<()> {
    let threads = sqlx::query(
        "SELECT id, anchor, outdated FROM comments WHERE run_id = $1 AND step_index = $2 \
         AND parent_id IS NULL",
    )
    .bind(run_id.to_owned())
    .bind(index)
    .fetch_all(&mut **tx)
    .await?;
    for row in threads {
        let mut anchor = get_json(&row, "anchor")?;
        let Some(passage) = from_anchor(&anchor) else { continue };
        let Some(field) = anchor.get("field").and_then(Value::as_str).map(str::to_owned) else {
            continue;
        };
        let text = field_text(body, &field).unwrap_or("");
        let was_outdated = get_i64(&row, "outdated")? != 0;
        let (outdated, moved) = match reanchor(&passage, text) {
            Some(found) => (false, Some(found)),
            None => (true, None),
        };
        if let Some(found) = &moved {
            if *found == passage && !was_outdated {
                continue;
            }
            into_anchor(&mut anchor, found);
        } else if was_outdated {
            continue;
        }
        sqlx::query("UPDATE comments SET anchor = $2, outdated = $3 WHERE id = $1")
            .bind(get_str(&row, "id")?)
            .bind(anchor.to_string())
            .bind(i64::from(outdated))
            .execute(&mut **tx)
            .await?;
    }
    let suggestions = sqlx::query(
        "SELECT id, field, passage FROM suggestions WHERE run_id = $1 AND step_index = $2 \
         AND state = 'pending' AND passage IS NOT NULL",
    )
    .bind(run_id.to_owned())
    .bind(index)
    .fetch_all(&mut **tx)
    .await?;
    for row in suggestions {
        let Some(stored) = get_opt_str(&row, "passage")? else { continue };
        let mut stored: Value = serde_json::from_str(&stored).unwrap_or(Value::Null);
        let Some(passage) = passage_from_json(&stored) else { continue };
        let text = field_text(body, &get_str(&row, "field")?).unwrap_or("");
        let was_outdated = stored.get("outdated").and_then(Value::as_bool).unwrap_or(false);
        let next = match reanchor(&passage, text) {
            Some(found) if found == passage && !was_outdated => continue,
            Some(found) => {
                let mut next = passage_json(&found);
                next["outdated"] = json!(false);
                next
            }
            None if was_outdated => continue,
            None => {
                stored["outdated"] = json!(true);
                stored
            }
        };
        sqlx::query("UPDATE suggestions SET passage = $2 WHERE id = $1")
            .bind(get_str(&row, "id")?)
            .bind(next.to_string())
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}
