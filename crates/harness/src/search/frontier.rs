//! `redlock-sim frontier`: where violations stop along one numeric key.
//!
//! Values of the key (a duration, a TTL multiple or a number, set as `--set`
//! sets them) are each run on the same seeds `1..=N` (common random
//! numbers). Both ends are tried first; when exactly one of them violates,
//! the interval between the largest violating and the smallest safe value
//! tried is bisected until it is narrower than the resolution. Violations
//! may grow with the key instead (a clock rate): then `from` is safe and
//! `to` violates, and the same bisection runs the other way.
//!
//! A value violates when any of its seeds does. Seeds run in fixed batches
//! of [`BATCH`], in order; a violating value stops after the batch holding
//! its first violation, so what was run (and the smallest violating seed) is
//! the same whatever `--jobs` is. A safe value runs all `N` seeds.

use crate::runner::{self, RunError};
use crate::scenario::{self, Scenario, ScenarioError};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Seeds run together; a violating value stops after the batch with its first
/// violation.
pub const BATCH: u64 = 16;
/// Seeds per value when `--seeds` is not given.
pub const DEFAULT_SEEDS: u64 = 200;
/// The default resolution is `(to - from) / RESOLUTION_PARTS`.
pub(crate) const RESOLUTION_PARTS: f64 = 64.0;
/// `--seeds` at most.
pub(crate) const MAX_SEEDS: u64 = 1_000_000;
/// Values tried at most (both ends included), whatever the resolution.
pub(crate) const MAX_VALUES: usize = 64;

/// What a value of the key is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `"1.2s"`: kept in whole milliseconds.
    Duration,
    /// `"0.9ttl"`.
    Ttl,
    /// `3`.
    Int,
    /// `1.05`.
    Float,
}

impl Kind {
    /// How the kind is named in messages and the report.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Duration => "a duration",
            Kind::Ttl => "a TTL multiple",
            Kind::Int => "an integer",
            Kind::Float => "a number",
        }
    }
}

/// A value of the key: `x` is milliseconds, the TTL factor, or the number.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Value {
    pub kind: Kind,
    pub x: f64,
}

impl Value {
    /// Parses a value as written on the command line (`1.2s`, `0.9ttl`, `3`,
    /// `1.05`).
    pub(crate) fn parse(text: &str) -> Result<Value, String> {
        let t = text.trim();
        if let Some(f) = t.strip_suffix("ttl") {
            let f = if f.trim().is_empty() { "1" } else { f.trim() };
            return match f.parse::<f64>() {
                Ok(x) if x.is_finite() && x >= 0.0 => Ok(Value { kind: Kind::Ttl, x }),
                _ => Err(format!(
                    "\"{text}\" is not a TTL multiple (like \"0.9ttl\")"
                )),
            };
        }
        if let Ok(n) = t.parse::<i64>() {
            return Ok(Value {
                kind: Kind::Int,
                x: n as f64,
            });
        }
        if let Ok(x) = t.parse::<f64>() {
            if x.is_finite() {
                return Ok(Value {
                    kind: Kind::Float,
                    x,
                });
            }
        }
        match redlock_proto::duration::parse(t) {
            Ok(d) => Ok(Value {
                kind: Kind::Duration,
                x: (d.as_secs_f64() * 1e3).round(),
            }),
            Err(_) => Err(format!(
                "\"{text}\" is not a numeric value: write a duration (\"1.2s\"), a TTL multiple (\"0.9ttl\") or a number (\"1.05\")"
            )),
        }
    }

    /// The value as written on the command line and in the report.
    pub fn show(&self) -> String {
        match self.kind {
            Kind::Duration => {
                redlock_proto::duration::format(Duration::from_millis(self.x.max(0.0) as u64))
            }
            Kind::Ttl => format!("{}ttl", short(self.x)),
            Kind::Int => format!("{}", self.x as i64),
            // Always with a point, so that `--set` reads it back as a float.
            Kind::Float => {
                let s = short(self.x);
                if s.contains(['.', 'e']) {
                    s
                } else {
                    format!("{s}.0")
                }
            }
        }
    }

    /// The value as an override for [`scenario::parse_with_overrides`], as
    /// `--set` would give it.
    pub fn to_toml(&self) -> toml::Value {
        match self.kind {
            Kind::Duration | Kind::Ttl => toml::Value::String(self.show()),
            Kind::Int => toml::Value::Integer(self.x as i64),
            Kind::Float => toml::Value::Float(self.x),
        }
    }

    /// The value halfway to `other`, in the kind's own grain (whole
    /// milliseconds, integers, six decimals); `None` when there is none
    /// strictly between them.
    pub(crate) fn midpoint(&self, other: &Value) -> Option<Value> {
        let m = (self.x + other.x) / 2.0;
        let x = match self.kind {
            Kind::Duration | Kind::Int => m.round(),
            Kind::Ttl | Kind::Float => (m * 1e6).round() / 1e6,
        };
        let (lo, hi) = (self.x.min(other.x), self.x.max(other.x));
        (x > lo && x < hi).then_some(Value { kind: self.kind, x })
    }
}

/// Up to six decimals, trailing zeros dropped (`0.9`, `0.953125`, `2`).
fn short(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// What the command line asks for.
#[derive(Clone, Debug)]
pub struct Request {
    pub file: PathBuf,
    pub key: String,
    pub from: String,
    pub to: String,
    /// Seeds `1..=seeds` at every value.
    pub seeds: u64,
    pub jobs: usize,
    /// Stop when the bracket is at most this wide (default: a 64th of the
    /// interval), written as the values are.
    pub resolution: Option<String>,
}

/// The runs of one value.
#[derive(Clone, Debug, PartialEq)]
pub struct Trial {
    pub value: Value,
    /// Runs made (all seeds for a safe value; whole batches up to the first
    /// violation for a violating one).
    pub runs: u64,
    pub violating: u64,
    /// The smallest violating seed.
    pub seed: Option<u64>,
    /// Order in which the value was tried (1 = first).
    pub order: usize,
}

impl Trial {
    pub(crate) fn violates(&self) -> bool {
        self.violating > 0
    }
}

/// Which way violations go along the key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Violations at small values, none at large ones (a restart delay).
    Stop,
    /// Violations at large values, none at small ones (a clock rate).
    Start,
}

/// What the search found.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The boundary: the violating and the safe value next to it.
    Found {
        direction: Direction,
        violating: Trial,
        safe: Trial,
    },
    /// Both ends violated.
    AllViolate,
    /// Neither end violated.
    NoneViolate,
}

/// A finished search.
#[derive(Clone, Debug)]
pub struct Frontier {
    /// The scenario without the key set (its name, for the default output).
    pub scenario: Scenario,
    /// The scenario file's text (for the report's command).
    pub request: Request,
    pub from: Value,
    pub to: Value,
    pub resolution: f64,
    /// Every value tried, in the order tried.
    pub trials: Vec<Trial>,
    pub outcome: Outcome,
}

fn bad(file: &str, key: &str, message: String) -> RunError {
    RunError::BadInput(ScenarioError {
        file: file.to_string(),
        key: key.to_string(),
        line: None,
        message,
    })
}

/// What a validated request searches: the file's text and name, the
/// scenario, both ends and the resolution.
pub struct Checked {
    pub(crate) text: String,
    pub file: String,
    pub scenario: Scenario,
    pub from: Value,
    pub to: Value,
    pub(crate) resolution: f64,
}

/// Checks everything before anything runs: the file, the key (it must exist
/// and take numbers: a text it accepts whatever it is, like `name`, is
/// refused), both values (of one kind, accepted by the key, `from` < `to`),
/// the seeds and the resolution. Errors are [`RunError::BadInput`].
pub fn check(req: &Request) -> Result<Checked, RunError> {
    let file = req.file.display().to_string();
    let scenario = runner::load_file(&req.file, &[])?;
    let text = std::fs::read_to_string(&req.file)
        .map_err(|e| bad(&file, "", format!("cannot read the scenario file: {e}")))?;
    let key = req.key.as_str();
    if req.seeds == 0 || req.seeds > MAX_SEEDS {
        return Err(bad(
            &file,
            "--seeds",
            format!("{} seeds: give 1 to {MAX_SEEDS}", req.seeds),
        ));
    }
    let parse =
        |flag: &str, v: &str| Value::parse(v).map_err(|m| bad(&file, key, format!("{flag}: {m}")));
    let mut from = parse("--from", &req.from)?;
    let mut to = parse("--to", &req.to)?;
    // 1 and 1.5: both numbers.
    if from.kind == Kind::Float || to.kind == Kind::Float {
        for v in [&mut from, &mut to] {
            if v.kind == Kind::Int {
                v.kind = Kind::Float;
            }
        }
    }
    if from.kind != to.kind {
        return Err(bad(
            &file,
            key,
            format!(
                "--from {} is {} but --to {} is {}: give both of one kind",
                req.from,
                from.kind.name(),
                req.to,
                to.kind.name()
            ),
        ));
    }
    if from.x >= to.x {
        return Err(bad(
            &file,
            key,
            format!(
                "--from {} must be below --to {} (if violations grow with the key, give the safe end as --from)",
                req.from, req.to
            ),
        ));
    }
    // A key that takes any text is not numeric (`name`, `description`).
    let probe = toml::Value::String("frontier-not-a-number".into());
    if scenario::parse_with_overrides(&text, &file, &[(key.to_string(), probe)]).is_ok() {
        return Err(bad(
            &file,
            key,
            "is not a numeric key: it takes any text, so there is no frontier along it".into(),
        ));
    }
    for v in [from, to] {
        scenario::parse_with_overrides(&text, &file, &[(key.to_string(), v.to_toml())])
            .map_err(|e| RunError::BadInput(as_set(e, key, v)))?;
    }
    let resolution = match &req.resolution {
        None => (to.x - from.x) / RESOLUTION_PARTS,
        Some(r) => {
            let v = parse("--resolution", r)?;
            let same = v.kind == from.kind || (v.kind == Kind::Int && from.kind == Kind::Float);
            if !same || v.x <= 0.0 {
                return Err(bad(
                    &file,
                    key,
                    format!(
                        "--resolution {r}: give a positive value of the same kind as --from and --to ({})",
                        from.kind.name()
                    ),
                ));
            }
            v.x
        }
    };
    Ok(Checked {
        text,
        file,
        scenario,
        from,
        to,
        resolution,
    })
}

/// An error found with the key set to `v`, saying so in frontier's words
/// rather than as a sweep cell.
fn as_set(mut e: ScenarioError, key: &str, v: Value) -> ScenarioError {
    if let Some(i) = e.message.rfind(" (in the sweep cell where ") {
        e.message.truncate(i);
    }
    e.message.push_str(&format!(
        " (with {key} set to {}, as frontier sets it)",
        v.show()
    ));
    e
}

/// Runs `value` on seeds `1..=n` in batches of [`BATCH`], each batch on
/// `jobs` threads, stopping after the batch with the first violation.
/// `progress` is told each finished trial.
pub(crate) fn try_value(
    c: &Checked,
    key: &str,
    value: Value,
    n: u64,
    jobs: usize,
) -> Result<(u64, u64, Option<u64>), RunError> {
    let s = scenario::parse_with_overrides(&c.text, &c.file, &[(key.to_string(), value.to_toml())])
        .map_err(|e| RunError::BadInput(as_set(e, key, value)))?;
    let (mut runs, mut violating, mut first) = (0u64, 0u64, None);
    let mut start = 1u64;
    while start <= n {
        let end = (start + BATCH - 1).min(n);
        let verdicts = run_batch(&s, start, end, jobs)?;
        runs += end - start + 1;
        for (i, v) in verdicts.iter().enumerate() {
            if *v {
                violating += 1;
                first = first.or(Some(start + i as u64));
            }
        }
        if violating > 0 {
            break;
        }
        start = end + 1;
    }
    // Whole batches up to the first violation, or every seed.
    assert!(
        violating <= runs
            && runs <= n
            && first.is_some() == (violating > 0)
            && first.is_none_or(|s| (1..=runs).contains(&s))
            && (violating > 0 || runs == n),
        "value {}: {runs} runs of {n}, {violating} violating, first {first:?}",
        value.show()
    );
    Ok((runs, violating, first))
}

/// Whether each seed of `start..=end` violates, run on `jobs` threads; the
/// result is in seed order whatever the scheduling.
fn run_batch(s: &Scenario, start: u64, end: u64, jobs: usize) -> Result<Vec<bool>, RunError> {
    let count = (end - start + 1) as usize;
    let results = crate::sweep::pool::map_in_order(
        count,
        jobs,
        |i| {
            runner::simulate(s.clone(), start + i as u64)
                .map(|run| run.check.verdict == crate::check::Verdict::Violation)
        },
        |_| false,
    );
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(RunError::Failed("a worker thread died".into()))))
        .collect()
}

/// Searches the frontier of a checked request; `progress` is told of each
/// value once tried.
pub fn search(
    req: &Request,
    c: &Checked,
    progress: &mut dyn FnMut(&Trial),
) -> Result<Frontier, RunError> {
    // What `check` guarantees.
    assert!(
        c.from.kind == c.to.kind && c.from.x < c.to.x && c.resolution > 0.0,
        "frontier from {:?} to {:?} at resolution {}",
        c.from,
        c.to,
        c.resolution
    );
    let mut trials: Vec<Trial> = Vec::new();
    let mut run = |value: Value, trials: &mut Vec<Trial>| -> Result<Trial, RunError> {
        let (runs, violating, seed) = try_value(c, &req.key, value, req.seeds, req.jobs)?;
        let t = Trial {
            value,
            runs,
            violating,
            seed,
            order: trials.len() + 1,
        };
        progress(&t);
        trials.push(t.clone());
        Ok(t)
    };
    let lo = run(c.from, &mut trials)?;
    let hi = run(c.to, &mut trials)?;
    let (direction, mut bad_end, mut good_end) = match (lo.violates(), hi.violates()) {
        (true, false) => (Direction::Stop, lo, hi),
        (false, true) => (Direction::Start, hi, lo),
        (true, true) => return Ok(frontier_of(req, c, trials, Outcome::AllViolate)),
        (false, false) => return Ok(frontier_of(req, c, trials, Outcome::NoneViolate)),
    };
    while (good_end.value.x - bad_end.value.x).abs() > c.resolution + 1e-9
        && trials.len() < MAX_VALUES
    {
        let Some(mid) = bad_end.value.midpoint(&good_end.value) else {
            break;
        };
        let t = run(mid, &mut trials)?;
        let width = (good_end.value.x - bad_end.value.x).abs();
        if t.violates() {
            bad_end = t;
        } else {
            good_end = t;
        }
        // The bracket narrows, keeps its ends' verdicts and its direction.
        let narrower = (good_end.value.x - bad_end.value.x).abs();
        assert!(
            narrower < width
                && bad_end.violates()
                && !good_end.violates()
                && (bad_end.value.x < good_end.value.x) == (direction == Direction::Stop),
            "frontier bracket {} (violating) to {} (safe) from width {width}",
            bad_end.value.show(),
            good_end.value.show()
        );
    }
    let outcome = Outcome::Found {
        direction,
        violating: bad_end,
        safe: good_end,
    };
    Ok(frontier_of(req, c, trials, outcome))
}

fn frontier_of(req: &Request, c: &Checked, trials: Vec<Trial>, outcome: Outcome) -> Frontier {
    Frontier {
        scenario: c.scenario.clone(),
        request: req.clone(),
        from: c.from,
        to: c.to,
        resolution: c.resolution,
        trials,
        outcome,
    }
}

/// Where `frontier` writes by default: `reports/<name>/frontier-<key>/`.
pub fn default_out(scenario: &Scenario, key: &str) -> PathBuf {
    let safe: String = key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    Path::new("reports")
        .join(&scenario.name)
        .join(format!("frontier-{safe}"))
}

/// The `[[faults]]` of a scenario's text, one line each (`at = "1s", do =
/// "crash", host = "n2"`).
pub fn fault_lines(text: &str) -> Vec<String> {
    let Ok(table) = text.parse::<toml::Table>() else {
        return Vec::new();
    };
    let Some(toml::Value::Array(faults)) = table.get("faults") else {
        return Vec::new();
    };
    faults
        .iter()
        .map(|f| match f {
            toml::Value::Table(t) => t
                .iter()
                .map(|(k, v)| format!("{k} = {v}"))
                .collect::<Vec<_>>()
                .join(", "),
            other => other.to_string(),
        })
        .collect()
}

/// The minimal scenario of the boundary's violation, as far as it was made.
#[derive(Clone, Debug)]
pub enum Minimal {
    /// `shrink` wrote it: its path, the fault counts before and after, and
    /// its faults, one line each.
    Made {
        path: PathBuf,
        before: usize,
        after: usize,
        faults: Vec<String>,
    },
    /// It could not be made: why.
    NotMade(String),
    /// No boundary was found, so there is nothing to shrink.
    NoBoundary,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_show_and_halve_in_their_grain() {
        let d = Value::parse("1.2s").unwrap();
        assert_eq!((d.kind, d.x), (Kind::Duration, 1200.0));
        assert_eq!(d.show(), "1.2s");
        let t = Value::parse("0.9ttl").unwrap();
        assert_eq!((t.kind, t.show()), (Kind::Ttl, "0.9ttl".to_string()));
        assert_eq!(Value::parse("3").unwrap().kind, Kind::Int);
        assert_eq!(Value::parse("1.05").unwrap().show(), "1.05");
        let one = Value::parse("0.5")
            .unwrap()
            .midpoint(&Value::parse("1.5").unwrap());
        assert_eq!(one.unwrap().show(), "1.0");
        assert!(Value::parse("redlock").is_err());
        let a = Value::parse("1ms").unwrap();
        let b = Value::parse("2ms").unwrap();
        assert_eq!(a.midpoint(&b), None);
        let c = Value::parse("4ms").unwrap();
        assert_eq!(a.midpoint(&c).unwrap().show(), "3ms");
        let i = Value::parse("2").unwrap();
        let j = Value::parse("5").unwrap();
        assert_eq!(i.midpoint(&j).unwrap().show(), "4");
        assert_eq!(
            t.midpoint(&Value::parse("1ttl").unwrap()).unwrap().show(),
            "0.95ttl"
        );
        assert_eq!(t.to_toml(), toml::Value::String("0.9ttl".into()));
    }
}
