//! The library matrix as a sweep over libraries: every library of the
//! matrix file on every fault's scenario for its kind, each cell a lab
//! sweep ([`super::lab`]) in `<library>-<version>/<fault>/` of the
//! matrix's directory, stopped where its verdict is settled
//! ([`super::settle`]; the matrix's seeds are each cell's budget). A cell
//! whose `runs.csv` already holds a finished sweep (every seed, or the
//! seeds up to its stop) is read back, so an interrupted matrix resumes.
//! What a cell holds
//! ([`Cell`]) is what the matrix's report (`redlock_report::matrix`) is
//! made from.

use super::rows::{read, RunRow};
use super::settle::{stop_point, Rule, Stop};
use super::stats::{summarize, SummaryRow};
use crate::runner::lab::Servers;
use crate::scenario::matrix::{Fault, Library, Matrix};
use std::ops::RangeInclusive;
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
    /// The first violating seed whose run report is in the cell's
    /// directory (`seed-<N>/index.html`): the one the matrix links.
    pub reported: Option<u64>,
    /// Runs with a lock overlap, and runs with a stale write (how many
    /// had one in flight, sent late, in overlap: `row.stale_kinds`).
    pub kinds: (u64, u64),
    /// Its inconclusive runs: seed, and why (runs.csv's `inconclusive`).
    pub inconclusive: Vec<(u64, String)>,
    /// Why it stopped where it did.
    pub stop: Stop,
    /// The client command its runs used, as the cell recorded it
    /// ([`COMMAND`]); `None` in a cell of a version that did not record
    /// it, taken to be the matrix file's.
    pub command: Option<Vec<String>>,
}

/// The file in a cell's directory that records the client command its
/// runs used (a JSON array of the words), written as the cell starts to
/// run, so that a cell read back is reported with the command it ran, not
/// the one the matrix file gives now.
pub const COMMAND: &str = "command.json";

/// The client command a cell in `dir` recorded ([`COMMAND`]), if it did.
pub fn recorded_command(dir: &Path) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(dir.join(COMMAND)).ok()?;
    serde_json::from_str::<Vec<String>>(&text)
        .ok()
        .filter(|c| !c.is_empty())
}

/// What one library got on one fault.
pub enum Outcome<'a> {
    Ran(Box<Swept<'a>>),
    /// Not a cell, and why.
    NotACell(&'a str),
    /// A cell another shard runs: `(K, N)`, the K-th of N (in a shard's own
    /// directory, or a merge that lacks that shard).
    Elsewhere(usize, usize),
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
            Outcome::NotACell(_) | Outcome::Elsewhere(..) => None,
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

/// The cells that run (a library under a fault it runs under, with a
/// scenario for its kind), numbered in [`cells`]' order, each with the
/// shard (1-based, of `n`) that runs it: every `n`-th cell, so each shard
/// mixes libraries and faults. A cell is never split: its stopping rule
/// reads its seeds in order.
pub fn shards(m: &Matrix, n: usize) -> Vec<(&Library, &Fault, usize)> {
    assert!(n >= 1, "a matrix in no shards");
    cells(m)
        .filter(|(l, f)| l.runs_under(f) && f.file_for(l.kind).is_ok())
        .enumerate()
        .map(|(i, (l, f))| (l, f, i % n + 1))
        .collect()
}

/// The shard [`shards`] gave the cell (`l`, `f`); `None`: not a cell.
pub fn shard_of(owner: &[(&Library, &Fault, usize)], l: &Library, f: &Fault) -> Option<usize> {
    owner
        .iter()
        .find(|(ol, of, _)| std::ptr::eq(*ol, l) && std::ptr::eq(*of, f))
        .map(|o| o.2)
}

/// What a shard's directory says of itself (`matrix-shard.toml`), for
/// `merge`.
#[derive(Clone, Debug, PartialEq)]
pub struct ShardMark {
    /// The matrix file's text, as it was run.
    pub text: String,
    /// The seeds every cell had (the file's, or `--seeds`).
    pub seeds: RangeInclusive<u64>,
    /// The K-th of N.
    pub shard: (usize, usize),
    /// What served its nodes (`--servers`); `None` in a mark of a version
    /// that did not record it.
    pub servers: Option<Servers>,
}

/// The name of a shard's mark in its directory.
pub const SHARD_MARK: &str = "matrix-shard.toml";

impl ShardMark {
    /// The mark as the file holds it.
    pub fn to_toml(&self) -> String {
        let mut t = toml::map::Map::new();
        let (k, n) = self.shard;
        t.insert("shard".into(), toml::Value::String(format!("{k}/{n}")));
        let seeds = format!("{}..={}", self.seeds.start(), self.seeds.end());
        t.insert("seeds".into(), toml::Value::String(seeds));
        if let Some(servers) = self.servers {
            t.insert(
                "servers".into(),
                toml::Value::String(servers.as_str().into()),
            );
        }
        t.insert("matrix".into(), toml::Value::String(self.text.clone()));
        toml::to_string(&t).expect("a table of strings")
    }

    /// Reads a mark (`name` for messages).
    pub fn parse(text: &str, name: &str) -> Result<ShardMark, String> {
        let bad = |what: &str| {
            format!("{name}: {what}: not a shard's mark of `redlock-sim matrix --shard`")
        };
        let t: toml::Table = text.parse().map_err(|_| bad("not TOML"))?;
        let get = |k: &str| {
            t.get(k)
                .and_then(|v| v.as_str())
                .ok_or_else(|| bad(&format!("no `{k}`")))
        };
        let shard = super::parse_shard(get("shard")?).map_err(|e| bad(&e))?;
        let seeds = super::parse_seeds(get("seeds")?).map_err(|e| bad(&e))?;
        let servers = match t.get("servers") {
            None => None,
            Some(v) => Some(
                v.as_str()
                    .and_then(Servers::parse)
                    .ok_or_else(|| bad("`servers` is neither node nor redis"))?,
            ),
        };
        Ok(ShardMark {
            text: get("matrix")?.to_string(),
            seeds,
            shard,
            servers,
        })
    }
}

/// Checks that the shards' marks (each with its directory's name) belong
/// to one matrix: the same file, seeds and servers, the same N, no shard
/// twice.
/// The matrix's `N` and the shards held, or what is wrong, naming the
/// directories.
pub fn check_shards(marks: &[(String, ShardMark)]) -> Result<(usize, Vec<usize>), String> {
    let Some((first_dir, first)) = marks.first() else {
        return Err("no shard to merge".to_string());
    };
    let n = first.shard.1;
    let mut held: Vec<(usize, &str)> = Vec::new();
    for (dir, m) in marks {
        if m.text != first.text || m.seeds != first.seeds {
            return Err(format!(
                "{first_dir} and {dir} are shards of different matrices (their matrix files or seeds differ)"
            ));
        }
        if m.servers != first.servers {
            let said = |s: Option<Servers>| s.map_or("not recorded", Servers::as_str);
            return Err(format!(
                "{first_dir} and {dir} ran on different servers ({} and {}; a shard of an \
                 older version records none: its matrix command, run again, reads it back and \
                 records them)",
                said(first.servers),
                said(m.servers)
            ));
        }
        if m.shard.1 != n {
            return Err(format!(
                "{first_dir} is a shard of {n} and {dir} one of {}: merge shards of one split",
                m.shard.1
            ));
        }
        if let Some((_, other)) = held.iter().find(|(k, _)| *k == m.shard.0) {
            return Err(format!(
                "{other} and {dir} are both shard {}/{n}: their cells overlap",
                m.shard.0
            ));
        }
        held.push((m.shard.0, dir));
    }
    let mut ks: Vec<usize> = held.into_iter().map(|(k, _)| k).collect();
    ks.sort_unstable();
    // Marks are parsed K/N with 1 <= K <= N; no K twice.
    assert!(
        ks.windows(2).all(|w| w[0] < w[1]) && ks.iter().all(|k| (1..=n).contains(k)),
        "shards {ks:?} of {n}"
    );
    Ok((n, ks))
}

/// A cell's directory, relative to the matrix's: the version is part of
/// the name (a matrix may hold two of one library).
pub fn cell_dir(l: &Library, f: &Fault) -> String {
    dir_of(&l.name, &l.version, &f.name)
}

/// [`cell_dir`] from the names a `matrix.csv` row holds.
pub(crate) fn dir_of(library: &str, version: &str, fault: &str) -> String {
    format!("{}/{}", slug(&format!("{library} {version}")), slug(fault))
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

/// The rows of a cell's earlier sweep in `dir`, if it was finished: its
/// seeds are the first of the matrix's, and either all of them or exactly
/// those up to where the stopping rule settled it.
pub fn kept(dir: &Path, m: &Matrix) -> Option<Vec<RunRow>> {
    let rows = read(&dir.join("runs.csv"), &[]).ok()?;
    let seeds: Vec<u64> = rows.iter().map(|r| r.seed).collect();
    let want: Vec<u64> = m.seeds.clone().collect();
    if seeds.is_empty() || !want.starts_with(&seeds) {
        return None;
    }
    let (n, stop) = stop_point(&rows, Rule::of(m));
    let finished = seeds.len() == want.len() || (n == rows.len() && stop != Stop::Budget);
    finished.then_some(rows)
}

/// A cell's figures from its sweep's rows (`file` its scenario, `dir` its
/// directory relative to the matrix's, `at` where it is): every figure of
/// its conclusive runs, its inconclusive runs apart, why it stopped, and
/// which violating run's report is there to link; `rule` the matrix's
/// stopping rule.
pub fn swept<'a>(file: &'a str, dir: String, at: &Path, rows: &[RunRow], rule: Rule) -> Swept<'a> {
    // A cell swept without the rule (a matrix of before it) ran its budget.
    let stop = match stop_point(rows, rule) {
        (n, stop) if n == rows.len() => stop,
        _ => Stop::Budget,
    };
    let refs: Vec<&RunRow> = rows.iter().collect();
    let row = summarize(Vec::new(), &refs);
    let inconclusive: Vec<(u64, String)> = rows
        .iter()
        .filter(|r| !r.conclusive())
        .map(|r| (r.seed, r.inconclusive.clone()))
        .collect();
    let rows: Vec<&RunRow> = rows.iter().filter(|r| r.conclusive()).collect();
    let acquisitions =
        rows.iter().map(|r| r.acquisitions as f64).sum::<f64>() / rows.len().max(1) as f64;
    let violating: Vec<u64> = rows
        .iter()
        .filter(|r| r.verdict == "violation")
        .map(|r| r.seed)
        .collect();
    // The summary counts the same runs.
    assert!(
        violating.len() as u64 == row.violating_runs
            && inconclusive.len() as u64 == row.inconclusive_runs,
        "{dir}: {} violating and {} inconclusive runs, summarised as {} and {}",
        violating.len(),
        inconclusive.len(),
        row.violating_runs,
        row.inconclusive_runs
    );
    let reported = violating
        .iter()
        .copied()
        .find(|&seed| super::lab::has_run_report(at, seed));
    let overlap = rows.iter().filter(|r| r.lock_overlaps > 0).count() as u64;
    let stale = rows.iter().filter(|r| r.stale_writes > 0).count() as u64;
    Swept {
        file,
        dir,
        row,
        acquisitions,
        violating,
        reported,
        kinds: (overlap, stale),
        inconclusive,
        stop,
        command: recorded_command(at),
    }
}

/// The order in which a matrix's cells to run start, given by their
/// language (`None`: not to run), as indexes: each language's spread
/// evenly over the order (its j-th of n cells at (j + 1/2) / n of the way;
/// the languages in the order they first come on a tie, each's cells in
/// the given order), so that the cells that run at once mix the languages
/// in the proportions of the whole, and no language is left to run alone
/// at the end.
pub fn spread(languages: &[Option<&str>]) -> Vec<usize> {
    let mut by: Vec<(&str, Vec<usize>)> = Vec::new();
    for (i, lang) in languages.iter().enumerate() {
        if let Some(lang) = *lang {
            match by.iter_mut().find(|(l, _)| *l == lang) {
                Some((_, cells)) => cells.push(i),
                None => by.push((lang, vec![i])),
            }
        }
    }
    // (2j + 1, 2n): the place (j + 1/2) / n as a fraction, compared
    // exactly.
    let mut order: Vec<((u128, u128), usize, usize)> = (by.iter().enumerate())
        .flat_map(|(li, (_, cells))| {
            let n = cells.len() as u128;
            (cells.iter().enumerate()).map(move |(j, &i)| ((2 * j as u128 + 1, 2 * n), li, i))
        })
        .collect();
    order
        .sort_by(|((an, ad), al, _), ((bn, bd), bl, _)| (an * bd).cmp(&(bn * ad)).then(al.cmp(bl)));
    order.into_iter().map(|(_, _, i)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::spread;

    /// Six Java cells and two Go ones: Java's at 1/12, 3/12, ... 11/12 of
    /// the way, Go's at 1/4 and 3/4 (after Java's there: Java comes
    /// first), every cell once, the cells not to run left out.
    #[test]
    fn each_language_is_spread_over_the_order() {
        let j = Some("Java");
        let g = Some("Go");
        let cells = [j, j, j, j, j, j, None, g, g];
        assert_eq!(spread(&cells), [0, 1, 7, 2, 3, 4, 8, 5]);
        assert_eq!(spread(&[None, None]), Vec::<usize>::new());
        assert_eq!(spread(&[g, j, g]), [0, 1, 2]);
    }
}
