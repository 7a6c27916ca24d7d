//! Replaying candidate fault lists, several at once: the scenario with
//! only these faults (no nemesis), the same seed, one simulated run each.
//!
//! A batch answers "which is the first candidate, in the given order, whose
//! run violates?". Threads take candidates in order from a shared counter
//! and stop taking new ones past a candidate already found to violate, so
//! every candidate before the answer has run: the answer is the same
//! whatever the threads' timing, and whatever their number.

use crate::check::Verdict;
use crate::runner::{self, RunError};
use crate::scenario::{Fault, Scenario};
use crate::sweep::pool;

/// The scenario of one candidate: `base` with exactly `faults`, no nemesis.
pub(crate) fn scenario_with(base: &Scenario, faults: &[Fault]) -> Scenario {
    Scenario {
        faults: faults.to_vec(),
        nemesis: None,
        sweep: None,
        ..base.clone()
    }
}

/// Does the run of `base` with `faults` at `seed` violate?
pub(crate) fn violates(base: &Scenario, faults: &[Fault], seed: u64) -> Result<bool, RunError> {
    let run = runner::simulate(scenario_with(base, faults), seed)?;
    Ok(run.check.verdict == Verdict::Violation)
}

/// Replays, with a budget: counts the candidates whose answer was needed.
pub(crate) struct Replayer<'a> {
    pub(crate) base: &'a Scenario,
    pub seed: u64,
    pub jobs: usize,
    /// Candidates counted so far (see [`Replayer::first_violating`]).
    pub(crate) used: usize,
    /// Most candidates to count in all.
    pub(crate) budget: usize,
}

impl Replayer<'_> {
    /// Candidates the budget still allows.
    pub(crate) fn left(&self) -> usize {
        self.budget.saturating_sub(self.used)
    }

    /// The index of the first candidate whose run violates, `None` when no
    /// candidate does. Only the first [`Replayer::left`] candidates are
    /// tried. Counts the candidates up to the answer (all of those tried
    /// when there is none): a number that does not depend on the threads.
    /// A simulation that fails before the answer is the error returned.
    pub(crate) fn first_violating(
        &mut self,
        candidates: &[Vec<Fault>],
    ) -> Result<Option<usize>, RunError> {
        self.first_violating_by(candidates.len(), |i| candidates[i].clone())
    }

    /// [`Replayer::first_violating`] of `count` candidates, candidate `i`
    /// being `make(i)`, built only when its replay starts (a long fault list
    /// is held once per thread, not once per candidate).
    pub(crate) fn first_violating_by(
        &mut self,
        count: usize,
        make: impl Fn(usize) -> Vec<Fault> + Sync,
    ) -> Result<Option<usize>, RunError> {
        let count = count.min(self.left());
        if count == 0 {
            return Ok(None);
        }
        let (base, seed) = (self.base, self.seed);
        // Past the first candidate that violates (or fails) no other starts.
        let outcomes = pool::map_in_order(
            count,
            self.jobs,
            |i| violates(base, &make(i), seed),
            |outcome| !matches!(outcome, Ok(false)),
        );
        for (i, outcome) in outcomes.into_iter().enumerate() {
            match outcome {
                Some(Ok(false)) => {}
                Some(Ok(true)) => {
                    self.used += i + 1;
                    assert!(self.used <= self.budget, "replays past the budget");
                    return Ok(Some(i));
                }
                Some(Err(e)) => return Err(e),
                // Not run: only past an answer, which came first.
                None => {
                    return Err(RunError::Failed(format!(
                        "internal error: shrink candidate {i} was not replayed"
                    )))
                }
            }
        }
        self.used += count;
        assert!(
            self.used <= self.budget,
            "{} replays past the budget {}",
            self.used,
            self.budget
        );
        Ok(None)
    }
}
