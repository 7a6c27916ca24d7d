//! A matrix's cells: each planned (not a cell, another shard's, read
//! back, or to run), then those to run swept side by side on `--jobs`
//! slots ([`redlock_harness::sweep::lab::run_sweeps`]), each cell's files
//! written as it ends. Each language's cells are spread over the order in
//! which they start, so that runtimes heavy to start, the JVMs, run among
//! the light ones rather than all at once; a library's `weight` in the
//! matrix file caps how many of its runs share the slots.

use super::exit;
use super::lab::{exit_code, load, write as write_run, Args as LabArgs};
use super::lab_seeds::write;
use super::progress::MatrixProgress;
use super::sweep_files::write_rows;
use redlock_harness::runner::lab::{LabError, LabRun, Servers};
use redlock_harness::runner::parse_set;
use redlock_harness::scenario::matrix::{Fault, Library, Matrix};
use redlock_harness::scenario::Scenario;
use redlock_harness::sweep::lab::{finished, has_run_report, run_sweeps, Sweep, Swept};
use redlock_harness::sweep::matrix::{cell_dir, kept, recorded_command, spread, swept, COMMAND};
use redlock_harness::sweep::rows::RunRow;
use redlock_harness::sweep::settle::{stop_point, Rule};
use redlock_report::matrix::{Cell, Outcome};
use std::collections::BTreeMap;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Which runs' reports (`seed-<N>/`) a matrix's cells keep.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum KeepRuns {
    /// Every run's, as `lab --seeds` writes them.
    All,
    /// The cell's first violating run's alone (a 120-seed matrix of 118
    /// cells writes about 14,000 run reports, 2 GB).
    First,
}

/// The file in a cell's directory that says what served its runs (`node`
/// or `redis`), written when the cell runs or is read back.
pub(crate) const SERVED: &str = "servers.txt";

/// What the cells need of `matrix`'s arguments.
pub(crate) struct Options {
    /// Slots the runs share.
    pub(crate) jobs: usize,
    pub(crate) servers: Servers,
    /// Every cell run again, even one already swept.
    pub(crate) fresh: bool,
    pub(crate) keep_runs: KeepRuns,
}

/// What one (library, fault) pair of the matrix comes to before anything
/// runs.
pub(crate) enum Planned<'a> {
    /// Not run here: not a cell, or another shard's.
    Settled(Cell<'a>),
    /// Read back: its rows.
    Kept(Found<'a>, Vec<RunRow>),
    /// To run, after the rows it had finished.
    ToRun(Found<'a>, Box<LabArgs>, Box<Scenario>, Vec<RunRow>),
}

/// A cell found in the matrix: its library, fault, scenario file and
/// directory (relative to the matrix's, and whole).
pub(crate) struct Found<'a> {
    library: &'a Library,
    fault: &'a Fault,
    file: &'a str,
    rel: String,
    dir: PathBuf,
}

/// The `lab` arguments of library `l`'s cell on `file`, into `out`.
pub(crate) fn lab_args(a: &Options, l: &Library, file: &str, out: PathBuf) -> LabArgs {
    LabArgs {
        file: PathBuf::from(file),
        seed: None,
        seeds: None,
        jobs: a.jobs,
        stop_early: true,
        out: Some(out),
        // Checked to be KEY=VALUE when the matrix file was parsed.
        sets: l.set.iter().filter_map(|kv| parse_set(kv).ok()).collect(),
        cmd: l.command.clone(),
        servers: a.servers,
    }
}

/// Plans a cell of the matrix in `dir`: records what serves it, reads it
/// back if it is finished (its report written again with `--keep-runs
/// first`, its runs pruned), else loads its scenario and the runs it had
/// finished.
pub(crate) fn plan<'a>(
    a: &Options,
    m: &Matrix,
    (l, f): (&'a Library, &'a Fault),
    dir: &Path,
) -> Result<Planned<'a>, u8> {
    let file = match f.file_for(l.kind) {
        Ok(file) if l.runs_under(f) => file,
        Ok(_) => return Ok(not_a_cell(l, f, "not among this library's faults")),
        Err(why) => return Ok(not_a_cell(l, f, why)),
    };
    let rel = cell_dir(l, f);
    let dir = dir.join(&rel);
    record_served(a, &dir)?;
    let found = Found {
        library: l,
        fault: f,
        file,
        rel,
        dir,
    };
    if let Some(rows) = kept(&found.dir, m).filter(|_| !a.fresh) {
        if a.keep_runs == KeepRuns::First {
            let scenario = load(&lab_args(a, l, file, found.dir.clone()))?;
            write_cell(a, &found, &scenario, m.seeds.clone(), &rows)?;
        }
        return Ok(Planned::Kept(found, rows));
    }
    let la = lab_args(a, l, file, found.dir.clone());
    let scenario = load(&la)?;
    record_command(l, &found.dir)?;
    // An interrupted cell goes on after the runs it finished.
    let before = match a.fresh {
        true => Vec::new(),
        false => finished(&found.dir, &scenario.name, m.seeds.clone()),
    };
    Ok(Planned::ToRun(
        found,
        Box::new(la),
        Box::new(scenario),
        before,
    ))
}

fn not_a_cell<'a>(l: &'a Library, f: &'a Fault, why: &'a str) -> Planned<'a> {
    Planned::Settled(Cell {
        library: l,
        fault: f,
        outcome: Outcome::NotACell(why),
    })
}

/// Runs the planned cells to run, side by side on `--jobs` slots, each
/// one's files written as it ends and a progress line said; the cells, in
/// the matrix's order, or the exit code of the first that failed (the
/// others run to their end first, so that a matrix run again resumes
/// after them).
pub(crate) fn run<'a>(
    a: &Options,
    m: &Matrix,
    planned: Vec<Planned<'a>>,
    progress: MatrixProgress,
) -> Result<Vec<Cell<'a>>, u8> {
    let to_run: Vec<usize> = spread_by_language(&planned);
    let sweeps = to_run.iter().map(|&i| match &planned[i] {
        Planned::ToRun(c, la, scenario, before) => {
            said_before(c, before, Rule::of(m));
            Sweep {
                scenario,
                seeds: m.seeds.clone(),
                before: before.clone(),
                cmd: &la.cmd,
                dir: &c.dir,
                rule: Some(Rule::of(m)),
                weight: c.library.weight(),
            }
        }
        _ => unreachable!("only cells to run are swept"),
    });
    let found = |k: usize| match &planned[to_run[k]] {
        Planned::ToRun(c, la, scenario, before) => {
            (c, la.as_ref(), scenario.as_ref(), before.len())
        }
        _ => unreachable!("only cells to run are swept"),
    };
    let mut progress = progress;
    for p in &planned {
        if let Planned::Kept(c, _) = p {
            progress.done(&c.library.language, 0, false);
        }
    }
    let progress = Mutex::new(progress);
    let failed: Mutex<Vec<(usize, u8)>> = Mutex::new(Vec::new());
    let each = |k: usize, r: &Result<LabRun, LabError>, out: &Path| {
        let (c, la, ..) = found(k);
        said_run(c, la, r, out)
    };
    let done = |k: usize, s: &Result<Swept, LabError>| {
        let (c, _, scenario, before) = found(k);
        if let Err(code) = ended(a, m, (c, scenario, before), s, &progress) {
            let mut f = failed.lock().unwrap_or_else(|p| p.into_inner());
            f.push((to_run[k], code));
        }
    };
    let swept_all = run_sweeps(sweeps.collect(), a.jobs, a.servers, each, done);
    // The first failure in the matrix's order, whatever the order in time.
    let failed = failed.into_inner().unwrap_or_else(|p| p.into_inner());
    if let Some((_, code)) = failed.into_iter().min() {
        return Err(code);
    }
    let mut rows: BTreeMap<usize, Vec<RunRow>> = BTreeMap::new();
    for (k, s) in swept_all.into_iter().enumerate() {
        let s = s.expect("a failed cell is in `failed`");
        rows.insert(to_run[k], s.rows);
    }
    Ok(assemble(planned, rows, Rule::of(m)))
}

/// The indexes of the cells to run, in the order they start: each
/// language's spread over it ([`spread`]).
fn spread_by_language(planned: &[Planned<'_>]) -> Vec<usize> {
    let languages: Vec<Option<&str>> = (planned.iter())
        .map(|p| match p {
            Planned::ToRun(c, ..) => Some(c.library.language.as_str()),
            _ => None,
        })
        .collect();
    spread(&languages)
}

/// `<library> × <fault>`.
fn name(c: &Found<'_>) -> String {
    format!("{} × {}", c.library.name, c.fault.name)
}

/// A run of cell `c` as it ends: its outputs written into `out`, its
/// verdict said; a failure said (bad input once, when the cell ends).
fn said_run(
    c: &Found<'_>,
    la: &LabArgs,
    r: &Result<LabRun, LabError>,
    out: &Path,
) -> Result<(), LabError> {
    let r = match r {
        Ok(r) => r,
        Err(LabError::BadInput(_)) => return Ok(()),
        Err(e) => {
            eprintln!("{}: {e}", name(c));
            return Ok(());
        }
    };
    if let Err(e) = write_run(r, out, &la.sets) {
        eprintln!("{e}");
        return Err(e);
    }
    let verdict = r.run.check.verdict.as_str();
    eprintln!("{}: seed {}: {verdict}", name(c), r.run.seed);
    Ok(())
}

/// Says what a cell to run does with the runs it had finished: goes on
/// after them, or, when the rule settles it before their end (a file that
/// now asks for fewer violating runs), cuts them back to its stop.
fn said_before(c: &Found<'_>, before: &[RunRow], rule: Rule) {
    match stop_point(before, rule) {
        _ if before.is_empty() => {}
        (n, _) if n < before.len() => eprintln!(
            "{}: cut back to {n} of the {} runs it had finished: the rule settles it there \
             (violating_after {})",
            name(c),
            before.len(),
            rule.violating_after
        ),
        _ => eprintln!(
            "{}: going on after the {} runs it had finished",
            name(c),
            before.len()
        ),
    }
}

/// Cell `c` as its sweep ends: its dropped runs removed, its files
/// written, a progress line said (counting the runs this matrix made, not
/// the `before` rows it went on after); a failure said, and its exit code.
fn ended(
    a: &Options,
    m: &Matrix,
    (c, scenario, before): (&Found<'_>, &Scenario, usize),
    s: &Result<Swept, LabError>,
    progress: &Mutex<MatrixProgress>,
) -> Result<(), u8> {
    let s = match s {
        Ok(s) => s,
        Err(e) => {
            if let LabError::BadInput(_) = e {
                eprintln!("{e}");
            }
            eprintln!("{}: stopped by the failure above", name(c));
            return Err(exit_code(e));
        }
    };
    for seed in &s.dropped {
        let _ = std::fs::remove_dir_all(c.dir.join(format!("seed-{seed}")));
    }
    // A cell whose files cannot be written runs again when the matrix is
    // run again: the others go on.
    write_cell(a, c, scenario, m.seeds.clone(), &s.rows)?;
    let mut p = progress.lock().unwrap_or_else(|p| p.into_inner());
    // The rows hold those of before up to the stop: a cell cut back to its
    // stop made no run here.
    p.done(
        &c.library.language,
        s.rows.len().saturating_sub(before),
        true,
    );
    let line = p.line(&name(c));
    let worded = s.stop.worded(Rule::of(m));
    eprintln!("{line} {} runs: {worded}", s.rows.len());
    Ok(())
}

/// The matrix's cells in its order, from the plans and the rows of the
/// cells that ran (by plan index).
fn assemble<'a>(
    planned: Vec<Planned<'a>>,
    mut ran: BTreeMap<usize, Vec<RunRow>>,
    rule: Rule,
) -> Vec<Cell<'a>> {
    let cell = |c: Found<'a>, rows: &[RunRow]| Cell {
        library: c.library,
        fault: c.fault,
        outcome: Outcome::Ran(Box::new(swept(c.file, c.rel, &c.dir, rows, rule))),
    };
    (planned.into_iter().enumerate())
        .map(|(i, p)| match p {
            Planned::Settled(c) => c,
            Planned::Kept(c, rows) => cell(c, &rows),
            Planned::ToRun(c, ..) => {
                let rows = ran.remove(&i).expect("every cell to run ran");
                cell(c, &rows)
            }
        })
        .collect()
}

/// Records in a cell's directory the client command its runs use
/// ([`COMMAND`]). A cell that goes on after runs of another command was
/// refused before anything was written (`matrix::commands_alike`).
fn record_command(l: &Library, cell: &Path) -> Result<(), u8> {
    let text = serde_json::to_string(&l.command).expect("a list of strings") + "\n";
    std::fs::write(cell.join(COMMAND), text).map_err(|e| {
        eprintln!(
            "redlock-sim matrix: cannot write to {}: {e}",
            cell.display()
        );
        exit::SOFTWARE
    })
}

/// Records in a cell's directory what served its runs.
fn record_served(a: &Options, cell: &Path) -> Result<(), u8> {
    let text = format!("{}\n", a.servers.as_str());
    std::fs::create_dir_all(cell)
        .and_then(|()| std::fs::write(cell.join(SERVED), text))
        .map_err(|e| {
            eprintln!(
                "redlock-sim matrix: cannot write to {}: {e}",
                cell.display()
            );
            exit::SOFTWARE
        })
}

/// Writes a cell's sweep files into its directory from its rows, after
/// removing, with `--keep-runs first`, every run's report but its first
/// violating run's (of those that are there: a cell of before the flag may
/// have lost its first).
fn write_cell(
    a: &Options,
    c: &Found<'_>,
    scenario: &Scenario,
    seeds: RangeInclusive<u64>,
    rows: &[RunRow],
) -> Result<(), u8> {
    let dir = &c.dir;
    let mut written = Ok(());
    if a.keep_runs == KeepRuns::First {
        let first = rows
            .iter()
            .filter(|r| r.verdict == "violation")
            .map(|r| r.seed)
            .find(|&s| has_run_report(dir, s));
        // The rows first: a cell cut short here goes on from its runs.csv.
        written =
            write_rows(&dir.join("runs.csv"), &[], rows).and_then(|()| prune_runs(dir, first));
    }
    // A cell read back keeps the command it ran with.
    let cmd = recorded_command(dir).unwrap_or_else(|| c.library.command.clone());
    let written = written.and_then(|()| write(dir, scenario, c.file, seeds, rows, &cmd));
    written.map(drop).map_err(|e| {
        eprintln!("redlock-sim matrix: cannot write to {}: {e}", dir.display());
        exit::SOFTWARE
    })
}

/// Removes every `seed-<N>/` of the cell's directory `dir` but `keep`'s.
fn prune_runs(dir: &Path, keep: Option<u64>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let seed = name
            .to_str()
            .and_then(|n| n.strip_prefix("seed-"))
            .and_then(|n| n.parse::<u64>().ok());
        if seed.is_some() && seed != keep && entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(entry.path())?;
        }
    }
    Ok(())
}
