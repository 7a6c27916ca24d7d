//! Many prefix maps on one pool of slots: each *lane* is `f(0)`, `f(1)`,
//! ... read in order until its `done` holds on the prefix read so far
//! (calls started past it are dropped), and the lanes share `slots`
//! slots, a call taking its lane's weight in them. A matrix's cells run this way, side
//! by side, so that no slot waits for a cell's last run and a cell whose
//! verdict settles early starts few runs past it.
//!
//! Which call starts next: of the lanes with an index left to start, the
//! one with the fewest calls running, the earliest in the caller's order
//! on a tie; if its weight does not fit in the slots that are free, it
//! waits at the head and nothing else starts until it does (a heavy lane
//! is never passed over). So while
//! lanes outnumber the slots, the earliest run a call each, each going on
//! with its next as one ends, and the next lane starts as one is done; a
//! lane runs calls side by side only when fewer lanes are left than slots.
//! What each lane keeps depends only on its own results, never on the
//! threads or on the other lanes.

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex};

use super::pool::on_threads;

/// Whether the prefix of a lane's results read so far is all it needs.
pub(crate) type Done<'a, T> = Box<dyn Fn(&[T]) -> bool + Sync + 'a>;

/// One lane: `f(0)`, `f(1)`, ... read in order until `done` holds.
pub(crate) struct Lane<'a, T> {
    /// Its indexes: `0..count`.
    pub(crate) count: usize,
    /// Slots one of its calls takes (at least 1; more than the pool's
    /// slots takes them all).
    pub(crate) weight: usize,
    pub(crate) f: Box<dyn Fn(usize) -> T + Sync + 'a>,
    pub(crate) done: Done<'a, T>,
}

/// What a lane kept and dropped.
pub(crate) struct Prefix<T> {
    /// `f(0)`, `f(1)`, ... up to the shortest prefix that `done` accepted
    /// (all of them, if none did), in index order.
    pub(crate) kept: Vec<T>,
    /// Indexes past it that had started before the prefix was known, ran
    /// and were dropped.
    pub(crate) dropped: Vec<usize>,
}

/// A lane as it goes.
struct Going<T> {
    /// The next index to start.
    next: usize,
    /// No index from here on starts (`count`, or the prefix's end).
    end: usize,
    running: usize,
    kept: Vec<T>,
    /// Results past the prefix read so far.
    waiting: BTreeMap<usize, T>,
    finished: bool,
    /// Its last call ended.
    told: bool,
}

struct Pool<T> {
    free: usize,
    lanes: Vec<Going<T>>,
    /// The lane chosen next whose weight did not fit: it starts before
    /// any other does.
    head: Option<usize>,
    /// A call panicked: nothing more starts, and the panic goes on to
    /// the caller once the calls going have ended.
    aborted: bool,
}

/// Hands a claimed call's slots back if the call panics, and stops the
/// pool: no other call starts, and no thread waits for slots that would
/// never come back.
struct Unwinding<'a, T> {
    state: &'a Mutex<Pool<T>>,
    changed: &'a Condvar,
    weight: usize,
}

impl<T> Drop for Unwinding<'_, T> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let mut pool = lock(self.state);
            pool.free += self.weight;
            pool.aborted = true;
            drop(pool);
            self.changed.notify_all();
        }
    }
}

/// Runs every lane on `slots` slots (and a thread more, so that a slot
/// given back starts a call while another thread hands a lane's prefix
/// on), and hands each lane's prefix to `told(k, prefix)` as lane `k` ends
/// (on a worker thread; a lane of no index first, with nothing kept): what
/// it returns, for every lane in the lanes' order. A call that panics
/// stops the pool (the calls going end first) and the panic goes on.
pub(crate) fn map_lanes<T: Send, U: Send>(
    lanes: &[Lane<'_, T>],
    slots: usize,
    told: impl Fn(usize, Prefix<T>) -> U + Sync,
) -> Vec<U> {
    let slots = slots.max(1);
    let out: Mutex<Vec<Option<U>>> = Mutex::new(lanes.iter().map(|_| None).collect());
    let tell = |k: usize, p: Prefix<T>| {
        let u = told(k, p);
        out.lock().unwrap_or_else(|p| p.into_inner())[k] = Some(u);
    };
    for (k, _) in lanes.iter().enumerate().filter(|(_, l)| l.count == 0) {
        tell(k, checked(Vec::new(), Vec::new(), false, 0));
    }
    let state = Mutex::new(Pool {
        free: slots,
        lanes: lanes.iter().map(|l| going(l.count)).collect(),
        head: None,
        aborted: false,
    });
    let changed = Condvar::new();
    let weight = |k: usize| lanes[k].weight.clamp(1, slots);
    let work = || loop {
        let Some((k, i)) = claim(&state, &changed, &weight) else {
            return;
        };
        let guard = Unwinding {
            state: &state,
            changed: &changed,
            weight: weight(k),
        };
        let r = (lanes[k].f)(i);
        std::mem::forget(guard);
        let ended = give_back(&state, &lanes[k], k, i, r, weight(k));
        changed.notify_all();
        if let Some(p) = ended {
            tell(k, p);
        }
    };
    let calls: usize = lanes.iter().map(|l| l.count).sum();
    on_threads(calls, slots + 1, &work);
    let pool = state.into_inner().unwrap_or_else(|p| p.into_inner());
    assert!(
        pool.lanes.iter().all(|l| l.running == 0 && l.next >= l.end),
        "a lane ended with calls left"
    );
    let out = out.into_inner().unwrap_or_else(|p| p.into_inner());
    out.into_iter()
        .map(|u| u.expect("every lane is told once"))
        .collect()
}

fn going<T>(count: usize) -> Going<T> {
    Going {
        next: 0,
        end: count,
        running: 0,
        kept: Vec::new(),
        waiting: BTreeMap::new(),
        finished: false,
        told: false,
    }
}

fn lock<T>(m: &Mutex<Pool<T>>) -> std::sync::MutexGuard<'_, Pool<T>> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Waits for the next call to start and reserves its slots; `None` once
/// no lane has an index left to start, or a call panicked.
fn claim<T>(
    state: &Mutex<Pool<T>>,
    changed: &Condvar,
    weight: &impl Fn(usize) -> usize,
) -> Option<(usize, usize)> {
    let mut pool = lock(state);
    loop {
        if pool.aborted {
            return None;
        }
        let startable = |l: &Going<T>| l.next < l.end;
        let head = pool.head.filter(|&h| startable(&pool.lanes[h]));
        let next = head.or_else(|| {
            (pool.lanes.iter().enumerate())
                .filter(|(_, l)| startable(l))
                .min_by_key(|(k, l)| (l.running, *k))
                .map(|(k, _)| k)
        });
        let k = next?;
        if weight(k) <= pool.free {
            pool.free -= weight(k);
            pool.head = None;
            let l = &mut pool.lanes[k];
            l.running += 1;
            l.next += 1;
            return Some((k, l.next - 1));
        }
        // With slots free but too few, it waits at the head (with none
        // free, the next is chosen when one is). Something runs (the free
        // slots would fit any lane otherwise), and its end frees slots.
        if pool.free > 0 {
            pool.head = Some(k);
        }
        assert!(pool.lanes.iter().any(|l| l.running > 0), "a pool stalled");
        pool = changed.wait(pool).unwrap_or_else(|p| p.into_inner());
    }
}

/// Hands back call `i` of lane `k` and its slots, and reads the lane's
/// prefix on; the lane's prefix (its kept results moved out) if that call
/// was the lane's last.
fn give_back<T>(
    state: &Mutex<Pool<T>>,
    lane: &Lane<'_, T>,
    k: usize,
    i: usize,
    r: T,
    weight: usize,
) -> Option<Prefix<T>> {
    let mut pool = lock(state);
    pool.free += weight;
    let l = &mut pool.lanes[k];
    l.running -= 1;
    l.waiting.insert(i, r);
    while !l.finished {
        let at = l.kept.len();
        let Some(r) = l.waiting.remove(&at) else {
            break;
        };
        l.kept.push(r);
        if (lane.done)(&l.kept) {
            l.finished = true;
            l.end = l.end.min(at + 1);
        }
    }
    if l.told || l.running > 0 || l.next < l.end {
        return None;
    }
    l.told = true;
    let dropped = std::mem::take(&mut l.waiting).into_keys().collect();
    let kept = std::mem::take(&mut l.kept);
    Some(checked(kept, dropped, l.finished, lane.count))
}

/// A lane's prefix, checked: without a prefix that is done, every index
/// ran and was kept; nothing before the prefix's end was dropped.
fn checked<T>(kept: Vec<T>, dropped: Vec<usize>, finished: bool, count: usize) -> Prefix<T> {
    assert!(
        finished || (kept.len() == count && dropped.is_empty()),
        "{} of {count} kept, {} dropped, and no prefix done",
        kept.len(),
        dropped.len()
    );
    assert!(
        dropped.iter().all(|&i| i >= kept.len()),
        "a call before the prefix's end was dropped"
    );
    Prefix { kept, dropped }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// Lanes of `counts`, lane k weighing `weights[k]`, each done once its
    /// prefix sums to `k + 3` or more; each call records the slots in use
    /// at its start (into `peak`) and its (lane, index) in `started`, and
    /// takes a few ms (`first_ms` for a lane's first).
    fn run(
        counts: &[usize],
        weights: &[usize],
        (slots, first_ms): (usize, u64),
        started: &Mutex<Vec<(usize, usize)>>,
        peak: &AtomicUsize,
    ) -> (Vec<Vec<usize>>, Vec<usize>) {
        let in_use = AtomicUsize::new(0);
        let in_use = &in_use;
        let lanes: Vec<Lane<'_, usize>> = (counts.iter().zip(weights).enumerate())
            .map(|(k, (&count, &weight))| Lane {
                count,
                weight,
                f: Box::new(move |i| {
                    let w = weight.clamp(1, slots);
                    let now = in_use.fetch_add(w, Ordering::SeqCst) + w;
                    peak.fetch_max(now, Ordering::SeqCst);
                    started.lock().unwrap().push((k, i));
                    let ms = match i {
                        0 => first_ms,
                        _ => 2 + (i * 7 + k) as u64 % 5,
                    };
                    std::thread::sleep(Duration::from_millis(ms));
                    in_use.fetch_sub(w, Ordering::SeqCst);
                    i
                }),
                done: Box::new(move |r: &[usize]| r.iter().sum::<usize>() >= k + 3),
            })
            .collect();
        let told = Mutex::new(vec![0; counts.len()]);
        let kept = map_lanes(&lanes, slots, |k, p| {
            told.lock().unwrap()[k] += 1;
            assert!(p.dropped.iter().all(|&i| i >= p.kept.len()));
            p.kept
        });
        let told = told.into_inner().unwrap();
        (kept, told)
    }

    /// Each lane keeps what it keeps alone, whatever the slots and the
    /// other lanes; each is told once; the slots in use never pass the
    /// pool's.
    #[test]
    fn each_lane_keeps_its_own_prefix_within_the_slots() {
        let counts = [6, 0, 9, 2, 12];
        let weights = [1, 1, 3, 2, 9];
        for slots in [1, 2, 3, 8] {
            let (started, peak) = (Mutex::new(Vec::new()), AtomicUsize::new(0));
            let (kept, told) = run(&counts, &weights, (slots, 3), &started, &peak);
            for (k, &count) in counts.iter().enumerate() {
                // Done once 0 + 1 + ... reaches k + 3 (or at the count).
                let mut want = Vec::new();
                while want.len() < count && want.iter().sum::<usize>() < k + 3 {
                    want.push(want.len());
                }
                assert_eq!(kept[k], want, "lane {k} at {slots} slots");
                assert_eq!(told[k], 1, "lane {k} told");
            }
            assert!(peak.load(Ordering::SeqCst) <= slots, "{slots} slots");
        }
    }

    /// Every lane gets a call running before any gets a second: with as
    /// many slots as lanes, the first calls are each lane's first (each
    /// 300 ms long, far longer than the threads take to start).
    #[test]
    fn every_lane_starts_before_any_runs_two() {
        let (started, peak) = (Mutex::new(Vec::new()), AtomicUsize::new(0));
        run(&[20, 20, 20, 20], &[1, 1, 1, 1], (4, 300), &started, &peak);
        let started = started.into_inner().unwrap();
        let mut first: Vec<(usize, usize)> = started[..4].to_vec();
        first.sort();
        assert_eq!(first, [(0, 0), (1, 0), (2, 0), (3, 0)]);
        // One slot: a lane after the other, one call at a time (lane 0 is
        // done at 0 + 1 + 2, lane 1 at 0 + 1 + 2 + 3).
        let (started, peak) = (Mutex::new(Vec::new()), AtomicUsize::new(0));
        run(&[5, 5], &[1, 2], (1, 3), &started, &peak);
        let order = [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (1, 3)];
        assert_eq!(started.into_inner().unwrap(), order);
        assert_eq!(peak.load(Ordering::SeqCst), 1);
    }

    /// A lane that fits only once every other has given its slots back
    /// waits at the head: the light lanes behind it start nothing until
    /// it has started.
    #[test]
    fn a_heavy_lane_at_the_head_is_not_passed_over() {
        let (started, peak) = (Mutex::new(Vec::new()), AtomicUsize::new(0));
        // Two slots: lane 0's first call, then lane 1 (weight 2) waits for
        // it; when it ends lane 0 (no call going, earliest) would be chosen
        // again, but lane 1 is at the head and starts first.
        run(&[2, 1, 3], &[1, 2, 1], (2, 20), &started, &peak);
        let order = started.into_inner().unwrap();
        assert_eq!(order[..2], [(0, 0), (1, 0)], "{order:?}");
    }

    /// A call that panics stops the pool and the panic reaches the caller,
    /// even when the slots it held are the only ones a lane fits in.
    #[test]
    fn a_call_that_panics_stops_the_pool() {
        let lanes: Vec<Lane<'_, usize>> = vec![
            Lane {
                count: 3,
                weight: 2,
                f: Box::new(|i| if i == 0 { panic!("a broken run") } else { i }),
                done: Box::new(|_| false),
            },
            Lane {
                count: 4,
                weight: 2,
                f: Box::new(|i| i),
                done: Box::new(|_| false),
            },
        ];
        let all = std::panic::AssertUnwindSafe(|| map_lanes(&lanes, 2, |_, p| p.kept));
        let r = std::panic::catch_unwind(all);
        assert!(r.is_err(), "the panic reached the caller");
    }
}
