//! `redlock-sim matrix FILE [--out DIR] [--jobs J] [--fresh]`: every
//! library of the matrix file on every fault's scenario for its kind, as
//! `redlock-sim lab FILE --seeds A..=B -- CMD` would run it, into
//! `DIR/<library>-<version>/<fault>/`; then the matrix's `matrix.csv`, `matrix.svg`,
//! `report.md` and `index.html` ([`crate::report::matrix`]). A cell whose
//! `runs.csv` already holds every seed is read, not run again (`--fresh`
//! runs it again), so an interrupted matrix resumes.

use super::lab::{load, Args as LabArgs};
use super::lab_seeds::{run_seeds, write};
use super::EXIT_SOFTWARE;
use crate::report::matrix::{answer, write_matrix, Cell, MatrixOutput, Outcome, Swept};
use crate::report::shell_word;
use crate::scenario::matrix::{parse, Fault, Library, Matrix};
use crate::sweep::rows::{read, RunRow};
use crate::sweep::stats::summarize;
use std::path::{Path, PathBuf};

pub struct Args {
    pub file: PathBuf,
    pub out: Option<PathBuf>,
    pub jobs: usize,
    pub fresh: bool,
}

/// Runs `matrix` and returns its exit code.
pub fn main(a: Args) -> u8 {
    let name = a.file.display().to_string();
    let text = match std::fs::read_to_string(&a.file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("redlock-sim matrix: {name}: {e}");
            return 2;
        }
    };
    let matrix = match parse(&text, &name) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    // Every cell's scenario and command checked before anything runs.
    for (l, f) in cells(&matrix) {
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

fn cells(m: &Matrix) -> impl Iterator<Item = (&Library, &Fault)> {
    m.libraries
        .iter()
        .flat_map(move |l| m.faults.iter().map(move |f| (l, f)))
}

fn lab_args(a: &Args, l: &Library, file: &str, out: PathBuf) -> LabArgs {
    LabArgs {
        file: PathBuf::from(file),
        seed: None,
        seeds: None,
        jobs: a.jobs,
        out: Some(out),
        sets: Vec::new(),
        cmd: l.command.clone(),
    }
}

/// A directory name: lowercase letters and digits, the rest `-`.
fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || c == '.' {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
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
        Ok(file) => file,
        Err(why) => {
            return Ok(Cell {
                library: l,
                fault: f,
                outcome: Outcome::NotACell(why),
            })
        }
    };
    // The version is part of the name: a matrix may hold two of one library.
    let rel = format!(
        "{}/{}",
        slug(&format!("{} {}", l.name, l.version)),
        slug(&f.name)
    );
    let cell_dir = dir.join(&rel);
    let rows = match kept(&cell_dir, m).filter(|_| !a.fresh) {
        Some(rows) => rows,
        None => {
            eprintln!("{} × {}:", l.name, f.name);
            let la = lab_args(a, l, file, cell_dir.clone());
            let scenario = load(&la)?;
            let rows = run_seeds(&la, &scenario, m.seeds.clone(), &cell_dir)?;
            if let Err(e) = write(
                &cell_dir,
                &scenario,
                file,
                m.seeds.clone(),
                &rows,
                &l.command,
            ) {
                eprintln!(
                    "redlock-sim matrix: cannot write to {}: {e}",
                    cell_dir.display()
                );
                return Err(EXIT_SOFTWARE);
            }
            rows
        }
    };
    let refs: Vec<&RunRow> = rows.iter().collect();
    let row = summarize(Vec::new(), &refs);
    let acquisitions =
        rows.iter().map(|r| r.acquisitions as f64).sum::<f64>() / rows.len().max(1) as f64;
    let violating = rows
        .iter()
        .filter(|r| r.verdict == "violation")
        .map(|r| r.seed)
        .collect();
    let overlap = rows.iter().filter(|r| r.lock_overlaps > 0).count() as u64;
    let stale = rows.iter().filter(|r| r.stale_writes > 0).count() as u64;
    Ok(Cell {
        library: l,
        fault: f,
        outcome: Outcome::Ran(Box::new(Swept {
            file,
            dir: rel,
            row,
            acquisitions,
            violating,
            kinds: (overlap, stale),
        })),
    })
}

/// The rows of a cell's earlier sweep, if it holds every seed.
fn kept(cell_dir: &Path, m: &Matrix) -> Option<Vec<RunRow>> {
    let rows = read(&cell_dir.join("runs.csv"), &[]).ok()?;
    let seeds: Vec<u64> = rows.iter().map(|r| r.seed).collect();
    let want: Vec<u64> = m.seeds.clone().collect();
    (seeds == want).then_some(rows)
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
    c
}
