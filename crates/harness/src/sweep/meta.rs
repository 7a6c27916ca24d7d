//! What a sweep directory is: `sweep.json` (its seeds, its shard, how many
//! runs the whole sweep and this shard have), what `sweep` checks before it
//! writes into a directory (another scenario's sweep is refused; another text,
//! seeds or shard of the same scenario is refused unless `--fresh`), which
//! files are the sweep's (what `--fresh` deletes), and how `merge` tells
//! which part of a sweep it holds. It reads directories; the command layer
//! (`cli::sweep_files`) writes and deletes.

use super::{Plan, MAX_RUNS, SCENARIO_COPY};
use serde::{Deserialize, Serialize};
use std::io;
use std::ops::RangeInclusive;
use std::path::Path;

/// The sweep's metadata file, written into its directory when it starts.
pub const META_FILE: &str = "sweep.json";

/// The files a sweep writes beside its charts and `runs/` (all that
/// `--fresh` deletes, with those).
pub const SWEEP_FILES: [&str; 6] = [
    "runs.csv",
    "summary.csv",
    "report.md",
    "index.html",
    SCENARIO_COPY,
    META_FILE,
];

/// The beginnings of the sweep's chart files (`<prefix>…svg`).
pub const CHART_PREFIXES: [&str; 4] = [
    "violation_rate",
    "acquire_rate",
    "acquire_latency",
    "tradeoff",
];

/// One shard `k/n` of a sweep.
#[derive(Serialize, Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
pub struct Shard {
    pub(crate) k: usize,
    pub(crate) n: usize,
}

/// `sweep.json`.
#[derive(Serialize, Deserialize, Clone, PartialEq, Eq, Debug)]
pub struct Meta {
    /// The scenario's `name`.
    pub scenario: String,
    /// The seeds of every combination: `seeds_first..=seeds_last`.
    pub(crate) seeds_first: u64,
    pub(crate) seeds_last: u64,
    pub(crate) combinations: usize,
    /// `--shard K/N`, or none (the whole sweep).
    pub shard: Option<Shard>,
    /// Runs of the whole sweep (combinations × seeds).
    pub(crate) runs_total: usize,
    /// Runs of this shard (`runs_total` without `--shard`).
    pub(crate) runs_shard: usize,
}

impl Meta {
    pub fn of(plan: &Plan, shard: Option<(usize, usize)>) -> Meta {
        assert!(
            shard.is_none_or(|(k, n)| 1 <= k && k <= n),
            "shard {shard:?}: --shard is parsed K/N with 1 <= K <= N"
        );
        let total = plan.total_runs();
        Meta {
            scenario: plan.base.name.clone(),
            seeds_first: *plan.seeds.start(),
            seeds_last: *plan.seeds.end(),
            combinations: plan.cells.len(),
            shard: shard.map(|(k, n)| Shard { k, n }),
            runs_total: total,
            // Runs i < total with i % n == k - 1.
            runs_shard: shard.map_or(total, |(k, n)| (total + n - k) / n),
        }
    }

    pub(crate) fn seeds(&self) -> RangeInclusive<u64> {
        self.seeds_first..=self.seeds_last
    }

    /// `seeds 1..=100, shard 2/4` or `seeds 1..=100, no shard`.
    fn describe(&self) -> String {
        format!(
            "seeds {}..={}, {}",
            self.seeds_first,
            self.seeds_last,
            self.shard
                .map_or("no shard".to_string(), |s| format!("shard {}/{}", s.k, s.n))
        )
    }
}

/// Reads `dir/sweep.json`: `None` when there is none (a directory of an
/// older version), an error naming the file when it cannot be read.
pub(crate) fn read(dir: &Path) -> Result<Option<Meta>, String> {
    let path = dir.join(META_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let bad = |e: String| format!("{}: not a sweep's {META_FILE}: {e}", path.display());
    let meta: Meta = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    if meta.seeds_first > meta.seeds_last || meta.seeds_last - meta.seeds_first >= MAX_RUNS {
        return Err(bad(format!(
            "seeds {}..={} is not a sweep's seed range",
            meta.seeds_first, meta.seeds_last
        )));
    }
    if meta.shard.is_some_and(|s| s.k == 0 || s.k > s.n) {
        return Err(bad("shard: K/N needs 1 <= K <= N".into()));
    }
    Ok(Some(meta))
}

fn refuse(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// The `name` in a scenario copy, if it has one.
fn copy_name(text: &str) -> Option<String> {
    let table: toml::Table = toml::from_str(text).ok()?;
    table.get("name")?.as_str().map(String::from)
}

/// Checks `dir` before a sweep writes into it; reads only. `Ok(true)`: with
/// `fresh`, an earlier sweep of this scenario is there, whose files the
/// caller is to delete. Refused (`InvalidInput`): a copy of a scenario of
/// another name (even with `fresh`); without `fresh`, a copy of another
/// text, or a `sweep.json` of other seeds or another shard; with `fresh`, a
/// `runs.csv` without a scenario copy (not known to be this scenario's).
pub fn check(dir: &Path, plan: &Plan, new: &Meta, fresh: bool) -> io::Result<bool> {
    let shown = dir.display();
    let name = &plan.base.name;
    let again = "add --fresh to discard it and run every run again, or choose another --out";
    match std::fs::read_to_string(dir.join(SCENARIO_COPY)) {
        Ok(old) if old != plan.text || fresh => {
            // The copy's name; a copy without one (the name was the file's
            // stem) is named by its sweep.json when there is one.
            let old_name =
                copy_name(&old).or_else(|| read(dir).ok().flatten().map(|m| m.scenario.clone()));
            let same = match &old_name {
                Some(n) => n == name,
                None => copy_name(&plan.text).is_none(),
            };
            if !same {
                let old_name = old_name.map_or("(unnamed)".to_string(), |n| format!("\"{n}\""));
                return Err(refuse(format!(
                    "{shown} holds a sweep of another scenario, {old_name}, not \"{name}\"; choose another --out (or delete it)"
                )));
            }
            if !fresh {
                return Err(refuse(format!(
                    "{shown} holds a sweep of a different scenario text (of the same name \"{name}\"); {again}"
                )));
            }
        }
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if fresh && dir.join("runs.csv").exists() {
                return Err(refuse(format!(
                    "{shown} holds a runs.csv but no {SCENARIO_COPY}: it is not known to be a sweep of \"{name}\", so --fresh deletes nothing there; choose another --out (or delete it)"
                )));
            }
            // No earlier sweep here: --fresh has nothing to discard.
            if fresh {
                return Ok(false);
            }
        }
        Err(e) => return Err(e),
    }
    if fresh {
        return Ok(true);
    }
    if let Some(old) = read(dir).map_err(refuse)? {
        if old.seeds() != new.seeds() || old.shard != new.shard {
            return Err(refuse(format!(
                "{shown} holds a sweep of {}; this one is of {}: their runs would mix; {again}",
                old.describe(),
                new.describe()
            )));
        }
    }
    Ok(false)
}

/// What part of the sweep a merge holds, in words, from its directories'
/// metadata and rows: `shards 1, 3 of 4 present; missing: 2, 4` when every
/// directory is a shard of the same sweep; otherwise each directory's seeds
/// and shard.
pub(crate) fn merge_parts(dirs: &[(String, Option<Meta>, usize)]) -> String {
    let metas: Vec<&Meta> = dirs.iter().filter_map(|(_, m, _)| m.as_ref()).collect();
    let same = metas.len() == dirs.len()
        && metas.iter().all(|m| {
            m.seeds() == metas[0].seeds()
                && m.shard.is_some()
                && m.shard.map(|s| s.n) == metas[0].shard.map(|s| s.n)
        });
    if let (true, Some(Shard { n, .. })) = (same, metas.first().and_then(|m| m.shard)) {
        let mut present: Vec<usize> = metas.iter().filter_map(|m| m.shard.map(|s| s.k)).collect();
        present.sort();
        present.dedup();
        let missing: Vec<usize> = (1..=n).filter(|k| !present.contains(k)).collect();
        // `read` refuses a K outside 1..=N: present and missing split 1..=N.
        assert_eq!(
            present.len() + missing.len(),
            n,
            "shards {present:?} present and {missing:?} missing of {n}"
        );
        let unfinished: Vec<usize> = dirs
            .iter()
            .filter_map(|(_, m, rows)| m.as_ref().filter(|m| *rows < m.runs_shard))
            .filter_map(|m| m.shard.map(|s| s.k))
            .collect();
        let mut unfinished = unfinished;
        unfinished.sort();
        unfinished.dedup();
        let mut text = format!("shards {} of {n} present", ranges(&present));
        if !unfinished.is_empty() {
            text += &format!(", {} unfinished", ranges(&unfinished));
        }
        if !missing.is_empty() {
            text += &format!("; missing: {}", ranges(&missing));
        }
        return text;
    }
    dirs.iter()
        .map(|(dir, m, _)| match m {
            Some(m) => format!("{dir}: {}", m.describe()),
            None => format!("{dir}: no {META_FILE}"),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// `1-3, 5, 7-9` from sorted numbers.
fn ranges(ks: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ks.len() {
        let mut j = i;
        while j + 1 < ks.len() && ks[j + 1] == ks[j] + 1 {
            j += 1;
        }
        parts.push(if j == i {
            ks[i].to_string()
        } else {
            format!("{}-{}", ks[i], ks[j])
        });
        i = j + 1;
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(k: usize, n: usize, runs_shard: usize) -> Meta {
        Meta {
            scenario: "x".into(),
            seeds_first: 1,
            seeds_last: 6,
            combinations: 4,
            shard: Some(Shard { k, n }),
            runs_total: 24,
            runs_shard,
        }
    }

    #[test]
    fn merge_parts_names_the_shards_present_missing_and_unfinished() {
        let d = |k, rows| (format!("d{k}"), Some(meta(k, 5, 5)), rows);
        assert_eq!(
            merge_parts(&[d(1, 5), d(2, 5), d(4, 5)]),
            "shards 1-2, 4 of 5 present; missing: 3, 5"
        );
        assert_eq!(
            merge_parts(&[d(2, 5), d(1, 3)]),
            "shards 1-2 of 5 present, 1 unfinished; missing: 3-5"
        );
        let old = ("old".to_string(), None, 3);
        assert_eq!(
            merge_parts(&[d(1, 5), old]),
            "d1: seeds 1..=6, shard 1/5; old: no sweep.json"
        );
    }

    #[test]
    fn a_shards_runs_are_every_nth_from_the_kth() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/data/small_sweep.toml"
        ))
        .unwrap();
        let plan = Plan::from_text(text, "s".into(), None).unwrap();
        for n in 1..=7 {
            let sum: usize = (1..=n)
                .map(|k| {
                    let m = Meta::of(&plan, Some((k, n)));
                    assert_eq!(m.runs_shard, (0..24).filter(|i| i % n == k - 1).count());
                    m.runs_shard
                })
                .sum();
            assert_eq!(sum, 24);
        }
    }
}
