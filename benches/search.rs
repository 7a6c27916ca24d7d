//! Speed of search (issue 12's performance figure), release build, one run:
//!
//! 1. seeds to first catch: on the variants campaign
//!    (`scenarios/variants/campaign.toml`), for each unsafe variant, the
//!    first seed at which it violates while the spec client at the same seed
//!    does not, with the nemesis blind (`aim = "random"`) and aimed
//!    (`aim = "lock"`), side by side, and the ratio;
//! 2. the wall time of `frontier` along `cluster.restart` on
//!    `scenarios/delayed_restart_guidance.toml` (0.5 to 1.5 TTL, 200 seeds).
//!
//! `SEARCH_BENCH_SEEDS` caps the seeds tried per variant (default 100);
//! `SEARCH_BENCH_JOBS` the threads (default all cores); `SEARCH_BENCH_PART`
//! = `catch` or `frontier` runs one part only.

use redlock_harness::check::Verdict;
use redlock_harness::runner;
use redlock_harness::scenario::{Scenario, Variant};
use redlock_harness::search::frontier;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

/// The variants that break safety (the two liveness flaws are left out).
const UNSAFE: [Variant; 8] = [
    Variant::NoValidityCheck,
    Variant::ExtendResurrects,
    Variant::WallClockElapsed,
    Variant::NoDriftAllowance,
    Variant::UnsignedValidity,
    Variant::PlainDelRelease,
    Variant::LegacySetnx,
    Variant::MajorityOfResponders,
];

const CAMPAIGN: &str = "scenarios/variants/campaign.toml";

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn load(aim: &str, variant: Variant) -> Scenario {
    let sets = vec![
        ("nemesis.aim".to_string(), toml::Value::String(aim.into())),
        (
            "clients.variant".to_string(),
            toml::Value::String(variant.as_str().into()),
        ),
    ];
    runner::load_file(Path::new(CAMPAIGN), &sets).expect("the campaign loads")
}

/// Whether `variant` violates at `seed` (cached: the spec client's runs are
/// shared by every variant).
fn violates(
    cache: &Mutex<BTreeMap<(String, Variant, u64), bool>>,
    aim: &str,
    variant: Variant,
    seed: u64,
) -> bool {
    let key = (aim.to_string(), variant, seed);
    if let Some(v) = cache.lock().unwrap().get(&key) {
        return *v;
    }
    let run = runner::simulate(load(aim, variant), seed).expect("a run");
    let v = run.check.verdict == Verdict::Violation;
    cache.lock().unwrap().insert(key, v);
    v
}

/// The first seed in `1..=max` where `variant` violates and spec does not,
/// seeds tried `jobs` at a time in order (the answer does not depend on
/// `jobs`), and the runs it took.
fn first_catch(
    cache: &Mutex<BTreeMap<(String, Variant, u64), bool>>,
    aim: &str,
    variant: Variant,
    max: u64,
    jobs: u64,
) -> Option<u64> {
    let mut from = 1;
    while from <= max {
        let to = (from + jobs - 1).min(max);
        let caught: Vec<u64> = std::thread::scope(|s| {
            let handles: Vec<_> = (from..=to)
                .map(|seed| {
                    s.spawn(move || {
                        (violates(cache, aim, variant, seed)
                            && !violates(cache, aim, Variant::Spec, seed))
                        .then_some(seed)
                    })
                })
                .collect();
            handles
                .into_iter()
                .filter_map(|h| h.join().unwrap())
                .collect()
        });
        if let Some(first) = caught.into_iter().min() {
            return Some(first);
        }
        from = to + 1;
    }
    None
}

fn catch_table(max: u64, jobs: u64) {
    let cache = Mutex::new(BTreeMap::new());
    println!("seeds to first catch on {CAMPAIGN} (a violation where spec at the same seed is safe), seeds 1..={max}:");
    println!("| variant | blind (aim = \"random\") | aimed (aim = \"lock\") | blind / aimed |");
    println!("|---|---|---|---|");
    let start = Instant::now();
    for v in UNSAFE {
        let blind = first_catch(&cache, "random", v, max, jobs);
        let aimed = first_catch(&cache, "lock", v, max, jobs);
        let show = |s: Option<u64>| s.map_or(format!("not in {max}"), |s| s.to_string());
        let ratio = match (blind, aimed) {
            (Some(b), Some(a)) => format!("{:.1}x", b as f64 / a as f64),
            (None, Some(a)) => format!("> {:.1}x", max as f64 / a as f64),
            _ => "-".to_string(),
        };
        println!(
            "| {} | {} | {} | {ratio} |",
            v.as_str(),
            show(blind),
            show(aimed)
        );
    }
    println!(
        "({} runs in {:.0} s)",
        cache.lock().unwrap().len(),
        start.elapsed().as_secs_f64()
    );
}

/// The wall time of `redlock-sim frontier` as a user runs it (the search,
/// the shrink of the boundary's violation, the report), its values and runs
/// read from the `frontier.csv` it wrote, its answer from what it printed.
fn frontier_time(jobs: u64) {
    let out: PathBuf =
        std::env::temp_dir().join(format!("redlock-sim-bench-frontier-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let start = Instant::now();
    let done = std::process::Command::new(env!("CARGO_BIN_EXE_redlock-sim"))
        .args(["frontier", "scenarios/delayed_restart_guidance.toml"])
        .args([
            "--key",
            "cluster.restart",
            "--from",
            "0.5ttl",
            "--to",
            "1.5ttl",
        ])
        .args(["--seeds", &frontier::DEFAULT_SEEDS.to_string()])
        .args(["--jobs", &jobs.to_string()])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let secs = start.elapsed().as_secs_f64();
    let csv = std::fs::read_to_string(out.join("frontier.csv")).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&out);
    if csv.is_empty() {
        return println!("frontier failed: {}", String::from_utf8_lossy(&done.stderr));
    }
    // frontier.csv: value,order,runs,... a row per value tried.
    let trials: Vec<u64> = csv
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').nth(2)?.parse().ok())
        .collect();
    let runs: u64 = trials.iter().sum();
    let printed = String::from_utf8_lossy(&done.stdout);
    let found: Vec<&str> = printed
        .lines()
        .filter(|l| {
            l.starts_with("violating:") || l.starts_with("safe:") || l.starts_with("result:")
        })
        .collect();
    println!(
        "frontier cluster.restart 0.5ttl..1.5ttl, {} seeds, {jobs} jobs: {:.0} s wall ({} values, {runs} runs, shrink included): {}",
        frontier::DEFAULT_SEEDS,
        secs,
        trials.len(),
        found.join(", ")
    );
}

fn main() {
    let max = env("SEARCH_BENCH_SEEDS", 100);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    let jobs = env("SEARCH_BENCH_JOBS", cores).max(1);
    let part = std::env::var("SEARCH_BENCH_PART").unwrap_or_default();
    if part != "frontier" {
        catch_table(max, jobs);
    }
    if part != "catch" {
        frontier_time(jobs);
    }
}
