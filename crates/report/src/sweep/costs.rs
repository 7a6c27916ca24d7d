//! "What safety costs": the sweep report's section around the trade-off
//! chart ([`super::tradeoff`]): what the chart shows, then the figures a
//! reader weighs, computed from the summary: the combination that waited
//! least, the one that waited least without a violation, and the one that
//! waited most, each with its waiting and violation rate and their
//! intervals.

use super::format::{interval, latency, pct};
use super::output::SweepOutput;
use crate::doc::{list, para, Block};
use redlock_harness::sweep::stats::SummaryRow;

/// Appends the section, with the chart at figure `chart`.
pub(super) fn section(out: &SweepOutput, chart: usize, doc: &mut Vec<Block>) {
    doc.push(Block::H(2, "What safety costs".into()));
    doc.push(para(
        "Each point is a combination: up, the share of its runs that violated (95% Wilson \
         interval); across, the mean over its runs of the time clients waited for the lock \
         while nobody held it (95% Student-t interval). A measure that buys safety moves its \
         point down; what it costs in waiting moves it right."
            .into(),
    ));
    doc.push(Block::Chart(chart));
    let lines = figures(out);
    if !lines.is_empty() {
        doc.push(list(lines));
    }
}

/// The combination's values: `cluster.restart = 1.0ttl`.
fn name(out: &SweepOutput, r: &SummaryRow) -> String {
    let parts: Vec<String> = out
        .keys
        .iter()
        .zip(&r.values)
        .map(|(k, v)| format!("{k} = {v}"))
        .collect();
    if parts.is_empty() {
        "all runs".to_string()
    } else {
        parts.join(", ")
    }
}

/// `cluster.restart = 1.0ttl: clients waited 2.31 s per run (2.10 s–2.52 s); 0 of 200 runs violated (95% upper bound 1.88%)`.
fn describe(out: &SweepOutput, r: &SummaryRow) -> String {
    let waited = match r.unavailable_ci_ms {
        Some((lo, hi)) => format!(
            "{} per run ({}–{})",
            latency(r.unavailable_mean_ms),
            latency(lo),
            latency(hi)
        ),
        None => format!("{} in its one run", latency(r.unavailable_mean_ms)),
    };
    let violated = if r.violating_runs == 0 {
        format!(
            "0 of {} runs violated (95% upper bound {})",
            r.conclusive_runs(),
            pct(r.ci_high)
        )
    } else {
        format!(
            "{} of {} runs violated ({}, {})",
            r.violating_runs,
            r.conclusive_runs(),
            pct(r.violation_rate),
            interval(r.ci_low, r.ci_high)
        )
    };
    format!("{}: clients waited {waited}; {violated}", name(out, r))
}

/// The least waiting, the least without a violation, the most.
fn figures(out: &SweepOutput) -> Vec<String> {
    let rows: Vec<&SummaryRow> = out
        .rows
        .iter()
        .filter(|r| r.conclusive_runs() > 0 && r.unavailable_mean_ms.is_finite())
        .collect();
    // Ties: the first in sweep order.
    let least = |rs: &[&SummaryRow]| -> Option<usize> {
        let mut best: Option<usize> = None;
        for (i, r) in rs.iter().enumerate() {
            if best.is_none_or(|b| r.unavailable_mean_ms < rs[b].unavailable_mean_ms) {
                best = Some(i);
            }
        }
        best
    };
    let mut lines = Vec::new();
    let Some(lo) = least(&rows) else {
        return lines;
    };
    lines.push(format!("Least waiting: {}.", describe(out, rows[lo])));
    let safe: Vec<&SummaryRow> = rows
        .iter()
        .copied()
        .filter(|r| r.violating_runs == 0)
        .collect();
    match least(&safe) {
        Some(s) if !std::ptr::eq(safe[s], rows[lo]) => lines.push(format!(
            "Least waiting without a violation: {}; that is {} more per run than the least.",
            describe(out, safe[s]),
            latency(safe[s].unavailable_mean_ms - rows[lo].unavailable_mean_ms)
        )),
        Some(_) => {}
        None => lines.push("No combination ran without a violation.".to_string()),
    }
    let mut hi = 0;
    for (i, r) in rows.iter().enumerate() {
        if r.unavailable_mean_ms > rows[hi].unavailable_mean_ms {
            hi = i;
        }
    }
    if hi != lo {
        lines.push(format!("Most waiting: {}.", describe(out, rows[hi])));
    }
    lines
}
