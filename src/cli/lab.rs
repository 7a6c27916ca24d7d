//! `redlock-sim lab FILE [--seed N] [--seeds A..=B [--stop-early]] [--jobs J] [--out DIR]
//! [--set KEY=VALUE]... [--servers node|redis] -- CMD [ARGS...]`: the scenario in real time
//! against real client processes ([`redlock_harness::lab`]), judged from outside
//! ([`redlock_harness::check::outside`]), with `run`'s outputs; and
//! `redlock-sim lab-client`, the built-in client as a lab client.

use super::exit;
use redlock_harness::runner::lab::{run_lab, LabError, LabRun, Servers};
use redlock_harness::scenario::Scenario;
use redlock_report::RunOutput;
use std::path::{Path, PathBuf};

/// `lab FILE [--seed N | --seeds A..=B [--stop-early]] [--jobs J] [--out DIR]
/// [--set KEY=VALUE]... [--servers node|redis] -- CMD...`; a matrix's cells
/// are lab sweeps asked with these too.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The scenario file (TOML).
    pub file: PathBuf,
    /// Seed (default: the scenario's `seed`): it draws the faults.
    #[arg(long, conflicts_with = "seeds")]
    pub seed: Option<u64>,
    /// Run every seed A..=B (or N for 1..=N).
    #[arg(long, value_parser = redlock_harness::sweep::parse_seeds)]
    pub seeds: Option<std::ops::RangeInclusive<u64>>,
    /// Runs at once with --seeds (default 1).
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// With --seeds: stop once the verdict is settled (the first 10
    /// conclusive runs all violated, or 103 conclusive runs none did),
    /// as a matrix's cells do; the seeds are the budget.
    #[arg(long, requires = "seeds")]
    pub stop_early: bool,
    /// Output directory (default: reports/<name>/lab-seed-<N>/, with
    /// --seeds reports/<name>/lab/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Override a key, as `run --set` does (repeatable).
    #[arg(long = "set", value_name = "SET", value_parser = redlock_harness::runner::parse_set)]
    pub sets: Vec<(String, toml::Value)>,
    /// What serves the nodes: the project's node code (`node`), or real
    /// `redis-server` and `redis-sentinel` processes (`redis`).
    #[arg(long, default_value = "node", value_parser = super::servers)]
    pub(crate) servers: Servers,
    /// The client command, after `--` (`redlock-sim lab-client` runs the
    /// built-in client).
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub(crate) cmd: Vec<String>,
}

/// Runs `lab` for one seed (`--seeds`: [`super::lab_seeds`]) and returns
/// its exit code.
pub(crate) fn main(args: Args) -> u8 {
    let scenario = match load(&args) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let seed = args.seed.unwrap_or(scenario.seed);
    let dir = args.out.clone().unwrap_or_else(|| {
        Path::new("reports")
            .join(&scenario.name)
            .join(redlock_harness::runner::dir_name(
                "lab-seed-",
                seed,
                &args.sets,
            ))
    });
    let written = run_lab(
        &scenario,
        seed,
        &args.cmd,
        dir.join("clients"),
        args.servers,
    )
    .and_then(|r| write(&r, &dir, &args.sets).map(|()| r));
    match written {
        Ok(r) => {
            let out = RunOutput {
                lab: Some(&r.info),
                ..RunOutput::of(&r.run)
            };
            super::die_quietly_on_broken_pipe();
            print!("{}", redlock_report::summary_lines(&out));
            println!("report: {}", dir.join("index.html").display());
            if r.run.as_expected() {
                0
            } else {
                1
            }
        }
        Err(e) => said(e),
    }
}

/// Says why a lab run failed; its exit code.
pub(crate) fn said(e: LabError) -> u8 {
    eprintln!("{e}");
    exit_code(&e)
}

/// The exit code of a lab run that failed.
pub(crate) fn exit_code(e: &LabError) -> u8 {
    match e {
        LabError::BadInput(_) => exit::BAD_INPUT,
        LabError::Failed(_) => exit::SOFTWARE,
    }
}

/// The scenario, checked for the lab, and the command checked to exist;
/// otherwise the exit code, with the error said.
pub(crate) fn load(a: &Args) -> Result<Scenario, u8> {
    let (scenario, notes) = redlock_harness::runner::lab::load(&a.file, &a.sets).map_err(said)?;
    for n in notes {
        eprintln!("note: {n}");
    }
    redlock_harness::runner::lab::check_command(&a.cmd).map_err(said)?;
    redlock_harness::runner::lab::check_clock_reach(&a.file, &scenario, &a.cmd, &a.sets)
        .map_err(said)?;
    redlock_harness::runner::lab::check_servers(&a.file, &scenario, a.servers).map_err(said)?;
    Ok(scenario)
}

/// Writes a lab run's outputs into `dir` (its clients' logs are there).
pub(crate) fn write(
    r: &LabRun,
    dir: &Path,
    sets: &[(String, toml::Value)],
) -> Result<(), LabError> {
    let output = RunOutput {
        sets,
        lab: Some(&r.info),
        ..RunOutput::of(&r.run)
    };
    redlock_report::write_run(dir, &output).map_err(|e| {
        LabError::Failed(format!(
            "redlock-sim lab: cannot write the outputs to {}: {e}",
            dir.display()
        ))
    })
}

/// `redlock-sim lab-client`: the built-in client under the lab.
pub(crate) fn client_main() -> u8 {
    let env = match redlock_harness::lab::driver::Env::read() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("redlock-sim lab-client: {e}");
            return exit::BAD_INPUT;
        }
    };
    let rt = super::runtime();
    match rt.block_on(redlock_harness::lab::driver::run(env)) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("redlock-sim lab-client: {e}");
            1
        }
    }
}
