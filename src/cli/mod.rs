//! The command layer: parse the command line, call the compute modules
//! (`runner`, `sweep`, `search`), write what they return through `report`,
//! print, and pick the exit code. The only layer that writes files or
//! prints (besides `node` and `lock`, which serve and talk on sockets).

use clap::{Parser, Subcommand};
use redlock_client::flock;
use redlock_harness::runner::lab::Servers;
use redlock_harness::{runner, search};
use redlock_proto::{clock, duration};

use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

pub mod frontier;
pub(crate) mod lab;
pub(crate) mod lab_seeds;
pub(crate) mod matrix;
pub(crate) mod progress;
pub(crate) mod run;
pub(crate) mod set;
pub(crate) mod shrink;
pub mod sweep;
pub(crate) mod sweep_files;

#[derive(Parser)]
#[command(
    name = "redlock-sim",
    version,
    about = "Deterministic simulation and fault injection for Redis locks"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

fn dur(s: &str) -> Result<Duration, String> {
    duration::parse(s)
}

#[derive(Subcommand)]
enum Command {
    /// Run one seed of a scenario: print the summary and write history.csv,
    /// summary.json, report.md, index.html and timeline.svg. Exits 0 when the
    /// verdict matches the scenario's `expect`, 1 when it does not.
    Run {
        /// The scenario file (TOML).
        file: PathBuf,
        /// Seed (default: the scenario's `seed`).
        #[arg(long)]
        seed: Option<u64>,
        /// Output directory (default: reports/<name>/seed-<N>/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Override a key, as a sweep combination does: `--set
        /// cluster.restart=0.5ttl --set clients.variant=sequential` (repeatable;
        /// this is how a sweep's violating run is replayed).
        #[arg(long = "set", value_parser = runner::parse_set)]
        set: Vec<(String, toml::Value)>,
        /// Step the simulation every tick instead of skipping the steps in
        /// which nothing can happen: the same run, slower (to check that).
        #[arg(long)]
        every_tick: bool,
    },
    /// Run every seed for every combination of the scenario's [sweep] on all
    /// cores; write runs.csv, summary.csv, report.md, index.html and charts.
    /// A killed sweep keeps its finished runs; rerunning skips them. With
    /// several files (--out required), each is swept into DIR/<name>/ and
    /// DIR gets a summary.csv and report of them all.
    Sweep {
        /// The scenario file(s) (TOML).
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Seeds to run, A..=B (or N for 1..=N); default: [sweep] seeds.
        #[arg(long, value_parser = redlock_harness::sweep::parse_seeds)]
        seeds: Option<RangeInclusive<u64>>,
        /// Worker threads (default: all cores).
        #[arg(long)]
        jobs: Option<usize>,
        /// Run only the K-th of N equal slices of the runs (for many machines;
        /// join the shards with `merge`).
        #[arg(long, value_parser = redlock_harness::sweep::parse_shard)]
        shard: Option<(usize, usize)>,
        /// Output directory (default: reports/<name>/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Exit 1 if a combination had a violation although the scenario
        /// expects safe.
        #[arg(long)]
        strict: bool,
        /// Discard what --out holds of this scenario's sweep and run every
        /// run again (without it a sweep resumes).
        #[arg(long)]
        fresh: bool,
        /// Sweep only the files whose `expect` is this (safe, violation or
        /// degraded); the others are named and left out.
        #[arg(long, value_parser = ["safe", "violation", "degraded"])]
        expect: Option<String>,
        /// Step every run every tick (see `run --every-tick`).
        #[arg(long)]
        every_tick: bool,
    },
    /// Shrink one violating run into a minimal scenario: its faults become
    /// explicit `[[faults]]`, then are dropped, shortened and moved later while
    /// the run still violates. Writes DIR/minimal.toml and that run's report.
    /// Exits 0 when it wrote one, 1 when the run does not violate.
    Shrink {
        /// The scenario file (TOML).
        file: PathBuf,
        /// Seed (default: the scenario's `seed`).
        #[arg(long)]
        seed: Option<u64>,
        /// Override a key, as `run --set` does (repeatable).
        #[arg(long = "set", value_parser = runner::parse_set)]
        set: Vec<(String, toml::Value)>,
        /// Output directory (default: reports/<name>/shrink-seed-<N>/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Threads replaying candidates (default: all cores); the result
        /// is the same for any number.
        #[arg(long)]
        jobs: Option<usize>,
    },
    /// Find where violations stop along one numeric key: bisect between
    /// --from (violating) and --to (safe), or the other way round when
    /// violations grow with the key, the same seeds 1..=N at every value;
    /// write report.md, index.html, frontier.csv, frontier.svg and the
    /// boundary's minimal scenario. Exits 0 when the boundary was found, 1
    /// when every value tried violated or none did.
    Frontier {
        file: PathBuf,
        /// The dotted key, as `--set` takes it (cluster.restart).
        #[arg(long)]
        key: String,
        /// One end of the interval (a duration, a TTL multiple or a number).
        #[arg(long, allow_hyphen_values = true)]
        from: String,
        /// The other end, above --from.
        #[arg(long, allow_hyphen_values = true)]
        to: String,
        /// Seeds 1..=N at every value.
        #[arg(long, default_value_t = search::frontier::DEFAULT_SEEDS)]
        seeds: u64,
        /// Worker threads (default: all cores).
        #[arg(long)]
        jobs: Option<usize>,
        /// Output directory (default: reports/<name>/frontier-<key>/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Stop when the bracket is at most this wide (default: (to - from) / 64).
        #[arg(long, allow_hyphen_values = true)]
        resolution: Option<String>,
    },
    /// Join the runs.csv of sweep shards and write the outputs one sweep
    /// would have written; of a matrix's shards (`matrix --shard`), join
    /// their cells and write the outputs the whole matrix would have.
    Merge {
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        #[arg(long, required = true)]
        out: PathBuf,
        /// Threads writing the run reports under DIR/runs/ (default: all cores).
        #[arg(long)]
        jobs: Option<usize>,
    },
    /// Run a scenario in real time against real client processes (CMD, one
    /// copy per client, any language), its faults on the wall clock, judged
    /// from outside; writes what `run` writes, plus each client's log under
    /// clients/. With --seeds, every seed into DIR/seed-<N>/ and a sweep's
    /// runs.csv, summary.csv and report.
    Lab {
        /// The scenario file (TOML).
        file: PathBuf,
        /// Seed (default: the scenario's `seed`): it draws the faults.
        #[arg(long, conflicts_with = "seeds")]
        seed: Option<u64>,
        /// Run every seed A..=B (or N for 1..=N).
        #[arg(long, value_parser = redlock_harness::sweep::parse_seeds)]
        seeds: Option<RangeInclusive<u64>>,
        /// Runs at once with --seeds (default 1).
        #[arg(long, default_value_t = 1)]
        jobs: usize,
        /// With --seeds: stop once the verdict is settled (the first 10
        /// conclusive runs all violated, or 100 conclusive runs none did),
        /// as a matrix's cells do; the seeds are the budget.
        #[arg(long, requires = "seeds")]
        stop_early: bool,
        /// Output directory (default: reports/<name>/lab-seed-<N>/, with
        /// --seeds reports/<name>/lab/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Override a key, as `run --set` does (repeatable).
        #[arg(long = "set", value_parser = runner::parse_set)]
        set: Vec<(String, toml::Value)>,
        /// What serves the nodes: the project's node code (`node`), or real
        /// `redis-server` and `redis-sentinel` processes (`redis`).
        #[arg(long, default_value = "node", value_parser = servers)]
        servers: Servers,
        /// The client command, after `--` (`redlock-sim lab-client` runs the
        /// built-in client).
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
    /// The built-in client as a lab client: reads the lab's environment
    /// (REDLOCK_*), takes the lock, writes, releases, until the duration.
    LabClient,
    /// The library matrix: every library of FILE (a lab client command of
    /// its kind, single or redlock) on every fault's scenario for its kind,
    /// each a lab sweep into DIR/<library>-<version>/<fault>/, its seeds in
    /// order until its verdict is settled (the first 10 conclusive runs all
    /// violated, or 100 conclusive runs none did) or its seeds, the budget,
    /// run out; then matrix.csv, matrix.svg, report.md and index.html. A
    /// cell already swept is read back (--fresh runs it again).
    Matrix {
        /// The matrix file (TOML), e.g. scenarios/libraries/matrix.toml.
        file: PathBuf,
        /// Output directory (default: reports/<name>/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Lab runs at once (default 1; on 2 cores at most 4, see docs/lab.md).
        #[arg(long, default_value_t = 1)]
        jobs: usize,
        /// Run every cell again, even one already swept.
        #[arg(long)]
        fresh: bool,
        /// What serves the nodes, as `lab --servers` (node or redis).
        #[arg(long, default_value = "node", value_parser = servers)]
        servers: Servers,
        /// Run these seeds (A..=B, or N for 1..=N) instead of the file's:
        /// each cell's budget.
        #[arg(long, value_parser = redlock_harness::sweep::parse_seeds)]
        seeds: Option<RangeInclusive<u64>>,
        /// Compare every cell with the same cell of an earlier matrix.csv:
        /// exit 1, naming them, where a cell with no violating run there now
        /// has one, or where the two intervals no longer overlap.
        #[arg(long)]
        baseline: Option<PathBuf>,
        /// Run only the K-th of N disjoint parts of the matrix (whole cells,
        /// every N-th); join the shards' directories with `merge`.
        #[arg(long, value_parser = redlock_harness::sweep::parse_shard)]
        shard: Option<(usize, usize)>,
    },
    /// Validate scenario files: prints `FILE: ok` or the error for each.
    Check {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Take a lock on real Redis servers and run a command while holding it
    /// (a distributed flock): extends the lock every ttl/3, sends the command
    /// (its whole process group) SIGTERM if the lock is lost, releases it at
    /// the end, exits with the
    /// command's exit code (75 if the lock could not be acquired in time).
    Lock {
        /// Redis servers, comma-separated host:port (one: single-instance lock).
        #[arg(long, value_delimiter = ',', required = true)]
        nodes: Vec<String>,
        /// The lock's key.
        #[arg(long)]
        resource: String,
        /// Lock TTL (extended every ttl/3 while the command runs).
        #[arg(long, default_value = "10s", value_parser = dur)]
        ttl: Duration,
        /// How long to keep trying to acquire before giving up (exit 75).
        #[arg(long, default_value = "30s", value_parser = dur)]
        wait: Duration,
        /// Upper bound of the random wait between attempts.
        #[arg(long, default_value = "200ms", value_parser = dur)]
        retry_delay: Duration,
        /// Per-node request timeout.
        #[arg(long, default_value = "50ms", value_parser = dur)]
        request_timeout: Duration,
        /// The command to run, after `--`.
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
    /// Serve the Redis-like node on a real TCP port (redis-cli can talk to it).
    Node {
        #[arg(long, default_value_t = 6379)]
        port: u16,
        #[arg(long, default_value = "127.0.0.1")]
        bind: String,
    },
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// `redlock-sim`: parses the command line, runs the command, returns its
/// exit code; a panic (a bug) is reported and exits 70.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // A panic is a bug of the program, never the input's fault: say so, and
    // exit 70 rather than Rust's 101 (a run's panic is caught further down
    // and reported the same way).
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        eprintln!("redlock-sim: internal error (a bug in redlock-sim, exit code {EXIT_SOFTWARE}):");
        default_hook(info);
    }));
    match std::panic::catch_unwind(move || command(cli)) {
        Ok(code) => code,
        Err(panic) => {
            eprintln!(
                "redlock-sim: internal error: {}",
                runner::panic_message(panic.as_ref())
            );
            ExitCode::from(EXIT_SOFTWARE)
        }
    }
}

/// Commands that only print and write files die quietly, as `cat` does,
/// when the reader of their output goes away (`redlock-sim run ... | head
/// -1`), instead of panicking on the broken pipe. Rust ignores SIGPIPE; this
/// restores the default for them. `node`, `lock` and `lab` keep it ignored
/// while they talk to sockets whose peers may close; `lab` restores it once
/// its world is stopped, before it prints ([`die_quietly_on_broken_pipe`]).
fn quiet_on_broken_pipe(command: &Command) {
    if !matches!(
        command,
        Command::Node { .. }
            | Command::Lock { .. }
            | Command::Lab { .. }
            | Command::LabClient
            | Command::Matrix { .. }
    ) {
        die_quietly_on_broken_pipe();
    }
}

/// From now on a write to a closed pipe ends the process, as it ends `cat`.
fn die_quietly_on_broken_pipe() {
    // SAFETY: setting a signal's disposition to its default touches no
    // memory of ours; it is process-wide and valid on any thread.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// `--servers`: `node` or `redis`.
fn servers(s: &str) -> Result<Servers, String> {
    Servers::parse(s).ok_or_else(|| format!("`{s}`: the servers are `node` or `redis`"))
}

/// `--jobs`, or all cores.
fn jobs_or_cores(jobs: Option<usize>) -> usize {
    jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Runs one command and maps its outcome to an exit code.
fn command(cli: Cli) -> ExitCode {
    quiet_on_broken_pipe(&cli.command);
    match cli.command {
        Command::Lab {
            file,
            seed,
            seeds,
            jobs,
            stop_early,
            out,
            set,
            servers,
            command,
        } => {
            let args = lab::Args {
                file,
                seed,
                jobs,
                stop_early,
                out,
                sets: set,
                cmd: command,
                servers,
            };
            ExitCode::from(match seeds {
                Some(seeds) => lab_seeds::main(&args, seeds),
                None => lab::main(args),
            })
        }
        Command::LabClient => ExitCode::from(lab::client_main()),
        Command::Matrix {
            file,
            out,
            jobs,
            fresh,
            servers,
            seeds,
            baseline,
            shard,
        } => ExitCode::from(matrix::main(matrix::Args {
            file,
            out,
            jobs,
            fresh,
            servers,
            seeds,
            baseline,
            shard,
        })),
        Command::Run {
            file,
            seed,
            out,
            set,
            every_tick,
        } => ExitCode::from(run::finish_run(
            run::run_file(&file, seed, out, &set, stepping(every_tick)),
            "redlock-sim run",
        )),
        Command::Sweep {
            files,
            seeds,
            jobs,
            shard,
            out,
            strict,
            fresh,
            expect,
            every_tick,
        } => {
            let opts = sweep::Options {
                jobs: jobs_or_cores(jobs),
                shard,
                out: out.clone().unwrap_or_default(),
                progress: true,
                fresh,
                stepping: stepping(every_tick),
            };
            if files.len() == 1 && expect.is_none() {
                sweep::sweep_one(&files[0], seeds, out, opts, strict)
            } else {
                set::sweep_set(&files, seeds, out, opts, strict, expect.as_deref())
            }
        }
        Command::Shrink {
            file,
            seed,
            set,
            out,
            jobs,
        } => shrink::command(file, seed, set, out, jobs_or_cores(jobs)),
        Command::Frontier {
            file,
            key,
            from,
            to,
            seeds,
            jobs,
            out,
            resolution,
        } => {
            let req = search::frontier::Request {
                file,
                key,
                from,
                to,
                seeds,
                jobs: jobs_or_cores(jobs).clamp(1, redlock_harness::sweep::MAX_JOBS),
                resolution,
            };
            frontier::command(req, out)
        }
        Command::Merge { dirs, out, .. }
            if dirs
                .iter()
                .any(|d| d.join(redlock_harness::sweep::matrix::SHARD_MARK).exists()) =>
        {
            ExitCode::from(matrix::merge(&dirs, &out))
        }
        Command::Merge { dirs, out, jobs } => {
            match sweep::merge(&dirs, &out, jobs_or_cores(jobs)) {
                Ok(done) => sweep::finished_sweep(&done, &out, None),
                Err(sweep::MergeError::BadInput(e)) => {
                    eprintln!("redlock-sim merge: {e}");
                    ExitCode::from(2)
                }
                Err(sweep::MergeError::Failed(e)) => {
                    eprintln!("redlock-sim merge: {e}");
                    ExitCode::from(EXIT_SOFTWARE)
                }
            }
        }
        Command::Check { files } => check_command(&files),
        Command::Lock {
            nodes,
            resource,
            ttl,
            wait,
            retry_delay,
            request_timeout,
            command,
        } => {
            let config = redlock_client::Config {
                retry_count: 1,
                retry_delay,
                request_timeout,
                ..Default::default()
            };
            let opts = flock::Options {
                nodes,
                resource,
                ttl,
                wait,
                config,
                command,
            };
            lock_command(opts)
        }
        Command::Node { port, bind } => node_command(port, &bind),
    }
}

/// Exit code of `run` for bad input (an invalid scenario or flag).
pub(crate) const EXIT_BAD_INPUT: u8 = 2;

/// Exit code when the program itself failed (a bug, or an output it could
/// not write).
pub(crate) const EXIT_SOFTWARE: u8 = 70;

/// `redlock-sim check FILE...`: validates each file (every sweep cell
/// too); exit 2 when one is invalid.
fn check_command(files: &[PathBuf]) -> ExitCode {
    let mut all_ok = true;
    for f in files {
        match runner::check_file(f) {
            Ok(()) => println!("{}: ok", f.display()),
            Err(e) => {
                eprintln!("{e}");
                all_ok = false;
            }
        }
    }
    if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_BAD_INPUT)
    }
}

/// `redlock-sim lock`: runs the command under the lock ([`flock::run`]);
/// its exit code is the command's, or flock's own.
fn lock_command(opts: flock::Options) -> ExitCode {
    if opts.ttl < Duration::from_millis(3) {
        eprintln!(
            "redlock-sim: --ttl: {} is too short: the 2ms drift allowance leaves no validity",
            duration::format(opts.ttl)
        );
        return ExitCode::from(EXIT_BAD_INPUT);
    }
    let code = runtime().block_on(flock::run(opts));
    ExitCode::from(code.clamp(0, 255) as u8)
}

/// `redlock-sim node`: serves one node on `bind:port` until killed.
fn node_command(port: u16, bind: &str) -> ExitCode {
    let result = runtime().block_on(async {
        let listener = tokio::net::TcpListener::bind((bind, port)).await?;
        eprintln!("redlock-sim node listening on {}", listener.local_addr()?);
        redlock_node::serve(
            redlock_node::Node::new(Arc::new(clock::SystemClock::new())),
            listener,
        )
        .await
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("redlock-sim node: {bind}:{port}: {e}");
            ExitCode::from(1)
        }
    }
}

/// How `--every-tick` moves a simulation's time.
fn stepping(every_tick: bool) -> redlock_harness::sim::Stepping {
    if every_tick {
        redlock_harness::sim::Stepping::EveryTick
    } else {
        redlock_harness::sim::Stepping::Skip
    }
}
