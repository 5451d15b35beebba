//! Fixtures shared by this crate's unit tests.

use crate::record::Step;

/// A step holding only the three thoughts: the checklist, quality, pattern and lint tests
/// all judge a step by its text alone, so they build it the same way.
pub(crate) fn step(t1: &str, t2: &str, t3: &str) -> Step {
    let mut s = Step::default();
    s.thoughts.thought1 = t1.into();
    s.thoughts.thought2 = t2.into();
    s.thoughts.thought3 = t3.into();
    s
}
