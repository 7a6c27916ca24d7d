//! Work on many threads with a result that does not depend on them: `f(i)`
//! for every index, in any order, the results returned in index order. The
//! threads have the stack a simulation needs; if none can start, the calling
//! thread does the work. `sweep` (its rows streamed to `runs.csv`), the
//! sweep's run reports, `shrink`'s candidates and `frontier`'s batches all
//! run this way; lab sweeps on [`super::lanes`], on its threads.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::MAX_JOBS;

/// Stack of a worker thread (a run is deep).
pub(crate) const STACK: usize = 16 << 20;

/// `f(i)` for `i` in `0..count` on up to `jobs` threads, in index order.
/// Once `stops(&f(i))` holds for some `i`, no index after the smallest such
/// `i` is started (those already started finish): their slots are `None`.
/// Every index before it is always run, so what comes back up to the first
/// stop is the same whatever the threads did.
pub(crate) fn map_in_order<T: Send>(
    count: usize,
    jobs: usize,
    f: impl Fn(usize) -> T + Sync,
    stops: impl Fn(&T) -> bool + Sync,
) -> Vec<Option<T>> {
    let next = AtomicUsize::new(0);
    let stop = AtomicUsize::new(usize::MAX);
    let results: Mutex<Vec<Option<T>>> = Mutex::new((0..count).map(|_| None).collect());
    let work = || loop {
        let i = next.fetch_add(1, Ordering::SeqCst);
        if i >= count || i > stop.load(Ordering::SeqCst) {
            return;
        }
        let r = f(i);
        if stops(&r) {
            stop.fetch_min(i, Ordering::SeqCst);
        }
        results.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(r);
    };
    on_threads(count, jobs, &work);
    let results = results.into_inner().unwrap_or_else(|p| p.into_inner());
    // Every index up to the first that stops ran, whatever the threads did.
    let first_stop = stop.into_inner();
    assert!(
        results
            .iter()
            .take(first_stop.saturating_add(1))
            .all(Option::is_some),
        "an index before the first stop ({first_stop}) of {count} did not run"
    );
    results
}

/// Runs `work` on up to `jobs` threads with the simulation's stack (on this
/// thread if none can start); returns when every one has returned.
pub(super) fn on_threads(count: usize, jobs: usize, work: &(impl Fn() + Sync)) {
    if count == 0 {
        return;
    }
    std::thread::scope(|s| {
        let started = (0..jobs.clamp(1, count.min(MAX_JOBS)))
            .filter(|_| {
                std::thread::Builder::new()
                    .stack_size(STACK)
                    .spawn_scoped(s, work)
                    .is_ok()
            })
            .count();
        if started == 0 {
            work();
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_in_index_order_and_nothing_past_the_first_stop() {
        for jobs in [1, 2, 8] {
            let all = map_in_order(20, jobs, |i| i * i, |_| false);
            assert_eq!(all, (0..20).map(|i| Some(i * i)).collect::<Vec<_>>());
            let cut = map_in_order(20, jobs, |i| i, |&i| i == 5);
            assert_eq!(cut[..6], (0..6).map(Some).collect::<Vec<_>>()[..]);
            if jobs == 1 {
                assert!(cut[6..].iter().all(Option::is_none));
            }
        }
        assert!(map_in_order(0, 4, |i| i, |_| false).is_empty());
    }
}
