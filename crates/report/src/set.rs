//! The report of a sweep of several scenario files (`redlock-sim sweep
//! A.toml B.toml ... --out DIR`): each scenario is swept into `DIR/<name>/`
//! as `sweep` alone would sweep it; this module writes what covers them all,
//! `DIR/summary.csv` (a row per scenario and combination) and `report.md` /
//! `index.html`, which open with the answer: how many runs violated, and
//! for each scenario its runs, its violations and the 95% upper bound of its
//! violation rate.
//!
//! As in the sweep report, a scenario without violations is never called
//! "safe": it had "0 violations in N runs (95% upper bound X%)".

use std::io;
use std::ops::RangeInclusive;
use std::path::Path;

use super::doc::{bold, code, link, para, shell_word, text, to_html, to_md, Block, Inline, Row};
use super::sweep::format::{interval, pct};
use super::sweep::STYLE;
use redlock_harness::scenario::{Expect, Scenario};
use redlock_harness::sweep::stats::{SummaryRow, SUMMARY_COLUMNS};

/// One scenario of the set: its own sweep, in `DIR/<dir>/`.
pub struct SetEntry<'a> {
    pub scenario: &'a Scenario,
    /// The file as the user named it.
    pub file: &'a str,
    /// Its sweep's directory, relative to the set's (the scenario's name).
    pub dir: &'a str,
    /// The varied keys of its `[sweep.vary]` (none for most scenarios).
    pub keys: &'a [String],
    /// Its sweep's `summary.csv` rows.
    pub rows: &'a [SummaryRow],
    pub seeds: RangeInclusive<u64>,
}

/// Everything the set's report is made from.
pub struct SetOutput<'a> {
    /// In the order the files were given.
    pub entries: &'a [SetEntry<'a>],
    /// Files given but left out by `--expect`, with what they expect.
    pub skipped: &'a [(String, Expect)],
    /// The command that regenerates the set, as it could be typed again.
    pub command: String,
}

/// `key=value key=value` of a combination; empty without varied keys.
fn combination(keys: &[String], values: &[String]) -> String {
    keys.iter()
        .zip(values)
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn totals(out: &SetOutput) -> (u64, u64) {
    let rows = || out.entries.iter().flat_map(|e| e.rows.iter());
    (
        rows().map(|r| r.conclusive_runs()).sum(),
        rows().map(|r| r.violating_runs).sum(),
    )
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// The answer, first line of the report and of stdout: `0 violations in
/// 9000 runs of 9 scenarios that expect no violation; each scenario 0 in
/// 1000 runs, 95% upper bound 0.38%.` (or how many violated, in which
/// scenarios).
pub fn answer(out: &SetOutput) -> String {
    let (runs, violating) = totals(out);
    let n = out.entries.len();
    let all_safe = out
        .entries
        .iter()
        .all(|e| e.scenario.expect == Expect::Safe);
    let of = if all_safe {
        format!("{} that expect no violation", plural(n, "scenario"))
    } else {
        plural(n, "scenario")
    };
    let left_out = inconclusive(out);
    if violating == 0 {
        return format!(
            "0 violations in {runs} runs of {of}; {}.{left_out}",
            bounds(out)
        );
    }
    let names: Vec<String> = out
        .entries
        .iter()
        .filter(|e| e.rows.iter().any(|r| r.violating_runs > 0))
        .map(|e| {
            let v: u64 = e.rows.iter().map(|r| r.violating_runs).sum();
            let expected = e.scenario.expect == Expect::Violation;
            format!(
                "{} ({v}{})",
                e.scenario.name,
                if expected {
                    ", expected"
                } else {
                    ", NOT expected"
                }
            )
        })
        .collect();
    format!(
        "{violating} violating runs in {runs} runs of {of}: {}.{left_out}",
        names.join(", ")
    )
}

/// ` 17 more runs were inconclusive (name 17, ...): ...`, or nothing: the
/// runs the answer's counts leave out, by scenario.
fn inconclusive(out: &SetOutput) -> String {
    let by: Vec<(String, u64)> = out
        .entries
        .iter()
        .map(|e| {
            let n = e.rows.iter().map(|r| r.inconclusive_runs).sum();
            (e.scenario.name.clone(), n)
        })
        .filter(|(_, n)| *n > 0)
        .collect();
    let total: u64 = by.iter().map(|(_, n)| n).sum();
    if total == 0 {
        return String::new();
    }
    let names: Vec<String> = by.iter().map(|(name, n)| format!("{name} {n}")).collect();
    format!(
        " {total} more {} inconclusive ({}): they did not test what their scenario sets out to \
         test, and each scenario's report says why.",
        if total == 1 { "run was" } else { "runs were" },
        names.join(", ")
    )
}

/// The bound of the rows without violations: one figure when they all ran
/// as many conclusive runs, else the largest, named (rows without a
/// conclusive run have none).
fn bounds(out: &SetOutput) -> String {
    // A row without a conclusive run has no rate, hence no bound.
    let rows: Vec<(&str, &SummaryRow)> = out
        .entries
        .iter()
        .flat_map(|e| e.rows.iter().map(|r| (e.scenario.name.as_str(), r)))
        .filter(|(_, r)| r.conclusive_runs() > 0)
        .collect();
    let Some(&(_, first)) = rows.first() else {
        return "no conclusive run".to_string();
    };
    let all_rows: usize = out.entries.iter().map(|e| e.rows.len()).sum();
    if rows.len() == all_rows
        && rows
            .iter()
            .all(|(_, r)| r.conclusive_runs() == first.conclusive_runs())
    {
        return format!(
            "each {} 0 in {} runs, 95% upper bound {}",
            if out.entries.len() == all_rows {
                "scenario"
            } else {
                "combination"
            },
            first.conclusive_runs(),
            pct(first.ci_high)
        );
    }
    let (name, worst) = rows
        .iter()
        .max_by(|a, b| a.1.ci_high.total_cmp(&b.1.ci_high))
        .copied()
        .unwrap_or(("", first));
    format!(
        "the largest 95% upper bound is {} ({name}, {} runs)",
        pct(worst.ci_high),
        worst.conclusive_runs()
    )
}

/// Writes `summary.csv`, `report.md` and `index.html` into `dir` (which
/// exists: the scenarios' sweeps are in it).
pub fn write_set(dir: &Path, out: &SetOutput) -> io::Result<()> {
    write_summary(&dir.join("summary.csv"), out)?;
    let doc = document(out);
    // The page's title; to_html puts "redlock-sim: " before it.
    let title = format!("sweep of {}", plural(out.entries.len(), "scenario"));
    std::fs::write(dir.join("report.md"), to_md(&doc, &STYLE, &[]))?;
    std::fs::write(dir.join("index.html"), to_html(&doc, &title, &STYLE, &[]))?;
    Ok(())
}

/// The columns of the set's `summary.csv`: which scenario and combination,
/// then those of a sweep's `summary.csv`.
pub const SET_COLUMNS: [&str; 4] = ["scenario", "file", "expect", "combination"];

fn write_summary(path: &Path, out: &SetOutput) -> io::Result<()> {
    let mut w = csv::Writer::from_path(path)?;
    let header: Vec<&str> = SET_COLUMNS
        .iter()
        .chain(&SUMMARY_COLUMNS)
        .copied()
        .collect();
    w.write_record(&header)?;
    for e in out.entries {
        for r in e.rows {
            let mut f = vec![
                e.scenario.name.clone(),
                e.file.to_string(),
                e.scenario.expect.as_str().to_string(),
                combination(e.keys, &r.values),
            ];
            f.extend(r.fields());
            w.write_record(&f)?;
        }
    }
    w.flush()
}

fn document(out: &SetOutput) -> Vec<Block> {
    let mut doc = vec![Block::H(
        1,
        format!(
            "redlock-sim sweep: {}",
            plural(out.entries.len(), "scenario")
        ),
    )];
    doc.push(Block::P(vec![bold("Answer: "), text(answer(out))]));
    doc.push(para(format!(
        "Each scenario was swept on its own: its runs.csv, summary.csv and report are in its \
         directory, linked below. The upper bound is that of the 95% Wilson interval of the \
         violation rate: with 0 violations in n runs it is 1.96² / (n + 1.96²).{}",
        detection(out)
    )));
    doc.push(table(out));
    doc.push(Block::H(2, "Each scenario's sweep".to_string()));
    doc.push(Block::List(links(out)));
    if !out.skipped.is_empty() {
        let names: Vec<String> = out
            .skipped
            .iter()
            .map(|(f, e)| format!("{f} ({})", e.as_str()))
            .collect();
        doc.push(para(format!("Left out by --expect: {}.", names.join(", "))));
    }
    doc.push(Block::H(2, "Regenerate".to_string()));
    doc.push(Block::P(vec![code(out.command.clone())]));
    doc.push(para(
        "A rerun resumes from the runs.csv files in place (add --fresh to run everything \
         again); every run is deterministic, so the same program gives the same rows."
            .to_string(),
    ));
    doc
}

/// What the bound means for the first row's number of runs: the chance that
/// so many runs would have shown a violation had the rate been the bound.
fn detection(out: &SetOutput) -> String {
    let Some(r) = out.entries.iter().flat_map(|e| e.rows.iter()).next() else {
        return String::new();
    };
    if r.conclusive_runs() == 0 || r.violating_runs > 0 {
        return String::new();
    }
    let runs = i32::try_from(r.conclusive_runs()).unwrap_or(i32::MAX);
    let seen = 1.0 - (1.0 - r.ci_high).powi(runs);
    format!(
        " For n = {}: were the true violation rate {}, {} runs would have shown at least one \
         violation with probability {}.",
        r.conclusive_runs(),
        pct(r.ci_high),
        r.conclusive_runs(),
        pct(seen)
    )
}

fn table(out: &SetOutput) -> Block {
    let head = [
        "scenario",
        "expects",
        "combination",
        "seeds",
        "runs",
        "inconclusive",
        "violating runs",
        "violation rate",
        "95% interval",
        "95% upper bound",
    ]
    .map(String::from)
    .to_vec();
    let mut rows = Vec::new();
    for e in out.entries {
        for r in e.rows {
            let unexpected = r.violating_runs > 0 && e.scenario.expect != Expect::Violation;
            rows.push(Row {
                cells: vec![
                    e.scenario.name.clone(),
                    e.scenario.expect.as_str().to_string(),
                    combination(e.keys, &r.values),
                    format!("{}..={}", e.seeds.start(), e.seeds.end()),
                    r.conclusive_runs().to_string(),
                    r.inconclusive_runs.to_string(),
                    r.violating_runs.to_string(),
                    pct(r.violation_rate),
                    interval(r.ci_low, r.ci_high),
                    pct(r.ci_high),
                ],
                strong: unexpected,
            });
        }
    }
    Block::Table(head, rows)
}

/// Each scenario's sweep report and file, as a list after the table.
fn links(out: &SetOutput) -> Vec<Vec<Inline>> {
    out.entries
        .iter()
        .map(|e| {
            vec![
                link(e.scenario.name.clone(), format!("{}/index.html", e.dir)),
                text(" ("),
                code(shell_word(e.file)),
                text(")"),
            ]
        })
        .collect()
}
