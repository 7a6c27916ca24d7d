//! Scenario files: parsing and validation of the TOML format described in
//! `scenario-format.md` (the public contract), into plain, fully resolved data
//! that the simulation runs.
//!
//! Everything a user can get wrong is reported as a [`ScenarioError`] naming
//! the file, the dotted key path and the line; no input panics. Defaults are
//! applied, per-host overrides merged into each client, and TTL multiples
//! (`"0.5ttl"`) resolved against the largest client `ttl`. Ranges such as
//! `"1ms..5ms"` are kept as ranges ([`DurRange`], [`SignedRange`]) so that the
//! simulation draws them from its seeded generator.
//!
//! Choices where the format leaves room (all checked by the tests):
//! - `cluster.replication_delay` and `cluster.failover_after` are accepted and
//!   validated with `topology = "redlock"` but mean nothing there (a sweep may
//!   vary the topology of one file).
//! - `"master"` (fault `host`, `nemesis.crash_target`) and the host `sentinel`
//!   need `topology = "single"`; with redlock they are an error.
//! - `crash` and `restart` faults target nodes (or `"master"`); `pause`
//!   targets a client or a node; every other fault accepts any host.
//!   `"master"` is accepted only as a fault's `host`, not in `sides`/`between`.
//! - Every fault needs `at`; `partition` needs at least two sides, exactly two
//!   with `oneway = true`.
//! - `at`, `for` and `restart` accept TTL multiples; other durations do not.
//! - Limits that keep the simulation sane: `nodes` in 1..=[`MAX_NODES`],
//!   `count` in 1..=[`MAX_CLIENTS`], `writes` <= 1,000,000, `retry_count` in
//!   1..=1,000,000, clock rates (`clock_rate`, a `clock-rate` fault's `rate`,
//!   1 ± `clocks.drift`) in [0.01, 100], durations and offsets at most
//!   10^12 ms; `duration`, `ttl`, `request_timeout` and every `*_every` must
//!   be more than zero; `tick` is at least 100µs and at most the lower bound
//!   of `network.latency` and of every `latency` fault's `latency`; a fault
//!   without `after` has its `at` within `duration`.
//! - `[sweep]` without `seeds` means seeds 1..=100; a sweep has at most
//!   1,000,000 combinations of `vary` values. Nested tables under
//!   `[sweep.vary]` (unquoted dotted keys) are read as dotted paths, and
//!   `faults[N].key` (0-based) addresses a key of the N-th fault.
//! - Error key paths index faults from 0: `faults[0]` is the first `[[faults]]`.
//! - A missing top-level key (only `duration` is required) has no line.

// What other crates use is `pub`; everything else is `pub(crate)` or less.
#![warn(unreachable_pub)]
// The docs are the developers'; `cargo doc --document-private-items`
// renders the private items they link to.
#![allow(rustdoc::private_intra_doc_links)]

mod check;
mod clients;
pub mod matrix;
mod parse;
mod raw;
mod sweep;
mod types;
mod valid;

pub use raw::{parse_path, Seg};
pub use sweep::render_vary_value;
pub use types::*;

use std::fmt;
use std::path::Path;

/// A problem with a scenario file: which file, which key (dotted path such as
/// `clients.ttl` or `faults[2].host`, empty when not about one key), which
/// line (1-based, when known) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file, as given by the caller.
    pub file: String,
    /// Dotted key path; empty for errors not about one key (TOML syntax, I/O).
    pub key: String,
    /// 1-based line, when the error can be placed on one.
    pub line: Option<usize>,
    /// What is wrong, and where possible how to fix it.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        write!(f, ": ")?;
        if !self.key.is_empty() {
            write!(f, "{}: ", self.key)?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for ScenarioError {}

/// Reads and parses a scenario file; an unreadable file is an error naming it.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let file = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => parse_str(&text, &file),
        Err(e) => Err(ScenarioError {
            file,
            key: String::new(),
            line: None,
            message: format!("cannot read the scenario file: {e}"),
        }),
    }
}

/// Parses scenario text; `file` names it in errors and its stem is the
/// default `name`. Every `[sweep.vary]` value is also checked on its own
/// (applied to the file as an override).
pub fn parse_str(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
    parse_with_overrides(text, file, &[])
}

/// Parses scenario text with overrides (dotted paths such as
/// `"cluster.restart"`, `"hosts.n2.clock_rate"` or `"faults[0].at"`) applied
/// to the raw TOML first, creating intermediate tables, so that they are
/// validated like any key. Errors caused by an override carry the line of
/// the same path in `[sweep.vary]` when there is one.
pub fn parse_with_overrides(
    text: &str,
    file: &str,
    overrides: &[(String, toml::Value)],
) -> Result<Scenario, ScenarioError> {
    parse_tree(&parse_document(text, file)?, file, overrides)
}

/// Parses a file and every combination of its `[sweep.vary]` values, so that
/// a sweep cannot fail half-way; returns the scenario without overrides.
pub fn check_sweep(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
    let root = parse_document(text, file)?;
    let base = parse_tree(&root, file, &[])?;
    if let Some(sweep) = &base.sweep {
        for i in 0..sweep.cell_count() {
            if let Some(cell) = sweep.cell(i) {
                parse_tree(&root, file, &cell)?;
            }
        }
    }
    Ok(base)
}

/// The raw tree of a file; a TOML syntax error names its line.
/// Line of the dotted key `path` in the scenario `text`, if written there
/// (for errors about a key the parser accepted, the lab's refusals).
pub fn key_line(text: &str, path: &str) -> Option<usize> {
    raw::key_line(&raw::parse_document(text).ok()?, path)
}

fn parse_document(text: &str, file: &str) -> Result<raw::RawTable, ScenarioError> {
    raw::parse_document(text).map_err(|(line, message)| ScenarioError {
        file: file.to_string(),
        key: String::new(),
        line,
        message: format!("not valid TOML: {message}"),
    })
}

/// Applies overrides to a parsed tree and validates it; without overrides,
/// also checks each `[sweep.vary]` value alone.
fn parse_tree(
    root: &raw::RawTable,
    file: &str,
    overrides: &[(String, toml::Value)],
) -> Result<Scenario, ScenarioError> {
    let mut tree = root.clone();
    for (path, value) in overrides {
        let line = raw::vary_line(root, path);
        raw::apply_override(&mut tree, path, value, line).map_err(|message| ScenarioError {
            file: file.to_string(),
            key: path.clone(),
            line,
            message: format!("{message}{}", cell_note(overrides)),
        })?;
    }
    let scenario = parse::build(&tree, file).map_err(|mut e| {
        e.message.push_str(&cell_note(overrides));
        e
    })?;
    scenario.assert_valid();
    if overrides.is_empty() {
        if let Some(sweep) = &scenario.sweep {
            for (path, values) in &sweep.vary {
                for value in values {
                    parse_tree(root, file, &[(path.clone(), value.clone())])?;
                }
            }
        }
    }
    Ok(scenario)
}

/// The note appended to errors found with overrides applied.
fn cell_note(overrides: &[(String, toml::Value)]) -> String {
    if overrides.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = overrides
        .iter()
        .map(|(p, v)| format!("{p} = {v}"))
        .collect();
    format!(" (in the sweep cell where {})", parts.join(", "))
}
