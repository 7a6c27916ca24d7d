//! The three steps of a shrink, each keeping only changes whose replay
//! still violates: **drop** faults (delta debugging), **shorten** what has
//! a length, **move later** what has a time.
//!
//! Every step offers a batch of candidates in a fixed order and takes the
//! first that violates ([`Replayer::first_violating`]), so the result
//! depends only on the scenario and the seed. Lengths and times a step
//! chooses are whole milliseconds.

use super::replay::Replayer;
use crate::runner::RunError;
use crate::scenario::{Fault, FaultAction, Restart, Trigger};
use std::time::Duration;

/// Rounds when shortening one fault (each at most four replays).
const ROUNDS: usize = 2;

/// Drops faults while the run still violates: first all of them, then
/// (ddmin) each of `n` chunks, `n` doubling when no chunk can go, until no
/// single fault can be dropped (or the budget ends).
pub(crate) fn drop(r: &mut Replayer, mut cur: Vec<Fault>) -> Result<Vec<Fault>, RunError> {
    if cur.is_empty() || r.first_violating(&[Vec::new()])?.is_some() {
        return Ok(Vec::new());
    }
    let given = cur.clone();
    let mut n = 2;
    while cur.len() > 1 && r.left() > 0 {
        let n_eff = n.min(cur.len());
        let bounds: Vec<usize> = (0..=n_eff).map(|k| k * cur.len() / n_eff).collect();
        // 2 <= n_eff <= len: every chunk holds a fault, so every candidate
        // is smaller than `cur`.
        assert!(
            n_eff >= 2 && bounds.windows(2).all(|w| w[0] < w[1]),
            "ddmin: {} faults in {n_eff} chunks {bounds:?}",
            cur.len()
        );
        let without = |k: usize| -> Vec<Fault> {
            let (a, b) = (bounds[k], bounds[k + 1]);
            cur[..a].iter().chain(&cur[b..]).cloned().collect()
        };
        match r.first_violating_by(n_eff, without)? {
            Some(i) => {
                let fewer = without(i);
                assert!(
                    fewer.len() < cur.len(),
                    "a drop step kept {} of {} faults",
                    fewer.len(),
                    cur.len()
                );
                cur = fewer;
                n = (n_eff - 1).max(2);
            }
            None if n_eff >= cur.len() || r.left() == 0 => break,
            None => n = (2 * n_eff).min(cur.len()),
        }
    }
    // What is left is some of the faults given, unchanged, in their order.
    let mut rest = given.iter();
    assert!(
        cur.iter().all(|f| rest.any(|g| g == f)),
        "dropping faults changed or reordered them"
    );
    Ok(cur)
}

/// The length of a fault that can be shortened, in ms: the `for` of a
/// partition, isolation, slow link or pause, the size of a clock jump, the
/// delay of a crash's own restart (not the cluster's policy).
fn length(f: &Fault) -> Option<f64> {
    let millis = |d: &Duration| d.as_secs_f64() * 1e3;
    match &f.action {
        FaultAction::Partition { for_: Some(d), .. }
        | FaultAction::Isolate { for_: Some(d), .. }
        | FaultAction::Latency { for_: Some(d), .. }
        | FaultAction::Pause { for_: d, .. }
        | FaultAction::Crash {
            restart: Some(Restart::After(d)),
            ..
        } => Some(millis(d)),
        FaultAction::ClockJump { by_ms, .. } => Some(by_ms.abs()),
        FaultAction::Partition { for_: None, .. }
        | FaultAction::Isolate { for_: None, .. }
        | FaultAction::Latency { for_: None, .. }
        | FaultAction::Crash { .. }
        | FaultAction::Restart { .. }
        | FaultAction::Heal
        | FaultAction::ClockRate { .. } => None,
    }
}

/// `f` with its length set to `ms` (a whole number of milliseconds).
fn with_length(f: &Fault, ms: f64) -> Fault {
    assert!(
        ms >= 1.0 && ms.fract() == 0.0,
        "a length of {ms}ms is not a whole number of milliseconds"
    );
    let d = Duration::from_millis(ms as u64);
    let mut out = f.clone();
    match &mut out.action {
        FaultAction::Partition { for_: Some(x), .. }
        | FaultAction::Isolate { for_: Some(x), .. }
        | FaultAction::Latency { for_: Some(x), .. }
        | FaultAction::Pause { for_: x, .. }
        | FaultAction::Crash {
            restart: Some(Restart::After(x)),
            ..
        } => *x = d,
        FaultAction::ClockJump { by_ms, .. } => *by_ms = ms.copysign(*by_ms),
        FaultAction::Partition { for_: None, .. }
        | FaultAction::Isolate { for_: None, .. }
        | FaultAction::Latency { for_: None, .. }
        | FaultAction::Crash { .. }
        | FaultAction::Restart { .. }
        | FaultAction::Heal
        | FaultAction::ClockRate { .. } => {}
    }
    out
}

/// Shortens each fault that has a length (see [`length`]), in order.
pub(crate) fn shorten(r: &mut Replayer, mut cur: Vec<Fault>) -> Result<Vec<Fault>, RunError> {
    for i in 0..cur.len() {
        let Some(len) = length(&cur[i]) else { continue };
        if r.left() == 0 {
            break;
        }
        let at = |x: f64| {
            let x = x.round().max(1.0);
            (x < len).then(|| (x, with_length(&cur[i], x)))
        };
        if let Some(f) = toward_zero(r, &cur, i, len, at)? {
            assert!(
                length(&f).is_some_and(|l| l < len),
                "shortening fault {i} from {len}ms gave {:?}",
                length(&f)
            );
            assert!(
                f.at == cur[i].at
                    && f.after == cur[i].after
                    && f.action.kind() == cur[i].action.kind(),
                "shortening fault {i} changed more than its length: {:?} to {f:?}",
                cur[i]
            );
            cur[i] = f;
        }
    }
    Ok(cur)
}

/// Moves each fault later, the latest first: one due from the start
/// toward the next fault's time (or the end of the run), one that follows
/// a trigger by up to one TTL more. Round one tries the fault halfway to
/// that limit, then a quarter of the way, an eighth... down to the next
/// whole millisecond, latest first; the latest that still violates is
/// kept, and one more round tries three times between it and the next
/// later time tried.
pub(crate) fn later(
    r: &mut Replayer,
    mut cur: Vec<Fault>,
    end: Duration,
    ttl: Duration,
) -> Result<Vec<Fault>, RunError> {
    let given = cur.clone();
    let mut order: Vec<usize> = (0..cur.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse((cur[i].after == Trigger::Start, cur[i].at, i)));
    for i in order {
        if r.left() == 0 {
            break;
        }
        let t = cur[i].at;
        let limit = if cur[i].after == Trigger::Start {
            cur.iter()
                .filter(|f| f.after == Trigger::Start && f.at > t)
                .map(|f| f.at)
                .fold(end, Duration::min)
        } else {
            t + ttl
        };
        if limit <= t {
            continue;
        }
        // Whole milliseconds after `t`, at most `limit`.
        let whole = |d: Duration| {
            let ms = d.as_nanos().div_ceil(1_000_000);
            Duration::from_millis(u64::try_from(ms).unwrap_or(u64::MAX)).min(limit)
        };
        let mut times: Vec<Duration> = Vec::new();
        let mut step = (limit - t) / 2;
        loop {
            let new = whole(t + step);
            if new > t && !times.contains(&new) {
                times.push(new);
            }
            if step < Duration::from_millis(1) {
                break;
            }
            step /= 2;
        }
        let from = cur.clone();
        let moved = |at: Duration| {
            let mut c = from.clone();
            c[i].at = at;
            c
        };
        let candidates: Vec<Vec<Fault>> = times.iter().map(|&at| moved(at)).collect();
        let Some(k) = r.first_violating(&candidates)? else {
            continue;
        };
        let (got, above) = (times[k], if k == 0 { limit } else { times[k - 1] });
        // Later, never past the next fault's time or the run's end (an
        // untriggered fault stays within the duration, as parsing wants).
        assert!(
            t < got
                && got <= above
                && above <= limit
                && (from[i].after != Trigger::Start || limit <= end),
            "fault {i} moved from {t:?} to {got:?} (next tried {above:?}, limit {limit:?})"
        );
        cur = candidates[k].clone();
        // Latest first.
        let finer: std::collections::BTreeSet<Duration> = (1..=3)
            .map(|j| whole(got + (above - got) * j / 4))
            .filter(|&at| at > got && at < above)
            .collect();
        let candidates: Vec<Vec<Fault>> = finer.iter().rev().map(|&at| moved(at)).collect();
        if let Some(k) = r.first_violating(&candidates)? {
            cur = candidates[k].clone();
            assert!(
                got < cur[i].at && cur[i].at < above,
                "fault {i} refined to {:?} outside ({got:?}, {above:?})",
                cur[i].at
            );
        }
    }
    // Only times changed, and only later.
    assert!(
        cur.len() == given.len()
            && cur
                .iter()
                .zip(&given)
                .all(|(c, g)| c.at >= g.at && c.after == g.after && c.action == g.action),
        "moving faults later changed more than their times"
    );
    Ok(cur)
}

/// Makes an amount of fault `i` as small as the run allows: `make(x)`
/// builds the fault for the amount `x` (rounded as it likes: it returns
/// the amount it used, or `None` when it cannot go there). Round one tries
/// 1/8, 1/4 and 1/2 of `x0`, then `x0` itself in whole milliseconds; each
/// further round three steps between the
/// amount accepted and the one below it that did not violate. The smallest
/// amount that violates is kept; `None` when no smaller one does.
fn toward_zero(
    r: &mut Replayer,
    cur: &[Fault],
    i: usize,
    x0: f64,
    make: impl Fn(f64) -> Option<(f64, Fault)>,
) -> Result<Option<Fault>, RunError> {
    let mut best: Option<(f64, Fault)> = None;
    let (mut lo, mut hi) = (0.0, x0);
    for round in 0..ROUNDS {
        let xs: Vec<f64> = if round == 0 {
            // The last: the same length in whole ms, if only that.
            vec![x0 / 8.0, x0 / 4.0, x0 / 2.0, x0.floor()]
        } else {
            (1..=3).map(|k| lo + (hi - lo) * k as f64 / 4.0).collect()
        };
        let mut tried: Vec<(f64, Fault)> = Vec::new();
        for x in xs {
            if let Some((x, f)) = make(x) {
                let smaller = x < hi && (round == 0 || x > lo);
                if smaller && !tried.iter().any(|(y, _)| *y == x) {
                    tried.push((x, f));
                }
            }
        }
        if tried.is_empty() {
            break;
        }
        let candidates: Vec<Vec<Fault>> = tried
            .iter()
            .map(|(_, f)| {
                let mut c = cur.to_vec();
                c[i] = f.clone();
                c
            })
            .collect();
        let (lo0, hi0) = (lo, hi);
        match r.first_violating(&candidates)? {
            Some(k) => {
                lo = if k == 0 { lo } else { tried[k - 1].0 };
                hi = tried[k].0;
                best = Some(tried.swap_remove(k));
            }
            None => lo = tried.last().map_or(lo, |t| t.0),
        }
        // The bracket (largest amount known not to violate, smallest that
        // does) narrows every round and never turns over.
        assert!(
            lo0 <= lo && lo < hi && hi <= hi0 && hi - lo < hi0 - lo0,
            "fault {i}: bracket ({lo0}, {hi0}) became ({lo}, {hi})"
        );
    }
    Ok(best.map(|(_, f)| f))
}
