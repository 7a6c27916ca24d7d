//! The report of `redlock-sim sweep` (see `cli-and-outputs.md`): `report.md`,
//! `index.html` and the charts (SVG, drawn in [`charts`]), made
//! from the rows of `summary.csv`; and the conclusions, sentences computed
//! from those rows, which the command line also prints.
//!
//! Conclusions never say "safe": a combination without violations is
//! reported as "0 violations in N runs (95% upper bound X%)", the upper bound
//! being that of the Wilson interval.
//!
//! Nothing here panics, whatever the rows hold: no rows, rows of 0 runs,
//! rows whose values do not match the keys, rates at 0 or 1.

use std::collections::BTreeMap;
use std::io;
use std::ops::RangeInclusive;
use std::path::Path;

mod against_spec;
pub mod charts;
mod conclusions;

use self::charts::Chart;
pub use self::conclusions::conclusions;
use crate::report::doc::{list, md_escape, p, to_html, to_md, Block, Figure, Row, Style};
use crate::scenario::{Expect, Scenario};
use crate::sweep::baseline::Caught;
use crate::sweep::stats::SummaryRow;

/// Everything the report of a sweep is made from.
pub struct SweepOutput<'a> {
    /// The scenario swept (without overrides).
    pub scenario: &'a Scenario,
    /// The varied keys, in `[sweep.vary]` order (`cluster.restart`).
    pub keys: &'a [String],
    /// One row per combination, in sweep order (the first key changes
    /// slowest); values as written (`0.5ttl`, `immediate`, `3`).
    pub rows: &'a [SummaryRow],
    /// The seeds each combination ran.
    pub seeds: RangeInclusive<u64>,
    /// Runs in all.
    pub total_runs: u64,
    /// The scenario file as the user named it, for replay commands.
    pub file: &'a str,
    /// Per combination with violations (values as in `rows`), the first
    /// violating seeds, to replay with `redlock-sim run --seed --set`.
    pub replay: &'a [(Vec<String>, Vec<u64>)],
    /// When `clients.variant` is varied with `spec` among its values: each
    /// other variant against the spec client, seed by seed.
    pub caught: &'a [Caught],
}

/// Creates `dir` (and its parents) and writes `report.md`, `index.html` and
/// the charts: for each varied key `violation_rate-<key>.svg`,
/// `acquire_rate-<key>.svg` and `acquire_latency-<key>.svg` (without varied
/// keys: `violation_rate.svg`, `acquire_rate.svg`, `acquire_latency.svg`).
pub fn write_sweep(dir: &Path, out: &SweepOutput) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let charts = charts::render_all(out);
    for c in &charts {
        std::fs::write(dir.join(&c.file), &c.svg)?;
    }
    let doc = document(out, &charts);
    let figures: Vec<Figure> = charts
        .iter()
        .map(|c| Figure {
            // The file name in angle brackets: dots and brackets are safe.
            md: format!("![{}](<{}>)", md_escape(&c.title, true), c.file),
            title: Some(&c.title),
            svg: &c.svg,
        })
        .collect();
    std::fs::write(dir.join("report.md"), to_md(&doc, &STYLE, &figures))?;
    std::fs::write(
        dir.join("index.html"),
        to_html(&doc, &title(out), &STYLE, &figures),
    )?;
    Ok(())
}

const STYLE: Style = Style {
    css: CSS,
    escape_hash: true,
    num_columns: true,
    conclusions_list: true,
};

/// The run report's style, so that both reports look alike.
const CSS: &str = concat!(
    base_css!(),
    "\
td.num{text-align:right;font-variant-numeric:tabular-nums}\
code{background:#f2f2f2;padding:0 .25em;border-radius:3px}\
ul.conclusions li{margin:.35em 0}\
.chart{overflow-x:auto;border:1px solid #eee;padding:4px;margin:.6em 0 1.2em}.chart svg{display:block;max-width:100%;height:auto}\
"
);

/// Rows of the summary table in the report (summary.csv has them all).
pub(crate) const MAX_TABLE_ROWS: usize = 1000;

// ---------------------------------------------------------------------------
// The rows seen along one varied key.

/// One varied key: its values and, for each combination of the other keys,
/// the row at each value.
pub(crate) struct KeyView<'r> {
    /// The key (`cluster.restart`); empty for a sweep of seeds only.
    pub name: String,
    /// Its values, in the order of `[sweep.vary]`.
    pub values: Vec<String>,
    /// The other varied keys, in order.
    pub others: Vec<String>,
    /// One per combination of the other keys, in sweep order.
    pub groups: Vec<Group<'r>>,
}

/// A combination of the other keys' values.
pub(crate) struct Group<'r> {
    /// `cluster.topology = single`; empty when no other key varies.
    pub label: String,
    /// The row at each value of the key (`None`: no such row).
    pub cells: Vec<Option<&'r SummaryRow>>,
}

pub(crate) fn value_at(row: &SummaryRow, j: usize) -> &str {
    row.values.get(j).map_or("", String::as_str)
}

/// The rows along key `i`.
pub(crate) fn key_view<'r>(out: &SweepOutput<'r>, i: usize) -> KeyView<'r> {
    let name = out.keys.get(i).cloned().unwrap_or_default();
    // Values: as `[sweep.vary]` lists them, then any other value seen.
    let mut values: Vec<String> = Vec::new();
    let seen: Vec<&str> = {
        let mut v: Vec<&str> = Vec::new();
        for r in out.rows {
            let x = value_at(r, i);
            if !v.contains(&x) {
                v.push(x);
            }
        }
        v
    };
    if let Some(sweep) = &out.scenario.sweep {
        if let Some((_, vs)) = sweep.vary.iter().find(|(k, _)| *k == name) {
            for v in vs {
                let s = crate::scenario::render_vary_value(v);
                if seen.contains(&s.as_str()) && !values.contains(&s) {
                    values.push(s);
                }
            }
        }
    }
    for s in seen {
        if !values.iter().any(|v| v == s) {
            values.push(s.to_string());
        }
    }
    let index: BTreeMap<&str, usize> = values
        .iter()
        .enumerate()
        .map(|(k, v)| (v.as_str(), k))
        .collect();
    let mut groups: Vec<Group<'r>> = Vec::new();
    let mut group_of: BTreeMap<Vec<&str>, usize> = BTreeMap::new();
    for r in out.rows {
        let others: Vec<&str> = (0..out.keys.len())
            .filter(|&j| j != i)
            .map(|j| value_at(r, j))
            .collect();
        let g = *group_of.entry(others).or_insert_with(|| {
            let label = (0..out.keys.len())
                .filter(|&j| j != i)
                .map(|j| format!("{} = {}", out.keys[j], value_at(r, j)))
                .collect::<Vec<_>>()
                .join(", ");
            groups.push(Group {
                label,
                cells: vec![None; values.len()],
            });
            groups.len() - 1
        });
        if let Some(&k) = index.get(value_at(r, i)) {
            let cell = &mut groups[g].cells[k];
            if cell.is_none() {
                *cell = Some(r);
            }
        }
    }
    let others = (0..out.keys.len())
        .filter(|&j| j != i)
        .map(|j| out.keys[j].clone())
        .collect();
    KeyView {
        name,
        values,
        others,
        groups,
    }
}

// ---------------------------------------------------------------------------
// Figures as text.

/// A rate in [0, 1] as a percentage: `12.4%`, `3.25%`, `0.18%`, `0%`.
pub(crate) fn pct(x: f64) -> String {
    if !x.is_finite() {
        return "n/a".to_string();
    }
    let p = (x * 100.0).clamp(0.0, 100.0);
    // Below this it is rounding noise (a Wilson bound of 0 violations).
    if p < 1e-9 {
        return "0%".to_string();
    }
    if p == 100.0 {
        return "100%".to_string();
    }
    let s = if p >= 10.0 {
        format!("{p:.1}")
    } else if p >= 1.0 {
        format!("{p:.2}")
    } else {
        // Two significant digits.
        let digits = (-p.log10().floor()) as usize + 1;
        format!("{p:.digits$}")
    };
    // Never round up to 100% or down to 0%.
    match s.as_str() {
        "100.0" => "99.9%".to_string(),
        _ => format!("{s}%"),
    }
}

/// `10.9%–14.1%`.
pub(crate) fn interval(lo: f64, hi: f64) -> String {
    format!("{}–{}", pct(lo), pct(hi))
}

/// A latency in ms: `12.3 ms`, `1.25 s`.
pub(crate) fn latency(ms: f64) -> String {
    if !ms.is_finite() {
        "n/a".to_string()
    } else if ms.abs() < 1000.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{:.2} s", ms / 1000.0)
    }
}

// ---------------------------------------------------------------------------
// The document: one model, rendered as Markdown and as HTML.

fn title(out: &SweepOutput) -> String {
    format!("{}, sweep", out.scenario.name)
}

fn seeds_text(seeds: &RangeInclusive<u64>) -> String {
    let n = seeds
        .end()
        .checked_sub(*seeds.start())
        .map_or(0, |d| d.saturating_add(1));
    format!(
        "seeds {}..={} ({} per combination)",
        seeds.start(),
        seeds.end(),
        n
    )
}

fn document(out: &SweepOutput, charts: &[Chart]) -> Vec<Block> {
    let s = out.scenario;
    let mut doc = vec![Block::H(1, format!("redlock-sim sweep: {}", s.name))];
    if !s.description.trim().is_empty() {
        doc.push(p(s.description.trim().to_string()));
    }
    let mut setup = format!(
        "{} combination(s), {}, {} runs in total. The scenario expects {}.",
        out.rows.len(),
        seeds_text(&out.seeds),
        out.total_runs,
        match s.expect {
            Expect::Safe => "no violation",
            Expect::Violation => "violations",
            Expect::Degraded => "no violation (degraded service)",
        }
    );
    if out.keys.is_empty() {
        setup.push_str(" No key is varied: every run has the same settings.");
    }
    doc.push(p(setup));
    if !out.keys.is_empty() {
        let items = (0..out.keys.len())
            .map(|i| {
                let v = key_view(out, i);
                format!("{}: {}", v.name, v.values.join(", "))
            })
            .collect();
        doc.push(p("Varied keys and their values:".into()));
        doc.push(list(items));
    }

    doc.push(Block::H(2, "Conclusions".into()));
    doc.push(list(conclusions(out)));
    doc.push(p(
        "A violation is a run in which two clients held the same lock at once, or the store \
         applied a write after a later acquisition of its lock had succeeded (a stale write; \
         writes of two acquisitions interleaved are counted too). Rates are the share of runs with at least \
         one violation; intervals are 95% Wilson score intervals. \"0 violations in N runs\" \
         bounds the rate, it does not prove it zero."
            .into(),
    ));

    doc.push(Block::H(2, "Summary".into()));
    let mut head: Vec<String> = out.keys.to_vec();
    head.extend(
        [
            "runs",
            "violating runs",
            "violation rate",
            "95% interval",
            "acquire rate",
            "acquire p50",
            "acquire p99",
        ]
        .map(String::from),
    );
    let rows: Vec<Row> = out
        .rows
        .iter()
        .take(MAX_TABLE_ROWS)
        .map(|r| {
            let mut cells: Vec<String> = (0..out.keys.len())
                .map(|j| value_at(r, j).to_string())
                .collect();
            cells.extend([
                r.runs.to_string(),
                r.violating_runs.to_string(),
                pct(r.violation_rate),
                interval(r.ci_low, r.ci_high),
                pct(r.acquire_rate),
                latency(r.acquire_p50_ms),
                latency(r.acquire_p99_ms),
            ]);
            Row {
                cells,
                strong: r.violating_runs > 0,
            }
        })
        .collect();
    doc.push(Block::Table(head, rows));
    if out.rows.len() > MAX_TABLE_ROWS {
        doc.push(p(format!(
            "… and {} more combinations in summary.csv.",
            out.rows.len() - MAX_TABLE_ROWS
        )));
    }
    doc.push(p(
        "Acquire rate: acquisitions per lock call over all runs of the combination. \
         Acquire p50: the median over runs of each run's median acquisition latency; \
         acquire p99: the 99th percentile over runs of each run's p99 latency. \
         Combinations with violations are in bold."
            .into(),
    ));

    if out.rows.len() > 1 {
        doc.push(Block::H(2, "Ranking".into()));
        doc.push(p(
            "Combinations from the most to the least often violated (ties: the higher upper \
             bound first)."
                .into(),
        ));
        let mut ranked: Vec<&SummaryRow> = out.rows.iter().collect();
        ranked.sort_by(|a, b| {
            b.violation_rate
                .total_cmp(&a.violation_rate)
                .then(b.ci_high.total_cmp(&a.ci_high))
        });
        let mut head = vec!["rank".to_string()];
        head.extend(out.keys.iter().cloned());
        head.extend(["violation rate", "95% interval", "violating runs"].map(String::from));
        let rows = ranked
            .iter()
            .take(MAX_TABLE_ROWS)
            .enumerate()
            .map(|(i, r)| {
                let mut cells = vec![(i + 1).to_string()];
                cells.extend((0..out.keys.len()).map(|j| value_at(r, j).to_string()));
                cells.extend([
                    pct(r.violation_rate),
                    interval(r.ci_low, r.ci_high),
                    format!("{} of {}", r.violating_runs, r.runs),
                ]);
                Row {
                    cells,
                    strong: r.violating_runs > 0,
                }
            })
            .collect();
        doc.push(Block::Table(head, rows));
    }
    if !out.caught.is_empty() {
        against_spec::section(out, &mut doc);
    }
    if !out.replay.is_empty() {
        doc.push(Block::H(2, "Runs to replay".into()));
        doc.push(p(
            "Each command reruns one violating run exactly (same trace) and writes its report, \
             history and timeline."
                .into(),
        ));
        let mut items = Vec::new();
        for (values, seeds) in out.replay.iter().take(MAX_TABLE_ROWS) {
            for &seed in seeds {
                items.push(run_command(out, values, seed));
            }
        }
        doc.push(list(items));
    }

    doc.push(Block::H(2, "Charts".into()));
    doc.push(p(if out.keys.is_empty() {
        "The violation rate with its 95% interval, the acquisition rate, and the acquisition \
         latency over all runs."
            .to_string()
    } else {
        "For each varied key: the violation rate with its 95% interval (error bars), the \
         acquisition rate, and the acquisition latency (p50 and p99, side by side) against the \
         key's values, one line per combination of the other keys."
            .to_string()
    }));
    let mut current: Option<&str> = None;
    for (k, c) in charts.iter().enumerate() {
        if !out.keys.is_empty() && current != Some(c.key.as_str()) {
            current = Some(c.key.as_str());
            doc.push(Block::H(3, c.key.clone()));
        }
        doc.push(Block::Chart(k));
    }
    let mut files = vec![
        "runs.csv (one row per run)".to_string(),
        "summary.csv (one row per combination)".to_string(),
    ];
    files.extend(charts.iter().map(|c| c.file.clone()));
    doc.push(p(format!("Files: {}.", files.join(", "))));
    doc
}

/// The command that replays the run of the combination `values` at `seed`.
pub(crate) fn run_command(out: &SweepOutput, values: &[String], seed: u64) -> String {
    let sets: String = out
        .keys
        .iter()
        .zip(values)
        .map(|(k, v)| format!(" --set {k}={}", shell_word(v)))
        .collect();
    format!(
        "redlock-sim run {} --seed {seed}{sets}",
        shell_word(out.file)
    )
}

/// A word for a shell command line: quoted when it holds anything special.
fn shell_word(w: &str) -> String {
    if !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/+:".contains(c))
    {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::doc::html_escape;
    use crate::sweep::stats::{wilson, Z95};

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
        crate::scenario::parse_str(SCENARIO, "restart-sweep.toml").expect("test scenario")
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
            caught: &[],
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
            md.contains(
                "| **x-flaw** | **40 of 500** | **5** | **3** | **2** | **seed 7** | **7** |"
            ),
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
        assert!(md.contains(
            "![Violation rate by cluster.restart](<violation_rate-cluster.restart.svg>)"
        ));
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
        assert_eq!(html.matches("<svg").count(), 6);
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
            single[0].contains(
                "0 violations in 1000 runs (95% upper bound 0.38%; 0.76% for any one value)"
            ),
            "{all}"
        );
        assert!(
            single[0].contains(
                "largest cluster.restart with violations is 0.5ttl: 4.00% of runs violated"
            ),
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
            redlock[0].contains(
                "0.5ttl and 1ttl had 0 violations, but lie between values with violations"
            ),
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
        let s = crate::scenario::parse_str(&text, "safe.toml").unwrap();
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
}
