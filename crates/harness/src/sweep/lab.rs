//! A lab sweep: every seed a lab run of its own ([`crate::runner::lab`]),
//! `jobs` at once, each with its own ports. Each run is handed to the
//! caller as it ends (the command layer writes its report at once: the lab
//! cannot replay a run), then made a row. With the stopping rule
//! ([`super::settle`]) the seeds stop where the cell's verdict is settled.

use super::lanes::{map_lanes, Lane, Prefix};
use super::rows::RunRow;
use super::settle::{settled, stop_point, Rule, Stop};
use crate::runner::lab::{run_lab, LabError, LabRun, Servers};
use crate::scenario::Scenario;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

/// What a lab sweep ran.
pub struct Swept {
    /// The rows, in seed order.
    pub rows: Vec<RunRow>,
    /// Why it stopped where it did.
    pub stop: Stop,
    /// Seeds past the stop that had started, ran and were dropped (their
    /// directories were written: the caller removes them).
    pub dropped: Vec<u64>,
}

/// One lab sweep to run: a cell of a matrix, or `lab --seeds`.
pub struct Sweep<'a> {
    pub scenario: &'a Scenario,
    pub seeds: RangeInclusive<u64>,
    /// The rows of the first seeds, run earlier (an interrupted sweep's,
    /// see [`finished`]): the sweep goes on after them.
    pub before: Vec<RunRow>,
    /// The client's command.
    pub cmd: &'a [String],
    /// Its directory: seed N's run in `dir/seed-<N>/`.
    pub dir: &'a Path,
    /// With a rule, no further than its verdict is settled by it
    /// ([`super::settle`]); without, every seed.
    pub rule: Option<Rule>,
    /// Slots of `jobs` one of its runs takes (at least 1): more for a
    /// runtime heavy to start, a JVM.
    pub weight: usize,
}

/// A sweep made ready: what to run after its rows of before.
struct Plan<'a> {
    sweep: Sweep<'a>,
    /// The seeds left to run (none once `before` settles it).
    list: Vec<u64>,
    /// Seeds of before past its stop: an interrupted sweep may have
    /// finished runs it would have dropped.
    past: Vec<u64>,
}

/// Runs the seeds of `seeds` in order, `jobs` at once, each seed's client
/// logs in `dir/seed-<N>/clients/`, handing each run as it ends (or why it
/// could not be made) to `each`, with its directory; with a `rule`, no
/// further than the cell's verdict is settled by it. `before` are the rows of
/// the first seeds, run earlier (an interrupted sweep's, see
/// [`finished`]): the sweep goes on after them. The rows in seed order, or
/// the first failure in seed order.
#[allow(clippy::too_many_arguments)]
pub fn run_seeds(
    scenario: &Scenario,
    seeds: RangeInclusive<u64>,
    before: Vec<RunRow>,
    cmd: &[String],
    jobs: usize,
    dir: &Path,
    servers: Servers,
    rule: Option<Rule>,
    each: impl Fn(&Result<LabRun, LabError>, &Path) -> Result<(), LabError> + Sync,
) -> Result<Swept, LabError> {
    let sweep = Sweep {
        scenario,
        seeds,
        before,
        cmd,
        dir,
        rule,
        weight: 1,
    };
    let each = |_: usize, r: &Result<LabRun, LabError>, out: &Path| each(r, out);
    let mut one = run_sweeps(vec![sweep], jobs, servers, each, |_, _| {});
    one.pop().expect("one sweep, one result")
}

/// Runs the sweeps side by side on `jobs` slots, each as [`run_seeds`]
/// runs one, a run taking its sweep's weight in slots; which run starts
/// next is [`super::lanes`]' rule: while the sweeps outnumber the slots,
/// the earliest run one seed at a time each, so a sweep settled early
/// starts few runs past its stop. `each(k, run, dir)` as a run of sweep
/// `k` ends, `done(k, swept)` as sweep `k` ends. What each sweep keeps
/// depends only on its own runs. Every sweep's rows in seed order, or
/// its first failure in seed order, in the sweeps' order.
pub fn run_sweeps(
    sweeps: Vec<Sweep<'_>>,
    jobs: usize,
    servers: Servers,
    each: impl Fn(usize, &Result<LabRun, LabError>, &Path) -> Result<(), LabError> + Sync,
    done: impl Fn(usize, &Result<Swept, LabError>) + Sync,
) -> Vec<Result<Swept, LabError>> {
    let plans: Vec<Plan<'_>> = sweeps.into_iter().map(plan).collect();
    let each = &each;
    let lanes: Vec<Lane<'_, Result<RunRow, LabError>>> = (plans.iter().enumerate())
        .map(|(k, p)| lane(k, p, servers, each))
        .collect();
    map_lanes(&lanes, jobs, |k, prefix| {
        let swept = swept(&plans[k], prefix);
        done(k, &swept);
        swept
    })
}

/// `sweep` made ready: its rows of before up to their stop, and the
/// seeds left to run.
fn plan(mut sweep: Sweep<'_>) -> Plan<'_> {
    let all: Vec<u64> = sweep.seeds.clone().collect();
    let before = std::mem::take(&mut sweep.before);
    assert!(
        before.len() <= all.len() && before.iter().zip(&all).all(|(r, &s)| r.seed == s),
        "the rows run before are the sweep's first seeds"
    );
    let (before, past) = up_to_the_stop(before, sweep.rule);
    let settled_by = sweep
        .rule
        .is_some_and(|rule| settled(&before, rule).is_some());
    let list = match settled_by {
        true => Vec::new(),
        false => all[before.len()..].to_vec(),
    };
    assert!(
        past.is_empty() || settled_by,
        "an unsettled sweep has no run past its stop"
    );
    sweep.before = before;
    Plan { sweep, list, past }
}

/// The lane that runs plan `k`'s seeds: each run's directory cleared
/// first (what a run cut short left there goes), its run handed to
/// `each`; done at its first failure, or where its verdict is settled.
fn lane<'a, E>(
    k: usize,
    p: &'a Plan<'a>,
    servers: Servers,
    each: &'a E,
) -> Lane<'a, Result<RunRow, LabError>>
where
    E: Fn(usize, &Result<LabRun, LabError>, &Path) -> Result<(), LabError> + Sync,
{
    let s = &p.sweep;
    Lane {
        count: p.list.len(),
        weight: s.weight,
        f: Box::new(move |i| {
            let out = seed_dir(s.dir, p.list[i]);
            let _ = std::fs::remove_dir_all(&out);
            let r = run_lab(s.scenario, p.list[i], s.cmd, out.join("clients"), servers);
            each(k, &r, &out)?;
            Ok(RunRow::from_lab_run(&r?.run))
        }),
        done: Box::new(
            move |results: &[Result<RunRow, LabError>]| match results.last() {
                Some(Err(_)) => true,
                _ => {
                    let mut rows = s.before.clone();
                    rows.extend(results.iter().flatten().cloned());
                    s.rule.is_some_and(|rule| settled(&rows, rule).is_some())
                }
            },
        ),
    }
}

/// What plan `p`'s lane kept, made its sweep: its rows of before and its
/// runs in seed order (or its first failure), the seeds dropped.
fn swept(p: &Plan<'_>, prefix: Prefix<Result<RunRow, LabError>>) -> Result<Swept, LabError> {
    let mut rows = p.sweep.before.clone();
    for r in prefix.kept {
        rows.push(r?);
    }
    // Each run is of the seed it was run with: the rows are the first seeds.
    assert!(
        rows.iter()
            .zip(p.sweep.seeds.clone())
            .all(|(r, s)| r.seed == s),
        "a lab sweep's rows are not its first seeds in order"
    );
    let mut dropped = p.past.clone();
    dropped.extend(prefix.dropped.iter().map(|&i| p.list[i]));
    Ok(finish(rows, p.sweep.rule, dropped))
}

/// `rows` up to where the stopping rule `rule` settles them (all of them
/// without one), and the seeds past that point: an interrupted sweep may
/// have finished runs it would have dropped.
fn up_to_the_stop(mut rows: Vec<RunRow>, rule: Option<Rule>) -> (Vec<RunRow>, Vec<u64>) {
    let n = match rule {
        Some(rule) => stop_point(&rows, rule).0,
        None => rows.len(),
    };
    let past = rows.split_off(n).iter().map(|r| r.seed).collect();
    (rows, past)
}

/// The sweep that ran `rows` (and dropped the seeds `dropped`).
fn finish(rows: Vec<RunRow>, rule: Option<Rule>, dropped: Vec<u64>) -> Swept {
    let (n, stop) = match rule {
        Some(rule) => stop_point(&rows, rule),
        None => (rows.len(), Stop::Budget),
    };
    assert_eq!(n, rows.len(), "the lab sweep stopped past its stop point");
    Swept {
        rows,
        stop,
        dropped,
    }
}

/// The rows of the runs an interrupted sweep into `dir` had finished, in
/// the order of `seeds` from the first: those its `runs.csv` lists (a
/// sweep of fewer seeds, whose run reports `matrix --keep-runs first` may
/// have removed), then as long as each next seed's directory holds its
/// outputs (`index.html`, written last) and a `summary.json` of
/// `scenario`: where the sweep goes on. A run cut short left no
/// `index.html`, and runs again with those after it.
pub fn finished(dir: &Path, scenario: &str, seeds: RangeInclusive<u64>) -> Vec<RunRow> {
    let mut rows = listed(dir, scenario, &seeds);
    for seed in seeds.skip(rows.len()) {
        if !has_run_report(dir, seed) {
            break;
        }
        let out = seed_dir(dir, seed);
        let row = std::fs::read_to_string(out.join("summary.json"))
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .and_then(|v| RunRow::from_lab_summary(&v))
            .filter(|r| r.scenario == scenario && r.seed == seed);
        match row {
            Some(row) => rows.push(row),
            None => break,
        }
    }
    rows
}

/// The rows of `dir`'s `runs.csv` when they are `scenario`'s runs of the
/// first seeds of `seeds`, in order; else none.
fn listed(dir: &Path, scenario: &str, seeds: &RangeInclusive<u64>) -> Vec<RunRow> {
    let Ok(rows) = super::rows::read(&dir.join("runs.csv"), &[]) else {
        return Vec::new();
    };
    let first_seeds = rows.len() as u64 <= seeds.clone().count() as u64
        && rows.iter().zip(seeds.clone()).all(|(r, s)| r.seed == s);
    match first_seeds && rows.iter().all(|r| r.scenario == scenario) {
        true => rows,
        false => Vec::new(),
    }
}

/// Whether seed `seed`'s run report is whole in the lab sweep's directory
/// `dir` (`seed-<N>/index.html`, written last): a run to resume after, to
/// link, to keep.
pub fn has_run_report(dir: &Path, seed: u64) -> bool {
    seed_dir(dir, seed).join("index.html").is_file()
}

/// Where seed `seed`'s run goes in a lab sweep's directory.
pub(crate) fn seed_dir(dir: &Path, seed: u64) -> PathBuf {
    dir.join(format!("seed-{seed}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(verdict: &str, n: u64) -> Vec<RunRow> {
        (1..=n)
            .map(|seed| RunRow {
                seed,
                verdict: verdict.to_string(),
                ..RunRow::default()
            })
            .collect()
    }

    /// Twelve finished runs that all violated: the rule stops at ten, so
    /// a resumed sweep keeps ten and drops seeds 11 and 12.
    #[test]
    fn runs_finished_past_the_stop_are_dropped() {
        let rule = Some(Rule::default());
        let (kept, past) = up_to_the_stop(rows("violation", 12), rule);
        assert_eq!(kept.len(), 10);
        assert_eq!(past, [11, 12]);
        let (kept, past) = up_to_the_stop(rows("violation", 12), None);
        assert_eq!((kept.len(), past.len()), (12, 0));
        let (kept, past) = up_to_the_stop(rows("safe", 12), rule);
        assert_eq!((kept.len(), past.len()), (12, 0));
        // A cell read with a rule of 20 goes on after its ten.
        let twenty = Some(Rule {
            violating_after: 20,
        });
        let (kept, past) = up_to_the_stop(rows("violation", 12), twenty);
        assert_eq!((kept.len(), past.len()), (12, 0));
    }
}
