//! The sweep report's document: one model (see [`crate::doc`]),
//! rendered as Markdown and as HTML by [`super::write_sweep`].

use std::ops::RangeInclusive;

use super::charts::Chart;
use super::conclusions::conclusions;
use super::format::{interval, latency, pct};
use super::output::{run_command, SweepOutput, MAX_TABLE_ROWS};
use super::view::{key_view, value_at};
use super::{against_spec, costs};
use crate::doc::{code, link, list, para, text, Block, Row};
use crate::run::NOT_MEASURED;
use redlock_harness::scenario::Expect;
use redlock_harness::sweep::stats::SummaryRow;

pub(super) fn title(out: &SweepOutput) -> String {
    format!("{}, sweep", out.scenario.name)
}

fn seeds_text(seeds: &RangeInclusive<u64>) -> String {
    let n = seeds
        .end()
        .checked_sub(*seeds.start())
        .map_or(0, |d| d.saturating_add(1));
    format!(
        "seeds {}..={} ({} per combination)",
        seeds.start(),
        seeds.end(),
        n
    )
}

/// The document; `tradeoff`: the index of the trade-off chart among the
/// figures (after `charts`), when there is one.
pub(super) fn document(out: &SweepOutput, charts: &[Chart], tradeoff: Option<usize>) -> Vec<Block> {
    let command = if out.lab.is_some() { "lab" } else { "sweep" };
    let mut doc = vec![Block::H(
        1,
        format!("redlock-sim {command}: {}", out.scenario.name),
    )];
    intro(&mut doc, out);

    doc.push(Block::H(2, "Conclusions".into()));
    doc.push(list(conclusions(out)));
    doc.push(para(
        "A violation is a run in which two clients held the same lock at once, or the store \
         applied a write after a later acquisition of its lock had succeeded (a stale write; \
         writes of two acquisitions interleaved are counted too). Rates are the share of runs with at least \
         one violation; intervals are 95% Wilson score intervals. \"0 violations in N runs\" \
         bounds the rate, it does not prove it zero."
            .into(),
    ));
    // The chart that shows the answer: the violation rate along the first
    // varied key (it is not repeated under Charts).
    let headline = (!out.keys.is_empty() && !charts.is_empty()).then_some(0);
    if let Some(k) = headline {
        doc.push(Block::Chart(k));
    }
    if let Some(k) = tradeoff {
        costs::section(out, k, &mut doc);
    }

    summary(&mut doc, out);
    if out.rows.len() > 1 {
        ranking(&mut doc, out);
    }
    if !out.caught.is_empty() {
        against_spec::section(out, &mut doc);
    }
    if !out.replay.is_empty() {
        violating_runs(&mut doc, out);
    }
    if !out.inconclusive.is_empty() {
        inconclusive_runs(&mut doc, out);
    }
    charts_section(&mut doc, out, charts, headline);
    files(&mut doc, out, charts, tradeoff);
    doc
}

/// The description, the setup, and the varied keys with their values.
fn intro(doc: &mut Vec<Block>, out: &SweepOutput) {
    let s = out.scenario;
    if !s.description.trim().is_empty() {
        doc.push(para(s.description.trim().to_string()));
    }
    let mut setup = format!(
        "{} combination(s), {}, {} runs in total. The scenario expects {}.",
        out.rows.len(),
        seeds_text(&out.seeds),
        out.total_runs,
        match s.expect {
            Expect::Safe => "no violation",
            Expect::Violation => "violations",
            Expect::Degraded => "no violation (degraded service)",
        }
    );
    if out.keys.is_empty() {
        setup.push_str(" No key is varied: every run has the same settings.");
    }
    doc.push(para(setup));
    if let Some(c) = out.coverage {
        doc.push(super::coverage::notice(c));
    }
    if !out.keys.is_empty() {
        let items = (0..out.keys.len())
            .map(|i| {
                let v = key_view(out, i);
                format!("{}: {}", v.name, v.values.join(", "))
            })
            .collect();
        doc.push(para("Varied keys and their values:".into()));
        doc.push(list(items));
    }
}

/// The section "Summary": a row per combination, and what the columns mean.
fn summary(doc: &mut Vec<Block>, out: &SweepOutput) {
    doc.push(Block::H(2, "Summary".into()));
    let mut head: Vec<String> = out.keys.to_vec();
    head.push("runs".into());
    if any_inconclusive(out) {
        head.push("inconclusive".into());
    }
    head.extend(
        [
            "violating runs",
            "violation rate",
            "95% interval",
            "acquire rate",
            "acquire p50",
            "acquire p99",
            "waited per run",
            "waited 95% interval",
        ]
        .map(String::from),
    );
    let rows: Vec<Row> = out
        .rows
        .iter()
        .take(MAX_TABLE_ROWS)
        .map(|r| summary_row(out, r))
        .collect();
    doc.push(Block::Table(head, rows));
    if out.rows.len() > MAX_TABLE_ROWS {
        doc.push(para(format!(
            "… and {} more combinations in summary.csv.",
            out.rows.len() - MAX_TABLE_ROWS
        )));
    }
    doc.push(para(
        "Acquire rate: acquisitions per lock call over all runs of the combination. \
         Acquire p50: the median over runs of each run's median acquisition latency; \
         acquire p99: the 99th percentile over runs of each run's p99 latency. \
         Waited per run: the mean over runs of the time clients waited for the lock while \
         nobody held it, with its 95% Student-t interval. \
         Combinations with violations are in bold."
            .into(),
    ));
}

/// Whether any combination had an inconclusive run.
fn any_inconclusive(out: &SweepOutput) -> bool {
    out.rows.iter().any(|r| r.inconclusive_runs > 0)
}

/// The summary table's row of combination `r`, in bold with violations.
fn summary_row(out: &SweepOutput, r: &SummaryRow) -> Row {
    let mut cells: Vec<String> = (0..out.keys.len())
        .map(|j| value_at(r, j).to_string())
        .collect();
    cells.push(r.runs.to_string());
    if any_inconclusive(out) {
        cells.push(r.inconclusive_runs.to_string());
    }
    cells.extend([
        r.violating_runs.to_string(),
        pct(r.violation_rate),
        interval(r.ci_low, r.ci_high),
    ]);
    cells.extend(lock_call_cells(r));
    Row {
        cells,
        strong: r.violating_runs > 0,
    }
}

/// The summary table's figures of lock calls: "not measured" for a lab
/// sweep's, which sees none.
fn lock_call_cells(r: &SummaryRow) -> Vec<String> {
    if !r.lock_calls_seen() {
        return vec![NOT_MEASURED.to_string(); 5];
    }
    vec![
        pct(r.acquire_rate),
        latency(r.acquire_p50_ms),
        latency(r.acquire_p99_ms),
        latency(r.unavailable_mean_ms),
        r.unavailable_ci_ms
            .map_or("n/a (1 run)".to_string(), |(lo, hi)| {
                format!("{}–{}", latency(lo), latency(hi))
            }),
    ]
}

/// The section "Ranking": the combinations from the most to the least often violated.
fn ranking(doc: &mut Vec<Block>, out: &SweepOutput) {
    doc.push(Block::H(2, "Ranking".into()));
    doc.push(para(
        "Combinations from the most to the least often violated (ties: the higher upper \
         bound first)."
            .into(),
    ));
    let mut ranked: Vec<&SummaryRow> = out.rows.iter().collect();
    // No rate (no conclusive run) ranks last.
    let key = |x: f64| if x.is_nan() { -1.0 } else { x };
    ranked.sort_by(|a, b| {
        key(b.violation_rate)
            .total_cmp(&key(a.violation_rate))
            .then(key(b.ci_high).total_cmp(&key(a.ci_high)))
    });
    let mut head = vec!["rank".to_string()];
    head.extend(out.keys.iter().cloned());
    head.extend(["violation rate", "95% interval", "violating runs"].map(String::from));
    let rows = ranked
        .iter()
        .take(MAX_TABLE_ROWS)
        .enumerate()
        .map(|(i, r)| {
            let mut cells = vec![(i + 1).to_string()];
            cells.extend((0..out.keys.len()).map(|j| value_at(r, j).to_string()));
            cells.extend([
                pct(r.violation_rate),
                interval(r.ci_low, r.ci_high),
                format!("{} of {}", r.violating_runs, r.conclusive_runs()),
            ]);
            Row {
                cells,
                strong: r.violating_runs > 0,
            }
        })
        .collect();
    doc.push(Block::Table(head, rows));
}

/// The section "Violating runs": links to their reports and the commands
/// that replay them.
fn violating_runs(doc: &mut Vec<Block>, out: &SweepOutput) {
    doc.push(Block::H(2, "Violating runs".into()));
    doc.push(para(if out.lab.is_some() {
        "The violating seeds. Each links to that run's own report (its timeline, the \
         violation and the events that led to it, its clients' logs), under seed-<N>/, \
         when it was kept (a matrix run with `--keep-runs first` keeps only its cell's \
         first violating run); the command beside it runs the seed again: the same \
         faults, in real time, so a new history."
            .into()
    } else {
        "The first violating seeds of each combination. Each links to that run's own \
         report (its timeline, the violation and the events that led to it), written by \
         the sweep under runs/; the command beside it reruns the run exactly (same trace)."
            .into()
    }));
    let mut items = Vec::new();
    for (values, seeds) in out.replay.iter().take(MAX_TABLE_ROWS) {
        let combination = out
            .keys
            .iter()
            .zip(values)
            .map(|(k, v)| format!("{k} = {v}"))
            .collect::<Vec<_>>()
            .join(", ");
        for (seed, href) in seeds {
            let label = if combination.is_empty() {
                format!("seed {seed}")
            } else {
                format!("{combination}, seed {seed}")
            };
            let shown = match href {
                Some(href) => link(label, href.clone()),
                None => text(format!("{label} (its run report was not kept)")),
            };
            items.push(vec![
                shown,
                text(": "),
                code(run_command(out, values, *seed)),
            ]);
        }
    }
    doc.push(Block::List(items));
}

/// At most this many inconclusive runs are listed (summary.csv counts them
/// all, runs.csv says why for each).
const MAX_INCONCLUSIVE: usize = 100;

/// The section "Inconclusive runs": what they did not test, and why.
fn inconclusive_runs(doc: &mut Vec<Block>, out: &SweepOutput) {
    doc.push(Block::H(2, "Inconclusive runs".into()));
    let n = out.inconclusive.len();
    doc.push(para(format!(
        "{n} of {} runs were inconclusive: they found no violation but did not test what the \
         scenario sets out to test (a scripted fault that never acted; in the lab, also no \
         client that ever held the lock, a client that failed or was never ready, or a server \
         that could not run a client's command). They say nothing of safety: every rate above \
         is of the other runs. Why each was inconclusive (runs.csv's `inconclusive` column):",
        out.total_runs
    )));
    let mut items = Vec::new();
    for (values, seed, causes) in out.inconclusive.iter().take(MAX_INCONCLUSIVE) {
        let mut what: Vec<String> = out
            .keys
            .iter()
            .zip(values)
            .map(|(k, v)| format!("{k} = {v}"))
            .collect();
        what.push(format!("seed {seed}"));
        items.push(vec![text(format!("{}: {causes}", what.join(", ")))]);
    }
    if n > MAX_INCONCLUSIVE {
        items.push(vec![text(format!(
            "… and {} more in runs.csv",
            n - MAX_INCONCLUSIVE
        ))]);
    }
    doc.push(Block::List(items));
}

/// The section "Charts": every chart but the `headline` one, under its key.
fn charts_section(
    doc: &mut Vec<Block>,
    out: &SweepOutput,
    charts: &[Chart],
    headline: Option<usize>,
) {
    doc.push(Block::H(2, "Charts".into()));
    doc.push(para(if out.keys.is_empty() {
        "The violation rate with its 95% interval, the acquisition rate, and the acquisition \
         latency over all runs."
            .to_string()
    } else {
        "For each varied key: the violation rate with its 95% interval (error bars), the \
         acquisition rate, and the acquisition latency (p50 and p99, side by side) against the \
         key's values, one line per combination of the other keys."
            .to_string()
    }));
    let mut current: Option<&str> = None;
    for (k, c) in charts.iter().enumerate() {
        if headline == Some(k) {
            continue;
        }
        if !out.keys.is_empty() && current != Some(c.key.as_str()) {
            current = Some(c.key.as_str());
            doc.push(Block::H(3, c.key.clone()));
        }
        doc.push(Block::Chart(k));
    }
}

/// The line naming the sweep's files.
fn files(doc: &mut Vec<Block>, out: &SweepOutput, charts: &[Chart], tradeoff: Option<usize>) {
    let mut files = vec![
        "runs.csv (one row per run)".to_string(),
        "summary.csv (one row per combination)".to_string(),
    ];
    files.extend(charts.iter().map(|c| c.file.clone()));
    if tradeoff.is_some() {
        files.push(super::tradeoff::FILE.to_string());
    }
    if out.lab.is_some() {
        files.push("seed-<N>/ (each run's report, where kept)".to_string());
    } else if !out.replay.is_empty() {
        files.push("runs/ (the reports of the violating runs listed)".to_string());
    }
    doc.push(para(format!("Files: {}.", files.join(", "))));
}
