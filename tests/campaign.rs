//! The random variants campaign (`scenarios/variants/campaign.toml`, no
//! hand-placed faults) catches each unsafe variant: at the first seed where
//! the committed campaign report found it violating while the spec client
//! was safe, the run still violates with the variant and stays safe with
//! the spec client.

use redlock_sim::runner;
use redlock_sim::scenario;

const FILE: &str = "scenarios/variants/campaign.toml";

/// (variant, first seed of the campaign where it violated and spec did not).
const CAUGHT: &[(&str, u64)] = &[
    ("unsigned-validity", 1),
    ("plain-del-release", 1),
    ("legacy-setnx", 1),
    ("wall-clock-elapsed", 7),
    ("majority-of-responders", 7),
    // From the campaign extended to seeds 101..=600 for the variants not
    // caught in the first 100 (no-validity-check, extend-resurrects,
    // no-drift-allowance); extend-resurrects was not caught there either.
    ("no-drift-allowance", 186),
    ("no-validity-check", 362),
];

fn verdict(variant: &str, seed: u64) -> &'static str {
    let text = std::fs::read_to_string(FILE).unwrap();
    let set = [(
        "clients.variant".to_string(),
        toml::Value::String(variant.into()),
    )];
    let s = scenario::parse_with_overrides(&text, FILE, &set).unwrap();
    runner::simulate(s, seed).unwrap().check.verdict.as_str()
}

#[test]
fn the_campaign_catches_each_variant_where_spec_is_safe() {
    for &(variant, seed) in CAUGHT {
        assert_eq!(
            verdict(variant, seed),
            "violation",
            "{variant} at seed {seed}"
        );
        assert_eq!(verdict("spec", seed), "safe", "spec at seed {seed}");
    }
}
