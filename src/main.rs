//! The `redlock-sim` command line: parse, call the library, print.

use clap::{Parser, Subcommand};
use redlock_sim::{client, clock, duration, flock, node, runner, search, sweep};

use runner::EXIT_SOFTWARE;
use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "redlock-sim",
    version,
    about = "Deterministic simulation and fault injection for Redis locks"
)]
struct Cli {
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
        #[arg(long, value_parser = sweep::parse_seeds)]
        seeds: Option<RangeInclusive<u64>>,
        /// Worker threads (default: all cores).
        #[arg(long)]
        jobs: Option<usize>,
        /// Run only the K-th of N equal slices of the runs (for many machines;
        /// join the shards with `merge`).
        #[arg(long, value_parser = sweep::parse_shard)]
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
    },
    /// Shrink one violating run into a minimal scenario: its faults become
    /// explicit [[faults]], then are dropped, shortened and moved later while
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
    /// would have written.
    Merge {
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        #[arg(long, required = true)]
        out: PathBuf,
        /// Threads writing the run reports under DIR/runs/ (default: all cores).
        #[arg(long)]
        jobs: Option<usize>,
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

fn main() -> ExitCode {
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
/// restores the default for them. `node` and `lock` keep it ignored: they
/// talk to sockets whose peers may close.
fn quiet_on_broken_pipe(command: &Command) {
    if !matches!(command, Command::Node { .. } | Command::Lock { .. }) {
        // SAFETY: setting a signal's disposition to its default, before any
        // thread of ours is started.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
}

/// `--jobs`, or all cores.
fn jobs_or_cores(jobs: Option<usize>) -> usize {
    jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Runs one command and maps its outcome to an exit code.
fn command(cli: Cli) -> ExitCode {
    quiet_on_broken_pipe(&cli.command);
    match cli.command {
        Command::Run {
            file,
            seed,
            out,
            set,
        } => ExitCode::from(runner::finish_run(
            runner::run_file(&file, seed, out, &set),
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
        } => {
            let opts = sweep::Options {
                jobs: jobs_or_cores(jobs),
                shard,
                out: out.clone().unwrap_or_default(),
                progress: true,
                fresh,
            };
            if files.len() == 1 && expect.is_none() {
                sweep_one(&files[0], seeds, out, opts, strict)
            } else {
                sweep_set(&files, seeds, out, opts, strict, expect.as_deref())
            }
        }
        Command::Shrink {
            file,
            seed,
            set,
            out,
            jobs,
        } => {
            let jobs = jobs_or_cores(jobs);
            match search::shrink::shrink_file(&file, seed, &set, out, jobs) {
                Ok(Some(done)) => {
                    println!("faults: {} -> {}", done.before, done.after);
                    println!("minimal: {}", done.path.display());
                    println!("replays: {}", done.replays);
                    if let Some(dir) = done.path.parent() {
                        println!("report: {}", dir.join("index.html").display());
                    }
                    ExitCode::SUCCESS
                }
                Ok(None) => {
                    let seed = seed
                        .or_else(|| runner::load_file(&file, &set).ok().map(|s| s.seed))
                        .map_or_else(String::new, |s| format!(" with seed {s}"));
                    println!(
                        "{}: the run{seed} has no violation: nothing to shrink, nothing written",
                        file.display()
                    );
                    ExitCode::from(1)
                }
                Err(runner::Failure::BadInput(e)) => {
                    eprintln!("{e}");
                    ExitCode::from(2)
                }
                Err(e) => {
                    eprintln!("redlock-sim shrink: {e}");
                    ExitCode::from(EXIT_SOFTWARE)
                }
            }
        }
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
            let jobs = jobs_or_cores(jobs).clamp(1, sweep::MAX_JOBS);
            let req = search::frontier::Request {
                file,
                key,
                from,
                to,
                seeds,
                jobs,
                resolution,
            };
            let mut progress = |t: &search::frontier::Trial| {
                eprintln!(
                    "frontier: {} = {}: {} of {} runs violated",
                    req.key,
                    t.value.show(),
                    t.violating,
                    t.runs
                );
            };
            let result = search::frontier::frontier_file(&req, out, &mut progress);
            ExitCode::from(search::frontier::finish(result))
        }
        Command::Merge { dirs, out, jobs } => {
            match sweep::merge(&dirs, &out, jobs_or_cores(jobs)) {
                Ok(done) => finished_sweep(&done, &out, None),
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
        Command::Check { files } => {
            let mut all_ok = true;
            for f in &files {
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
                ExitCode::from(2)
            }
        }
        Command::Lock {
            nodes,
            resource,
            ttl,
            wait,
            retry_delay,
            request_timeout,
            command,
        } => {
            if ttl < Duration::from_millis(3) {
                eprintln!("redlock-sim: --ttl: {} is too short: the 2ms drift allowance leaves no validity", duration::format(ttl));
                return ExitCode::from(2);
            }
            let config = client::Config {
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
            let code = runtime().block_on(flock::run(opts));
            ExitCode::from(code.clamp(0, 255) as u8)
        }
        Command::Node { port, bind } => {
            let rt = runtime();
            let result = rt.block_on(async {
                let listener = tokio::net::TcpListener::bind((bind.as_str(), port)).await?;
                eprintln!("redlock-sim node listening on {}", listener.local_addr()?);
                node::serve(
                    node::Node::new(Arc::new(clock::SystemClock::new())),
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
    }
}

/// `sweep FILE`: one scenario's sweep into `out` (default
/// `reports/<name>/`).
fn sweep_one(
    file: &std::path::Path,
    seeds: Option<RangeInclusive<u64>>,
    out: Option<PathBuf>,
    mut opts: sweep::Options,
    strict: bool,
) -> ExitCode {
    let plan = match sweep::Plan::load(file, seeds) {
        Ok(p) => Arc::new(p),
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    opts.out = out.unwrap_or_else(|| PathBuf::from("reports").join(&plan.base.name));
    if holds_a_set(&opts.out) {
        eprintln!(
            "redlock-sim sweep: {} holds a sweep of several files; choose another --out for one file",
            opts.out.display()
        );
        return ExitCode::from(2);
    }
    match run_sweep(&plan, &opts) {
        Ok(done) => finished_sweep(&done, &opts.out, strict.then_some(&plan.base)),
        Err(code) => code,
    }
}

/// Does `dir` hold the outputs of a sweep of several files (its
/// `summary.csv` starts with the set's columns)?
fn holds_a_set(dir: &std::path::Path) -> bool {
    std::fs::read_to_string(dir.join("summary.csv"))
        .is_ok_and(|t| t.starts_with(&(redlock_sim::report::set::SET_COLUMNS.join(",") + ",")))
}

/// Runs one plan's sweep; an error is printed and mapped to its exit code.
fn run_sweep(plan: &Arc<sweep::Plan>, opts: &sweep::Options) -> Result<sweep::Finished, ExitCode> {
    sweep::sweep(plan, opts).map_err(|e| {
        eprintln!("redlock-sim sweep: {e}");
        // --out holds another sweep's files (nothing touched), or rows of
        // runs.csv that do not replay to their trace (made by another
        // version of the program, or edited): bad input.
        match e.kind() {
            std::io::ErrorKind::InvalidInput | std::io::ErrorKind::InvalidData => ExitCode::from(2),
            _ => ExitCode::from(EXIT_SOFTWARE),
        }
    })
}

/// `sweep FILE... --out DIR` (or one file with `--expect`): every file
/// (whose `expect` is `expect`, when given) is validated first, then swept
/// into `DIR/<name>/` as `sweep FILE --out DIR/<name>` would; `DIR` gets the
/// summary and report of them all. `--strict`: exit 1 when a scenario
/// expected safe had a violation.
fn sweep_set(
    files: &[PathBuf],
    seeds: Option<RangeInclusive<u64>>,
    out: Option<PathBuf>,
    mut opts: sweep::Options,
    strict: bool,
    expect: Option<&str>,
) -> ExitCode {
    let Some(dir) = out else {
        eprintln!("redlock-sim sweep: a sweep of several files needs --out DIR (each file is swept into DIR/<name>/)");
        return ExitCode::from(2);
    };
    if opts.shard.is_some() {
        eprintln!("redlock-sim sweep: --shard sweeps one file; give the files one at a time");
        return ExitCode::from(2);
    }
    if dir.join("runs.csv").exists() {
        eprintln!(
            "redlock-sim sweep: {} holds the sweep of one scenario; choose another --out for several files",
            dir.display()
        );
        return ExitCode::from(2);
    }
    let (plans, skipped) = match set_plans(files, seeds.clone(), expect) {
        Ok(p) => p,
        Err(code) => return code,
    };
    // Each scenario's directory is checked before anything runs (another
    // scenario's sweep, another text, other seeds: exit 2), as far as that
    // reads nothing but writes nothing; under --fresh each is checked when
    // its turn comes.
    if !opts.fresh {
        for plan in &plans {
            let sub = dir.join(&plan.base.name);
            let meta = sweep::meta::Meta::of(plan, None);
            if let Err(e) = sweep::meta::prepare(&sub, plan, &meta, false) {
                if e.kind() != std::io::ErrorKind::NotFound {
                    eprintln!("redlock-sim sweep: {e}");
                    return ExitCode::from(2);
                }
            }
        }
    }
    let mut done = Vec::new();
    for plan in &plans {
        println!("== {} ({})", plan.base.name, plan.file);
        opts.out = dir.join(&plan.base.name);
        match run_sweep(plan, &opts) {
            Ok(d) => {
                let violating: u64 = d.summary.iter().map(|r| r.violating_runs).sum();
                println!("runs: {} ({} run now)", d.rows.len(), d.ran);
                println!("violating_runs: {violating}");
                println!("report: {}", opts.out.join("index.html").display());
                done.push(d)
            }
            Err(code) => return code,
        }
    }
    let command = set_command(files, expect, &dir, seeds, strict);
    finished_set(&plans, &done, &skipped, &dir, command, strict)
}

/// The files `--expect` left out, with what each expects.
type Skipped = Vec<(String, redlock_sim::scenario::Expect)>;

/// The plans of a set, every file validated before anything runs; files
/// whose `expect` is not `expect` are left out (and returned).
fn set_plans(
    files: &[PathBuf],
    seeds: Option<RangeInclusive<u64>>,
    expect: Option<&str>,
) -> Result<(Vec<Arc<sweep::Plan>>, Skipped), ExitCode> {
    let mut plans: Vec<Arc<sweep::Plan>> = Vec::new();
    let mut skipped = Vec::new();
    for f in files {
        let plan = sweep::Plan::load(f, seeds.clone()).map_err(|e| {
            eprintln!("{e}");
            ExitCode::from(2)
        })?;
        if expect.is_some_and(|e| e != plan.base.expect.as_str()) {
            skipped.push((plan.file.clone(), plan.base.expect));
            continue;
        }
        if ["summary.csv", "report.md", "index.html"].contains(&plan.base.name.as_str()) {
            eprintln!(
                "redlock-sim sweep: {}: the scenario's name {:?} is a file the set writes in DIR; rename the scenario",
                plan.file, plan.base.name
            );
            return Err(ExitCode::from(2));
        }
        if let Some(other) = plans.iter().find(|p| p.base.name == plan.base.name) {
            eprintln!(
                "redlock-sim sweep: {} and {} are both named {:?}; each file is swept into DIR/<name>/",
                other.file, plan.file, plan.base.name
            );
            return Err(ExitCode::from(2));
        }
        plans.push(Arc::new(plan));
    }
    if plans.is_empty() {
        eprintln!("redlock-sim sweep: no file left to sweep (--expect left out every one)");
        return Err(ExitCode::from(2));
    }
    Ok((plans, skipped))
}

/// Writes the set's summary and report, prints its answer and a line per
/// scenario; exit 1 under `strict` when a scenario expected safe violated.
fn finished_set(
    plans: &[Arc<sweep::Plan>],
    done: &[sweep::Finished],
    skipped: &Skipped,
    dir: &std::path::Path,
    command: String,
    strict: bool,
) -> ExitCode {
    use redlock_sim::report::set::{answer, write_set, SetEntry, SetOutput};
    let entries: Vec<SetEntry> = plans
        .iter()
        .zip(done)
        .map(|(p, d)| SetEntry {
            scenario: &p.base,
            file: &p.file,
            dir: &p.base.name,
            keys: &p.keys,
            rows: &d.summary,
            seeds: p.seeds.clone(),
        })
        .collect();
    let output = SetOutput {
        entries: &entries,
        skipped,
        command,
    };
    if let Err(e) = write_set(dir, &output) {
        eprintln!(
            "redlock-sim sweep: cannot write the report in {}: {e}",
            dir.display()
        );
        return ExitCode::from(EXIT_SOFTWARE);
    }
    println!("== all");
    println!("{}", answer(&output));
    println!("report: {}", dir.join("index.html").display());
    let unexpected = plans
        .iter()
        .zip(done)
        .any(|(p, d)| !d.unexpected_violations(&p.base).is_empty());
    if strict && unexpected {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// The command line that regenerates a set: the flags, then the files as
/// given (those `--expect` left out too), each quoted for a shell.
fn set_command(
    files: &[PathBuf],
    expect: Option<&str>,
    dir: &std::path::Path,
    seeds: Option<RangeInclusive<u64>>,
    strict: bool,
) -> String {
    use redlock_sim::report::shell_word;
    let mut words = vec!["redlock-sim sweep".to_string()];
    if strict {
        words.push("--strict".into());
    }
    if let Some(e) = expect {
        words.push(format!("--expect {e}"));
    }
    if let Some(s) = seeds {
        words.push(format!("--seeds {}..={}", s.start(), s.end()));
    }
    words.push(format!("--out {}", shell_word(&dir.display().to_string())));
    words.extend(files.iter().map(|f| shell_word(&f.display().to_string())));
    words.join(" ")
}

/// Prints what a sweep or merge produced; with `strict`, exit 1 when a
/// combination of a scenario expected safe had a violation.
fn finished_sweep(
    done: &sweep::Finished,
    out: &std::path::Path,
    strict: Option<&redlock_sim::scenario::Scenario>,
) -> ExitCode {
    let violating: u64 = done.summary.iter().map(|r| r.violating_runs).sum();
    println!("runs: {} ({} run now)", done.rows.len(), done.ran);
    if let Some(c) = &done.coverage {
        println!("{}", redlock_sim::report::sweep::stdout_line(c));
    }
    println!("violating_runs: {violating}");
    for c in &done.conclusions {
        println!("- {c}");
    }
    println!("report: {}", out.join("index.html").display());
    match strict {
        Some(base) if !done.unexpected_violations(base).is_empty() => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    }
}
