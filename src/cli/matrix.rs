//! `redlock-sim matrix FILE [--out DIR] [--jobs J] [--fresh]`: every
//! library of the matrix file on every fault's scenario for its kind, as
//! `redlock-sim lab FILE --seeds A..=B -- CMD` would run it, into
//! `DIR/<library>-<version>/<fault>/`; then the matrix's `matrix.csv`, `matrix.svg`,
//! `report.md` and `index.html` ([`redlock_report::matrix`]). The matrix is
//! a sweep over libraries ([`redlock_harness::sweep::matrix`]); a cell whose
//! `runs.csv` already holds every seed is read, not run again (`--fresh`
//! runs it again), so an interrupted matrix resumes.

use super::lab::{load, Args as LabArgs};
use super::lab_seeds::{run_seeds, write};
use super::EXIT_SOFTWARE;
use redlock_harness::runner::parse_set;
use redlock_harness::scenario::matrix::{parse, Fault, Library, Matrix};
use redlock_harness::sweep::matrix::{cell_dir, cells, kept, swept};
use redlock_report::matrix::{answer, write_matrix, Cell, MatrixOutput, Outcome};
use redlock_report::shell_word;
use std::path::{Path, PathBuf};

pub(crate) struct Args {
    pub file: PathBuf,
    pub out: Option<PathBuf>,
    pub jobs: usize,
    pub fresh: bool,
    pub servers: redlock_harness::runner::lab::Servers,
    /// Overrides the matrix file's `seeds`.
    pub seeds: Option<std::ops::RangeInclusive<u64>>,
}

/// Runs `matrix` and returns its exit code.
pub(crate) fn main(a: Args) -> u8 {
    let name = a.file.display().to_string();
    let text = match std::fs::read_to_string(&a.file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("redlock-sim matrix: {name}: {e}");
            return 2;
        }
    };
    let mut matrix = match parse(&text, &name) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    if let Some(seeds) = &a.seeds {
        matrix.seeds = seeds.clone();
    }
    // Every cell's scenario and command checked before anything runs.
    for (l, f) in cells(&matrix).filter(|(l, f)| l.runs_under(f)) {
        if let Ok(file) = f.file_for(l.kind) {
            if let Err(code) = load(&lab_args(&a, l, file, PathBuf::new())) {
                return code;
            }
        }
    }
    let dir = a
        .out
        .clone()
        .unwrap_or_else(|| Path::new("reports").join(&matrix.name));
    let mut out = MatrixOutput {
        matrix: &matrix,
        cells: Vec::new(),
        command: command(&a),
    };
    for (l, f) in cells(&matrix) {
        match cell(&a, &matrix, l, f, &dir) {
            Ok(c) => out.cells.push(c),
            Err(code) => return code,
        }
    }
    if let Err(e) = write_matrix(&dir, &out) {
        eprintln!("redlock-sim matrix: cannot write to {}: {e}", dir.display());
        return EXIT_SOFTWARE;
    }
    super::die_quietly_on_broken_pipe();
    for line in answer(&out) {
        println!("{line}");
    }
    println!("report: {}", dir.join("index.html").display());
    0
}

fn lab_args(a: &Args, l: &Library, file: &str, out: PathBuf) -> LabArgs {
    LabArgs {
        file: PathBuf::from(file),
        seed: None,
        jobs: a.jobs,
        out: Some(out),
        // Checked to be KEY=VALUE when the matrix file was parsed.
        sets: l.set.iter().filter_map(|kv| parse_set(kv).ok()).collect(),
        cmd: l.command.clone(),
        servers: a.servers,
    }
}

/// One cell: its sweep run (or read back), or why it is not a cell.
fn cell<'a>(
    a: &Args,
    m: &Matrix,
    l: &'a Library,
    f: &'a Fault,
    dir: &Path,
) -> Result<Cell<'a>, u8> {
    let file = match f.file_for(l.kind) {
        Ok(file) if l.runs_under(f) => file,
        Ok(_) => {
            return Ok(Cell {
                library: l,
                fault: f,
                outcome: Outcome::NotACell("not among this library's faults"),
            })
        }
        Err(why) => {
            return Ok(Cell {
                library: l,
                fault: f,
                outcome: Outcome::NotACell(why),
            })
        }
    };
    let rel = cell_dir(l, f);
    let dir = dir.join(&rel);
    let rows = match kept(&dir, m).filter(|_| !a.fresh) {
        Some(rows) => rows,
        None => {
            eprintln!("{} × {}:", l.name, f.name);
            let la = lab_args(a, l, file, dir.clone());
            let scenario = load(&la)?;
            let rows = run_seeds(&la, &scenario, m.seeds.clone(), &dir)?;
            let seeds = m.seeds.clone();
            if let Err(e) = write(&dir, &scenario, file, seeds, &rows, &l.command) {
                eprintln!("redlock-sim matrix: cannot write to {}: {e}", dir.display());
                return Err(EXIT_SOFTWARE);
            }
            rows
        }
    };
    Ok(Cell {
        library: l,
        fault: f,
        outcome: Outcome::Ran(Box::new(swept(file, rel, &rows))),
    })
}

fn command(a: &Args) -> String {
    let mut c = format!(
        "redlock-sim matrix {}",
        shell_word(&a.file.display().to_string())
    );
    if let Some(o) = &a.out {
        c.push_str(&format!(" --out {}", shell_word(&o.display().to_string())));
    }
    c.push_str(&format!(" --jobs {}", a.jobs));
    if let Some(s) = &a.seeds {
        c.push_str(&format!(" --seeds {}..={}", s.start(), s.end()));
    }
    if a.servers == redlock_harness::runner::lab::Servers::Redis {
        c.push_str(" --servers redis");
    }
    c
}
