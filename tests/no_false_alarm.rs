//! No false alarm: every shipped scenario that expects `safe` is safe over
//! seeds 1..=1000 (the checker must never flag the spec client where the
//! theory says it is safe: no fault, fencing, a TTL-long restart delay,
//! `fsync always`, drift inside the allowance, partitions alone, two
//! different locks).
//!
//! `NO_FALSE_ALARM_SEEDS=N` runs another number of seeds. The runs go on all
//! cores (about ten minutes on 2).

use redlock_sim::runner;
use redlock_sim::scenario::{self, Expect};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

#[test]
fn safe_shipped_scenarios_never_violate_over_1000_seeds() {
    let seeds: u64 = std::env::var("NO_FALSE_ALARM_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let mut files: Vec<PathBuf> = std::fs::read_dir("scenarios")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let safe: Vec<_> = files
        .iter()
        .map(|f| (f.clone(), scenario::load(f).unwrap()))
        .filter(|(_, s)| s.expect == Expect::Safe && s.sweep.is_none())
        .collect();
    assert!(safe.len() >= 7, "safe scenarios missing: {safe:?}");
    let work: Vec<(usize, u64)> = (0..safe.len())
        .flat_map(|i| (1..=seeds).map(move |seed| (i, seed)))
        .collect();
    let next = Arc::new(AtomicUsize::new(0));
    let found: Arc<Mutex<Vec<(String, u64, String)>>> = Arc::default();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let safe = Arc::new(safe);
    let work = Arc::new(work);
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let (next, found, safe, work) =
                (next.clone(), found.clone(), safe.clone(), work.clone());
            std::thread::spawn(move || loop {
                let k = next.fetch_add(1, Ordering::SeqCst);
                let Some(&(i, seed)) = work.get(k) else {
                    return;
                };
                let (file, s) = &safe[i];
                let run = runner::simulate(s.clone(), seed)
                    .unwrap_or_else(|e| panic!("{} seed {seed}: {e}", file.display()));
                if !run.as_expected() {
                    let c = &run.check;
                    found.lock().unwrap().push((
                        file.display().to_string(),
                        seed,
                        format!(
                            "{} overlaps, {} stale writes, {} interleavings",
                            c.overlaps.len(),
                            c.stale_writes.len(),
                            c.interleavings.len()
                        ),
                    ));
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let mut found = found.lock().unwrap().clone();
    found.sort();
    assert!(
        found.is_empty(),
        "false alarms (replay with `redlock-sim run FILE --seed N`): {found:#?}"
    );
    println!(
        "{} safe scenarios x {seeds} seeds: no violation",
        safe.len()
    );
}
