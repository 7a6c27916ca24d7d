//! A library matrix's file (`redlock-sim matrix FILE`): lock libraries down
//! the side, each a lab client command of one kind (`single`: one master,
//! `redlock`: several), and fault columns across, each with a scenario file
//! per kind it is a cell for and, for a kind it has no file for, why not.
//!
//! ```toml
//! name = "libraries"
//! description = "..."
//! seeds = "1..=20"
//! # optional: conclusive runs that, all violating, stop a cell early
//! # (default 10, never fewer; 20 for a comparison on 20 seeds)
//! violating_after = 20
//!
//! [[library]]
//! name = "redis-py Lock"
//! version = "8.1.0"
//! language = "Python"
//! kind = "single"
//! command = ["tests/libs/python/.venv/bin/python", "drivers/python/redis_py_lock.py"]
//! # optional: settings of every cell's scenario, as `lab --set` takes them
//! set = ["clients.fencing=true"]
//! # optional: the faults it runs under, by name (default: all)
//! faults = ["failover race"]
//! # optional: slots of `matrix --jobs` one of its runs takes (default 1;
//! # more for a runtime heavy to start, a JVM)
//! weight = 2
//!
//! [[fault]]
//! name = "failover race"
//! single = "scenarios/libraries/failover_race-single.toml"
//! not_redlock = "Redlock's masters are independent: no replica is promoted."
//! ```

use super::ScenarioError;
use serde::Deserialize;
use std::ops::RangeInclusive;

/// A lock library's kind: how many masters it locks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LibKind {
    Single,
    Redlock,
}

impl LibKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LibKind::Single => "single",
            LibKind::Redlock => "redlock",
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Library {
    pub name: String,
    pub version: String,
    pub language: String,
    pub kind: LibKind,
    /// The lab client command (`CMD` of `redlock-sim lab ... -- CMD`).
    pub command: Vec<String>,
    /// `KEY=VALUE` settings applied to each of its cells' scenarios, as
    /// `lab --set` applies them (`clients.fencing=true` for a library
    /// whose tokens fence the store).
    #[serde(default)]
    pub set: Vec<String>,
    /// The faults it runs under, by name (default: every fault with a
    /// scenario for its kind); under the others it has no cell.
    pub faults: Option<Vec<String>>,
    /// Slots of `matrix --jobs` one of its runs takes (default 1): more
    /// for a runtime whose start and warm-up take the CPU of several
    /// light ones (a JVM), so that the matrix runs fewer of them at once.
    weight: Option<usize>,
}

impl Library {
    /// Slots of `matrix --jobs` one of its runs takes (at least 1).
    pub fn weight(&self) -> usize {
        self.weight.unwrap_or(1)
    }

    /// Whether it runs under `f` (its kind's scenario aside).
    pub fn runs_under(&self, f: &Fault) -> bool {
        self.faults
            .as_ref()
            .is_none_or(|names| names.contains(&f.name))
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fault {
    pub name: String,
    /// The scenario file for single-instance libraries, if any.
    pub(crate) single: Option<String>,
    /// The scenario file for Redlock libraries, if any.
    pub(crate) redlock: Option<String>,
    /// Why a kind without a file has no cell.
    pub(crate) not_single: Option<String>,
    pub(crate) not_redlock: Option<String>,
}

impl Fault {
    /// The scenario file for `kind`, or why there is none.
    pub fn file_for(&self, kind: LibKind) -> Result<&str, &str> {
        let (file, why) = match kind {
            LibKind::Single => (&self.single, &self.not_single),
            LibKind::Redlock => (&self.redlock, &self.not_redlock),
        };
        file.as_deref().ok_or(why.as_deref().unwrap_or(""))
    }
}

/// Conclusive runs that, all violating, stop a cell early when its file
/// does not say (`violating_after`); no file may ask for fewer: the 95%
/// Wilson interval of 10 violations in 10 runs starts above 72%.
pub const VIOLATING_AFTER: usize = 10;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    name: String,
    description: String,
    seeds: String,
    violating_after: Option<usize>,
    library: Vec<Library>,
    fault: Vec<Fault>,
}

/// A parsed matrix file.
#[derive(Clone, Debug)]
pub struct Matrix {
    pub name: String,
    pub description: String,
    pub seeds: RangeInclusive<u64>,
    /// Conclusive runs that, all violating, stop a cell early
    /// ([`VIOLATING_AFTER`] or more).
    pub violating_after: usize,
    pub libraries: Vec<Library>,
    pub faults: Vec<Fault>,
}

/// Parses a matrix file's text; errors name the file, the key and the line.
pub fn parse(text: &str, file: &str) -> Result<Matrix, ScenarioError> {
    let err = |key: &str, line: Option<usize>, message: String| ScenarioError {
        file: file.to_string(),
        key: key.to_string(),
        line,
        message,
    };
    let raw: Raw = toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].lines().count().max(1));
        err("", line, e.message().to_string())
    })?;
    let seeds = seed_range(&raw.seeds).ok_or_else(|| {
        let m = format!("\"{}\" is not a seed range: write A..=B", raw.seeds);
        err("seeds", super::key_line(text, "seeds"), m)
    })?;
    let violating_after = raw.violating_after.unwrap_or(VIOLATING_AFTER);
    if violating_after < VIOLATING_AFTER {
        let m = format!(
            "{violating_after}: a cell stops early on {VIOLATING_AFTER} violating runs at the \
             fewest (their interval starts above 72%)"
        );
        return Err(err(
            "violating_after",
            super::key_line(text, "violating_after"),
            m,
        ));
    }
    for (i, l) in raw.library.iter().enumerate() {
        if l.command.is_empty() {
            let key = format!("library[{i}].command");
            return Err(err(
                &key,
                super::key_line(text, &key),
                "an empty command".into(),
            ));
        }
    }
    for (i, l) in raw.library.iter().enumerate() {
        if let Some(bad) = l.set.iter().find(|kv| !kv.contains('=')) {
            let key = format!("library[{i}].set");
            let m = format!("\"{bad}\" is not KEY=VALUE (e.g. clients.fencing=true)");
            return Err(err(&key, super::key_line(text, &key), m));
        }
    }
    for (i, l) in raw.library.iter().enumerate() {
        if l.weight == Some(0) {
            let key = format!("library[{i}].weight");
            let m = "0: a run takes at least one slot of --jobs".to_string();
            return Err(err(&key, super::key_line(text, &key), m));
        }
    }
    for (i, l) in raw.library.iter().enumerate() {
        let known = |n: &String| raw.fault.iter().any(|f| &f.name == n);
        if let Some(bad) = l.faults.iter().flatten().find(|n| !known(n)) {
            let key = format!("library[{i}].faults");
            let m = format!("\"{bad}\" is no fault's name in this file");
            return Err(err(&key, super::key_line(text, &key), m));
        }
    }
    for (i, f) in raw.fault.iter().enumerate() {
        for kind in [LibKind::Single, LibKind::Redlock] {
            if let Err(why) = f.file_for(kind) {
                if why.is_empty() {
                    let key = format!("fault[{i}].not_{}", kind.as_str());
                    let m = format!("no {} file and no reason why not", kind.as_str());
                    return Err(err(&key, super::key_line(text, &format!("fault[{i}]")), m));
                }
            }
        }
    }
    Ok(Matrix {
        name: raw.name,
        description: raw.description,
        seeds,
        violating_after,
        libraries: raw.library,
        faults: raw.fault,
    })
}

/// `A..=B`, with `A <= B`.
fn seed_range(text: &str) -> Option<RangeInclusive<u64>> {
    let (a, b) = text.split_once("..=")?;
    let (a, b) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
    (a <= b).then_some(a..=b)
}
