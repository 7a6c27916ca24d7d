//! Unit tests of the sweep report: conclusions, charts and files.

use super::format::{interval, latency, pct};
use super::*;
use crate::doc::html_escape;
use redlock_harness::scenario::Scenario;
use redlock_harness::stats::{wilson, Z95};
use redlock_harness::sweep::baseline::Caught;
use redlock_harness::sweep::stats::SummaryRow;

const SCENARIO: &str = r#"
name = "restart-sweep"
description = "Three masters; a node <crashes> & restarts after a delay."
duration = "30s"
expect = "violation"

[cluster]
topology = "redlock"
nodes = 3
restart = "immediate"

[clients]
count = 2
ttl = "10s"
hold = "8s"

[sweep]
seeds = 500

[sweep.vary]
"cluster.restart" = ["immediate", "0.5ttl", "1ttl", "1.5ttl"]
"cluster.topology" = ["single", "redlock"]
"#;

fn scenario() -> Scenario {
    redlock_harness::scenario::parse_str(SCENARIO, "restart-sweep.toml").expect("test scenario")
}

fn keys() -> Vec<String> {
    vec![
        "cluster.restart".to_string(),
        "cluster.topology".to_string(),
    ]
}

/// A row of `runs` runs, `bad` of them violating.
fn row(values: &[&str], runs: u64, bad: u64, acquire: f64, p50: f64, p99: f64) -> SummaryRow {
    let (ci_low, ci_high) = wilson(bad, runs, Z95);
    SummaryRow {
        values: values.iter().map(|v| v.to_string()).collect(),
        runs,
        inconclusive_runs: 0,
        violating_runs: bad,
        violation_rate: if runs == 0 {
            0.0
        } else {
            bad as f64 / runs as f64
        },
        ci_low,
        ci_high,
        acquire_rate: acquire,
        acquire_p50_ms: p50,
        acquire_p99_ms: p99,
        // Waiting grows with the share of failed calls, as with a real cost.
        unavailable_mean_ms: 1000.0 * (1.0 - acquire),
        unavailable_ci_ms: (runs > 1)
            .then_some((900.0 * (1.0 - acquire), 1100.0 * (1.0 - acquire))),
        stale_kinds: Default::default(),
    }
}

/// Rows in sweep order (restart slowest): violations for `single` and
/// `redlock` at each restart value.
fn rows(single: [u64; 4], redlock: [u64; 4]) -> Vec<SummaryRow> {
    let restarts = ["immediate", "0.5ttl", "1ttl", "1.5ttl"];
    let mut out = Vec::new();
    for (k, r) in restarts.iter().enumerate() {
        let slow = k as f64;
        out.push(row(
            &[r, "single"],
            500,
            single[k],
            0.91 - 0.06 * slow,
            4.0,
            40.0 + 300.0 * slow,
        ));
        out.push(row(
            &[r, "redlock"],
            500,
            redlock[k],
            0.89 - 0.06 * slow,
            6.0,
            60.0 + 400.0 * slow,
        ));
    }
    out
}

fn output<'a>(s: &'a Scenario, keys: &'a [String], rows: &'a [SummaryRow]) -> SweepOutput<'a> {
    SweepOutput {
        scenario: s,
        keys,
        rows,
        seeds: 1..=500,
        total_runs: rows.iter().map(|r| r.runs).sum(),
        file: "scenarios/x.toml",
        replay: &[],
        inconclusive: &[],
        caught: &[],
        coverage: None,
        lab: None,
    }
}

fn tmp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "redlock-sim-sweep-report-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn find<'a>(lines: &'a [String], needle: &str) -> Vec<&'a String> {
    lines.iter().filter(|l| l.contains(needle)).collect()
}

#[test]
fn against_the_spec_client() {
    let s = scenario();
    let k = vec!["clients.variant".to_string()];
    let r = vec![
        row(&["spec"], 500, 0, 0.5, 1.0, 2.0),
        row(&["x-flaw"], 500, 40, 0.5, 1.0, 2.0),
        row(&["y-flaw"], 500, 0, 0.5, 1.0, 2.0),
    ];
    let caught = [
        Caught {
            values: vec!["x-flaw".into()],
            paired: 500,
            violating: 40,
            seeds: vec![7, 9],
            both: 3,
            spec_violating: 5,
            needed: Some(7),
        },
        Caught {
            values: vec!["y-flaw".into()],
            paired: 500,
            violating: 0,
            seeds: vec![],
            both: 0,
            spec_violating: 5,
            needed: None,
        },
    ];
    let mut out = output(&s, &k, &r);
    out.caught = &caught;
    let dir = tmp("caught");
    write_sweep(&dir, &out).unwrap();
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("## Against the spec client"), "{md}");
    assert!(
        md.contains("| **x-flaw** | **40 of 500** | **5** | **3** | **2** | **seed 7** | **7** |"),
        "{md}"
    );
    assert!(
        md.contains("| y-flaw | 0 of 500 | 5 | 0 | 0 | — | not caught in 500 |"),
        "{md}"
    );
    assert!(
        md.contains(
            "x-flaw: redlock-sim run scenarios/x.toml --seed 7 --set clients.variant=x-flaw \
         (and the spec client, safe: redlock-sim run scenarios/x.toml --seed 7 --set \
         clients.variant=spec --set expect=safe)"
        ),
        "{md}"
    );
    let lines = conclusions(&out);
    let last = lines.last().unwrap();
    assert_eq!(
        last,
        "Against the spec client (a violation at a seed where it was safe): 1 of 2 variants caught: \
         x-flaw (first at seed 7, 7 seeds needed; 2 of 500 seeds). Not caught: y-flaw \
         (500 seeds)."
    );
    // Without the comparison, no section and no sentence.
    out.caught = &[];
    write_sweep(&dir, &out).unwrap();
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(!md.contains("Against the spec client"));
    assert!(!conclusions(&out)
        .iter()
        .any(|l| l.contains("Against the spec")));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn writes_the_report_and_the_charts() {
    let s = scenario();
    let k = keys();
    let r = rows([60, 20, 0, 0], [10, 0, 0, 0]);
    let out = output(&s, &k, &r);
    let dir = tmp("files");
    write_sweep(&dir, &out).unwrap();
    for key in ["cluster.restart", "cluster.topology"] {
        for stem in ["violation_rate", "acquire_rate", "acquire_latency"] {
            let path = dir.join(format!("{stem}-{key}.svg"));
            let svg = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(svg.starts_with("<svg"), "{}", path.display());
            assert!(!svg.contains("not drawn"), "{}", path.display());
        }
    }
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(md.contains("# redlock-sim sweep: restart-sweep"));
    assert!(
        md.contains("![Violation rate by cluster.restart](<violation_rate-cluster.restart.svg>)")
    );
    assert!(md.contains("500 per combination"));
    assert!(md.contains("4000 runs in total"));
    // The table: every column, rates as percentages, the interval.
    assert!(
        md.contains("| **immediate** | **single** | **500** | **60** | **12.0%** | **9.44%–15.1%** | **91.0%** | **4.0 ms** | **40.0 ms** |"),
        "{md}"
    );
    assert!(
        md.contains("| 1ttl | single | 500 | 0 | 0% | 0%–0.76% | 79.0% | 4.0 ms | 640.0 ms |"),
        "{md}"
    );
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("a node &lt;crashes&gt; &amp; restarts"));
    assert!(!html.contains("<crashes>"));
    // Three charts per key, and the trade-off chart.
    assert_eq!(html.matches("<svg").count(), 7);
    assert!(dir.join("tradeoff.svg").exists());
    assert!(md.contains("## What safety costs"));
    assert!(md.contains("![What safety costs: violation rate against waiting](<tradeoff.svg>)"));
    // Waiting in the table, and the least and most waiting named.
    assert!(
        md.contains("| waited per run | waited 95% interval |"),
        "{md}"
    );
    assert!(md.contains("- Least waiting: "), "{md}");
    assert!(md.contains("- Most waiting: "), "{md}");
    // The headline chart comes right after the conclusions.
    let concl = md.find("## Conclusions").unwrap();
    let first_chart = md.find("![").unwrap();
    let summary = md.find("## Summary").unwrap();
    assert!(concl < first_chart && first_chart < summary, "{md}");
    assert!(!html.contains("<?xml"));
    for c in conclusions(&out) {
        assert!(html.contains(&html_escape(&c)), "{c}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn names_the_threshold() {
    let s = scenario();
    let k = keys();
    let r = rows([60, 20, 0, 0], [10, 0, 0, 0]);
    let lines = conclusions(&output(&s, &k, &r));
    let all = lines.join("\n");
    let single = find(
        &lines,
        "For cluster.topology = single, with cluster.restart ≥ 1ttl",
    );
    assert_eq!(single.len(), 1, "{all}");
    assert!(
        single[0]
            .contains("0 violations in 1000 runs (95% upper bound 0.38%; 0.76% for any one value)"),
        "{all}"
    );
    assert!(
        single[0]
            .contains("largest cluster.restart with violations is 0.5ttl: 4.00% of runs violated"),
        "{all}"
    );
    let redlock = find(
        &lines,
        "For cluster.topology = redlock, with cluster.restart ≥ 0.5ttl",
    );
    assert_eq!(redlock.len(), 1, "{all}");
    assert!(redlock[0].contains("is immediate: 2.00%"), "{all}");
    // The availability cost, with the numbers.
    assert!(
        all.contains("For cluster.topology = single, moving cluster.restart from immediate to 1ttl costs acquisitions and latency: acquisition rate 91.0% → 79.0%, p99 acquisition latency 40.0 ms → 640.0 ms."),
        "{all}"
    );
    // The categorical key, side by side.
    assert!(
        all.contains("For cluster.restart = immediate, by cluster.topology: single: 12.0% of runs violated (9.44%–15.1%, 60 of 500)"),
        "{all}"
    );
    assert!(all.contains("redlock: 2.00% of runs violated"), "{all}");
    assert!(
        all.contains("redlock's violation rate is below single's beyond their 95% intervals."),
        "{all}"
    );
    assert!(
        all.contains(
            "For cluster.restart = 0.5ttl, by cluster.topology: single: 4.00% of runs violated"
        ),
        "{all}"
    );
    assert!(
        all.contains("redlock (0 violations) costs against single: acquisition rate 83.0% vs 85.0% and p99 acquisition latency 460.0 ms vs 340.0 ms."),
        "{all}"
    );
    assert!(
        all.contains("For cluster.restart = 1ttl, by cluster.topology: single: 0 violations in 500 runs (95% upper bound 0.76%)"),
        "{all}"
    );
    // Overall and the expectation.
    assert!(
        lines[0].starts_with("Violations in 3 of 8 combinations (90 of 4000 runs)"),
        "{all}"
    );
    assert!(!all.contains("The scenario expects"), "{all}");
    assert!(!all.to_lowercase().contains(" safe"), "{all}");
}

#[test]
fn no_threshold_when_violations_reappear() {
    let s = scenario();
    let k = keys();
    // single: violations at immediate, none at 0.5ttl, again at 1ttl,
    // none at 1.5ttl. redlock: violations at both ends.
    let r = rows([30, 0, 5, 0], [3, 0, 0, 3]);
    let lines = conclusions(&output(&s, &k, &r));
    let all = lines.join("\n");
    assert!(!all.contains("≥ 0.5ttl"), "{all}");
    assert!(!all.contains("≥ 1ttl"), "{all}");
    let single = find(&lines, "For cluster.topology = single, with cluster.restart ≥ 1.5ttl (the largest value tested): 0 violations in 500 runs");
    assert_eq!(single.len(), 1, "{all}");
    assert!(
        single[0].contains("largest cluster.restart with violations is 1ttl"),
        "{all}"
    );
    assert!(
        single[0].contains("0.5ttl had 0 violations, but violations reappear at larger values"),
        "{all}"
    );
    let redlock: Vec<_> = find(&lines, "For cluster.topology = redlock");
    assert_eq!(redlock.len(), 1, "{all}");
    assert!(
        !redlock[0].contains('≥') && !redlock[0].contains('≤'),
        "{all}"
    );
    assert!(redlock[0].contains("violations at both the smallest and the largest cluster.restart tested: at immediate, 0.60% of runs violated"), "{all}");
    assert!(
        redlock[0]
            .contains("0.5ttl and 1ttl had 0 violations, but lie between values with violations"),
        "{all}"
    );
}

#[test]
fn violations_at_the_top_of_the_range() {
    // A faster clock on n2: violations from 1.02 up.
    let s = scenario();
    let k = vec!["hosts.n2.clock_rate".to_string()];
    let r = vec![
        row(&["1.0"], 200, 0, 0.9, 2.0, 20.0),
        row(&["1.005"], 200, 0, 0.9, 2.0, 20.0),
        row(&["1.02"], 200, 4, 0.9, 2.0, 20.0),
        row(&["1.05"], 200, 30, 0.9, 2.0, 20.0),
    ];
    let lines = conclusions(&output(&s, &k, &r));
    let all = lines.join("\n");
    assert!(all.contains("With hosts.n2.clock_rate ≤ 1.005 (tested: 1.0, 1.005): 0 violations in 400 runs (95% upper bound 0.95%; 1.88% for any one value). The smallest hosts.n2.clock_rate with violations is 1.02: 2.00% of runs violated"), "{all}");
    assert!(!all.contains('≥'), "{all}");
    // Written out of order: the order of the values decides, not the file's.
    let r2: Vec<SummaryRow> = [&r[3], &r[1], &r[0], &r[2]].map(|x| x.clone()).to_vec();
    let again = conclusions(&output(&s, &k, &r2));
    assert!(again.iter().any(|l| l.contains("≤ 1.005")), "{again:?}");
}

#[test]
fn says_which_combinations_go_against_expect_safe() {
    let text = SCENARIO.replace("expect = \"violation\"", "expect = \"safe\"");
    let s = redlock_harness::scenario::parse_str(&text, "safe.toml").unwrap();
    let k = keys();
    let r = rows([60, 20, 0, 0], [10, 0, 0, 0]);
    let lines = conclusions(&output(&s, &k, &r));
    assert!(
        lines.iter().any(|l| l.starts_with(
            "The scenario expects no violation, but 3 of 8 combination(s) had some: \
             cluster.restart = immediate, cluster.topology = single; \
             cluster.restart = immediate, cluster.topology = redlock; \
             cluster.restart = 0.5ttl, cluster.topology = single."
        )),
        "{lines:#?}"
    );
}

#[test]
fn numeric_keys_and_all_zero() {
    let s = scenario();
    let k = vec!["cluster.nodes".to_string()];
    let r: Vec<SummaryRow> = [3, 5, 7]
        .iter()
        .map(|n| row(&[&n.to_string()], 100, 0, 0.0, 0.0, 0.0))
        .collect();
    let out = output(&s, &k, &r);
    let lines = conclusions(&out);
    let all = lines.join("\n");
    assert!(all.contains("With cluster.nodes from 3 to 7: 0 violations in 300 runs (95% upper bound 1.26%; 3.70% for any one value)"), "{all}");
    assert!(all.contains("No combination had a violation"), "{all}");
    let dir = tmp("zero");
    write_sweep(&dir, &out).unwrap();
    let svg = std::fs::read_to_string(dir.join("acquire_latency-cluster.nodes.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("no acquisitions"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn edge_cases_do_not_panic() {
    let s = scenario();
    let dir = tmp("edges");
    // No runs at all.
    let none: Vec<SummaryRow> = Vec::new();
    let k = keys();
    let out = output(&s, &k, &none);
    assert_eq!(
        conclusions(&out),
        vec!["No runs: there is nothing to conclude.".to_string()]
    );
    write_sweep(&dir.join("empty"), &out).unwrap();
    // Rows of 0 runs.
    let zero = vec![row(&["immediate", "single"], 0, 0, 0.0, 0.0, 0.0)];
    let out = output(&s, &k, &zero);
    assert_eq!(conclusions(&out).len(), 1);
    write_sweep(&dir.join("zero-runs"), &out).unwrap();
    // Seeds only.
    let one = vec![row(&[], 200, 7, 0.8, 3.0, 90.0)];
    let out = output(&s, &[], &one);
    let lines = conclusions(&out);
    assert!(
        lines[0].starts_with("7 of 200 runs violated: 3.50%"),
        "{lines:?}"
    );
    write_sweep(&dir.join("seeds-only"), &out).unwrap();
    for f in [
        "violation_rate.svg",
        "acquire_rate.svg",
        "acquire_latency.svg",
    ] {
        let svg = std::fs::read_to_string(dir.join("seeds-only").join(f)).unwrap();
        assert!(svg.starts_with("<svg"), "{f}");
    }
    // Every run violating; a single value; values that do not match
    // the keys.
    let k1 = vec!["cluster.restart".to_string()];
    let all_bad = vec![row(&["immediate"], 10, 10, 1.0, 1.0, 2.0)];
    let out = output(&s, &k1, &all_bad);
    assert!(conclusions(&out)[0].starts_with("10 of 10 runs violated: 100%"));
    write_sweep(&dir.join("single-value"), &out).unwrap();
    let odd = vec![
        row(&[], 10, 1, 0.5, 1.0, 2.0),
        row(&["a", "b", "c"], 10, 0, 0.5, 1.0, 2.0),
    ];
    let out = output(&s, &k, &odd);
    let _ = conclusions(&out);
    write_sweep(&dir.join("odd"), &out).unwrap();
    // 50 values of one key, two of another.
    let k2 = vec![
        "hosts.n2.clock_rate".to_string(),
        "cluster.topology".to_string(),
    ];
    let mut many = Vec::new();
    for i in 0..50 {
        for t in ["single", "redlock"] {
            let v = format!("{:.3}", 1.0 + i as f64 / 1000.0);
            many.push(row(&[&v, t], 40, (i % 7) as u64, 0.9, 2.0, 50.0 + i as f64));
        }
    }
    let out = output(&s, &k2, &many);
    let lines = conclusions(&out);
    assert!(lines.iter().any(|l| l.contains("… and")), "{lines:?}");
    write_sweep(&dir.join("many"), &out).unwrap();
    let svg = std::fs::read_to_string(
        dir.join("many")
            .join("violation_rate-hosts.n2.clock_rate.svg"),
    )
    .unwrap();
    assert!(svg.starts_with("<svg") && !svg.contains("not drawn"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn percentages() {
    assert_eq!(pct(0.0), "0%");
    assert_eq!(pct(1.0), "100%");
    assert_eq!(pct(0.124), "12.4%");
    assert_eq!(pct(0.0325), "3.25%");
    assert_eq!(pct(0.00192), "0.19%");
    assert_eq!(pct(0.000038), "0.0038%");
    assert_eq!(pct(0.99999), "99.9%");
    assert_eq!(pct(f64::NAN), "n/a");
    assert_eq!(interval(0.109, 0.141), "10.9%–14.1%");
    assert_eq!(latency(12.34), "12.3 ms");
    assert_eq!(latency(1250.0), "1.25 s");
}
