//! What both worlds build the same way from a scenario and a seed: the
//! generators derived from the seed, each host's clock as drawn, the
//! nodes' port and persistence.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redlock_node::persistence;
use redlock_scenario::{Persistence, Scenario, MAX_CLOCK_RATE, MIN_CLOCK_RATE};
use std::collections::BTreeMap;
use std::time::Duration;

/// Port the nodes listen on (`n1:6379`, in both worlds).
pub const NODE_PORT: u16 = 6379;

/// The least a built-in client waits for the store to answer a write (it
/// waits as long as its lock is valid, when that is longer), in both
/// worlds.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(1);

/// A generator for one purpose of one host, derived from the run's seed.
pub fn rng_for(seed: u64, host: &str, purpose: &str) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed ^ fnv(host) ^ fnv(purpose).rotate_left(17))
}

/// The seed of the sentinel's own choices (its ticks, its failover's
/// desync, its order of the replicas), from the run's: the same in both
/// worlds.
pub fn sentinel_seed(seed: u64) -> u64 {
    use rand::Rng;
    rng_for(seed, "sentinel", "sentinel").random()
}

/// 64-bit FNV-1a of a label.
pub fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Each host's clock offset (ms) and rate, as the seed draws them: the
/// simulation's clocks, and the lab's (its nodes', and its clients' through
/// libfaketime).
pub fn clock_draws(s: &Scenario, seed: u64) -> BTreeMap<String, (f64, f64)> {
    let mut rng = rng_for(seed, "world", "clocks");
    let d = s.clocks.drift;
    s.host_names()
        .into_iter()
        .map(|h| {
            let mut rate = if d > 0.0 {
                rng.random_range(1.0 - d..=1.0 + d)
            } else {
                1.0
            };
            let mut offset = s.clocks.offset.draw(&mut rng);
            if let Some(o) = s.hosts.get(&h) {
                rate = o.clock_rate.unwrap_or(rate);
                if let Some(r) = &o.clock_offset {
                    // A generator of its own, so this draw moves no other host's clock.
                    offset = r.draw(&mut rng_for(seed, &h, "clock_offset"));
                }
            }
            // What the parser validated (drift at most 0.99, rates and
            // offsets bounded): a clock that runs, forwards, at a finite offset.
            assert!(
                (MIN_CLOCK_RATE..=MAX_CLOCK_RATE).contains(&rate) && offset.is_finite(),
                "clocks: {h} drawn with rate {rate} and offset {offset} ms"
            );
            (h, (offset, rate))
        })
        .collect()
}

/// The node's persistence for the scenario's (the lab's nodes too).
pub fn persistence_mode(p: Persistence) -> persistence::Mode {
    match p {
        Persistence::None => persistence::Mode::None,
        Persistence::Everysec => persistence::Mode::Everysec,
        Persistence::Always => persistence::Mode::Always,
    }
}
