//! The report of `redlock-sim sweep` (see `cli-and-outputs.md`): `report.md`,
//! `index.html` and the charts (SVG, drawn in [`super::sweep_charts`]), made
//! from the rows of `summary.csv`; and the conclusions, sentences computed
//! from those rows, which the command line also prints.
//!
//! Conclusions never say "safe": a combination without violations is
//! reported as "0 violations in N runs (95% upper bound X%)", the upper bound
//! being that of the Wilson interval.
//!
//! Nothing here panics, whatever the rows hold: no rows, rows of 0 runs,
//! rows whose values do not match the keys, rates at 0 or 1.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;
use std::ops::RangeInclusive;
use std::path::Path;

use super::markdown::html_escape;
use super::sweep_charts::{self, Chart};
use crate::scenario::{Expect, Scenario};
use crate::sweep::stats::{wilson, SummaryRow, Z95};

/// Everything the report of a sweep is made from.
pub struct SweepOutput<'a> {
    /// The scenario swept (without overrides).
    pub scenario: &'a Scenario,
    /// The varied keys, in `[sweep.vary]` order (`cluster.restart`).
    pub keys: &'a [String],
    /// One row per combination, in sweep order (the first key changes
    /// slowest); values as written (`0.5ttl`, `immediate`, `3`).
    pub rows: &'a [SummaryRow],
    /// The seeds each combination ran.
    pub seeds: RangeInclusive<u64>,
    /// Runs in all.
    pub total_runs: u64,
    /// The scenario file as the user named it, for replay commands.
    pub file: &'a str,
    /// Per combination with violations (values as in `rows`), the first
    /// violating seeds, to replay with `redlock-sim run --seed --set`.
    pub replay: &'a [(Vec<String>, Vec<u64>)],
}

/// Creates `dir` (and its parents) and writes `report.md`, `index.html` and
/// the charts: for each varied key `violation_rate-<key>.svg`,
/// `acquire_rate-<key>.svg` and `acquire_latency-<key>.svg` (without varied
/// keys: `violation_rate.svg`, `acquire_rate.svg`, `acquire_latency.svg`).
pub fn write_sweep(dir: &Path, out: &SweepOutput) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let charts = sweep_charts::render_all(out);
    for c in &charts {
        std::fs::write(dir.join(&c.file), &c.svg)?;
    }
    let doc = document(out, &charts);
    std::fs::write(dir.join("report.md"), to_md(&doc, &charts))?;
    std::fs::write(dir.join("index.html"), to_html(&doc, &title(out), &charts))?;
    Ok(())
}

/// The findings of the sweep, plain-text sentences computed from the rows
/// (combinations with 0 runs are left out):
/// - overall: how many combinations and runs had violations and the worst
///   one; when the scenario expects no violation, the combinations that had
///   some (what `--strict` fails on);
/// - for each varied key whose values are ordered (`immediate` < TTL
///   multiples and durations < `never`; or plain numbers), for each
///   combination of the other keys (at most 12): the smallest value from
///   which every larger value tested had 0 violations ("with K ≥ V: 0
///   violations in N runs (95% upper bound X%)"), the largest value with
///   violations and its rate, any value without violations below it ("but
///   violations reappear at larger values"), and what moving from the
///   smallest value to that one costs in acquisition rate and p99 latency.
///   When the largest value has violations no such threshold is claimed;
///   if instead the smallest values had none, "with K ≤ V" says so;
/// - for other keys: each value side by side (violation rate and interval,
///   acquisition rate, p99 latency), whether the intervals tell them apart,
///   and what the best value without violations costs against the best
///   with.
pub fn conclusions(out: &SweepOutput) -> Vec<String> {
    let mut lines = Vec::new();
    let ran: Vec<&SummaryRow> = out.rows.iter().filter(|r| r.runs > 0).collect();
    if ran.is_empty() {
        lines.push("No runs: there is nothing to conclude.".to_string());
        return lines;
    }
    overall(out, &ran, &mut lines);
    for i in 0..out.keys.len() {
        let view = key_view(out, i);
        if view.values.len() < 2 {
            continue;
        }
        let ranks = order_ranks(&view.values, ttl_ms(out.scenario));
        let mut told = 0usize;
        let mut more = 0usize;
        for g in &view.groups {
            let before = lines.len();
            if told >= MAX_GROUP_FINDINGS {
                if g.cells.iter().flatten().any(|r| r.runs > 0) {
                    more += 1;
                }
                continue;
            }
            match &ranks {
                Some(ranks) => ordered_findings(&view, g, ranks, &mut lines),
                None => categorical_findings(&view, g, &mut lines),
            }
            if lines.len() > before {
                told += 1;
            }
        }
        if more > 0 {
            lines.push(format!(
                "… and {more} more combination(s) of the other keys for {}: see the table and summary.csv.",
                view.name
            ));
        }
    }
    lines
}

/// Combinations of the other keys told per varied key.
const MAX_GROUP_FINDINGS: usize = 12;
/// Combinations listed in the sentence about `expect`.
const MAX_LISTED: usize = 4;
/// Rows of the summary table in the report (summary.csv has them all).
const MAX_TABLE_ROWS: usize = 1000;

// ---------------------------------------------------------------------------
// The rows seen along one varied key.

/// One varied key: its values and, for each combination of the other keys,
/// the row at each value.
pub(crate) struct KeyView<'r> {
    /// The key (`cluster.restart`); empty for a sweep of seeds only.
    pub name: String,
    /// Its values, in the order of `[sweep.vary]`.
    pub values: Vec<String>,
    /// The other varied keys, in order.
    pub others: Vec<String>,
    /// One per combination of the other keys, in sweep order.
    pub groups: Vec<Group<'r>>,
}

/// A combination of the other keys' values.
pub(crate) struct Group<'r> {
    /// `cluster.topology = single`; empty when no other key varies.
    pub label: String,
    /// The row at each value of the key (`None`: no such row).
    pub cells: Vec<Option<&'r SummaryRow>>,
}

fn value_at(row: &SummaryRow, j: usize) -> &str {
    row.values.get(j).map_or("", String::as_str)
}

/// The rows along key `i`.
pub(crate) fn key_view<'r>(out: &SweepOutput<'r>, i: usize) -> KeyView<'r> {
    let name = out.keys.get(i).cloned().unwrap_or_default();
    // Values: as `[sweep.vary]` lists them, then any other value seen.
    let mut values: Vec<String> = Vec::new();
    let seen: Vec<&str> = {
        let mut v: Vec<&str> = Vec::new();
        for r in out.rows {
            let x = value_at(r, i);
            if !v.contains(&x) {
                v.push(x);
            }
        }
        v
    };
    if let Some(sweep) = &out.scenario.sweep {
        if let Some((_, vs)) = sweep.vary.iter().find(|(k, _)| *k == name) {
            for v in vs {
                let s = crate::scenario::render_vary_value(v);
                if seen.contains(&s.as_str()) && !values.contains(&s) {
                    values.push(s);
                }
            }
        }
    }
    for s in seen {
        if !values.iter().any(|v| v == s) {
            values.push(s.to_string());
        }
    }
    let index: BTreeMap<&str, usize> = values
        .iter()
        .enumerate()
        .map(|(k, v)| (v.as_str(), k))
        .collect();
    let mut groups: Vec<Group<'r>> = Vec::new();
    let mut group_of: BTreeMap<Vec<&str>, usize> = BTreeMap::new();
    for r in out.rows {
        let others: Vec<&str> = (0..out.keys.len())
            .filter(|&j| j != i)
            .map(|j| value_at(r, j))
            .collect();
        let g = *group_of.entry(others).or_insert_with(|| {
            let label = (0..out.keys.len())
                .filter(|&j| j != i)
                .map(|j| format!("{} = {}", out.keys[j], value_at(r, j)))
                .collect::<Vec<_>>()
                .join(", ");
            groups.push(Group {
                label,
                cells: vec![None; values.len()],
            });
            groups.len() - 1
        });
        if let Some(&k) = index.get(value_at(r, i)) {
            let cell = &mut groups[g].cells[k];
            if cell.is_none() {
                *cell = Some(r);
            }
        }
    }
    let others = (0..out.keys.len())
        .filter(|&j| j != i)
        .map(|j| out.keys[j].clone())
        .collect();
    KeyView {
        name,
        values,
        others,
        groups,
    }
}

/// The largest client TTL in ms, what `Xttl` multiplies.
fn ttl_ms(s: &Scenario) -> f64 {
    s.max_ttl.as_secs_f64() * 1e3
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    /// A plain number.
    Number,
    /// A duration, a TTL multiple, `immediate` or `never`.
    Time,
}

/// Where a value sits in its key's order: `immediate` before any delay,
/// `never` after; `Xttl` as X TTLs; durations; plain numbers.
fn rank(value: &str, ttl_ms: f64) -> Option<(f64, Family)> {
    let v = value.trim();
    match v {
        "immediate" => return Some((f64::NEG_INFINITY, Family::Time)),
        "never" => return Some((f64::INFINITY, Family::Time)),
        _ => {}
    }
    if let Some(x) = v.strip_suffix("ttl") {
        let x = x.trim();
        let m: f64 = if x.is_empty() { 1.0 } else { x.parse().ok()? };
        return (m.is_finite() && m >= 0.0).then(|| {
            let scale = if ttl_ms > 0.0 && ttl_ms.is_finite() {
                ttl_ms
            } else {
                1.0
            };
            (m * scale, Family::Time)
        });
    }
    if let Ok(ms) = crate::duration::parse_signed_ms(v) {
        return ms.is_finite().then_some((ms, Family::Time));
    }
    let x: f64 = v.parse().ok()?;
    x.is_finite().then_some((x, Family::Number))
}

/// The rank of each value when all of them are ordered and of one family
/// (numbers are not compared with durations); `None` for a categorical key.
fn order_ranks(values: &[String], ttl_ms: f64) -> Option<Vec<f64>> {
    let ranked: Vec<(f64, Family)> = values
        .iter()
        .map(|v| rank(v, ttl_ms))
        .collect::<Option<_>>()?;
    let first = ranked.first()?.1;
    if ranked.iter().any(|(_, f)| *f != first) {
        return None;
    }
    Some(ranked.into_iter().map(|(r, _)| r).collect())
}

// ---------------------------------------------------------------------------
// Figures as text.

/// A rate in [0, 1] as a percentage: `12.4%`, `3.25%`, `0.18%`, `0%`.
pub(crate) fn pct(x: f64) -> String {
    if !x.is_finite() {
        return "n/a".to_string();
    }
    let p = (x * 100.0).clamp(0.0, 100.0);
    // Below this it is rounding noise (a Wilson bound of 0 violations).
    if p < 1e-9 {
        return "0%".to_string();
    }
    if p == 100.0 {
        return "100%".to_string();
    }
    let s = if p >= 10.0 {
        format!("{p:.1}")
    } else if p >= 1.0 {
        format!("{p:.2}")
    } else {
        // Two significant digits.
        let digits = (-p.log10().floor()) as usize + 1;
        format!("{p:.digits$}")
    };
    // Never round up to 100% or down to 0%.
    match s.as_str() {
        "100.0" => "99.9%".to_string(),
        _ => format!("{s}%"),
    }
}

/// `10.9%–14.1%`.
pub(crate) fn interval(lo: f64, hi: f64) -> String {
    format!("{}–{}", pct(lo), pct(hi))
}

/// A latency in ms: `12.3 ms`, `1.25 s`.
pub(crate) fn latency(ms: f64) -> String {
    if !ms.is_finite() {
        "n/a".to_string()
    } else if ms.abs() < 1000.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{:.2} s", ms / 1000.0)
    }
}

/// `cluster.restart = 1ttl, cluster.topology = redlock`.
fn combination(keys: &[String], row: &SummaryRow) -> String {
    keys.iter()
        .enumerate()
        .map(|(j, k)| format!("{k} = {}", value_at(row, j)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `0 violations in 1000 runs (95% upper bound 0.38%; 0.76% for any one value)`.
fn zero_claim(rows: &[&SummaryRow], each: &str) -> String {
    let n: u64 = rows.iter().map(|r| r.runs).sum();
    let (_, ub) = wilson(0, n, Z95);
    let mut s = format!("0 violations in {n} runs (95% upper bound {}", pct(ub));
    if rows.len() > 1 {
        let ub_each = rows
            .iter()
            .map(|r| wilson(0, r.runs, Z95).1)
            .fold(0.0, f64::max);
        let _ = write!(s, "; {} for any one {each}", pct(ub_each));
    }
    s.push(')');
    s
}

/// `12.4% of runs violated (10.9%–14.1%)`.
fn violated(r: &SummaryRow) -> String {
    format!(
        "{} of runs violated ({}, {} of {})",
        pct(r.violation_rate),
        interval(r.ci_low, r.ci_high),
        r.violating_runs,
        r.runs
    )
}

/// p99 latency, or that nothing was acquired.
fn p99(r: &SummaryRow) -> String {
    if r.acquire_rate > 0.0 {
        format!("p99 latency {}", latency(r.acquire_p99_ms))
    } else {
        "no acquisitions".to_string()
    }
}

/// Whether `a` is worse than `b` for availability: a lower acquisition rate
/// (by a point or more) or a higher p99 latency (by 10% and 1 ms or more).
/// (Which sentence to write; the figures are always given.)
fn costs(a: &SummaryRow, b: &SummaryRow) -> (bool, bool) {
    let acq = a.acquire_rate <= b.acquire_rate - 0.01;
    let lat = a.acquire_rate > 0.0
        && b.acquire_rate > 0.0
        && a.acquire_p99_ms >= b.acquire_p99_ms * 1.1
        && a.acquire_p99_ms >= b.acquire_p99_ms + 1.0;
    (acq, lat)
}

/// A list: `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

// ---------------------------------------------------------------------------
// Conclusions.

fn overall(out: &SweepOutput, ran: &[&SummaryRow], lines: &mut Vec<String>) {
    let runs: u64 = ran.iter().map(|r| r.runs).sum();
    let violating: u64 = ran.iter().map(|r| r.violating_runs).sum();
    let with: Vec<&SummaryRow> = ran
        .iter()
        .copied()
        .filter(|r| r.violating_runs > 0)
        .collect();
    if out.keys.is_empty() || ran.len() == 1 {
        let r = ran[0];
        let head = if r.violating_runs > 0 {
            format!(
                "{} of {} runs violated: {} ({} at 95%).",
                r.violating_runs,
                r.runs,
                pct(r.violation_rate),
                interval(r.ci_low, r.ci_high)
            )
        } else {
            format!("{}.", zero_claim(&[r], "combination"))
        };
        let acq = if r.acquire_rate > 0.0 {
            format!(
                " Acquisitions: {} of lock calls; acquisition latency p50 {}, p99 {}.",
                pct(r.acquire_rate),
                latency(r.acquire_p50_ms),
                latency(r.acquire_p99_ms)
            )
        } else {
            " No lock call acquired the lock.".to_string()
        };
        lines.push(head + &acq);
    } else if with.is_empty() {
        lines.push(format!(
            "No combination had a violation: {} over {} combinations.",
            zero_claim(ran, "combination"),
            ran.len()
        ));
    } else {
        let worst = with
            .iter()
            .copied()
            .max_by(|a, b| a.violation_rate.total_cmp(&b.violation_rate))
            .unwrap_or(with[0]);
        lines.push(format!(
            "Violations in {} of {} combinations ({violating} of {runs} runs). The highest rate: {}, where {}.",
            with.len(),
            ran.len(),
            combination(out.keys, worst),
            violated(worst)
        ));
    }
    let listed = |rows: &[&SummaryRow]| {
        let mut names: Vec<String> = rows
            .iter()
            .take(MAX_LISTED)
            .map(|r| combination(out.keys, r))
            .collect();
        if rows.len() > MAX_LISTED {
            names.push(format!("{} more", rows.len() - MAX_LISTED));
        }
        if out.keys.is_empty() {
            String::new()
        } else {
            format!(": {}", names.join("; "))
        }
    };
    // The file's `expect` is about every combination only when it asks
    // for no violation (what `sweep --strict` checks).
    if matches!(out.scenario.expect, Expect::Safe | Expect::Degraded) && !with.is_empty() {
        lines.push(format!(
            "The scenario expects no violation, but {} of {} combination(s) had some{}.",
            with.len(),
            ran.len(),
            listed(&with)
        ));
    }
}

/// `For cluster.topology = redlock, with` / `With`.
fn lead(label: &str, rest: &str) -> String {
    if label.is_empty() {
        let mut c = rest.chars();
        match c.next() {
            Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
            None => String::new(),
        }
    } else {
        format!("For {label}, {rest}")
    }
}

/// The threshold sentences for an ordered key, for one combination of the
/// other keys. Larger values are taken to be the safer ones (a longer
/// restart delay); when violations are at the top of the range instead (a
/// faster clock), the range below them is told.
fn ordered_findings(view: &KeyView, g: &Group, ranks: &[f64], lines: &mut Vec<String>) {
    let key = &view.name;
    // (value, row), rows that ran, by rank (ties keep the written order).
    let mut pts: Vec<(usize, &SummaryRow)> = g
        .cells
        .iter()
        .enumerate()
        .filter_map(|(k, c)| c.filter(|r| r.runs > 0).map(|r| (k, r)))
        .collect();
    pts.sort_by(|a, b| ranks[a.0].total_cmp(&ranks[b.0]).then(a.0.cmp(&b.0)));
    if pts.is_empty() {
        return;
    }
    let name = |k: usize| view.values[k].clone();
    fn rows_of<'r>(p: &[(usize, &'r SummaryRow)]) -> Vec<&'r SummaryRow> {
        p.iter().map(|(_, r)| *r).collect()
    }
    let names_of = |p: &[(usize, &SummaryRow)]| p.iter().map(|(k, _)| name(*k)).collect::<Vec<_>>();
    let bad = |p: &(usize, &SummaryRow)| p.1.violating_runs > 0;
    let tested = |p: &[(usize, &SummaryRow)], edge: &str| {
        if p.len() == 1 {
            format!(" (the {edge} value tested)")
        } else {
            format!(" (tested: {})", names_of(p).join(", "))
        }
    };
    let zeros = |p: &[(usize, &SummaryRow)]| {
        p.iter()
            .filter(|x| !bad(x))
            .map(|(k, _)| name(*k))
            .collect::<Vec<_>>()
    };
    let last = pts.len() - 1;
    let (Some(fv), Some(lv)) = (pts.iter().position(bad), pts.iter().rposition(bad)) else {
        let range = if pts.len() == 1 {
            name(pts[0].0)
        } else {
            format!("from {} to {}", name(pts[0].0), name(pts[last].0))
        };
        lines.push(lead(
            &g.label,
            &format!(
                "with {key} {range}: {}.",
                zero_claim(&rows_of(&pts), "value")
            ),
        ));
        return;
    };
    if lv < last {
        // Every value above the last violation had none.
        let (lk, lr) = pts[lv];
        let (tk, tr) = pts[lv + 1];
        let gaps = zeros(&pts[..lv]);
        let reappear = if gaps.is_empty() {
            String::new()
        } else {
            format!(
                " {} had 0 violations, but violations reappear at larger values.",
                and_list(&gaps)
            )
        };
        lines.push(lead(
            &g.label,
            &format!(
                "with {key} ≥ {}{}: {}. The largest {key} with violations is {}: {}.{reappear}",
                name(tk),
                tested(&pts[lv + 1..], "largest"),
                zero_claim(&rows_of(&pts[lv + 1..]), "value"),
                name(lk),
                violated(lr)
            ),
        ));
        // What that value costs against the smallest one tested.
        let (bk, br) = pts[0];
        let lat = |r: &SummaryRow| {
            if r.acquire_rate > 0.0 {
                latency(r.acquire_p99_ms)
            } else {
                "n/a (no acquisitions)".to_string()
            }
        };
        let acq_text = format!(
            "acquisition rate {} → {}",
            pct(br.acquire_rate),
            pct(tr.acquire_rate)
        );
        let lat_text = format!("p99 acquisition latency {} → {}", lat(br), lat(tr));
        let what = match costs(tr, br) {
            (false, false) => format!("costs no availability: {acq_text}, {lat_text}"),
            (true, false) => format!("costs acquisitions: {acq_text} ({lat_text})"),
            (false, true) => format!("costs latency: {lat_text} ({acq_text})"),
            (true, true) => format!("costs acquisitions and latency: {acq_text}, {lat_text}"),
        };
        lines.push(lead(
            &g.label,
            &format!("moving {key} from {} to {} {what}.", name(bk), name(tk)),
        ));
        return;
    }
    // The largest value tested had violations.
    let between = |p: &[(usize, &SummaryRow)]| {
        let gaps = zeros(p);
        if gaps.is_empty() {
            String::new()
        } else {
            format!(
                " {} had 0 violations, but lie between values with violations.",
                and_list(&gaps)
            )
        }
    };
    let text = if fv > 0 {
        // Every value below the first violation had none.
        let (fk, fr) = pts[fv];
        format!(
            "with {key} ≤ {}{}: {}. The smallest {key} with violations is {}: {}.{}",
            name(pts[fv - 1].0),
            tested(&pts[..fv], "smallest"),
            zero_claim(&rows_of(&pts[..fv]), "value"),
            name(fk),
            violated(fr),
            between(&pts[fv + 1..])
        )
    } else if pts.len() == 1 {
        format!("with {key} = {}: {}.", name(pts[0].0), violated(pts[0].1))
    } else {
        let (fk, fr) = pts[0];
        let (lk, lr) = pts[last];
        let every = if pts.iter().all(bad) {
            format!("violations at every {key} tested")
        } else {
            format!("violations at both the smallest and the largest {key} tested")
        };
        format!(
            "{every}: at {}, {}; at {}, {}. No tested range of {key} is free of them.{}",
            name(fk),
            violated(fr),
            name(lk),
            violated(lr),
            between(&pts[1..last])
        )
    };
    lines.push(lead(&g.label, &text));
}

/// The side-by-side sentence for a categorical key, for one combination of
/// the other keys.
fn categorical_findings(view: &KeyView, g: &Group, lines: &mut Vec<String>) {
    let key = &view.name;
    let pts: Vec<(&str, &SummaryRow)> = g
        .cells
        .iter()
        .enumerate()
        .filter_map(|(k, c)| {
            c.filter(|r| r.runs > 0)
                .map(|r| (view.values[k].as_str(), r))
        })
        .collect();
    if pts.len() < 2 {
        return;
    }
    let parts: Vec<String> = pts
        .iter()
        .map(|(v, r)| {
            let safety = if r.violating_runs > 0 {
                violated(r)
            } else {
                zero_claim(&[*r], "value")
            };
            format!(
                "{v}: {safety}, acquisitions {} of lock calls, {}",
                pct(r.acquire_rate),
                p99(r)
            )
        })
        .collect();
    let mut text = format!("by {key}: {}.", parts.join("; "));
    // Can the sweep tell the values apart?
    let lowest = pts
        .iter()
        .min_by(|a, b| a.1.violation_rate.total_cmp(&b.1.violation_rate));
    let highest = pts
        .iter()
        .max_by(|a, b| a.1.violation_rate.total_cmp(&b.1.violation_rate));
    if let (Some((lv, lr)), Some((hv, hr))) = (lowest, highest) {
        if hr.violating_runs > 0 && hr.ci_low <= lr.ci_high {
            let _ = write!(
                text,
                " The 95% intervals of {lv} and {hv} overlap: these runs do not tell their violation rates apart."
            );
        } else if hr.violating_runs > 0 {
            let _ = write!(
                text,
                " {lv}'s violation rate is below {hv}'s beyond their 95% intervals."
            );
        }
    }
    // Trade-off: the best value without violations against the best with.
    let best = |zero: bool| {
        pts.iter()
            .filter(|(_, r)| (r.violating_runs == 0) == zero)
            .max_by(|a, b| a.1.acquire_rate.total_cmp(&b.1.acquire_rate))
    };
    if let (Some((zv, zr)), Some((vv, vr))) = (best(true), best(false)) {
        let (acq, lat) = costs(zr, vr);
        let mut costs_list = Vec::new();
        if acq {
            costs_list.push(format!(
                "acquisition rate {} vs {}",
                pct(zr.acquire_rate),
                pct(vr.acquire_rate)
            ));
        }
        if lat {
            costs_list.push(format!(
                "p99 acquisition latency {} vs {}",
                latency(zr.acquire_p99_ms),
                latency(vr.acquire_p99_ms)
            ));
        }
        if costs_list.is_empty() {
            let _ = write!(
                text,
                " {zv} (0 violations) costs no availability against {vv}: acquisition rate {} vs {}.",
                pct(zr.acquire_rate),
                pct(vr.acquire_rate)
            );
        } else {
            let _ = write!(
                text,
                " {zv} (0 violations) costs against {vv}: {}.",
                and_list(&costs_list)
            );
        }
    }
    lines.push(lead(&g.label, &text));
}

// ---------------------------------------------------------------------------
// The document: one model, rendered as Markdown and as HTML.

enum Block {
    H(u8, String),
    P(String),
    List(Vec<String>),
    /// Header, rows (strong when the combination had violations).
    Table(Vec<String>, Vec<(Vec<String>, bool)>),
    /// The index of a chart.
    Chart(usize),
}

fn title(out: &SweepOutput) -> String {
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

fn document(out: &SweepOutput, charts: &[Chart]) -> Vec<Block> {
    let s = out.scenario;
    let mut doc = vec![Block::H(1, format!("redlock-sim sweep: {}", s.name))];
    if !s.description.trim().is_empty() {
        doc.push(Block::P(s.description.trim().to_string()));
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
    doc.push(Block::P(setup));
    if !out.keys.is_empty() {
        let items = (0..out.keys.len())
            .map(|i| {
                let v = key_view(out, i);
                format!("{}: {}", v.name, v.values.join(", "))
            })
            .collect();
        doc.push(Block::P("Varied keys and their values:".into()));
        doc.push(Block::List(items));
    }

    doc.push(Block::H(2, "Conclusions".into()));
    doc.push(Block::List(conclusions(out)));
    doc.push(Block::P(
        "A violation is a run in which two clients held the lock at once or the store applied \
         the writes of two acquisitions interleaved. Rates are the share of runs with at least \
         one violation; intervals are 95% Wilson score intervals. \"0 violations in N runs\" \
         bounds the rate, it does not prove it zero."
            .into(),
    ));

    doc.push(Block::H(2, "Summary".into()));
    let mut head: Vec<String> = out.keys.to_vec();
    head.extend(
        [
            "runs",
            "violating runs",
            "violation rate",
            "95% interval",
            "acquire rate",
            "acquire p50",
            "acquire p99",
        ]
        .map(String::from),
    );
    let rows: Vec<(Vec<String>, bool)> = out
        .rows
        .iter()
        .take(MAX_TABLE_ROWS)
        .map(|r| {
            let mut cells: Vec<String> = (0..out.keys.len())
                .map(|j| value_at(r, j).to_string())
                .collect();
            cells.extend([
                r.runs.to_string(),
                r.violating_runs.to_string(),
                pct(r.violation_rate),
                interval(r.ci_low, r.ci_high),
                pct(r.acquire_rate),
                latency(r.acquire_p50_ms),
                latency(r.acquire_p99_ms),
            ]);
            (cells, r.violating_runs > 0)
        })
        .collect();
    doc.push(Block::Table(head, rows));
    if out.rows.len() > MAX_TABLE_ROWS {
        doc.push(Block::P(format!(
            "… and {} more combinations in summary.csv.",
            out.rows.len() - MAX_TABLE_ROWS
        )));
    }
    doc.push(Block::P(
        "Acquire rate: acquisitions per lock call over all runs of the combination. \
         Acquire p50: the median over runs of each run's median acquisition latency; \
         acquire p99: the 99th percentile over runs of each run's p99 latency. \
         Combinations with violations are in bold."
            .into(),
    ));

    if out.rows.len() > 1 {
        doc.push(Block::H(2, "Ranking".into()));
        doc.push(Block::P(
            "Combinations from the most to the least often violated (ties: the higher upper \
             bound first)."
                .into(),
        ));
        let mut ranked: Vec<&SummaryRow> = out.rows.iter().collect();
        ranked.sort_by(|a, b| {
            b.violation_rate
                .total_cmp(&a.violation_rate)
                .then(b.ci_high.total_cmp(&a.ci_high))
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
                    format!("{} of {}", r.violating_runs, r.runs),
                ]);
                (cells, r.violating_runs > 0)
            })
            .collect();
        doc.push(Block::Table(head, rows));
    }
    if !out.replay.is_empty() {
        doc.push(Block::H(2, "Runs to replay".into()));
        doc.push(Block::P(
            "Each command reruns one violating run exactly (same trace) and writes its report, \
             history and timeline."
                .into(),
        ));
        let mut items = Vec::new();
        for (values, seeds) in out.replay.iter().take(MAX_TABLE_ROWS) {
            let sets: String = out
                .keys
                .iter()
                .zip(values)
                .map(|(k, v)| format!(" --set {k}={}", shell_word(v)))
                .collect();
            for seed in seeds {
                items.push(format!(
                    "redlock-sim run {} --seed {seed}{sets}",
                    shell_word(out.file)
                ));
            }
        }
        doc.push(Block::List(items));
    }

    doc.push(Block::H(2, "Charts".into()));
    doc.push(Block::P(if out.keys.is_empty() {
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
        if !out.keys.is_empty() && current != Some(c.key.as_str()) {
            current = Some(c.key.as_str());
            doc.push(Block::H(3, c.key.clone()));
        }
        doc.push(Block::Chart(k));
    }
    let mut files = vec![
        "runs.csv (one row per run)".to_string(),
        "summary.csv (one row per combination)".to_string(),
    ];
    files.extend(charts.iter().map(|c| c.file.clone()));
    doc.push(Block::P(format!("Files: {}.", files.join(", "))));
    doc
}

// ---------------------------------------------------------------------------
// Markdown.

fn md_escape(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    for (i, &ch) in chars.iter().enumerate() {
        let word = |j: Option<usize>| {
            j.and_then(|j| chars.get(j))
                .is_some_and(|c| c.is_alphanumeric())
        };
        match ch {
            // `_` inside a word (`violation_rate`) is no emphasis in CommonMark.
            '_' if word(i.checked_sub(1)) && word(Some(i + 1)) => out.push(ch),
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#' => {
                out.push('\\');
                out.push(ch);
            }
            '\n' | '\r' => out.push(' '),
            _ => out.push(ch),
        }
    }
    out
}

fn to_md(doc: &[Block], charts: &[Chart]) -> String {
    let mut s = String::new();
    for block in doc {
        match block {
            Block::H(level, text) => {
                let _ = writeln!(s, "{} {}\n", "#".repeat(*level as usize), md_escape(text));
            }
            Block::P(text) => {
                let _ = writeln!(s, "{}\n", md_escape(text));
            }
            Block::List(items) => {
                for item in items {
                    let _ = writeln!(s, "- {}", md_escape(item));
                }
                s.push('\n');
            }
            Block::Table(head, rows) => {
                let line = |v: &[String], strong: bool| {
                    v.iter()
                        .map(|c| {
                            let e = md_escape(c);
                            if strong && !e.is_empty() {
                                format!("**{e}**")
                            } else {
                                e
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(" | ")
                };
                let _ = writeln!(s, "| {} |", line(head, false));
                let _ = writeln!(s, "|{}", "---|".repeat(head.len().max(1)));
                for (cells, strong) in rows {
                    let _ = writeln!(s, "| {} |", line(cells, *strong));
                }
                s.push('\n');
            }
            Block::Chart(k) => {
                if let Some(c) = charts.get(*k) {
                    // The file name in angle brackets: dots and brackets are safe.
                    let _ = writeln!(s, "![{}](<{}>)\n", md_escape(&c.title), c.file);
                }
            }
        }
    }
    s
}

// ---------------------------------------------------------------------------
// HTML.

/// The run report's style, so that both reports look alike.
const CSS: &str = "\
body{font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;max-width:1240px;margin:2em auto;padding:0 1em;color:#222;line-height:1.45}\
h1{font-size:1.6em;margin-bottom:.3em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}\
h3{margin-top:1.4em}\
table{border-collapse:collapse;margin:.6em 0 1em;font-size:.9em}\
th,td{border:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top}\
th{background:#f4f4f4}tr.strong td{font-weight:600;background:#fff4f4}\
td.num{text-align:right;font-variant-numeric:tabular-nums}\
code{background:#f2f2f2;padding:0 .25em;border-radius:3px}\
ul.conclusions li{margin:.35em 0}\
.chart{overflow-x:auto;border:1px solid #eee;padding:4px;margin:.6em 0 1.2em}.chart svg{display:block;max-width:100%;height:auto}\
";

fn to_html(doc: &[Block], title: &str, charts: &[Chart]) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>redlock-sim: {}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        html_escape(title)
    );
    let mut first_list_after_conclusions = false;
    for block in doc {
        match block {
            Block::H(level, text) => {
                first_list_after_conclusions = text == "Conclusions";
                let _ = writeln!(s, "<h{level}>{}</h{level}>", html_escape(text));
            }
            Block::P(text) => {
                let _ = writeln!(s, "<p>{}</p>", html_escape(text));
            }
            Block::List(items) => {
                s.push_str(if first_list_after_conclusions {
                    "<ul class=\"conclusions\">\n"
                } else {
                    "<ul>\n"
                });
                first_list_after_conclusions = false;
                for item in items {
                    let _ = writeln!(s, "<li>{}</li>", html_escape(item));
                }
                s.push_str("</ul>\n");
            }
            Block::Table(head, rows) => {
                let first_num = head.iter().position(|h| h == "runs").unwrap_or(head.len());
                s.push_str("<table>\n<thead><tr>");
                for h in head {
                    let _ = write!(s, "<th>{}</th>", html_escape(h));
                }
                s.push_str("</tr></thead>\n<tbody>\n");
                for (cells, strong) in rows {
                    s.push_str(if *strong {
                        "<tr class=\"strong\">"
                    } else {
                        "<tr>"
                    });
                    for (k, c) in cells.iter().enumerate() {
                        let class = if k >= first_num { " class=\"num\"" } else { "" };
                        let _ = write!(s, "<td{class}>{}</td>", html_escape(c));
                    }
                    s.push_str("</tr>\n");
                }
                s.push_str("</tbody>\n</table>\n");
            }
            Block::Chart(k) => {
                if let Some(c) = charts.get(*k) {
                    let _ = writeln!(
                        s,
                        "<div class=\"chart\" title=\"{}\">",
                        html_escape(&c.title)
                    );
                    s.push_str(strip_xml_prolog(&c.svg));
                    s.push_str("\n</div>\n");
                }
            }
        }
    }
    s.push_str("</body>\n</html>\n");
    s
}

/// The SVG element, without any `<?xml …?>` line before it.
fn strip_xml_prolog(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCENARIO: &str = r#"
name = "restart-sweep"
description = "Three masters; a node <crashes> & restarts after a delay."
duration = "30s"
expect = "violation"

[cluster]
topology = "redlock"
nodes = 3
restart = "immediate"

[clients]
count = 2
ttl = "10s"
hold = "8s"

[sweep]
seeds = 500

[sweep.vary]
"cluster.restart" = ["immediate", "0.5ttl", "1ttl", "1.5ttl"]
"cluster.topology" = ["single", "redlock"]
"#;

    fn scenario() -> Scenario {
        crate::scenario::parse_str(SCENARIO, "restart-sweep.toml").expect("test scenario")
    }

    fn keys() -> Vec<String> {
        vec![
            "cluster.restart".to_string(),
            "cluster.topology".to_string(),
        ]
    }

    /// A row of `runs` runs, `bad` of them violating.
    fn row(values: &[&str], runs: u64, bad: u64, acquire: f64, p50: f64, p99: f64) -> SummaryRow {
        let (ci_low, ci_high) = wilson(bad, runs, Z95);
        SummaryRow {
            values: values.iter().map(|v| v.to_string()).collect(),
            runs,
            violating_runs: bad,
            violation_rate: if runs == 0 {
                0.0
            } else {
                bad as f64 / runs as f64
            },
            ci_low,
            ci_high,
            acquire_rate: acquire,
            acquire_p50_ms: p50,
            acquire_p99_ms: p99,
        }
    }

    /// Rows in sweep order (restart slowest): violations for `single` and
    /// `redlock` at each restart value.
    fn rows(single: [u64; 4], redlock: [u64; 4]) -> Vec<SummaryRow> {
        let restarts = ["immediate", "0.5ttl", "1ttl", "1.5ttl"];
        let mut out = Vec::new();
        for (k, r) in restarts.iter().enumerate() {
            let slow = k as f64;
            out.push(row(
                &[r, "single"],
                500,
                single[k],
                0.91 - 0.06 * slow,
                4.0,
                40.0 + 300.0 * slow,
            ));
            out.push(row(
                &[r, "redlock"],
                500,
                redlock[k],
                0.89 - 0.06 * slow,
                6.0,
                60.0 + 400.0 * slow,
            ));
        }
        out
    }

    fn output<'a>(s: &'a Scenario, keys: &'a [String], rows: &'a [SummaryRow]) -> SweepOutput<'a> {
        SweepOutput {
            scenario: s,
            keys,
            rows,
            seeds: 1..=500,
            total_runs: rows.iter().map(|r| r.runs).sum(),
            file: "scenarios/x.toml",
            replay: &[],
        }
    }

    fn tmp(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "redlock-sim-sweep-report-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn find<'a>(lines: &'a [String], needle: &str) -> Vec<&'a String> {
        lines.iter().filter(|l| l.contains(needle)).collect()
    }

    #[test]
    fn writes_the_report_and_the_charts() {
        let s = scenario();
        let k = keys();
        let r = rows([60, 20, 0, 0], [10, 0, 0, 0]);
        let out = output(&s, &k, &r);
        let dir = tmp("files");
        write_sweep(&dir, &out).unwrap();
        for key in ["cluster.restart", "cluster.topology"] {
            for stem in ["violation_rate", "acquire_rate", "acquire_latency"] {
                let path = dir.join(format!("{stem}-{key}.svg"));
                let svg = std::fs::read_to_string(&path)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert!(svg.starts_with("<svg"), "{}", path.display());
                assert!(!svg.contains("not drawn"), "{}", path.display());
            }
        }
        let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
        let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
        assert!(md.contains("# redlock-sim sweep: restart-sweep"));
        assert!(md.contains(
            "![Violation rate by cluster.restart](<violation_rate-cluster.restart.svg>)"
        ));
        assert!(md.contains("500 per combination"));
        assert!(md.contains("4000 runs in total"));
        // The table: every column, rates as percentages, the interval.
        assert!(
            md.contains("| **immediate** | **single** | **500** | **60** | **12.0%** | **9.44%–15.1%** | **91.0%** | **4.0 ms** | **40.0 ms** |"),
            "{md}"
        );
        assert!(
            md.contains("| 1ttl | single | 500 | 0 | 0% | 0%–0.76% | 79.0% | 4.0 ms | 640.0 ms |"),
            "{md}"
        );
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("a node &lt;crashes&gt; &amp; restarts"));
        assert!(!html.contains("<crashes>"));
        assert_eq!(html.matches("<svg").count(), 6);
        assert!(!html.contains("<?xml"));
        for c in conclusions(&out) {
            assert!(html.contains(&html_escape(&c)), "{c}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn names_the_threshold() {
        let s = scenario();
        let k = keys();
        let r = rows([60, 20, 0, 0], [10, 0, 0, 0]);
        let lines = conclusions(&output(&s, &k, &r));
        let all = lines.join("\n");
        let single = find(
            &lines,
            "For cluster.topology = single, with cluster.restart ≥ 1ttl",
        );
        assert_eq!(single.len(), 1, "{all}");
        assert!(
            single[0].contains(
                "0 violations in 1000 runs (95% upper bound 0.38%; 0.76% for any one value)"
            ),
            "{all}"
        );
        assert!(
            single[0].contains(
                "largest cluster.restart with violations is 0.5ttl: 4.00% of runs violated"
            ),
            "{all}"
        );
        let redlock = find(
            &lines,
            "For cluster.topology = redlock, with cluster.restart ≥ 0.5ttl",
        );
        assert_eq!(redlock.len(), 1, "{all}");
        assert!(redlock[0].contains("is immediate: 2.00%"), "{all}");
        // The availability cost, with the numbers.
        assert!(
            all.contains("For cluster.topology = single, moving cluster.restart from immediate to 1ttl costs acquisitions and latency: acquisition rate 91.0% → 79.0%, p99 acquisition latency 40.0 ms → 640.0 ms."),
            "{all}"
        );
        // The categorical key, side by side.
        assert!(
            all.contains("For cluster.restart = immediate, by cluster.topology: single: 12.0% of runs violated (9.44%–15.1%, 60 of 500)"),
            "{all}"
        );
        assert!(all.contains("redlock: 2.00% of runs violated"), "{all}");
        assert!(
            all.contains("redlock's violation rate is below single's beyond their 95% intervals."),
            "{all}"
        );
        assert!(
            all.contains(
                "For cluster.restart = 0.5ttl, by cluster.topology: single: 4.00% of runs violated"
            ),
            "{all}"
        );
        assert!(
            all.contains("redlock (0 violations) costs against single: acquisition rate 83.0% vs 85.0% and p99 acquisition latency 460.0 ms vs 340.0 ms."),
            "{all}"
        );
        assert!(
            all.contains("For cluster.restart = 1ttl, by cluster.topology: single: 0 violations in 500 runs (95% upper bound 0.76%)"),
            "{all}"
        );
        // Overall and the expectation.
        assert!(
            lines[0].starts_with("Violations in 3 of 8 combinations (90 of 4000 runs)"),
            "{all}"
        );
        assert!(!all.contains("The scenario expects"), "{all}");
        assert!(!all.to_lowercase().contains(" safe"), "{all}");
    }

    #[test]
    fn no_threshold_when_violations_reappear() {
        let s = scenario();
        let k = keys();
        // single: violations at immediate, none at 0.5ttl, again at 1ttl,
        // none at 1.5ttl. redlock: violations at both ends.
        let r = rows([30, 0, 5, 0], [3, 0, 0, 3]);
        let lines = conclusions(&output(&s, &k, &r));
        let all = lines.join("\n");
        assert!(!all.contains("≥ 0.5ttl"), "{all}");
        assert!(!all.contains("≥ 1ttl"), "{all}");
        let single = find(&lines, "For cluster.topology = single, with cluster.restart ≥ 1.5ttl (the largest value tested): 0 violations in 500 runs");
        assert_eq!(single.len(), 1, "{all}");
        assert!(
            single[0].contains("largest cluster.restart with violations is 1ttl"),
            "{all}"
        );
        assert!(
            single[0].contains("0.5ttl had 0 violations, but violations reappear at larger values"),
            "{all}"
        );
        let redlock: Vec<_> = find(&lines, "For cluster.topology = redlock");
        assert_eq!(redlock.len(), 1, "{all}");
        assert!(
            !redlock[0].contains('≥') && !redlock[0].contains('≤'),
            "{all}"
        );
        assert!(redlock[0].contains("violations at both the smallest and the largest cluster.restart tested: at immediate, 0.60% of runs violated"), "{all}");
        assert!(
            redlock[0].contains(
                "0.5ttl and 1ttl had 0 violations, but lie between values with violations"
            ),
            "{all}"
        );
    }

    #[test]
    fn violations_at_the_top_of_the_range() {
        // A faster clock on n2: violations from 1.02 up.
        let s = scenario();
        let k = vec!["hosts.n2.clock_rate".to_string()];
        let r = vec![
            row(&["1.0"], 200, 0, 0.9, 2.0, 20.0),
            row(&["1.005"], 200, 0, 0.9, 2.0, 20.0),
            row(&["1.02"], 200, 4, 0.9, 2.0, 20.0),
            row(&["1.05"], 200, 30, 0.9, 2.0, 20.0),
        ];
        let lines = conclusions(&output(&s, &k, &r));
        let all = lines.join("\n");
        assert!(all.contains("With hosts.n2.clock_rate ≤ 1.005 (tested: 1.0, 1.005): 0 violations in 400 runs (95% upper bound 0.95%; 1.88% for any one value). The smallest hosts.n2.clock_rate with violations is 1.02: 2.00% of runs violated"), "{all}");
        assert!(!all.contains('≥'), "{all}");
        // Written out of order: the order of the values decides, not the file's.
        let r2: Vec<SummaryRow> = [&r[3], &r[1], &r[0], &r[2]].map(|x| x.clone()).to_vec();
        let again = conclusions(&output(&s, &k, &r2));
        assert!(again.iter().any(|l| l.contains("≤ 1.005")), "{again:?}");
    }

    #[test]
    fn says_which_combinations_go_against_expect_safe() {
        let text = SCENARIO.replace("expect = \"violation\"", "expect = \"safe\"");
        let s = crate::scenario::parse_str(&text, "safe.toml").unwrap();
        let k = keys();
        let r = rows([60, 20, 0, 0], [10, 0, 0, 0]);
        let lines = conclusions(&output(&s, &k, &r));
        assert!(
            lines.iter().any(|l| l.starts_with(
                "The scenario expects no violation, but 3 of 8 combination(s) had some: \
                 cluster.restart = immediate, cluster.topology = single; \
                 cluster.restart = immediate, cluster.topology = redlock; \
                 cluster.restart = 0.5ttl, cluster.topology = single."
            )),
            "{lines:#?}"
        );
    }

    #[test]
    fn ordering_of_values() {
        let ttl = 10_000.0;
        let ranks = order_ranks(
            &["1.5ttl", "immediate", "ttl", "0.5ttl", "12s", "never", "0s"].map(String::from),
            ttl,
        )
        .unwrap();
        let mut idx: Vec<usize> = (0..ranks.len()).collect();
        idx.sort_by(|a, b| ranks[*a].total_cmp(&ranks[*b]));
        assert_eq!(idx, vec![1, 6, 3, 2, 4, 0, 5]);
        assert!(order_ranks(&["3", "5", "0.5"].map(String::from), ttl).is_some());
        assert!(order_ranks(&["single", "redlock"].map(String::from), ttl).is_none());
        assert!(order_ranks(&["3", "5s"].map(String::from), ttl).is_none());
        assert!(order_ranks(&["true", "false"].map(String::from), ttl).is_none());
    }

    #[test]
    fn numeric_keys_and_all_zero() {
        let s = scenario();
        let k = vec!["cluster.nodes".to_string()];
        let r: Vec<SummaryRow> = [3, 5, 7]
            .iter()
            .map(|n| row(&[&n.to_string()], 100, 0, 0.0, 0.0, 0.0))
            .collect();
        let out = output(&s, &k, &r);
        let lines = conclusions(&out);
        let all = lines.join("\n");
        assert!(all.contains("With cluster.nodes from 3 to 7: 0 violations in 300 runs (95% upper bound 1.26%; 3.70% for any one value)"), "{all}");
        assert!(all.contains("No combination had a violation"), "{all}");
        let dir = tmp("zero");
        write_sweep(&dir, &out).unwrap();
        let svg = std::fs::read_to_string(dir.join("acquire_latency-cluster.nodes.svg")).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("no acquisitions"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn edge_cases_do_not_panic() {
        let s = scenario();
        let dir = tmp("edges");
        // No runs at all.
        let none: Vec<SummaryRow> = Vec::new();
        let k = keys();
        let out = output(&s, &k, &none);
        assert_eq!(
            conclusions(&out),
            vec!["No runs: there is nothing to conclude.".to_string()]
        );
        write_sweep(&dir.join("empty"), &out).unwrap();
        // Rows of 0 runs.
        let zero = vec![row(&["immediate", "single"], 0, 0, 0.0, 0.0, 0.0)];
        let out = output(&s, &k, &zero);
        assert_eq!(conclusions(&out).len(), 1);
        write_sweep(&dir.join("zero-runs"), &out).unwrap();
        // Seeds only.
        let one = vec![row(&[], 200, 7, 0.8, 3.0, 90.0)];
        let out = output(&s, &[], &one);
        let lines = conclusions(&out);
        assert!(
            lines[0].starts_with("7 of 200 runs violated: 3.50%"),
            "{lines:?}"
        );
        write_sweep(&dir.join("seeds-only"), &out).unwrap();
        for f in [
            "violation_rate.svg",
            "acquire_rate.svg",
            "acquire_latency.svg",
        ] {
            let svg = std::fs::read_to_string(dir.join("seeds-only").join(f)).unwrap();
            assert!(svg.starts_with("<svg"), "{f}");
        }
        // Every run violating; a single value; values that do not match
        // the keys.
        let k1 = vec!["cluster.restart".to_string()];
        let all_bad = vec![row(&["immediate"], 10, 10, 1.0, 1.0, 2.0)];
        let out = output(&s, &k1, &all_bad);
        assert!(conclusions(&out)[0].starts_with("10 of 10 runs violated: 100%"));
        write_sweep(&dir.join("single-value"), &out).unwrap();
        let odd = vec![
            row(&[], 10, 1, 0.5, 1.0, 2.0),
            row(&["a", "b", "c"], 10, 0, 0.5, 1.0, 2.0),
        ];
        let out = output(&s, &k, &odd);
        let _ = conclusions(&out);
        write_sweep(&dir.join("odd"), &out).unwrap();
        // 50 values of one key, two of another.
        let k2 = vec![
            "hosts.n2.clock_rate".to_string(),
            "cluster.topology".to_string(),
        ];
        let mut many = Vec::new();
        for i in 0..50 {
            for t in ["single", "redlock"] {
                let v = format!("{:.3}", 1.0 + i as f64 / 1000.0);
                many.push(row(&[&v, t], 40, (i % 7) as u64, 0.9, 2.0, 50.0 + i as f64));
            }
        }
        let out = output(&s, &k2, &many);
        let lines = conclusions(&out);
        assert!(lines.iter().any(|l| l.contains("… and")), "{lines:?}");
        write_sweep(&dir.join("many"), &out).unwrap();
        let svg = std::fs::read_to_string(
            dir.join("many")
                .join("violation_rate-hosts.n2.clock_rate.svg"),
        )
        .unwrap();
        assert!(svg.starts_with("<svg") && !svg.contains("not drawn"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn percentages() {
        assert_eq!(pct(0.0), "0%");
        assert_eq!(pct(1.0), "100%");
        assert_eq!(pct(0.124), "12.4%");
        assert_eq!(pct(0.0325), "3.25%");
        assert_eq!(pct(0.00192), "0.19%");
        assert_eq!(pct(0.000038), "0.0038%");
        assert_eq!(pct(0.99999), "99.9%");
        assert_eq!(pct(f64::NAN), "n/a");
        assert_eq!(interval(0.109, 0.141), "10.9%–14.1%");
        assert_eq!(latency(12.34), "12.3 ms");
        assert_eq!(latency(1250.0), "1.25 s");
    }
}

/// A word for a shell command line: quoted when it holds anything special.
fn shell_word(w: &str) -> String {
    if !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/+:".contains(c))
    {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}
