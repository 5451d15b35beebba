//! Spelling and grammar issues of a step's thoughts, as the editor shows them and as the
//! quality score counts them (its Language part), and the [`Scorer`] every stored score
//! comes from.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use annotation_core::lint::TextIssue;
use annotation_core::quality;
use annotation_core::record::{Step, Thought};
use annotation_core::spelling::SpellCheck;

use crate::state::GrammarCheck;

thread_local! {
    /// Spelling suggestions by word: finding them is the slow part, and words repeat.
    static SUGGESTIONS: RefCell<HashMap<String, Vec<String>>> = RefCell::new(HashMap::new());
}

/// Misspellings of `text`, each with its replacements (from the cache when known).
pub fn spelling(speller: &dyn SpellCheck, which: Thought, text: &str) -> Vec<TextIssue> {
    let mut issues = speller.check_only(which, text);
    for issue in &mut issues {
        let word = text.get(issue.start..issue.end).unwrap_or_default().to_owned();
        issue.replacements = SUGGESTIONS.with(|cache| {
            cache.borrow_mut().entry(word.clone()).or_insert_with(|| speller.suggest(&word)).clone()
        });
    }
    issues
}

/// Grammar issues of one thought, while its text is still what the server checked.
pub fn grammar<'a>(
    check: &'a GrammarCheck,
    run_id: &'a str,
    step: &'a Step,
    which: Thought,
) -> impl Iterator<Item = &'a TextIssue> + 'a {
    let text = step.thoughts.get(which);
    check
        .found
        .iter()
        .filter(move |(run, index, thought, checked, _)| {
            run == run_id && *index == step.index && *thought == which && checked == text
        })
        .flat_map(|(.., found)| found.iter())
}

/// How many spelling and grammar issues the step's thoughts have (spelling counts none
/// until the dictionary is loaded).
pub fn count(
    speller: Option<&dyn SpellCheck>,
    check: &GrammarCheck,
    run_id: &str,
    step: &Step,
) -> usize {
    let spelled = speller.map_or(0, |s| quality::misspelled(step, s));
    spelled
        + Thought::ALL
            .iter()
            .map(|which| grammar(check, run_id, step, *which).count())
            .sum::<usize>()
}

/// What scores runs as storage writes them: every save, status move, rollback, import and
/// first open goes through [`Scorer::score`], so each stored score counts the spelling.
/// Without the dictionary it scores nothing: the run shows as not scored yet rather than
/// with a score that missed its misspellings.
#[derive(Clone)]
pub struct Scorer(Option<Rc<dyn SpellCheck>>);

impl Scorer {
    /// `speller` is the dictionary, or `None` when it could not be loaded.
    pub fn new(speller: Option<Rc<dyn SpellCheck>>) -> Scorer {
        Scorer(speller)
    }

    /// The score of a run of `steps`, with `grammar`'s issues (step index, count) from
    /// answers still about their text; `None` without the dictionary.
    pub fn score(&self, steps: &[Step], grammar: &[(u32, usize)]) -> Option<u8> {
        self.0.as_ref().map(|speller| quality::score(steps, speller.as_ref(), grammar))
    }
}
