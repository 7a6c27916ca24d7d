//! The library matrix as a sweep over libraries: every library of the
//! matrix file on every fault's scenario for its kind, each cell a lab
//! sweep ([`super::lab`]) in `<library>-<version>/<fault>/` of the
//! matrix's directory. A cell whose `runs.csv` already holds every seed is
//! read back, so an interrupted matrix resumes. What a cell holds
//! ([`Cell`]) is what the matrix's report (`redlock_report::matrix`) is
//! made from.

use super::rows::{read, RunRow};
use super::stats::{summarize, SummaryRow};
use crate::scenario::matrix::{Fault, Library, Matrix};
use std::path::Path;

/// One cell's lab sweep.
pub struct Swept<'a> {
    /// The scenario file.
    pub file: &'a str,
    /// The sweep's directory, relative to the matrix's.
    pub dir: String,
    pub row: SummaryRow,
    /// The mean number of acquisitions per run.
    pub acquisitions: f64,
    pub violating: Vec<u64>,
    /// Runs with a lock overlap, and runs with a stale write (how many
    /// had one in flight, sent late, in overlap: `row.stale_kinds`).
    pub kinds: (u64, u64),
    /// Its inconclusive runs: seed, and why (runs.csv's `inconclusive`).
    pub inconclusive: Vec<(u64, String)>,
}

/// What one library got on one fault.
pub enum Outcome<'a> {
    Ran(Box<Swept<'a>>),
    /// Not a cell, and why.
    NotACell(&'a str),
}

pub struct Cell<'a> {
    pub library: &'a Library,
    pub fault: &'a Fault,
    pub outcome: Outcome<'a>,
}

impl Cell<'_> {
    /// Its sweep, if it is a cell.
    pub fn swept(&self) -> Option<&Swept<'_>> {
        match &self.outcome {
            Outcome::Ran(s) => Some(s.as_ref()),
            Outcome::NotACell(_) => None,
        }
    }
}

/// Every (library, fault) pair, library by library, each fault in the
/// file's order.
pub fn cells(m: &Matrix) -> impl Iterator<Item = (&Library, &Fault)> {
    m.libraries
        .iter()
        .flat_map(move |l| m.faults.iter().map(move |f| (l, f)))
}

/// A cell's directory, relative to the matrix's: the version is part of
/// the name (a matrix may hold two of one library).
pub fn cell_dir(l: &Library, f: &Fault) -> String {
    format!(
        "{}/{}",
        slug(&format!("{} {}", l.name, l.version)),
        slug(&f.name)
    )
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

/// The rows of a cell's earlier sweep in `dir`, if it holds every seed.
pub fn kept(dir: &Path, m: &Matrix) -> Option<Vec<RunRow>> {
    let rows = read(&dir.join("runs.csv"), &[]).ok()?;
    let seeds: Vec<u64> = rows.iter().map(|r| r.seed).collect();
    let want: Vec<u64> = m.seeds.clone().collect();
    (seeds == want).then_some(rows)
}

/// A cell's figures from its sweep's rows (`file` its scenario, `dir` its
/// directory relative to the matrix's): every figure of its conclusive
/// runs, and its inconclusive runs apart.
pub fn swept<'a>(file: &'a str, dir: String, rows: &[RunRow]) -> Swept<'a> {
    let refs: Vec<&RunRow> = rows.iter().collect();
    let row = summarize(Vec::new(), &refs);
    let inconclusive = rows
        .iter()
        .filter(|r| !r.conclusive())
        .map(|r| (r.seed, r.inconclusive.clone()))
        .collect();
    let rows: Vec<&RunRow> = rows.iter().filter(|r| r.conclusive()).collect();
    let acquisitions =
        rows.iter().map(|r| r.acquisitions as f64).sum::<f64>() / rows.len().max(1) as f64;
    let violating = rows
        .iter()
        .filter(|r| r.verdict == "violation")
        .map(|r| r.seed)
        .collect();
    let overlap = rows.iter().filter(|r| r.lock_overlaps > 0).count() as u64;
    let stale = rows.iter().filter(|r| r.stale_writes > 0).count() as u64;
    Swept {
        file,
        dir,
        row,
        acquisitions,
        violating,
        kinds: (overlap, stale),
        inconclusive,
    }
}
