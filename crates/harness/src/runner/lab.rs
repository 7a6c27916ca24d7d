//! One lab run as a library call, beside the simulation's: the scenario
//! loaded and checked for the lab ([`crate::lab::refuse`]), the client
//! command checked to exist, one seed run in real time against the
//! command's processes ([`crate::lab::run`]) and judged from outside
//! ([`crate::check::outside`]). Writes nothing but the clients' logs
//! (their processes write them): the command layer writes the report.

use super::{load_file, Run, RunError};
use crate::check::outside;
use crate::check::verdict::{conclude, never_acted, Cause, CauseKind};
use crate::check::CheckResult;
use crate::lab::process::Reaper;
pub use crate::lab::redis::Servers;
pub use crate::lab::run::LabError;
pub use crate::lab::run::Phases;
use crate::lab::run::{self, ClientEnd, Setup};
use crate::scenario::Scenario;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a lab run's report says of its clients.
#[derive(Clone, Debug)]
pub struct LabInfo {
    /// The client command, as given.
    pub cmd: Vec<String>,
    /// How each client ended; its log is `clients/<name>.log` beside the report.
    pub clients: Vec<ClientEnd>,
    /// What served the nodes: `redlock-sim node`, or `redis-server 7.0.15`.
    pub servers: String,
    /// Where the run's wall time went.
    pub phases: Phases,
}

/// A finished lab run, judged.
pub struct LabRun {
    pub run: Run,
    pub info: LabInfo,
}

/// `file` with `sets`, checked for the lab; with the notes the check has
/// for the user.
pub fn load(
    file: &Path,
    sets: &[(String, toml::Value)],
) -> Result<(Scenario, Vec<String>), LabError> {
    let scenario = match load_file(file, sets) {
        Ok(s) => s,
        Err(RunError::BadInput(e)) => return Err(LabError::BadInput(e.to_string())),
        Err(e) => return Err(LabError::Failed(format!("redlock-sim lab: {e}"))),
    };
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let notes = crate::lab::refuse::check(&scenario, &text, &file.display().to_string())
        .map_err(|e| LabError::BadInput(e.to_string()))?;
    Ok((scenario, notes))
}

/// When `scenario` (read from `file`, with `sets`) sets or changes a
/// client's clock: `cmd`'s program is not one libfaketime cannot reach (a
/// Go program). A program a wrapper starts is looked at during the run.
/// The refusal names where the key came from: the file and its line, or
/// the `--set` that gave it.
pub fn check_clock_reach(
    file: &Path,
    scenario: &Scenario,
    cmd: &[String],
    sets: &[(String, toml::Value)],
) -> Result<(), LabError> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let Some((key, line)) = crate::lab::refuse::client_clock_key(scenario, &text) else {
        return Ok(());
    };
    let Some(program) =
        crate::lab::reach::program(cmd).filter(|p| crate::lab::reach::go_program(p))
    else {
        return Ok(());
    };
    let set = sets
        .iter()
        .rev()
        .find(|(k, _)| *k == key || k.starts_with(&format!("{key}.")));
    let (file, line) = match set {
        Some((k, v)) => (
            format!("--set {k}={}", crate::scenario::render_vary_value(v)),
            None,
        ),
        None => (file.display().to_string(), line),
    };
    let error = crate::scenario::ScenarioError {
        file,
        key,
        line,
        message: format!(
            "the lab sets the clients' clocks through libfaketime, and cannot reach the \
             client command's: {} is a Go program, which reads the clock from the kernel \
             itself (the vDSO), not through libc; the run is refused rather than run as if \
             the clock had moved",
            program.display()
        ),
    };
    Err(LabError::BadInput(error.to_string()))
}

/// `cmd` names a program that exists (on `PATH`, or as a path).
pub fn check_command(cmd: &[String]) -> Result<(), LabError> {
    findable(cmd).map_err(|e| {
        LabError::BadInput(format!(
            "redlock-sim lab: cannot start the client command: {e}"
        ))
    })
}

fn findable(cmd: &[String]) -> Result<(), String> {
    let program = cmd.first().ok_or("no command given after --")?;
    match crate::lab::reach::program(cmd) {
        Some(p) if p.is_file() => Ok(()),
        _ => Err(format!("`{program}` not found")),
    }
}

/// Runs `scenario` with `seed` against `cmd`'s processes, their logs in
/// `logs` (created), and judges the history from outside.
pub fn run_lab(
    scenario: &Scenario,
    seed: u64,
    cmd: &[String],
    logs: PathBuf,
    servers: Servers,
) -> Result<LabRun, LabError> {
    let described = describe(servers)?;
    let created = first_missing(&logs);
    std::fs::create_dir_all(&logs).map_err(|e| {
        LabError::Failed(format!(
            "redlock-sim lab: cannot create {}: {e}",
            logs.display()
        ))
    })?;
    let setup = Setup {
        scenario: scenario.clone(),
        seed,
        cmd: cmd.to_vec(),
        logs,
        servers,
    };
    let started = std::time::Instant::now();
    let outcome = match in_runtime(&setup) {
        Ok(o) => o,
        Err(e) => {
            // Bad input writes nothing: what this run created goes.
            if let (LabError::BadInput(_), Some(dir)) = (&e, created) {
                let _ = std::fs::remove_dir_all(dir);
            }
            return Err(e);
        }
    };
    let mut check = outside::check(
        &outcome.history,
        scenario.cluster.topology,
        scenario.cluster.nodes,
    );
    check_counts(&outcome.history, &check);
    let causes = lab_causes(scenario, &outcome, &check);
    conclude(&mut check, causes);
    let run = Run {
        scenario: scenario.clone(),
        seed,
        trace: outcome.history.trace(),
        history: outcome.history,
        check,
        wall_ms: started.elapsed().as_secs_f64() * 1e3,
        faults: outcome.faults.applied,
    };
    let info = LabInfo {
        cmd: cmd.to_vec(),
        clients: outcome.clients,
        servers: described,
        phases: outcome.phases,
    };
    Ok(LabRun { run, info })
}

/// `check`'s figures against the lab `history` it judged: its lock calls
/// are the attempts, each acquisition (a `HELD`, or a spell of ownership
/// of a client that says none) a hold, each refused write a rejected one.
fn check_counts(history: &crate::history::History, check: &CheckResult) {
    use crate::history::EventKind;
    let count = |f: fn(&EventKind) -> bool| history.events.iter().filter(|e| f(&e.kind)).count();
    let lock_calls = count(|k| matches!(k, EventKind::LockCall { .. })) as u64;
    let held = count(|k| matches!(k, EventKind::Acquired { .. })) as u64;
    let rejected = count(|k| matches!(k, EventKind::WriteRejected { .. })) as u64;
    let live = &check.liveness;
    assert_eq!(
        live.attempts, lock_calls,
        "lab: attempts against the history's lock calls"
    );
    assert!(
        live.acquisitions >= held && check.holds.len() as u64 == live.acquisitions,
        "lab: {} holds and {} acquisitions from {held} HELDs",
        check.holds.len(),
        live.acquisitions
    );
    assert_eq!(
        check.rejected_writes, rejected,
        "lab: rejected writes against the history's"
    );
}

/// Why a lab run did not exercise what its scenario sets out to test, in
/// the contract's order: a scripted fault that never acted, no client that
/// ever held the lock, a client that failed, a client never ready, the
/// servers' errors.
fn lab_causes(scenario: &Scenario, outcome: &run::Outcome, check: &CheckResult) -> Vec<Cause> {
    let mut causes = never_acted(scenario, &outcome.faults);
    if check.holds.is_empty() {
        let text = "no client ever held the lock: no HELD, and no ownership seen on the servers";
        causes.push(Cause::new(CauseKind::NeverHeld, text));
    }
    for c in outcome.clients.iter().filter(|c| c.failed) {
        let text = format!(
            "{} ended before the run's end ({}): see clients/{}.log",
            c.name, c.status, c.name
        );
        causes.push(Cause::new(CauseKind::ClientFailed, text));
    }
    causes.extend(outcome.causes.iter().cloned());
    causes.extend(server_errors(&outcome.history));
    causes
}

/// Each distinct reply (by command and error) that said a server could
/// not run a client's lock command, once, with the servers and clients it
/// was said to.
fn server_errors(history: &crate::history::History) -> Vec<Cause> {
    type Whom = (Vec<String>, Vec<String>);
    let mut seen: Vec<((String, String), Whom)> = Vec::new();
    for e in &history.events {
        let crate::history::EventKind::ServerError {
            server,
            command,
            error,
        } = &e.kind
        else {
            continue;
        };
        let what = (command.clone(), error.clone());
        let at = match seen.iter().position(|(w, _)| *w == what) {
            Some(i) => i,
            None => {
                seen.push((what, (Vec::new(), Vec::new())));
                seen.len() - 1
            }
        };
        let (servers, clients) = &mut seen[at].1;
        if !servers.contains(server) {
            servers.push(server.clone());
        }
        if !clients.contains(&e.host) {
            clients.push(e.host.clone());
        }
    }
    seen.into_iter()
        .map(|((command, error), (mut servers, mut clients))| {
            servers.sort();
            clients.sort();
            let text = format!(
                "the servers answered {command} with: {error} ({} to {})",
                servers.join(", "),
                clients.join(", ")
            );
            Cause::new(CauseKind::ServerError, text)
        })
        .collect()
}

/// What serves the nodes, as the summary names it.
pub fn describe(servers: Servers) -> Result<String, LabError> {
    match servers {
        Servers::Node => Ok("redlock-sim node".to_string()),
        Servers::Redis => crate::lab::redis::version().map_err(LabError::BadInput),
    }
}

/// With `--servers redis`: the programs are installed, and `scenario`
/// (read from `file`) asks nothing of them that they cannot do as the
/// simulation means it.
pub fn check_servers(file: &Path, scenario: &Scenario, servers: Servers) -> Result<(), LabError> {
    if servers == Servers::Node {
        return Ok(());
    }
    crate::lab::redis::check_installed(scenario.cluster.topology).map_err(LabError::BadInput)?;
    describe(servers)?;
    let text = std::fs::read_to_string(file).unwrap_or_default();
    crate::lab::redis::refused(scenario, &text, &file.display().to_string())
        .map_err(|e| LabError::BadInput(e.to_string()))
}

/// The outermost directory of `dir` that does not exist yet, if any.
fn first_missing(dir: &Path) -> Option<PathBuf> {
    let mut missing = None;
    for d in dir.ancestors().filter(|d| !d.as_os_str().is_empty()) {
        if d.exists() {
            break;
        }
        missing = Some(d.to_path_buf());
    }
    missing
}

/// One lab run on a runtime of its own, in this thread (the clients'
/// parent-death signal follows the thread that started them).
fn in_runtime(setup: &Setup) -> Result<run::Outcome, LabError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| LabError::Failed(format!("lab: a runtime: {e}")))?;
    let reaper: Arc<Reaper> =
        Reaper::start().map_err(|e| LabError::Failed(format!("lab: the reaper: {e}")))?;
    rt.block_on(run::run(setup, &reaper))
}
