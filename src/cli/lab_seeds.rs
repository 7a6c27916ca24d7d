//! `redlock-sim lab FILE --seeds A..=B [--stop-early] [--jobs J]`: every
//! seed a lab run of its own (`--jobs J` at once, each with its own ports),
//! into `DIR/seed-<N>/`, and `runs.csv`, `summary.csv`, `report.md` and
//! `index.html` as a sweep writes them (one combination: the lab varies
//! nothing). Each violating run's report is its own directory: the lab
//! cannot replay a run. With `--stop-early` the seeds stop once the verdict
//! is settled ([`redlock_harness::sweep::settle`]); the runs that had
//! started past that point are dropped, their directories removed.

use super::exit;
use super::lab::{exit_code, load, write as write_run, Args};
use super::sweep::write_summary;
use super::sweep_files::write_rows;
use redlock_harness::runner::lab::{LabError, LabRun};
use redlock_harness::scenario::Scenario;
use redlock_harness::sweep::lab::{has_run_report, Swept};
use redlock_harness::sweep::rows::RunRow;
use redlock_harness::sweep::settle::Rule;
use redlock_harness::sweep::stats::summarize;
use redlock_report::sweep::{conclusions, write_sweep, SweepOutput};
use std::ops::RangeInclusive;
use std::path::Path;

/// Runs `lab --seeds` and returns its exit code.
pub(crate) fn main(a: &Args, seeds: RangeInclusive<u64>) -> u8 {
    let scenario = match load(a) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let scenario = &scenario;
    let dir = a
        .out
        .clone()
        .unwrap_or_else(|| Path::new("reports").join(&scenario.name).join("lab"));
    let swept = match run_seeds(a, scenario, seeds.clone(), Vec::new(), &dir) {
        Ok(swept) => swept,
        Err(code) => return code,
    };
    if a.stop_early {
        let worded = swept.stop.worded(Rule::default());
        eprintln!("{} runs: {worded}", swept.rows.len());
    }
    let rows = swept.rows;
    match write(
        &dir,
        scenario,
        &a.file.display().to_string(),
        seeds,
        &rows,
        &a.cmd,
    ) {
        Ok(lines) => {
            super::die_quietly_on_broken_pipe();
            for l in lines {
                println!("{l}");
            }
            println!("report: {}", dir.join("index.html").display());
            // A run that tested nothing fails the command, as one run's
            // inconclusive verdict fails `lab`: a CI must not go green on it.
            let expect = scenario.expect.as_str();
            let violating = rows.iter().filter(|r| r.verdict == "violation").count();
            let inconclusive = rows.iter().any(|r| !r.conclusive());
            u8::from(
                inconclusive
                    || match expect {
                        "violation" => violating == 0,
                        _ => violating > 0,
                    },
            )
        }
        Err(e) => {
            eprintln!(
                "redlock-sim lab: cannot write the outputs to {}: {e}",
                dir.display()
            );
            exit::SOFTWARE
        }
    }
}

/// Runs the seeds of `seeds` into `dir/seed-<N>/`, `a.jobs` at once (with
/// `a.stop_early`, until the verdict is settled), each run's outputs
/// written and each failure said as it ends, after `before` (the rows of
/// the first seeds, run earlier); the rows in seed order, or the exit code
/// of the first run that could not be done. The directories of runs
/// dropped past the stop are removed.
pub(crate) fn run_seeds(
    a: &Args,
    scenario: &Scenario,
    seeds: RangeInclusive<u64>,
    before: Vec<RunRow>,
    dir: &Path,
) -> Result<Swept, u8> {
    let each = |r: &Result<LabRun, LabError>, out: &Path| -> Result<(), LabError> {
        let r = match r {
            Ok(r) => r,
            // Bad input (a refusal found as the run went) is the same for
            // every seed: said once, below, not once per job.
            Err(LabError::BadInput(_)) => return Ok(()),
            Err(e) => {
                eprintln!("{e}");
                return Ok(());
            }
        };
        if let Err(e) = write_run(r, out, &a.sets) {
            eprintln!("{e}");
            return Err(e);
        }
        eprintln!("seed {}: {}", r.run.seed, r.run.check.verdict.as_str());
        Ok(())
    };
    let swept = redlock_harness::sweep::lab::run_seeds(
        scenario,
        seeds,
        before,
        &a.cmd,
        a.jobs,
        dir,
        a.servers,
        a.stop_early.then(Rule::default),
        each,
    )
    .map_err(|e| {
        if let LabError::BadInput(_) = &e {
            eprintln!("{e}");
        }
        exit_code(&e)
    })?;
    for seed in &swept.dropped {
        let _ = std::fs::remove_dir_all(dir.join(format!("seed-{seed}")));
    }
    Ok(swept)
}

/// Writes a lab sweep's files (the seeds it ran: those of `seeds` up to its
/// last row); the lines to print.
pub(crate) fn write(
    dir: &Path,
    scenario: &Scenario,
    file: &str,
    seeds: RangeInclusive<u64>,
    rows: &[RunRow],
    cmd: &[String],
) -> std::io::Result<Vec<String>> {
    let seeds = match rows.last() {
        Some(r) => *seeds.start()..=r.seed,
        None => seeds,
    };
    write_rows(&dir.join("runs.csv"), &[], rows)?;
    let summary = vec![summarize(Vec::new(), &rows.iter().collect::<Vec<_>>())];
    write_summary(&dir.join("summary.csv"), &[], &summary)?;
    // A run's report is linked where it is (a matrix may have kept only
    // its cell's first violating run: `--keep-runs first`).
    let violating: Vec<(u64, Option<String>)> = rows
        .iter()
        .filter(|r| r.verdict == "violation")
        .map(|r| {
            let href = format!("seed-{}/index.html", r.seed);
            (r.seed, has_run_report(dir, r.seed).then_some(href))
        })
        .collect();
    let replay = vec![(Vec::new(), violating)];
    let inconclusive = redlock_harness::sweep::inconclusive_runs(rows);
    let output = SweepOutput {
        scenario,
        keys: &[],
        rows: &summary,
        seeds,
        total_runs: rows.len() as u64,
        file,
        replay: &replay,
        caught: &[],
        coverage: None,
        lab: Some(cmd),
        inconclusive: &inconclusive,
    };
    write_sweep(dir, &output)?;
    Ok(conclusions(&output))
}
