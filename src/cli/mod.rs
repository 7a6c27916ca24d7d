//! The command layer: parse the command line, call the compute modules
//! (`runner`, `sweep`, `search`), write what they return through `report`,
//! print, and pick the exit code. The only layer that writes files or
//! prints (besides `node` and `lock`, which serve and talk on sockets).

use clap::{Parser, Subcommand};
use redlock_client::flock;
use redlock_harness::runner;
use redlock_harness::runner::lab::Servers;
use redlock_proto::{clock, duration};

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

pub(crate) mod compare;
pub(crate) mod exit;
pub(crate) mod frontier;
pub(crate) mod lab;
pub(crate) mod lab_seeds;
pub(crate) mod matrix;
pub(crate) mod matrix_cells;
pub(crate) mod merge;
pub(crate) mod progress;
pub(crate) mod run;
pub(crate) mod set;
pub(crate) mod shrink;
pub(crate) mod sweep;
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
    Run(run::Args),
    /// Run every seed for every combination of the scenario's [sweep] on all
    /// cores; write runs.csv, summary.csv, report.md, index.html and charts.
    /// A killed sweep keeps its finished runs; rerunning skips them. With
    /// several files (--out required), each is swept into DIR/<name>/ and
    /// DIR gets a summary.csv and report of them all.
    Sweep(set::SweepArgs),
    /// Shrink one violating run into a minimal scenario: its faults become
    /// explicit `[[faults]]`, then are dropped, shortened and moved later while
    /// the run still violates. Writes DIR/minimal.toml and that run's report.
    /// Exits 0 when it wrote one, 1 when the run does not violate.
    Shrink(shrink::Args),
    /// Find where violations stop along one numeric key: bisect between
    /// --from (violating) and --to (safe), or the other way round when
    /// violations grow with the key, the same seeds 1..=N at every value;
    /// write report.md, index.html, frontier.csv, frontier.svg and the
    /// boundary's minimal scenario. Exits 0 when the boundary was found, 1
    /// when every value tried violated or none did.
    Frontier(frontier::Args),
    /// Join the runs.csv of sweep shards and write the outputs one sweep
    /// would have written; of a matrix's shards (`matrix --shard`), join
    /// their cells and write the outputs the whole matrix would have.
    Merge(merge::Args),
    /// Run a scenario in real time against real client processes (CMD, one
    /// copy per client, any language), its faults on the wall clock, judged
    /// from outside; writes what `run` writes, plus each client's log under
    /// clients/. With --seeds, every seed into DIR/seed-<N>/ and a sweep's
    /// runs.csv, summary.csv and report.
    Lab(lab::Args),
    /// The built-in client as a lab client: reads the lab's environment
    /// (REDLOCK_*), takes the lock, writes, releases, until the duration.
    LabClient,
    /// The library matrix: every library of FILE (a lab client command of
    /// its kind, single or redlock) on every fault's scenario for its kind,
    /// each a lab sweep into DIR/<library>-<version>/<fault>/, its seeds in
    /// order until its verdict is settled (the first 10 conclusive runs all
    /// violated, or the file's violating_after; or 103 conclusive runs none
    /// did) or its seeds, the budget,
    /// run out; then matrix.csv, matrix.svg, report.md and index.html. A
    /// cell already swept is read back (--fresh runs it again).
    Matrix(matrix::Args),
    /// Two library matrices of one file side by side (the node's and real
    /// Redis's, say): for each cell both ran, on the seeds both ran, each
    /// side's violating runs with the 95% Wilson interval, how its runs
    /// broke, and whether the intervals overlap; writes agreement.csv and
    /// README.md (ended by DIR/notes.md when there is one).
    Compare(compare::Args),
    /// Validate scenario files: prints `FILE: ok` or the error for each.
    Check(CheckArgs),
    /// Take a lock on real Redis servers and run a command while holding it
    /// (a distributed flock): extends the lock every ttl/3, sends the command
    /// (its whole process group) SIGTERM if the lock is lost, releases it at
    /// the end, exits with the
    /// command's exit code (75 if the lock could not be acquired in time).
    Lock(LockArgs),
    /// Serve the Redis-like node on a real TCP port (redis-cli can talk to it).
    Node(NodeArgs),
}

/// `check FILE...`.
#[derive(clap::Args)]
struct CheckArgs {
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

/// `lock --nodes H:P,... --resource R -- CMD...`.
#[derive(clap::Args)]
struct LockArgs {
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
}

/// `node [--port 6379] [--bind 127.0.0.1]`.
#[derive(clap::Args)]
struct NodeArgs {
    #[arg(long, default_value_t = 6379)]
    port: u16,
    #[arg(long, default_value = "127.0.0.1")]
    bind: String,
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
        eprintln!(
            "redlock-sim: internal error (a bug in redlock-sim, exit code {}):",
            exit::SOFTWARE
        );
        default_hook(info);
    }));
    match std::panic::catch_unwind(move || command(cli)) {
        Ok(code) => code,
        Err(panic) => {
            eprintln!(
                "redlock-sim: internal error: {}",
                runner::panic_message(panic.as_ref())
            );
            ExitCode::from(exit::SOFTWARE)
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
        Command::Node(_)
            | Command::Lock(_)
            | Command::Lab(_)
            | Command::LabClient
            | Command::Matrix(_)
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
        Command::Lab(args) => ExitCode::from(match args.seeds.clone() {
            Some(seeds) => lab_seeds::main(&args, seeds),
            None => lab::main(args),
        }),
        Command::LabClient => ExitCode::from(lab::client_main()),
        Command::Matrix(args) => ExitCode::from(matrix::main(args)),
        Command::Run(args) => run::command(args),
        Command::Sweep(args) => set::command(args),
        Command::Shrink(args) => shrink::command(args),
        Command::Frontier(args) => frontier::command(args),
        Command::Merge(args) => merge::command(args),
        Command::Compare(args) => compare::command(args),
        Command::Check(args) => check_command(&args.files),
        Command::Lock(args) => lock_command(args),
        Command::Node(args) => node_command(args.port, &args.bind),
    }
}

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
        ExitCode::from(exit::BAD_INPUT)
    }
}

/// `redlock-sim lock`: runs the command under the lock ([`flock::run`]);
/// its exit code is the command's, or flock's own.
fn lock_command(args: LockArgs) -> ExitCode {
    if args.ttl < Duration::from_millis(3) {
        eprintln!(
            "redlock-sim: --ttl: {} is too short: the 2ms drift allowance leaves no validity",
            duration::format(args.ttl)
        );
        return ExitCode::from(exit::BAD_INPUT);
    }
    let config = redlock_client::Config {
        retry_count: 1,
        retry_delay: args.retry_delay,
        request_timeout: args.request_timeout,
        ..Default::default()
    };
    let opts = flock::Options {
        nodes: args.nodes,
        resource: args.resource,
        ttl: args.ttl,
        wait: args.wait,
        config,
        command: args.command,
    };
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
