//! `redlock-sim shrink`: one violating run becomes a minimal scenario.
//!
//! 1. Run the file (with its `--set` values) at the seed; a run without a
//!    violation is the answer `None`, and nothing is written.
//! 2. Make its faults explicit: every fault the run applied (the nemesis's
//!    and the file's) becomes an entry due at the time it was due, from the
//!    start. Replayed, that applies the same faults at the same ticks. A
//!    fault the aimed nemesis placed at an event's own instant follows that
//!    event instead (`after = "c2:lock_call@1864ms"`, see
//!    [`explicit::absolute`]): released in the middle of that step, it acts
//!    at its end, which a fault due from the start cannot. One case of the
//!    file's does not replay so: a fault the file triggers on a client's lock
//!    event (`after = "c1:acquired"`) that pauses that client acts *before
//!    the client's next instruction*, which a fault due at a time cannot do
//!    (the client may run a step first). So when the explicit replay does
//!    not violate, the file's triggered entries are kept as written (with
//!    `after`) and only the others are made explicit; when that does not
//!    violate either, the shrink fails (exit 70): it would be a bug. Of
//!    the two, one a scenario file can hold ([`writable`]: a fault due
//!    from the start is due within the duration) comes first; one with a
//!    fault that acted after the duration only if neither can, for the
//!    drops to remove it, else the shrink fails naming it.
//! 3. Drop, shorten, move later, drop again ([`super::steps`]), each
//!    candidate a replay, at most [`MAX_REPLAYS`] in all, on `jobs` threads.
//! 4. Render the result as `minimal.toml` ([`super::toml_out`]), parse it
//!    back, check that it is exactly the scenario the search ended with,
//!    and replay it; the command layer writes it and that run's report.

use super::replay::{self, Replayer};
use super::{explicit, steps, toml_out};
use crate::check::Verdict;
use crate::runner::{self, RunError};
use crate::scenario::{self, Expect, Fault, Scenario};
use std::path::{Path, PathBuf};

/// Most candidate replays one shrink counts (the first run, the check of
/// the explicit faults and the final replay of `minimal.toml` are not
/// counted). When they run out, the search stops where it is: the result
/// still violates, it may only be less small.
pub(crate) const MAX_REPLAYS: usize = 300;

/// What [`shrink_file`] produced.
pub struct Shrunk {
    /// Faults of the violating run (the nemesis's and the file's).
    pub before: usize,
    /// Faults of the minimal scenario.
    pub after: usize,
    /// The text of `minimal.toml`.
    pub minimal_toml: String,
    /// Where `minimal.toml` is to be written (`DIR/minimal.toml`).
    pub path: PathBuf,
    /// The directory of the outputs (`--out`, or [`default_out`]).
    pub dir: PathBuf,
    /// Candidate replays counted (at most [`MAX_REPLAYS`]).
    pub replays: usize,
    /// The run of `minimal.toml` as parsed back from its text, history
    /// kept: its report is written beside it.
    pub last: runner::Run,
}

/// Where `shrink` writes by default:
/// `reports/<name>/<runner::dir_name("shrink-seed-", N, sets)>/`
/// (`reports/<name>/shrink-seed-<N>/` without `--set`).
pub(crate) fn default_out(
    scenario: &Scenario,
    seed: u64,
    sets: &[(String, toml::Value)],
) -> PathBuf {
    Path::new("reports")
        .join(&scenario.name)
        .join(runner::dir_name("shrink-seed-", seed, sets))
}

/// Shrinks the run of `file` (with `sets` applied) at `seed` (default: the
/// scenario's), for the directory `out` (default: [`default_out`]);
/// writes nothing (`redlock_sim::cli::shrink` writes the result).
/// `Ok(None)` when that run does not violate.
pub fn shrink_file(
    file: &Path,
    seed: Option<u64>,
    sets: &[(String, toml::Value)],
    out: Option<PathBuf>,
    jobs: usize,
) -> Result<Option<Shrunk>, RunError> {
    let base = runner::load_file(file, sets)?;
    // load_file read it: a file that cannot be read again is a failure.
    let source = std::fs::read_to_string(file)
        .map_err(|e| RunError::Failed(format!("cannot read {} again: {e}", file.display())))?;
    let seed = seed.unwrap_or(base.seed);
    if i64::try_from(seed).is_err() {
        return Err(RunError::BadInput(scenario::ScenarioError {
            file: file.display().to_string(),
            key: "seed".into(),
            line: None,
            message: format!(
                "--seed {seed} cannot be written in minimal.toml: a scenario's seed is at most {}",
                i64::MAX
            ),
        }));
    }
    let run = runner::simulate(base.clone(), seed)?;
    if run.check.verdict != Verdict::Violation {
        return Ok(None);
    }
    let before = run.faults.len();
    let start = explicit_faults(&base, &run.faults, seed)?;
    let mut r = Replayer {
        base: &base,
        seed,
        jobs: jobs.max(1),
        used: 0,
        budget: MAX_REPLAYS,
    };
    let n_explicit = start.len();
    let dropped = steps::drop(&mut r, start)?;
    assert!(
        dropped.len() <= n_explicit,
        "dropping grew {n_explicit} faults to {}",
        dropped.len()
    );
    let shortened = steps::shorten(&mut r, dropped)?;
    let moved = steps::later(&mut r, shortened, base.duration, base.max_ttl)?;
    // Shorter and later faults may leave one of them unneeded.
    let moved_n = moved.len();
    let faults = steps::drop(&mut r, moved)?;
    // Each step keeps or removes faults, never adds one.
    assert!(
        faults.len() <= moved_n && moved_n <= n_explicit,
        "the shrink went from {n_explicit} to {moved_n} to {} faults",
        faults.len()
    );

    // The steps never move a fault due from the start past the duration;
    // the drops may remove one that acted after it, or keep it needed.
    if !writable(&base, &faults) {
        return Err(RunError::Failed(format!(
            "the run of {} with seed {seed} violates only with a fault that acted after its duration ({}), due from the start: a scenario file cannot hold it (a fault due from the start is due within the duration); nothing written",
            base.name,
            redlock_proto::duration::format(base.duration)
        )));
    }
    let name = format!("{}-shrunk-seed-{seed}", base.name);
    let description = describe(file, seed, sets, before, faults.len(), &base.description);
    let header = toml_out::Header {
        name: &name,
        description: &description,
        seed,
    };
    let text = toml_out::minimal(&source, sets, &header, &faults)
        .map_err(|e| RunError::Failed(format!("internal error: writing minimal.toml: {e}")))?;
    let dir = out.unwrap_or_else(|| default_out(&base, seed, sets));
    let path = dir.join("minimal.toml");
    let minimal = written_as_meant(&text, &path, &base, &header, &faults)?;
    let last = runner::simulate_keeping(minimal, seed)?;
    if last.check.verdict != Verdict::Violation {
        return Err(RunError::Failed(format!(
            "internal error: the minimal scenario does not violate when replayed from its text (seed {seed}); nothing written"
        )));
    }
    Ok(Some(Shrunk {
        before,
        after: faults.len(),
        minimal_toml: text,
        path,
        dir,
        replays: r.used,
        last,
    }))
}

/// Step 2: the run's faults as explicit entries that still violate: all
/// due from the start, or the file's triggered ones kept as written; of
/// those, first one a scenario file can hold ([`writable`]), else one the
/// steps may make so (dropping what acted after the duration).
fn explicit_faults(
    base: &Scenario,
    applied: &[crate::engine::due::Applied],
    seed: u64,
) -> Result<Vec<Fault>, RunError> {
    let all = explicit::absolute(applied);
    let kept = explicit::keeping_triggers(&base.faults, applied);
    let mut tried: Vec<(&Vec<Fault>, bool)> = Vec::new();
    for must_write in [true, false] {
        for faults in [&all, &kept] {
            if must_write && !writable(base, faults) {
                continue;
            }
            let known = tried.iter().find(|(f, _)| *f == faults).map(|(_, v)| *v);
            let violates = match known {
                Some(v) => v,
                None => {
                    let v = replay::violates(base, faults, seed)?;
                    tried.push((faults, v));
                    v
                }
            };
            if violates {
                return Ok(faults.clone());
            }
        }
    }
    Err(RunError::Failed(format!(
        "internal error: the run of {} with seed {seed} violates, but not when its {} applied faults are replayed as explicit [[faults]] (a bug in redlock-sim); nothing written",
        base.name,
        applied.len()
    )))
}

/// Whether `faults` can be written in a scenario file: one due from the
/// start is due within the duration (the parser refuses a later one). A
/// fault the file released on a client's lock event may act after the
/// duration, while holds go on (`after = "c1:acquired"`, `at = "3s"` in a
/// run of 2 s): due from the start it cannot be written, and the shrink
/// keeps its trigger instead.
fn writable(base: &Scenario, faults: &[Fault]) -> bool {
    faults
        .iter()
        .all(|f| f.after != scenario::Trigger::Start || f.at <= base.duration)
}

/// The description of the minimal scenario: where it came from.
fn describe(
    file: &Path,
    seed: u64,
    sets: &[(String, toml::Value)],
    before: usize,
    after: usize,
    original: &str,
) -> String {
    let sets: String = sets
        .iter()
        .map(|(k, v)| match v {
            toml::Value::String(s) => format!(" --set {k}={s}"),
            v => format!(" --set {k}={v}"),
        })
        .collect();
    let mut text = format!(
        "Shrunk by `redlock-sim shrink {}{sets} --seed {seed}`: the faults of that violating run ({before}: its nemesis's and its file's) became explicit [[faults]], then were dropped, shortened and moved later while the run still violated, down to {after}.",
        file.display()
    );
    if !original.trim().is_empty() {
        text.push_str(&format!(" The original scenario: {}", original.trim()));
    }
    text
}

/// Parses the written text back and checks that it is exactly the
/// scenario the search replayed (with its new name, description, seed and
/// `expect`): anything else is a bug, and nothing is written.
fn written_as_meant(
    text: &str,
    path: &Path,
    base: &Scenario,
    header: &toml_out::Header,
    faults: &[Fault],
) -> Result<Scenario, RunError> {
    let parsed = scenario::parse_str(text, &path.display().to_string()).map_err(|e| {
        RunError::Failed(format!(
            "internal error: the minimal scenario does not parse: {e}; nothing written"
        ))
    })?;
    let meant = Scenario {
        name: header.name.to_string(),
        description: header.description.to_string(),
        seed: header.seed,
        expect: Expect::Violation,
        ..replay::scenario_with(base, faults)
    };
    let unlined = |s: &Scenario| Scenario {
        faults: s
            .faults
            .iter()
            .map(|f| Fault {
                line: 0,
                ..f.clone()
            })
            .collect(),
        ..s.clone()
    };
    if unlined(&parsed) != unlined(&meant) {
        return Err(RunError::Failed(
            "internal error: minimal.toml would not mean the scenario that was shrunk; nothing written".into(),
        ));
    }
    Ok(parsed)
}
