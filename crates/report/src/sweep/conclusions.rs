//! The conclusions of a sweep: plain-text sentences computed from the rows
//! of `summary.csv` (the thresholds along ordered keys, the comparisons of
//! categorical ones), which the sweep report lists and the command line
//! prints.
//!
//! Conclusions never say "safe": a combination without violations is
//! reported as "0 violations in N runs (95% upper bound X%)", the upper bound
//! being that of the Wilson interval.

use std::fmt::Write as _;

use super::format::{interval, latency, pct};
use super::output::SweepOutput;
use super::view::{key_view, value_at, Group, KeyView};
use redlock_harness::check::StaleKind;
use redlock_harness::scenario::{Expect, Scenario};
use redlock_harness::stats::{wilson, Z95};
use redlock_harness::sweep::stats::SummaryRow;

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
    let inconclusive: u64 = out.rows.iter().map(|r| r.inconclusive_runs).sum();
    let all: u64 = out.rows.iter().map(|r| r.runs).sum();
    if inconclusive > 0 {
        lines.push(format!(
            "{inconclusive} of {all} runs were inconclusive: they did not test what the scenario \
             sets out to test (see \"Inconclusive runs\"); every rate here is of the other {}.",
            all - inconclusive
        ));
    }
    let ran: Vec<&SummaryRow> = out
        .rows
        .iter()
        .filter(|r| r.conclusive_runs() > 0)
        .collect();
    if ran.is_empty() {
        lines.push(match inconclusive {
            0 => "No runs: there is nothing to conclude.".to_string(),
            _ => "No run was conclusive: there is nothing to conclude of safety.".to_string(),
        });
        return lines;
    }
    overall(out, &ran, &mut lines);
    lines.extend(stale_kinds(&ran));
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
                if g.cells.iter().flatten().any(|r| r.conclusive_runs() > 0) {
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
    if !out.caught.is_empty() {
        lines.push(super::against_spec::sentence(out.caught, out.keys.len()));
    }
    lines
}

/// Combinations of the other keys told per varied key.
const MAX_GROUP_FINDINGS: usize = 12;
/// Combinations listed in the sentence about `expect`.
const MAX_LISTED: usize = 4;

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
    if let Ok(ms) = redlock_proto::duration::parse_signed_ms(v) {
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
    let n: u64 = rows.iter().map(|r| r.conclusive_runs()).sum();
    let (_, ub) = wilson(0, n, Z95);
    let mut s = format!("0 violations in {n} runs (95% upper bound {}", pct(ub));
    if rows.len() > 1 {
        let ub_each = rows
            .iter()
            .map(|r| wilson(0, r.conclusive_runs(), Z95).1)
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
        r.conclusive_runs()
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

/// The overall sentences: the violations over all combinations, and those
/// the scenario's `expect` did not allow.
fn overall(out: &SweepOutput, ran: &[&SummaryRow], lines: &mut Vec<String>) {
    let with: Vec<&SummaryRow> = ran
        .iter()
        .copied()
        .filter(|r| r.violating_runs > 0)
        .collect();
    if out.keys.is_empty() || ran.len() == 1 {
        lines.push(single_overall(ran[0], out.lab.is_some()));
    } else if with.is_empty() {
        lines.push(format!(
            "No combination had a violation: {} over {} combinations.",
            zero_claim(ran, "combination"),
            ran.len()
        ));
    } else {
        let runs: u64 = ran.iter().map(|r| r.conclusive_runs()).sum();
        let violating: u64 = ran.iter().map(|r| r.violating_runs).sum();
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
    // The file's `expect` is about every combination only when it asks
    // for no violation (what `sweep --strict` checks).
    if matches!(out.scenario.expect, Expect::Safe | Expect::Degraded) && !with.is_empty() {
        lines.push(format!(
            "The scenario expects no violation, but {} of {} combination(s) had some{}.",
            with.len(),
            ran.len(),
            listed(out, &with)
        ));
    }
}

/// Which way the stale writes got late, over every run: the runs with a
/// stale write of each kind, and the kind that dominated (in most runs; a
/// tie names both). `None` without stale writes.
fn stale_kinds(ran: &[&SummaryRow]) -> Option<String> {
    let runs: u64 = ran.iter().map(|r| r.conclusive_runs()).sum();
    let with: [u64; 3] = [0, 1, 2].map(|k| ran.iter().map(|r| r.stale_kinds[k].runs).sum());
    let why = |k: StaleKind| {
        match k {
        StaleKind::InFlight => "the network or the store delayed writes sent while the lock stood",
        StaleKind::SentLate => "writers sent after their own hold had ended",
        StaleKind::InOverlap => "writers sent while they still held the lock by their own validity, after another acquisition: the lock itself failed",
    }
    };
    let parts: Vec<String> = StaleKind::ALL
        .iter()
        .zip(with)
        .map(|(k, n)| format!("{} in {n} of {runs} runs", k.short()))
        .collect();
    let dominated = match StaleKind::dominant(with).as_slice() {
        [] => return None,
        [k] => format!("Writes {} dominated: {}", k.short(), why(*k)),
        top => format!(
            "Writes {} were as frequent",
            and_list(
                &top.iter()
                    .map(|k| k.short().to_string())
                    .collect::<Vec<_>>()
            )
        ),
    };
    Some(format!(
        "How the stale writes got late: {}. {dominated}.",
        parts.join(", ")
    ))
}

/// The overall sentence of a sweep of one combination: its violations and
/// its acquisitions (a lab sweep does not see lock calls, only the
/// acquisitions its drivers reported).
fn single_overall(r: &SummaryRow, lab: bool) -> String {
    let head = if r.violating_runs > 0 {
        format!(
            "{} of {} runs violated: {} ({} at 95%).",
            r.violating_runs,
            r.conclusive_runs(),
            pct(r.violation_rate),
            interval(r.ci_low, r.ci_high)
        )
    } else {
        format!("{}.", zero_claim(&[r], "combination"))
    };
    let acq = if lab {
        String::new()
    } else if r.acquire_rate > 0.0 {
        format!(
            " Acquisitions: {} of lock calls; acquisition latency p50 {}, p99 {}.",
            pct(r.acquire_rate),
            latency(r.acquire_p50_ms),
            latency(r.acquire_p99_ms)
        )
    } else {
        " No lock call acquired the lock.".to_string()
    };
    head + &acq
}

/// `: c1; c2; 3 more`: the first [`MAX_LISTED`] combinations of `rows`
/// (nothing without varied keys).
fn listed(out: &SweepOutput, rows: &[&SummaryRow]) -> String {
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

/// A value (its index in the key's values) and its row.
type Indexed<'a> = (usize, &'a SummaryRow);

/// The rows of `p`.
fn rows_of<'r>(p: &[Indexed<'r>]) -> Vec<&'r SummaryRow> {
    p.iter().map(|(_, r)| *r).collect()
}

/// Had the value violations?
fn bad(p: &Indexed) -> bool {
    p.1.violating_runs > 0
}

/// The values of an ordered key that ran, for one combination of the other
/// keys, by rank (ties keep the written order).
struct Ordered<'a> {
    view: &'a KeyView<'a>,
    pts: Vec<Indexed<'a>>,
}

impl Ordered<'_> {
    /// The value at index `k`.
    fn name(&self, k: usize) -> String {
        self.view.values[k].clone()
    }

    /// The values of `p`.
    fn names_of(&self, p: &[Indexed]) -> Vec<String> {
        p.iter().map(|(k, _)| self.name(*k)).collect()
    }

    /// ` (the largest value tested)` / ` (tested: a, b)`.
    fn tested(&self, p: &[Indexed], edge: &str) -> String {
        if p.len() == 1 {
            format!(" (the {edge} value tested)")
        } else {
            format!(" (tested: {})", self.names_of(p).join(", "))
        }
    }

    /// The values of `p` without violations.
    fn zeros(&self, p: &[Indexed]) -> Vec<String> {
        p.iter()
            .filter(|x| !bad(x))
            .map(|(k, _)| self.name(*k))
            .collect()
    }

    /// The values of `p` without violations, said to lie between values with.
    fn between(&self, p: &[Indexed]) -> String {
        let gaps = self.zeros(p);
        if gaps.is_empty() {
            String::new()
        } else {
            format!(
                " {} had 0 violations, but lie between values with violations.",
                and_list(&gaps)
            )
        }
    }
}

/// The threshold sentences for an ordered key, for one combination of the
/// other keys. Larger values are taken to be the safer ones (a longer
/// restart delay); when violations are at the top of the range instead (a
/// faster clock), the range below them is told.
fn ordered_findings(view: &KeyView, g: &Group, ranks: &[f64], lines: &mut Vec<String>) {
    let key = &view.name;
    // (value, row), rows that ran, by rank (ties keep the written order).
    let mut pts: Vec<Indexed> = g
        .cells
        .iter()
        .enumerate()
        .filter_map(|(k, c)| c.filter(|r| r.conclusive_runs() > 0).map(|r| (k, r)))
        .collect();
    pts.sort_by(|a, b| ranks[a.0].total_cmp(&ranks[b.0]).then(a.0.cmp(&b.0)));
    if pts.is_empty() {
        return;
    }
    let o = Ordered { view, pts };
    let pts = &o.pts;
    let last = pts.len() - 1;
    let (Some(fv), Some(lv)) = (pts.iter().position(bad), pts.iter().rposition(bad)) else {
        let range = if pts.len() == 1 {
            o.name(pts[0].0)
        } else {
            format!("from {} to {}", o.name(pts[0].0), o.name(pts[last].0))
        };
        lines.push(lead(
            &g.label,
            &format!(
                "with {key} {range}: {}.",
                zero_claim(&rows_of(pts), "value")
            ),
        ));
        return;
    };
    if lv < last {
        safe_above(&o, lv, &g.label, lines);
    } else {
        // The largest value tested had violations.
        lines.push(lead(&g.label, &violated_at_top(&o, fv)));
    }
}

/// The sentences when every value above the last violation (at `lv`) had
/// none: the threshold, and what it costs against the smallest value.
fn safe_above(o: &Ordered, lv: usize, label: &str, lines: &mut Vec<String>) {
    let key = &o.view.name;
    let pts = &o.pts;
    // Every value above the last violation had none.
    let (lk, lr) = pts[lv];
    let (tk, tr) = pts[lv + 1];
    let gaps = o.zeros(&pts[..lv]);
    let reappear = if gaps.is_empty() {
        String::new()
    } else {
        format!(
            " {} had 0 violations, but violations reappear at larger values.",
            and_list(&gaps)
        )
    };
    lines.push(lead(
        label,
        &format!(
            "with {key} ≥ {}{}: {}. The largest {key} with violations is {}: {}.{reappear}",
            o.name(tk),
            o.tested(&pts[lv + 1..], "largest"),
            zero_claim(&rows_of(&pts[lv + 1..]), "value"),
            o.name(lk),
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
        label,
        &format!("moving {key} from {} to {} {what}.", o.name(bk), o.name(tk)),
    ));
}

/// The sentence when the largest value tested had violations (the first
/// one at `fv`): the range below them free of violations, if any.
fn violated_at_top(o: &Ordered, fv: usize) -> String {
    let key = &o.view.name;
    let pts = &o.pts;
    let last = pts.len() - 1;
    if fv > 0 {
        // Every value below the first violation had none.
        let (fk, fr) = pts[fv];
        format!(
            "with {key} ≤ {}{}: {}. The smallest {key} with violations is {}: {}.{}",
            o.name(pts[fv - 1].0),
            o.tested(&pts[..fv], "smallest"),
            zero_claim(&rows_of(&pts[..fv]), "value"),
            o.name(fk),
            violated(fr),
            o.between(&pts[fv + 1..])
        )
    } else if pts.len() == 1 {
        format!("with {key} = {}: {}.", o.name(pts[0].0), violated(pts[0].1))
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
            o.name(fk),
            violated(fr),
            o.name(lk),
            violated(lr),
            o.between(&pts[1..last])
        )
    }
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
            c.filter(|r| r.conclusive_runs() > 0)
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
    tell_apart(&pts, &mut text);
    categorical_tradeoff(&pts, &mut text);
    lines.push(lead(&g.label, &text));
}

/// Can the sweep tell the values apart? Appended to `text`.
fn tell_apart(pts: &[(&str, &SummaryRow)], text: &mut String) {
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
}

/// The trade-off: the best value without violations against the best with,
/// appended to `text`.
fn categorical_tradeoff(pts: &[(&str, &SummaryRow)], text: &mut String) {
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
}

#[cfg(test)]
mod tests {
    use crate::sweep::conclusions::*;

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

    fn with_kinds(runs: u64, kinds: [u64; 3]) -> SummaryRow {
        let mut r = redlock_harness::sweep::stats::summarize(Vec::new(), &[]);
        r.runs = runs;
        r.stale_kinds = kinds.map(|k| redlock_harness::sweep::stats::KindRate::of(k, runs));
        r
    }

    #[test]
    fn the_kind_of_stale_write_in_most_runs_dominates() {
        let (a, b) = (with_kinds(10, [3, 0, 1]), with_kinds(10, [2, 1, 0]));
        let line = stale_kinds(&[&a, &b]).unwrap();
        assert!(line.contains("in flight in 5 of 20 runs"), "{line}");
        assert!(line.contains("sent late in 1 of 20 runs"), "{line}");
        assert!(line.contains("Writes in flight dominated"), "{line}");
        let tie = stale_kinds(&[&with_kinds(4, [0, 2, 2])]).unwrap();
        assert!(
            tie.contains("Writes sent late and in overlap were as frequent"),
            "{tie}"
        );
        assert_eq!(stale_kinds(&[&with_kinds(4, [0, 0, 0])]), None);
    }
}
