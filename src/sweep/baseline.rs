//! Each client variant against the spec client, seed by seed.
//!
//! When a sweep varies `clients.variant` and one of its values is `spec`,
//! every other variant's runs are paired with the spec client's runs of the
//! same seed and the same values of the other varied keys. The same seed
//! draws the same nemesis faults, so a seed where the variant's run violates
//! and the spec client's run is safe is a seed where the flaw, not the faults
//! alone, broke mutual exclusion: the variant is *caught* there. The first
//! such seed says how many seeds a random campaign needed to catch the flaw.
//!
//! A pair is not a controlled experiment: the two runs share the faults'
//! schedule, but a flaw that changes any timing sends the run down another
//! path. A catch is a run to replay and read, which the report lists.

use super::rows::RunRow;
use std::collections::BTreeMap;
use std::ops::RangeInclusive;

/// The varied key whose values are client variants.
pub const VARIANT_KEY: &str = "clients.variant";
/// The correct client, the baseline of the comparison.
pub const BASELINE: &str = "spec";

/// One variant combination against its spec-client twin.
#[derive(Clone, Debug, PartialEq)]
pub struct Caught {
    /// The combination's values, in key order.
    pub values: Vec<String>,
    /// Seeds run both by this combination and by its spec-client twin.
    pub paired: u64,
    /// Of those, the seeds where this combination violated.
    pub violating: u64,
    /// Of those, the seeds where the spec client was safe, in seed order.
    pub seeds: Vec<u64>,
    /// Seeds of the sweep's range up to and including the first catch (the
    /// first seed of the range counts 1); `None` when never caught.
    pub needed: Option<u64>,
}

/// Every combination whose variant is not `spec` and that has a spec-client
/// twin, in the order of `rows`' first appearance; empty when the sweep does
/// not vary `clients.variant` or never runs `spec`.
pub fn against_spec(keys: &[String], seeds: &RangeInclusive<u64>, rows: &[RunRow]) -> Vec<Caught> {
    let Some(k) = keys.iter().position(|key| key == VARIANT_KEY) else {
        return Vec::new();
    };
    // The twin of a combination: its values with the variant set to spec.
    let twin_of = |values: &[String]| -> Vec<String> {
        let mut v = values.to_vec();
        v[k] = BASELINE.to_string();
        v
    };
    let mut spec: BTreeMap<(Vec<String>, u64), bool> = BTreeMap::new();
    for r in rows
        .iter()
        .filter(|r| r.values.get(k).map(String::as_str) == Some(BASELINE))
    {
        spec.insert((r.values.clone(), r.seed), r.verdict == "violation");
    }
    let mut out: Vec<Caught> = Vec::new();
    let mut at: BTreeMap<Vec<String>, usize> = BTreeMap::new();
    for r in rows {
        if r.values.len() != keys.len() || r.values[k] == BASELINE {
            continue;
        }
        let Some(&spec_violated) = spec.get(&(twin_of(&r.values), r.seed)) else {
            continue;
        };
        let i = *at.entry(r.values.clone()).or_insert_with(|| {
            out.push(Caught {
                values: r.values.clone(),
                paired: 0,
                violating: 0,
                seeds: Vec::new(),
                needed: None,
            });
            out.len() - 1
        });
        let c = &mut out[i];
        c.paired += 1;
        if r.verdict == "violation" {
            c.violating += 1;
            if !spec_violated {
                c.seeds.push(r.seed);
            }
        }
    }
    for c in &mut out {
        c.seeds.sort_unstable();
        c.needed = c
            .seeds
            .first()
            .map(|s| s.saturating_sub(*seeds.start()).saturating_add(1));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(values: &[&str], seed: u64, violated: bool) -> RunRow {
        RunRow {
            scenario: "s".into(),
            seed,
            values: values.iter().map(|v| v.to_string()).collect(),
            verdict: if violated { "violation" } else { "safe" }.into(),
            lock_overlaps: 0,
            write_interleavings: 0,
            rejected_writes: 0,
            attempts: 0,
            acquisitions: 0,
            acquire_p50_ms: 0.0,
            acquire_p99_ms: 0.0,
            unavailable_ms: 0.0,
            trace: String::new(),
            wall_ms: 0.0,
        }
    }

    fn keys(k: &[&str]) -> Vec<String> {
        k.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_catch_is_a_violation_where_spec_was_safe() {
        let rows = vec![
            row(&["spec"], 10, false),
            row(&["spec"], 11, true),
            row(&["spec"], 12, false),
            row(&["spec"], 13, false),
            row(&["flawed"], 10, false),
            row(&["flawed"], 11, true),
            row(&["flawed"], 12, true),
            row(&["flawed"], 13, true),
            row(&["clean"], 10, false),
            row(&["clean"], 11, true),
            row(&["clean"], 12, false),
            row(&["clean"], 13, false),
        ];
        let c = against_spec(&keys(&[VARIANT_KEY]), &(10..=13), &rows);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].values, vec!["flawed"]);
        assert_eq!((c[0].paired, c[0].violating), (4, 3));
        assert_eq!(c[0].seeds, vec![12, 13]);
        assert_eq!(c[0].needed, Some(3));
        assert_eq!(c[1].values, vec!["clean"]);
        assert_eq!(
            (c[1].violating, c[1].seeds.len(), c[1].needed),
            (1, 0, None)
        );
    }

    #[test]
    fn twins_share_the_other_keys_and_unpaired_seeds_are_left_out() {
        let k = keys(&["cluster.nodes", VARIANT_KEY]);
        let rows = vec![
            row(&["3", "spec"], 1, true),
            row(&["5", "spec"], 1, false),
            row(&["3", "x"], 1, true),
            row(&["5", "x"], 1, true),
            row(&["5", "x"], 2, true), // no spec run at seed 2
        ];
        let c = against_spec(&k, &(1..=2), &rows);
        assert_eq!(c.len(), 2);
        assert_eq!((c[0].values[0].as_str(), c[0].seeds.len()), ("3", 0));
        assert_eq!((c[1].values[0].as_str(), c[1].paired), ("5", 1));
        assert_eq!(c[1].seeds, vec![1]);
        assert_eq!(c[1].needed, Some(1));
    }

    #[test]
    fn nothing_without_the_variant_key_or_spec() {
        let rows = vec![row(&["a"], 1, true)];
        assert!(against_spec(&keys(&["cluster.nodes"]), &(1..=1), &rows).is_empty());
        assert!(against_spec(&keys(&[VARIANT_KEY]), &(1..=1), &rows).is_empty());
        // A malformed row (too few values) is skipped, not a panic.
        let rows = vec![row(&["spec"], 1, false), row(&[], 1, true)];
        assert!(against_spec(&keys(&["a", VARIANT_KEY]), &(1..=1), &rows).is_empty());
    }
}
