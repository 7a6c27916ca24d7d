//! Work on many threads with a result that does not depend on them: `f(i)`
//! for every index, in any order, the results returned in index order. The
//! threads have the stack a simulation needs; if none can start, the calling
//! thread does the work. `sweep` (its rows streamed to `runs.csv`), the
//! sweep's run reports, `shrink`'s candidates and `frontier`'s batches all
//! run this way.

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

/// What [`map_prefix`] kept and dropped.
pub(crate) struct Prefix<T> {
    /// `f(0)`, `f(1)`, ... up to the shortest prefix that `done` accepted
    /// (all of them, if none did), in index order.
    pub(crate) kept: Vec<T>,
    /// Indexes past it that had started before the prefix was known, ran
    /// and were dropped.
    pub(crate) dropped: Vec<usize>,
}

/// `f(i)` for `i` in `0..count` on up to `jobs` threads, read in index
/// order: once `done(&results[..p])` holds for a prefix `p` (checked at
/// every length as the prefix grows), no index from `p` on is started, and
/// those that had started are dropped. What comes back depends only on
/// the results, never on the threads.
pub(crate) fn map_prefix<T: Send>(
    count: usize,
    jobs: usize,
    f: impl Fn(usize) -> T + Sync,
    done: impl Fn(&[T]) -> bool + Sync,
) -> Prefix<T> {
    struct Shared<T> {
        kept: Vec<T>,
        waiting: std::collections::BTreeMap<usize, T>,
        finished: bool,
    }
    let next = AtomicUsize::new(0);
    let end = AtomicUsize::new(count);
    let shared = Mutex::new(Shared {
        kept: Vec::new(),
        waiting: std::collections::BTreeMap::new(),
        finished: false,
    });
    let work = || loop {
        let i = next.fetch_add(1, Ordering::SeqCst);
        if i >= end.load(Ordering::SeqCst) {
            return;
        }
        let r = f(i);
        let mut s = shared.lock().unwrap_or_else(|p| p.into_inner());
        s.waiting.insert(i, r);
        while !s.finished {
            let at = s.kept.len();
            let Some(r) = s.waiting.remove(&at) else {
                break;
            };
            s.kept.push(r);
            if done(&s.kept) {
                s.finished = true;
                end.store(at + 1, Ordering::SeqCst);
            }
        }
    };
    on_threads(count, jobs, &work);
    let s = shared.into_inner().unwrap_or_else(|p| p.into_inner());
    let dropped: Vec<usize> = s.waiting.into_keys().collect();
    // Without a prefix that is done, every index ran and was kept.
    assert!(
        s.finished || (s.kept.len() == count && dropped.is_empty()),
        "{} of {count} kept, {} dropped, and no prefix done",
        s.kept.len(),
        dropped.len()
    );
    assert!(
        dropped.iter().all(|&i| i >= s.kept.len()),
        "a run before the prefix's end was dropped"
    );
    Prefix {
        kept: s.kept,
        dropped,
    }
}

/// Runs `work` on up to `jobs` threads with the simulation's stack (on this
/// thread if none can start); returns when every one has returned.
fn on_threads(count: usize, jobs: usize, work: &(impl Fn() + Sync)) {
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

    #[test]
    fn a_prefix_ends_where_done_first_holds_whatever_the_threads() {
        for jobs in [1, 2, 8] {
            // Done once the prefix sums to 10 or more: 0+1+2+3+4 = 10.
            let p = map_prefix(50, jobs, |i| i, |r: &[usize]| r.iter().sum::<usize>() >= 10);
            assert_eq!(p.kept, vec![0, 1, 2, 3, 4]);
            assert!(p.dropped.iter().all(|&i| i >= 5), "{:?}", p.dropped);
            let all = map_prefix(20, jobs, |i| i, |_| false);
            assert_eq!(all.kept, (0..20).collect::<Vec<_>>());
            assert!(all.dropped.is_empty());
        }
    }
}
