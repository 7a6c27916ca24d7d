//! `redlock-sim lab FILE [--seed N] [--seeds A..=B] [--jobs J] [--out DIR]
//! [--set KEY=VALUE]... -- CMD [ARGS...]`: the scenario in real time
//! against real client processes ([`crate::lab`]), judged from outside
//! ([`crate::check::outside`]), with `run`'s outputs; and
//! `redlock-sim lab-client`, the built-in client as a lab client.

use super::{EXIT_BAD_INPUT, EXIT_SOFTWARE};
use crate::check::outside;
use crate::lab::process::Watchdog;
use crate::lab::run::{self as world, LabError, Setup};
use crate::report::{self, LabInfo, RunOutput};
use crate::runner::{load_file, Failure, Run};
use crate::scenario::Scenario;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What `lab` was asked.
pub struct Args {
    pub file: PathBuf,
    pub seed: Option<u64>,
    pub seeds: Option<std::ops::RangeInclusive<u64>>,
    pub jobs: usize,
    pub out: Option<PathBuf>,
    pub sets: Vec<(String, toml::Value)>,
    pub cmd: Vec<String>,
}

/// A finished lab run, judged.
pub struct LabRun {
    pub run: Run,
    pub info: LabInfo,
    pub dir: PathBuf,
}

/// Runs `lab` for one seed (`--seeds`: [`super::lab_seeds`]) and returns
/// its exit code.
pub fn main(a: Args) -> u8 {
    let scenario = match load(&a) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let seed = a.seed.unwrap_or(scenario.seed);
    let dir = a.out.clone().unwrap_or_else(|| {
        Path::new("reports")
            .join(&scenario.name)
            .join(crate::runner::dir_name("lab-seed-", seed, &a.sets))
    });
    match run_one(&scenario, seed, &a.cmd, &dir, &a.sets) {
        Ok(r) => {
            let out = RunOutput {
                lab: Some(&r.info),
                ..RunOutput::of(&r.run)
            };
            super::die_quietly_on_broken_pipe();
            print!("{}", report::summary_lines(&out));
            println!("report: {}", dir.join("index.html").display());
            if r.run.as_expected() {
                0
            } else {
                1
            }
        }
        Err(code) => code,
    }
}

/// The scenario, checked for the lab, and the command checked to exist;
/// otherwise the exit code, with the error said.
pub fn load(a: &Args) -> Result<Scenario, u8> {
    let scenario = match load_file(&a.file, &a.sets) {
        Ok(s) => s,
        Err(Failure::BadInput(e)) => {
            eprintln!("{e}");
            return Err(EXIT_BAD_INPUT);
        }
        Err(e) => {
            eprintln!("redlock-sim lab: {e}");
            return Err(EXIT_SOFTWARE);
        }
    };
    let text = std::fs::read_to_string(&a.file).unwrap_or_default();
    match crate::lab::refuse::check(&scenario, &text, &a.file.display().to_string()) {
        Ok(notes) => {
            for n in notes {
                eprintln!("note: {n}");
            }
        }
        Err(e) => {
            eprintln!("{e}");
            return Err(EXIT_BAD_INPUT);
        }
    }
    if let Err(e) = findable(&a.cmd) {
        eprintln!("redlock-sim lab: cannot start the client command: {e}");
        return Err(EXIT_BAD_INPUT);
    }
    Ok(scenario)
}

/// The command names a program that exists (on `PATH`, or as a path).
fn findable(cmd: &[String]) -> Result<(), String> {
    let program = cmd.first().ok_or("no command given after --")?;
    let exists = |p: &Path| p.is_file();
    let found = if program.contains('/') {
        exists(Path::new(program))
    } else {
        std::env::var_os("PATH")
            .map(|path| std::env::split_paths(&path).any(|d| exists(&d.join(program))))
            .unwrap_or(false)
    };
    if found {
        Ok(())
    } else {
        Err(format!("`{program}` not found"))
    }
}

/// One seed into `dir`: the run, its check, its outputs.
pub fn run_one(
    scenario: &Scenario,
    seed: u64,
    cmd: &[String],
    dir: &Path,
    sets: &[(String, toml::Value)],
) -> Result<LabRun, u8> {
    let logs = dir.join("clients");
    if let Err(e) = std::fs::create_dir_all(&logs) {
        eprintln!("redlock-sim lab: cannot create {}: {e}", logs.display());
        return Err(EXIT_SOFTWARE);
    }
    let setup = Setup {
        scenario: scenario.clone(),
        seed,
        cmd: cmd.to_vec(),
        logs,
    };
    let started = std::time::Instant::now();
    let outcome = match lab_run(&setup) {
        Ok(o) => o,
        Err(LabError::Command(m)) => {
            eprintln!("{m}");
            return Err(EXIT_BAD_INPUT);
        }
        Err(LabError::Io(m)) => {
            eprintln!("{m}");
            return Err(EXIT_SOFTWARE);
        }
    };
    let check = outside::check(
        &outcome.history,
        scenario.cluster.topology,
        scenario.cluster.nodes,
    );
    let run = Run {
        scenario: scenario.clone(),
        seed,
        trace: outcome.history.trace(),
        history: outcome.history,
        check,
        wall_ms: started.elapsed().as_secs_f64() * 1e3,
        faults: Vec::new(),
    };
    let info = LabInfo {
        cmd: cmd.to_vec(),
        clients: outcome.clients.clone(),
    };
    let output = RunOutput {
        sets,
        lab: Some(&info),
        ..RunOutput::of(&run)
    };
    if let Err(e) = report::write_run(dir, &output) {
        eprintln!(
            "redlock-sim lab: cannot write the outputs to {}: {e}",
            dir.display()
        );
        return Err(EXIT_SOFTWARE);
    }
    Ok(LabRun {
        run,
        info,
        dir: dir.to_path_buf(),
    })
}

/// One lab run on a runtime of its own, in this thread (the clients'
/// parent-death signal follows the thread that started them).
fn lab_run(setup: &Setup) -> Result<world::Outcome, LabError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| LabError::Io(format!("lab: a runtime: {e}")))?;
    let watchdog: Arc<Watchdog> =
        Watchdog::start().map_err(|e| LabError::Io(format!("lab: the watchdog: {e}")))?;
    rt.block_on(world::run(setup, &watchdog))
}

/// `redlock-sim lab-client`: the built-in client under the lab.
pub fn client_main() -> u8 {
    let env = match crate::lab::driver::Env::read() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("redlock-sim lab-client: {e}");
            return EXIT_BAD_INPUT;
        }
    };
    let rt = super::runtime();
    match rt.block_on(crate::lab::driver::run(env)) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("redlock-sim lab-client: {e}");
            1
        }
    }
}
