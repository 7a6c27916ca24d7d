//! When a cell's verdict is settled: the stopping rule of a matrix's cells
//! and of `lab --seeds ... --stop-early`.
//!
//! Seeds run in order and the rule reads them in order, so where a cell
//! stops depends only on its runs' verdicts, not on how many ran at once:
//! - every one of the first [`Rule::violating_after`] conclusive runs
//!   ([`FIRST`] unless a matrix file asks for more) violated: the rate's
//!   95% Wilson interval starts above 72%, nothing more to learn
//!   ([`Stop::Violating`]);
//! - [`SAFE_AT`] conclusive runs and none violated: the interval ends at
//!   3.6% or below ([`Stop::Safe`]; 103 is the fewest runs for which the
//!   Wilson interval of 0 violations does: at 100 it ends at 3.70%);
//! - otherwise the cell runs every seed it was given, its budget
//!   ([`Stop::Budget`]): a mixed cell, or one whose budget ran out first.
//!
//! Inconclusive runs count for neither side.

use super::rows::RunRow;
use crate::scenario::matrix::Matrix;

/// Conclusive runs that, all violating, settle a cell, unless a matrix
/// file asks for more (its `violating_after`, never fewer).
pub const FIRST: usize = crate::scenario::matrix::VIOLATING_AFTER;
/// Conclusive runs that, none violating, settle a cell: the fewest whose
/// 95% Wilson interval of no violation ends at [`SAFE_BOUND`] or below.
pub const SAFE_AT: usize = 103;
/// What a safe cell's violation rate is bounded at, at most (its
/// interval's upper end).
pub const SAFE_BOUND: f64 = 0.036;

/// The stopping rule a sweep is read with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    /// Conclusive runs that, all violating, settle a cell: [`FIRST`] or
    /// more.
    pub violating_after: usize,
}

impl Default for Rule {
    /// The rule of `lab --stop-early` and of a matrix file that does not
    /// say: [`FIRST`].
    fn default() -> Rule {
        Rule {
            violating_after: FIRST,
        }
    }
}

impl Rule {
    /// The rule of matrix `m`'s cells (its file's `violating_after`).
    pub fn of(m: &Matrix) -> Rule {
        assert!(
            m.violating_after >= FIRST,
            "the matrix file's parser lets no violating_after below {FIRST} through"
        );
        Rule {
            violating_after: m.violating_after,
        }
    }
}

/// Why a cell stopped where it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Its first [`Rule::violating_after`] conclusive runs all violated.
    Violating,
    /// [`SAFE_AT`] conclusive runs, none violating.
    Safe,
    /// It ran every seed of its budget.
    Budget,
}

impl Stop {
    /// As `matrix.csv`'s `stopped` column writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Stop::Violating => "violating",
            Stop::Safe => "safe",
            Stop::Budget => "budget",
        }
    }

    /// The reverse of [`Stop::as_str`].
    pub fn parse(s: &str) -> Option<Stop> {
        [Stop::Violating, Stop::Safe, Stop::Budget]
            .into_iter()
            .find(|k| k.as_str() == s)
    }

    /// In words, for a report: "stopped early: its first 10 conclusive
    /// runs violated" (the number `rule`'s).
    pub fn worded(self, rule: Rule) -> String {
        match self {
            Stop::Violating => format!(
                "stopped early: its first {} conclusive runs violated",
                rule.violating_after
            ),
            Stop::Safe => format!("stopped early: {SAFE_AT} conclusive runs, none violating"),
            Stop::Budget => "ran every seed of its budget".to_string(),
        }
    }
}

/// Whether the runs of the first seeds, in seed order, settle the cell
/// under `rule`.
pub fn settled(rows: &[RunRow], rule: Rule) -> Option<Stop> {
    let conclusive: Vec<&RunRow> = rows.iter().filter(|r| r.conclusive()).collect();
    let violating = |r: &&RunRow| r.verdict == crate::check::Verdict::Violation.as_str();
    let first = rule.violating_after;
    assert!(
        first >= FIRST,
        "a rule that settles on {first} violating runs"
    );
    if conclusive.len() >= first && conclusive[..first].iter().all(violating) {
        return Some(Stop::Violating);
    }
    if conclusive.len() >= SAFE_AT && !conclusive.iter().any(violating) {
        return Some(Stop::Safe);
    }
    None
}

/// The length of the shortest prefix of `rows` that settles the cell
/// under `rule`, and why; all of them ([`Stop::Budget`]) when none does.
pub fn stop_point(rows: &[RunRow], rule: Rule) -> (usize, Stop) {
    (1..=rows.len())
        .find_map(|n| settled(&rows[..n], rule).map(|s| (n, s)))
        .unwrap_or((rows.len(), Stop::Budget))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(seed: u64, verdict: &str) -> RunRow {
        RunRow {
            seed,
            verdict: verdict.to_string(),
            ..RunRow::default()
        }
    }

    fn rows(verdicts: &[&str]) -> Vec<RunRow> {
        (1..).zip(verdicts).map(|(s, v)| row(s, v)).collect()
    }

    #[test]
    fn ten_violating_runs_settle_a_cell_and_inconclusive_ones_do_not_count() {
        let mut v = vec!["violation"; 3];
        v.push("inconclusive");
        v.extend(["violation"; 7]);
        v.extend(["safe"; 5]);
        assert_eq!(
            stop_point(&rows(&v), Rule::default()),
            (11, Stop::Violating)
        );
        // One safe run among the first ten: mixed, to the budget.
        let mut mixed = vec!["violation"; 9];
        mixed.push("safe");
        mixed.extend(["violation"; 30]);
        assert_eq!(
            stop_point(&rows(&mixed), Rule::default()),
            (40, Stop::Budget)
        );
    }

    #[test]
    fn a_hundred_and_three_safe_runs_settle_a_cell_and_one_violation_unsettles_it() {
        let mut v = vec!["safe"; 60];
        v.extend(["inconclusive"; 5]);
        v.extend(["safe"; 50]);
        assert_eq!(stop_point(&rows(&v), Rule::default()), (108, Stop::Safe));
        // 100 safe runs, as the rule of before settled them, do not.
        assert_eq!(
            stop_point(&rows(&["safe"; 100]), Rule::default()),
            (100, Stop::Budget)
        );
        let mut late = vec!["safe"; 99];
        late.push("violation");
        late.extend(["safe"; 50]);
        assert_eq!(
            stop_point(&rows(&late), Rule::default()),
            (150, Stop::Budget)
        );
        assert_eq!(
            stop_point(&rows(&["safe"; 20]), Rule::default()),
            (20, Stop::Budget)
        );
    }

    #[test]
    fn safe_at_is_the_fewest_runs_whose_interval_ends_at_the_bound() {
        use crate::stats::{wilson, Z95};
        let upper = |n: usize| wilson(0, n as u64, Z95).1;
        assert!(upper(SAFE_AT) <= SAFE_BOUND, "{}", upper(SAFE_AT));
        assert!(upper(SAFE_AT - 1) > SAFE_BOUND, "{}", upper(SAFE_AT - 1));
        // The interval of the first ten, all violating, starts above 72%.
        assert!(wilson(FIRST as u64, FIRST as u64, Z95).0 > 0.72);
    }

    #[test]
    fn a_matrix_that_asks_for_twenty_violating_runs_goes_on_past_ten() {
        let twenty = Rule {
            violating_after: 20,
        };
        let all = vec!["violation"; 25];
        assert_eq!(stop_point(&rows(&all), twenty), (20, Stop::Violating));
        assert_eq!(stop_point(&rows(&all[..15]), twenty), (15, Stop::Budget));
        // A safe run among the first twenty: mixed, though the first ten
        // would have settled it under the default rule.
        let mut late = vec!["violation"; 14];
        late.push("safe");
        late.extend(["violation"; 10]);
        assert_eq!(stop_point(&rows(&late), twenty), (25, Stop::Budget));
        assert_eq!(
            stop_point(&rows(&late), Rule::default()),
            (10, Stop::Violating)
        );
        // Inconclusive runs count for neither side.
        let mut gaps = vec!["violation"; 10];
        gaps.extend(["inconclusive"; 3]);
        gaps.extend(["violation"; 10]);
        assert_eq!(stop_point(&rows(&gaps), twenty), (23, Stop::Violating));
        assert!(Stop::Violating
            .worded(twenty)
            .contains("first 20 conclusive"));
    }

    #[test]
    fn the_words_read_back() {
        for s in [Stop::Violating, Stop::Safe, Stop::Budget] {
            assert_eq!(Stop::parse(s.as_str()), Some(s));
        }
        assert_eq!(Stop::parse("early"), None);
    }
}
