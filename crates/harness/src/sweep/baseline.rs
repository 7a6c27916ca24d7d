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
use std::collections::{BTreeMap, BTreeSet};

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
    /// Of those, the seeds where the spec client was safe, in seed order:
    /// the catches.
    pub seeds: Vec<u64>,
    /// Seeds where both this combination and the spec client violated.
    pub both: u64,
    /// Paired seeds where the spec client violated.
    pub spec_violating: u64,
    /// Paired seeds, in seed order, up to and including the first catch (a
    /// catch at the first seed needs 1); `None` when never caught.
    pub needed: Option<u64>,
}

/// The spec-client twin of a combination: its values with the variant set
/// to `spec`; `None` when `keys` has no variant or `values` does not fit.
pub fn twin(keys: &[String], values: &[String]) -> Option<Vec<String>> {
    let k = keys.iter().position(|key| key == VARIANT_KEY)?;
    if values.len() != keys.len() {
        return None;
    }
    let mut v = values.to_vec();
    v[k] = BASELINE.to_string();
    Some(v)
}

/// Every combination whose variant is not `spec` and that has a spec-client
/// twin, in the order of `rows`' first appearance; empty when the sweep does
/// not vary `clients.variant` or never runs `spec`. Rows whose verdict is
/// neither `safe` nor `violation` take no part.
pub fn against_spec(keys: &[String], rows: &[RunRow]) -> Vec<Caught> {
    let Some(k) = keys.iter().position(|key| key == VARIANT_KEY) else {
        return Vec::new();
    };
    let violated = |r: &RunRow| match r.verdict.as_str() {
        "violation" => Some(true),
        "safe" => Some(false),
        _ => None,
    };
    let mut spec: BTreeMap<(Vec<String>, u64), bool> = BTreeMap::new();
    for r in rows
        .iter()
        .filter(|r| r.values.len() == keys.len() && r.values[k] == BASELINE)
    {
        if let Some(v) = violated(r) {
            spec.entry((r.values.clone(), r.seed)).or_insert(v);
        }
    }
    let mut out: Vec<Caught> = Vec::new();
    let mut paired: Vec<BTreeSet<u64>> = Vec::new();
    let mut at: BTreeMap<Vec<String>, usize> = BTreeMap::new();
    for r in rows {
        if r.values.len() != keys.len() || r.values[k] == BASELINE {
            continue;
        }
        let Some(twin) = twin(keys, &r.values) else {
            continue;
        };
        let (Some(&spec_violated), Some(this_violated)) = (spec.get(&(twin, r.seed)), violated(r))
        else {
            continue;
        };
        let i = *at.entry(r.values.clone()).or_insert_with(|| {
            out.push(Caught {
                values: r.values.clone(),
                paired: 0,
                violating: 0,
                seeds: Vec::new(),
                both: 0,
                spec_violating: 0,
                needed: None,
            });
            paired.push(BTreeSet::new());
            out.len() - 1
        });
        if !paired[i].insert(r.seed) {
            continue; // a repeated row: count the seed once
        }
        let c = &mut out[i];
        c.paired += 1;
        c.spec_violating += u64::from(spec_violated);
        if this_violated {
            c.violating += 1;
            if spec_violated {
                c.both += 1;
            } else {
                c.seeds.push(r.seed);
            }
        }
    }
    for (c, seeds) in out.iter_mut().zip(&paired) {
        c.seeds.sort_unstable();
        c.needed = c
            .seeds
            .first()
            .map(|first| seeds.range(..=first).count() as u64);
        // Each paired seed counted once: the variant's violations are the
        // catches and those the spec client shared.
        assert!(
            c.paired == seeds.len() as u64
                && c.violating == c.both + c.seeds.len() as u64
                && c.violating <= c.paired
                && c.both <= c.spec_violating
                && c.spec_violating <= c.paired,
            "{:?}: paired {}, violating {}, both {}, caught {}, spec violating {}",
            c.values,
            c.paired,
            c.violating,
            c.both,
            c.seeds.len(),
            c.spec_violating
        );
        assert!(
            c.needed.is_none_or(|n| (1..=c.paired).contains(&n)),
            "{:?}: {:?} seeds needed of {} paired",
            c.values,
            c.needed,
            c.paired
        );
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
            stale_writes: 0,
            rejected_writes: 0,
            attempts: 0,
            acquisitions: 0,
            acquire_p50_ms: 0.0,
            acquire_p99_ms: 0.0,
            unavailable_ms: 0.0,
            lock_calls_seen: true,
            trace: String::new(),
            wall_ms: 0.0,
            stale_split: [0; 3],
            inconclusive: String::new(),
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
        let c = against_spec(&keys(&[VARIANT_KEY]), &rows);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].values, vec!["flawed"]);
        assert_eq!((c[0].paired, c[0].violating), (4, 3));
        assert_eq!(c[0].seeds, vec![12, 13]);
        assert_eq!((c[0].both, c[0].spec_violating), (1, 1));
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
        let c = against_spec(&k, &rows);
        assert_eq!(c.len(), 2);
        assert_eq!((c[0].values[0].as_str(), c[0].seeds.len()), ("3", 0));
        assert_eq!((c[1].values[0].as_str(), c[1].paired), ("5", 1));
        assert_eq!(c[1].seeds, vec![1]);
        assert_eq!(c[1].needed, Some(1));
    }

    #[test]
    fn seeds_needed_count_the_seeds_run_and_odd_rows_are_left_out() {
        let k = keys(&[VARIANT_KEY]);
        let mut odd = row(&["spec"], 3, false);
        odd.verdict = "garbage".into();
        let rows = vec![
            row(&["spec"], 1, false),
            odd,
            row(&["spec"], 20, false),
            row(&["spec"], 40, false),
            row(&["x"], 1, false),
            row(&["x"], 3, true), // its spec twin has no verdict
            row(&["x"], 20, false),
            row(&["x"], 20, true), // a repeated seed counts once
            row(&["x"], 40, true),
        ];
        let c = against_spec(&k, &rows);
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].paired, c[0].violating), (3, 1));
        assert_eq!(c[0].seeds, vec![40]);
        // Seeds 1, 20, 40 ran (shards may leave gaps): the catch is the 3rd.
        assert_eq!(c[0].needed, Some(3));
    }

    #[test]
    fn nothing_without_the_variant_key_or_spec() {
        let rows = vec![row(&["a"], 1, true)];
        assert!(against_spec(&keys(&["cluster.nodes"]), &rows).is_empty());
        assert!(against_spec(&keys(&[VARIANT_KEY]), &rows).is_empty());
        // A malformed row (too few values) is skipped, not a panic.
        let rows = vec![row(&["spec"], 1, false), row(&[], 1, true)];
        assert!(against_spec(&keys(&["a", VARIANT_KEY]), &rows).is_empty());
    }
}
