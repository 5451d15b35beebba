//! Run collections (seed §7.D `RunCollection`): a name runs are added under, with a
//! description and metadata — total steps and average quality from the runs in it now, and
//! when it was made and last exported. With a sync server they are the team's
//! (`/collections`, issue 29): [`sync`] plans what goes up and reads what comes back.

use serde::Serialize;

use crate::query::RunSummary;

pub mod sync;
pub use sync::Shared;

/// A collection as stored (the runs name their collections; this is what is said of one).
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Collection {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub created_at: String,
    #[serde(default)]
    pub created_by: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exported_at: Option<String>,
    /// An export made here the server has not been told of yet.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub export_unsent: bool,
    /// Deleted here; the server's copy goes on the next round.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deleted: bool,
    /// The server's copy as of the last round, once it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared: Option<Shared>,
}

/// The collection's figures from its runs now.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Metadata {
    pub runs: usize,
    pub total_steps: u32,
    /// Mean quality of the runs that have a score.
    pub average_quality: Option<u8>,
}

pub fn metadata(summaries: &[RunSummary], name: &str) -> Metadata {
    let inside: Vec<&RunSummary> =
        summaries.iter().filter(|s| s.collections.iter().any(|c| c == name)).collect();
    let scored: Vec<u64> = inside.iter().filter_map(|s| s.quality.map(u64::from)).collect();
    Metadata {
        runs: inside.len(),
        total_steps: inside.iter().map(|s| s.steps).sum(),
        average_quality: (!scored.is_empty())
            .then(|| (scored.iter().sum::<u64>() as f64 / scored.len() as f64).round() as u8),
    }
}

/// `collections` with `name` added if it is new (made by `by` at `at`).
/// A collection deleted here but not yet on the server is the same one again.
pub fn ensure(collections: &mut Vec<Collection>, name: &str, by: &str, at: &str) {
    if let Some(deleted) = collections.iter_mut().find(|c| c.name == name && c.deleted) {
        deleted.deleted = false;
    }
    if !collections.iter().any(|c| c.name == name) {
        collections.push(Collection {
            name: name.to_owned(),
            created_at: at.to_owned(),
            created_by: by.to_owned(),
            ..Collection::default()
        });
        lean::sort_by(collections, |a, b| a.name.cmp(&b.name));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::summarize;
    use crate::record::{Run, Step};

    #[test]
    fn metadata_counts_the_runs_in_the_collection_now() {
        let steps = vec![Step::default(), Step { index: 1, ..Step::default() }];
        let mut a = summarize(&Run { id: "a".into(), quality: Some(80), ..Run::default() }, &steps);
        a.collections = vec!["batch".into()];
        let mut b = summarize(&Run { id: "b".into(), quality: Some(61), ..Run::default() }, &steps);
        b.collections = vec!["batch".into(), "other".into()];
        let c = summarize(&Run { id: "c".into(), quality: Some(10), ..Run::default() }, &steps);
        let meta = metadata(&[a, b, c], "batch");
        assert_eq!(meta, Metadata { runs: 2, total_steps: 4, average_quality: Some(71) });
        let mut all = Vec::new();
        ensure(&mut all, "batch", "ann", "t");
        ensure(&mut all, "batch", "rev", "t2");
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].created_by, "ann");
    }
}
