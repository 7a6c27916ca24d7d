//! One run as a library call, in either world: load and validate a
//! scenario (`--set` overrides included), simulate one seed and check the
//! history as it comes, or ([`lab`]) run it in real time against real
//! client processes and judge it from outside. Writes nothing: the command
//! layer writes the report, prints and picks the exit code.

pub mod lab;

use crate::check::verdict::{as_expected_of, conclude, never_acted, outcome_of};
use crate::check::{self, CheckResult};
use crate::history::{Event, EventKind, History, Trace};
use crate::scenario::{self, Scenario, ScenarioError};
use crate::sim::workload::LockCode;
use crate::sim::Stepping;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Why `run` could not produce a verdict.
#[derive(Debug)]
pub enum RunError {
    /// The scenario file is unreadable or invalid (exit code 2).
    BadInput(ScenarioError),
    /// The simulation or writing the outputs failed.
    Failed(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::BadInput(e) => write!(f, "{e}"),
            RunError::Failed(e) => write!(f, "{e}"),
        }
    }
}

/// One finished run.
pub struct Run {
    pub scenario: Scenario,
    pub seed: u64,
    pub history: History,
    pub check: CheckResult,
    pub trace: String,
    pub wall_ms: f64,
    /// The faults the driver applied, in order (the file's and the
    /// nemesis's; skipped ones left out).
    pub faults: Vec<crate::engine::due::Applied>,
}

impl Run {
    /// Did the run show what the scenario's `expect` asks for? See
    /// [`as_expected_of`] (the rule lives beside the checker).
    pub fn as_expected(&self) -> bool {
        as_expected_of(&self.scenario, &self.check)
    }

    /// `safe`, `violation`, `inconclusive` or `degraded`: see [`outcome_of`].
    pub fn outcome(&self) -> &'static str {
        outcome_of(&self.scenario, &self.check)
    }
}

/// Runs `scenario` with `seed` (in this thread), checking the events as
/// they come: nothing of the history is kept (`Run::history` is empty), so
/// memory does not grow with the simulated duration. For sweeps. A panic
/// inside the simulation (a bug) is caught and returned as
/// [`RunError::Failed`], so that the caller exits 70 and a sweep's other
/// runs are not lost.
pub fn simulate(scenario: Scenario, seed: u64) -> Result<Run, RunError> {
    simulate_with(scenario, seed, false)
}

/// [`simulate`], keeping the whole history for the run's report.
pub fn simulate_keeping(scenario: Scenario, seed: u64) -> Result<Run, RunError> {
    simulate_with(scenario, seed, true)
}

/// What the events of a run flow into: the checker, the trace, the
/// history when it is kept, and a count of the events the checker's
/// figures answer for.
struct Stream {
    checker: check::Checker,
    trace: Trace,
    kept: Option<Vec<Event>>,
    counts: Counts,
}

/// How many events of each kind a run's checker was fed.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Counts {
    events: usize,
    lock_calls: u64,
    acquired: u64,
    applied: usize,
    rejected: u64,
}

impl Counts {
    fn add(&mut self, e: &Event) {
        self.events += 1;
        match e.kind {
            EventKind::LockCall { .. } => self.lock_calls += 1,
            EventKind::Acquired { .. } => self.acquired += 1,
            EventKind::WriteApplied { .. } => self.applied += 1,
            EventKind::WriteRejected { .. } => self.rejected += 1,
            _ => {}
        }
    }

    /// Checks `check`'s figures against the events it was fed: a lock
    /// call is an attempt, an acquisition a hold, a stale write one that
    /// was applied, a rejected one refused.
    fn check(&self, check: &CheckResult) {
        let live = &check.liveness;
        assert_eq!(
            (live.attempts, live.acquisitions),
            (self.lock_calls, self.acquired),
            "runner: attempts and acquisitions against the history's lock calls and acquisitions"
        );
        assert_eq!(
            check.holds.len() as u64,
            self.acquired,
            "runner: holds against the history's acquisitions"
        );
        assert_eq!(
            check.rejected_writes, self.rejected,
            "runner: rejected writes against the history's"
        );
        assert!(
            check.stale_writes.len() <= self.applied,
            "runner: {} stale writes of {} applied",
            check.stale_writes.len(),
            self.applied
        );
    }
}

fn simulate_with(scenario: Scenario, seed: u64, keep: bool) -> Result<Run, RunError> {
    simulate_code(scenario, seed, keep, &LockCode::BuiltIn)
}

/// [`simulate`] (or with `keep`, [`simulate_keeping`]), the clients running
/// `code`: the built-in client or a lock of the user's own.
pub fn simulate_code(
    scenario: Scenario,
    seed: u64,
    keep: bool,
    code: &LockCode,
) -> Result<Run, RunError> {
    simulate_stepping(scenario, seed, keep, code, Stepping::default())
}

/// [`simulate_code`], time moved by `stepping` (the same run either way).
pub fn simulate_stepping(
    scenario: Scenario,
    seed: u64,
    keep: bool,
    code: &LockCode,
    stepping: Stepping,
) -> Result<Run, RunError> {
    let start = Instant::now();
    let stream = Arc::new(Mutex::new(Stream {
        checker: check::Checker::default(),
        trace: Trace::default(),
        kept: keep.then(Vec::new),
        counts: Counts::default(),
    }));
    let sink = stream.clone();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        crate::sim::run_stepping(
            &scenario,
            seed,
            Box::new(move |e| {
                let mut s = sink.lock().unwrap_or_else(|p| p.into_inner());
                s.checker.feed(&e);
                s.counts.add(&e);
                s.trace.add(&e);
                if let Some(k) = &mut s.kept {
                    k.push(e);
                }
            }),
            code,
            stepping,
        )
    }));
    let internal = |panic: Box<dyn std::any::Any + Send>| {
        let whose = match code {
            LockCode::BuiltIn => "a bug in redlock-sim",
            LockCode::Own(_) => "a bug in the lock code or in redlock-sim",
        };
        RunError::Failed(format!(
            "internal error: the simulation of {} with seed {seed} panicked: {} ({whose}, not in the scenario)",
            scenario.name,
            panic_message(panic.as_ref())
        ))
    };
    let faults = match result {
        Ok(r) => r.map_err(|e| RunError::Failed(e.to_string()))?,
        Err(panic) => return Err(internal(panic)),
    };
    let stream = std::mem::replace(
        &mut *stream.lock().unwrap_or_else(|p| p.into_inner()),
        Stream {
            checker: check::Checker::default(),
            trace: Trace::default(),
            kept: None,
            counts: Counts::default(),
        },
    );
    let wall_ms = start.elapsed().as_secs_f64() * 1e3;
    let Stream {
        checker,
        trace,
        kept,
        counts,
    } = stream;
    // The checker's own invariants, and its figures against the events
    // it was fed, hold at its end as during the run: a panic here is the
    // same internal error.
    let finished = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let check = checker.finish();
        counts.check(&check);
        if let Some(k) = &kept {
            assert_eq!(
                k.len(),
                counts.events,
                "runner: a kept history of {} events, of {} fed",
                k.len(),
                counts.events
            );
        }
        check
    }));
    let mut check = finished.map_err(internal)?;
    conclude(&mut check, never_acted(&scenario, &faults));
    Ok(Run {
        scenario,
        seed,
        history: History {
            events: kept.unwrap_or_default(),
        },
        check,
        trace: trace.hex(),
        wall_ms,
        faults: faults.applied,
    })
}

/// The text of a caught panic's payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// Where `run` writes by default: `reports/<name>/<dir_name("seed-", N, sets)>/`
/// (`reports/<name>/seed-<N>/` without `--set`).
pub fn default_out(scenario: &Scenario, seed: u64, sets: &[(String, toml::Value)]) -> PathBuf {
    Path::new("reports")
        .join(&scenario.name)
        .join(dir_name("seed-", seed, sets))
}

/// Longest directory name [`dir_name`] returns, in bytes.
pub(crate) const MAX_DIR_NAME: usize = 150;

/// The name of a run's directory: `<prefix><seed>` without overrides
/// (`seed-1`), else `<prefix><seed>--<key>=<value>--...` for the overrides
/// deduplicated by key (the last value of a key wins, at the key's first
/// place), each value as a sweep writes it ([`scenario::render_vary_value`]):
/// `seed-1--cluster.restart=1.2ttl`. Characters outside `[A-Za-z0-9._=-]`
/// in the `key=value` parts become `_`; when any did, or a part holds `--`
/// (the separator), or when the name
/// would pass [`MAX_DIR_NAME`] bytes (the readable part is then cut), the
/// name ends in `--` and the first 8 hex digits of the 64-bit FNV-1a hash
/// of the exact `key=value` strings joined by `\n`, so that distinct
/// overrides keep distinct names.
pub fn dir_name(prefix: &str, seed: u64, sets: &[(String, toml::Value)]) -> String {
    let mut deduped: Vec<(&str, String)> = Vec::new();
    for (key, value) in sets {
        let value = scenario::render_vary_value(value);
        match deduped.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value,
            None => deduped.push((key, value)),
        }
    }
    let mut name = format!("{prefix}{seed}");
    let mut replaced = false;
    let mut exact = Vec::with_capacity(deduped.len());
    for (key, value) in &deduped {
        let pair = format!("{key}={value}");
        // `--` separates the pairs: one inside a value would make two sets
        // and one read alike, so such a name gets the hash too.
        replaced |= pair.contains("--");
        name.push_str("--");
        for c in pair.chars() {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '=' | '-') {
                name.push(c);
            } else {
                name.push('_');
                replaced = true;
            }
        }
        exact.push(pair);
    }
    if !replaced && name.len() <= MAX_DIR_NAME {
        return name;
    }
    let hash = fnv1a64(exact.join("\n").as_bytes());
    let mut cut = MAX_DIR_NAME - 10;
    while cut < name.len() && !name.is_char_boundary(cut) {
        cut -= 1;
    }
    name.truncate(cut);
    format!("{name}--{:08x}", hash >> 32)
}

/// The 64-bit FNV-1a hash of `bytes` (stable on every platform).
fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// Reads and validates a scenario file as `run` does, with `--set`
/// overrides (bad input: [`RunError::BadInput`]).
pub fn load_file(file: &Path, overrides: &[(String, toml::Value)]) -> Result<Scenario, RunError> {
    let name = file.display().to_string();
    match std::fs::read_to_string(file) {
        Ok(text) => scenario::parse_with_overrides(&text, &name, overrides),
        Err(_) => scenario::load(file),
    }
    .map_err(RunError::BadInput)
}

/// `redlock-sim check FILE...`: validates each file (every sweep cell too).
pub fn check_file(file: &Path) -> Result<(), ScenarioError> {
    match std::fs::read_to_string(file) {
        Ok(text) => scenario::check_sweep(&text, &file.display().to_string()).map(|_| ()),
        Err(_) => scenario::load(file).map(|_| ()),
    }
}

/// Parses `--set KEY=VALUE`: the value as TOML (`3`, `1.05`, `true`,
/// `"x"`), else as a plain string (`0.5ttl`, `single`), as in `[sweep.vary]`.
pub fn parse_set(text: &str) -> Result<(String, toml::Value), String> {
    let (key, value) = text.split_once('=').ok_or_else(|| {
        format!("--set: \"{text}\" is not KEY=VALUE (e.g. cluster.restart=0.5ttl)")
    })?;
    let (key, value) = (key.trim(), value.trim());
    if key.is_empty() {
        return Err(format!("--set: \"{text}\" has no key"));
    }
    let parsed = format!("v = {value}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(value.to_string()));
    Ok((key.to_string(), parsed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sets(pairs: &[&str]) -> Vec<(String, toml::Value)> {
        pairs.iter().map(|p| parse_set(p).unwrap()).collect()
    }

    #[test]
    fn without_sets_the_name_is_prefix_and_seed() {
        assert_eq!(dir_name("seed-", 1, &[]), "seed-1");
        assert_eq!(dir_name("shrink-seed-", 3, &[]), "shrink-seed-3");
    }

    #[test]
    fn sets_are_appended_as_key_value() {
        assert_eq!(
            dir_name("seed-", 1, &sets(&["cluster.restart=1.2ttl"])),
            "seed-1--cluster.restart=1.2ttl"
        );
        assert_eq!(
            dir_name(
                "seed-",
                1,
                &sets(&["cluster.restart=immediate", "clients.variant=spec"])
            ),
            "seed-1--cluster.restart=immediate--clients.variant=spec"
        );
        assert_eq!(
            dir_name("shrink-seed-", 7, &sets(&["clients.count=3"])),
            "shrink-seed-7--clients.count=3"
        );
    }

    #[test]
    fn a_repeated_key_keeps_its_first_place_and_its_last_value() {
        let s = sets(&["a.x=1", "b.y=2", "a.x=3"]);
        assert_eq!(dir_name("seed-", 2, &s), "seed-2--a.x=3--b.y=2");
        assert_eq!(
            dir_name("seed-", 2, &s),
            dir_name("seed-", 2, &sets(&["a.x=3", "b.y=2"]))
        );
    }

    #[test]
    fn unsafe_characters_become_underscores_and_add_a_hash() {
        let name = dir_name("seed-", 1, &sets(&[r#"k="a b/c'd""#]));
        let (readable, hash) = name.rsplit_once("--").unwrap();
        assert_eq!(readable, "seed-1--k=a_b_c_d");
        assert_eq!(hash.len(), 8);
        assert!(hash.chars().all(|c| c.is_ascii_hexdigit()));
        // The hash is of the exact text, so the two differ only there.
        let other = dir_name("seed-", 1, &sets(&[r#"k="a b/c'e""#]));
        assert_ne!(name, other);
        let slash = dir_name("seed-", 1, &sets(&[r#"k="a/b""#]));
        let space = dir_name("seed-", 1, &sets(&[r#"k="a b""#]));
        assert!(slash.starts_with("seed-1--k=a_b--"));
        assert!(space.starts_with("seed-1--k=a_b--"));
        assert_ne!(slash, space);
        // Stable across platforms and releases: FNV-1a of "k=a/b".
        assert_eq!(
            slash,
            format!("seed-1--k=a_b--{:08x}", fnv1a64(b"k=a/b") >> 32)
        );
    }

    #[test]
    fn a_separator_inside_a_value_never_reads_as_two_sets() {
        let one = dir_name("seed-", 1, &sets(&["description=a--clients.count=3"]));
        let two = dir_name("seed-", 1, &sets(&["description=a", "clients.count=3"]));
        assert_eq!(two, "seed-1--description=a--clients.count=3");
        assert_ne!(one, two);
        assert!(one.starts_with("seed-1--description=a--clients.count=3--"));
    }

    #[test]
    fn fnv1a_matches_its_reference_values() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn long_names_are_cut_and_keep_distinct_hashes() {
        let long = "x".repeat(300);
        let a = dir_name("seed-", 1, &sets(&[&format!("k={long}a")]));
        let b = dir_name("seed-", 1, &sets(&[&format!("k={long}b")]));
        assert!(a.len() <= MAX_DIR_NAME, "{} bytes", a.len());
        assert!(a.starts_with("seed-1--k=xxx"));
        assert_ne!(a, b);
        let many: Vec<String> = (0..40).map(|i| format!("key{i}=value{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let name = dir_name("seed-", u64::MAX, &sets(&many));
        assert!(name.len() <= MAX_DIR_NAME);
        let short = dir_name("seed-", 1, &sets(&["k=v"]));
        assert_eq!(short, "seed-1--k=v");
    }
}
