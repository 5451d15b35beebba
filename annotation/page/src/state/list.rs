//! The runs list: every run's summary, the filter and sort, and the runs picked for a batch
//! action. Matching runs are recomputed on every change of filter or data, from summaries
//! already in memory, so typing in the search box never waits on storage.

use std::collections::BTreeSet;
use std::rc::Rc;

use annotation_core::query::{Filter, RunSummary, Sort, select, unscored_hidden};
use annotation_core::record::ReviewStatus;

#[derive(Debug, Clone, PartialEq, Default)]
pub struct ListState {
    pub summaries: Rc<Vec<RunSummary>>,
    pub filter: Filter,
    pub sort: Sort,
    /// Indexes into `summaries` of the runs shown, in order.
    pub shown: Rc<Vec<usize>>,
    /// Runs a quality bound holds back only for having no score yet: the filter says so.
    pub unscored_hidden: usize,
    /// Run ids ticked for a batch action.
    pub picked: BTreeSet<String>,
    pub loaded: bool,
    /// Whether the runs' search texts are in `summaries` yet (they load after the list shows).
    pub texts_loaded: bool,
    /// "Approve picked" asked first: the picked runs with open issues or unfinished steps.
    pub approving: Option<BatchApproval>,
}

/// The picked runs Approve would move, and those of them with open work.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchApproval {
    pub all: Vec<String>,
    pub doubtful: Vec<String>,
}

/// The approver's answer to [`BatchApproval`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BatchAnswer {
    All,
    /// Only the runs whose steps are all complete, with no open issue.
    Finished,
    Cancel,
}

pub enum ListAction {
    Filter(Filter),
    Text(String),
    Sort(Sort),
    ToggleStatus(ReviewStatus),
    Pick(String, bool),
    PickShown(bool),
    /// The runs' search texts, by run id.
    Texts(std::collections::HashMap<String, String>),
}

impl ListState {
    /// The runs an export or batch acts on: those picked, else those the filters show.
    pub fn offered(&self) -> impl Iterator<Item = &RunSummary> {
        let shown = self.shown.iter().map(|&i| &self.summaries[i]);
        let picked = self.summaries.iter().filter(|s| self.picked.contains(&s.run_id));
        let all_shown = self.picked.is_empty();
        shown.filter(move |_| all_shown).chain(picked.filter(move |_| !all_shown))
    }

    pub fn load(&mut self, summaries: Vec<RunSummary>) {
        self.summaries = Rc::new(summaries);
        self.loaded = true;
        self.texts_loaded = false;
        // Ticks for runs that are gone would act on nothing.
        let ids: BTreeSet<&str> = lean::set_of(self.summaries.iter().map(|s| s.run_id.as_str()));
        self.picked.retain(|id| ids.contains(id.as_str()));
        self.refresh();
    }

    fn refresh(&mut self) {
        self.shown = Rc::new(select(&self.summaries, &self.filter, self.sort));
        self.unscored_hidden = unscored_hidden(&self.summaries, &self.filter);
    }

    pub fn apply(&mut self, action: ListAction) {
        match action {
            ListAction::Filter(filter) => self.filter = filter,
            ListAction::Text(text) => self.filter.text = text,
            ListAction::Sort(sort) => self.sort = sort,
            ListAction::ToggleStatus(status) => {
                if let Some(i) = self.filter.statuses.iter().position(|s| *s == status) {
                    self.filter.statuses.remove(i);
                } else {
                    self.filter.statuses.push(status);
                }
            }
            ListAction::Pick(id, on) => {
                if on {
                    self.picked.insert(id);
                } else {
                    self.picked.remove(&id);
                }
                return;
            }
            ListAction::Texts(mut texts) => {
                for summary in Rc::make_mut(&mut self.summaries) {
                    if let Some(text) = texts.remove(&summary.run_id) {
                        summary.search_text = text;
                    }
                }
                self.texts_loaded = true;
            }
            ListAction::PickShown(on) => {
                for i in self.shown.iter() {
                    let id = self.summaries[*i].run_id.clone();
                    if on {
                        self.picked.insert(id);
                    } else {
                        self.picked.remove(&id);
                    }
                }
                return;
            }
        }
        self.refresh();
    }

    /// The summaries shown, in order.
    pub fn shown(&self) -> impl Iterator<Item = &RunSummary> {
        self.shown.iter().map(|i| &self.summaries[*i])
    }
}
