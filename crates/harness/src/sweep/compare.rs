//! Two library matrices of the same file side by side, cell by cell (the
//! node's and real Redis's, say): for each cell of the second that the first
//! also ran, the seeds both ran (the seed fixes the plan of faults), each
//! side's violating runs of its conclusive runs on those seeds with the 95%
//! Wilson interval, how its runs broke, what a run cost, and whether the
//! two intervals overlap. Reads only; the report crate renders it.

use super::rows::{self, RunRow};
use crate::stats::{median, wilson, Z95};
use std::collections::BTreeMap;
use std::path::Path;

/// One side of a cell.
#[derive(Clone, Debug, PartialEq)]
pub struct Side {
    /// Conclusive runs among the seeds both sides ran.
    pub conclusive: u64,
    pub violating: u64,
    /// The 95% Wilson interval of `violating` of `conclusive` (0 to 1
    /// with no conclusive run: nothing is known).
    pub low: f64,
    pub high: f64,
    /// Runs with a lock overlap, a stale write in flight, sent late, in
    /// an overlap (of the seeds both ran).
    pub broke: [u64; 4],
    /// The median `wall_ms` of its runs on those seeds.
    pub wall_ms_median: f64,
}

/// A cell both matrices ran.
#[derive(Clone, Debug, PartialEq)]
pub struct Pair {
    pub library: String,
    pub version: String,
    pub language: String,
    pub fault: String,
    /// The seeds both ran, lowest and highest, and how many.
    pub seeds: (u64, u64),
    pub runs: u64,
    pub a: Side,
    pub b: Side,
}

impl Pair {
    /// Do the two intervals overlap? `None` when a side has no conclusive
    /// run: nothing is known of its rate (Jepsen's `:unknown`).
    pub fn overlap(&self) -> Option<bool> {
        if self.a.conclusive == 0 || self.b.conclusive == 0 {
            return None;
        }
        Some(!(self.a.high < self.b.low || self.b.high < self.a.low))
    }
}

/// The cells of `b`'s `matrix.csv` (in its order) that `a` ran too, each
/// compared on the seeds both ran. An error names the file it could not
/// read.
pub fn compare(a: &Path, b: &Path) -> Result<Vec<Pair>, String> {
    let mut pairs = Vec::new();
    for cell in cells(&b.join("matrix.csv"))? {
        let dir = super::matrix::dir_of(&cell["library"], &cell["version"], &cell["scenario"]);
        let (pa, pb) = (a.join(&dir).join("runs.csv"), b.join(&dir).join("runs.csv"));
        if !pa.exists() || !pb.exists() {
            continue;
        }
        let (ra, rb) = (by_seed(&pa)?, by_seed(&pb)?);
        let seeds: Vec<u64> = ra.keys().filter(|s| rb.contains_key(s)).copied().collect();
        let (Some(&first), Some(&last)) = (seeds.first(), seeds.last()) else {
            continue;
        };
        let side = |r: &BTreeMap<u64, RunRow>| side(seeds.iter().map(|s| &r[s]).collect());
        pairs.push(Pair {
            library: cell["library"].clone(),
            version: cell["version"].clone(),
            language: cell["language"].clone(),
            fault: cell["scenario"].clone(),
            seeds: (first, last),
            runs: seeds.len() as u64,
            a: side(&ra),
            b: side(&rb),
        });
    }
    Ok(pairs)
}

/// One side's figures over `runs` (one per seed both ran).
fn side(runs: Vec<&RunRow>) -> Side {
    assert!(!runs.is_empty(), "compare: a side of no run");
    let conclusive = runs.iter().filter(|r| r.inconclusive.is_empty()).count() as u64;
    let violating = runs.iter().filter(|r| r.verdict == "violation").count() as u64;
    assert!(
        violating <= conclusive,
        "compare: {violating} violating of {conclusive} conclusive runs"
    );
    let (low, high) = match conclusive {
        0 => (0.0, 1.0),
        n => wilson(violating, n, Z95),
    };
    let n = |f: &dyn Fn(&RunRow) -> u64| runs.iter().filter(|r| f(r) > 0).count() as u64;
    let broke = [
        n(&|r| r.lock_overlaps),
        n(&|r| r.stale_split[0]),
        n(&|r| r.stale_split[1]),
        n(&|r| r.stale_split[2]),
    ];
    let mut walls: Vec<f64> = runs.iter().map(|r| r.wall_ms).collect();
    walls.sort_by(f64::total_cmp);
    let wall_ms_median = median(&walls);
    Side {
        conclusive,
        violating,
        low,
        high,
        broke,
        wall_ms_median,
    }
}

/// A cell's runs by seed.
fn by_seed(path: &Path) -> Result<BTreeMap<u64, RunRow>, String> {
    let rows = rows::read(path, &[]).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(rows.into_iter().map(|r| (r.seed, r)).collect())
}

/// The rows of a `matrix.csv`, each a map from its header.
fn cells(path: &Path) -> Result<Vec<BTreeMap<String, String>>, String> {
    let shown = |e: csv::Error| format!("{}: {e}", path.display());
    let mut rd = csv::Reader::from_path(path).map_err(shown)?;
    let header: Vec<String> = rd
        .headers()
        .map_err(shown)?
        .iter()
        .map(String::from)
        .collect();
    for need in ["library", "version", "language", "scenario"] {
        if !header.iter().any(|h| h == need) {
            return Err(format!("{}: no column {need}", path.display()));
        }
    }
    let mut out = Vec::new();
    for rec in rd.records() {
        let rec = rec.map_err(shown)?;
        out.push(
            header
                .iter()
                .cloned()
                .zip(rec.iter().map(String::from))
                .collect(),
        );
    }
    Ok(out)
}
