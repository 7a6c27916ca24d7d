//! The outputs of `redlock-sim frontier` (see `cli-and-outputs.md`):
//! `report.md` and `index.html` (the answer first, then the values tried,
//! the chart, the minimal scenario of the boundary's violation and the
//! command that reproduces the search), `frontier.csv` (one row per value
//! tried, in value order) and `frontier.svg` (drawn in [`chart`]).

mod chart;

use std::fmt::Write as _;
use std::io;
use std::path::Path;

use crate::doc::{code, list, para, row, text, to_html, to_md, Block, Figure, Row, Style};
use redlock_harness::search::frontier::{Direction, Frontier, Minimal, Outcome, Trial};
use redlock_harness::stats::{wilson, Z95};

/// Everything the frontier's outputs are made from.
pub struct FrontierOutput<'a> {
    pub frontier: &'a Frontier,
    pub minimal: &'a Minimal,
}

const STYLE: Style = Style {
    css: CSS,
    escape_hash: true,
    num_columns: true,
    conclusions_list: false,
};

const CSS: &str = concat!(
    base_css!(),
    "\
td.num{text-align:right;font-variant-numeric:tabular-nums}\
code{background:#f2f2f2;padding:0 .25em;border-radius:3px}\
.chart{overflow-x:auto;border:1px solid #eee;padding:4px;margin:.6em 0 1.2em}.chart svg{display:block;max-width:100%;height:auto}\
"
);

/// The header of `frontier.csv`.
pub(crate) const CSV_HEADER: [&str; 9] = [
    "value",
    "order",
    "runs",
    "violating_runs",
    "violation_rate",
    "ci_low",
    "ci_high",
    "first_violating_seed",
    "stopped_early",
];

/// Creates `dir` and writes `report.md`, `index.html`, `frontier.csv` and
/// `frontier.svg`.
pub fn write_frontier(dir: &Path, out: &FrontierOutput) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("frontier.csv"), csv_text(out.frontier))?;
    let svg = chart::render(out.frontier);
    std::fs::write(dir.join("frontier.svg"), &svg)?;
    let doc = document(out);
    let fig = [Figure {
        md: "![violation rate against the value](frontier.svg)".to_string(),
        title: Some("violation rate against the value"),
        svg: &svg,
        file: None,
    }];
    std::fs::write(dir.join("report.md"), to_md(&doc, &STYLE, &fig))?;
    let title = format!(
        "frontier of {} — {}",
        out.frontier.request.key, out.frontier.scenario.name
    );
    std::fs::write(dir.join("index.html"), to_html(&doc, &title, &STYLE, &fig))?;
    Ok(())
}

/// The trials in value order.
pub(crate) fn by_value(f: &Frontier) -> Vec<&Trial> {
    let mut v: Vec<&Trial> = f.trials.iter().collect();
    v.sort_by(|a, b| a.value.x.total_cmp(&b.value.x));
    v
}

/// Whether a trial stopped before running every seed.
fn stopped_early(f: &Frontier, t: &Trial) -> bool {
    t.runs < f.request.seeds
}

/// `frontier.csv`: one row per value tried, in value order.
pub(crate) fn csv_text(f: &Frontier) -> String {
    let mut s = CSV_HEADER.join(",");
    s.push('\n');
    for t in by_value(f) {
        let (lo, hi) = wilson(t.violating, t.runs, Z95);
        let rate = if t.runs == 0 {
            0.0
        } else {
            t.violating as f64 / t.runs as f64
        };
        let _ = writeln!(
            s,
            "{},{},{},{},{:.6},{:.6},{:.6},{},{}",
            t.value.show(),
            t.order,
            t.runs,
            t.violating,
            rate,
            lo,
            hi,
            t.seed.map(|x| x.to_string()).unwrap_or_default(),
            stopped_early(f, t)
        );
    }
    s
}

fn pct(x: f64) -> String {
    let v = x * 100.0;
    if v.abs() < 1e-9 || (v - 100.0).abs() < 1e-9 {
        format!("{v:.0}%")
    } else if v < 10.0 {
        format!("{v:.2}%")
    } else {
        format!("{v:.1}%")
    }
}

/// The command that reproduces the search.
pub(crate) fn command(f: &Frontier) -> String {
    let r = &f.request;
    let mut s = format!(
        "redlock-sim frontier {} --key {} --from {} --to {} --seeds {}",
        r.file.display(),
        r.key,
        f.from.show(),
        f.to.show(),
        r.seeds
    );
    if let Some(res) = &r.resolution {
        let _ = write!(s, " --resolution {res}");
    }
    s
}

/// The answer in one sentence (the report's first paragraph).
pub(crate) fn answer(f: &Frontier) -> String {
    let key = &f.request.key;
    match &f.outcome {
        Outcome::Found {
            direction,
            violating: v,
            safe: s,
        } => {
            let (_, hi) = wilson(0, s.runs, Z95);
            let seed = v.seed.map(|x| x.to_string()).unwrap_or_default();
            let safe_part = format!(
                "{} (0 of {} runs, 95% interval for the rate [0, {}])",
                s.value.show(),
                s.runs,
                pct(hi)
            );
            let viol_part = format!(
                "{} (seed {seed}, {} of {} runs)",
                v.value.show(),
                v.violating,
                v.runs
            );
            match direction {
                Direction::Stop => format!(
                    "Violations stop between {} and {} (key {key}): the largest violating value {viol_part}, the smallest safe value above it {safe_part}.",
                    v.value.show(),
                    s.value.show()
                ),
                Direction::Start => format!(
                    "Violations start between {} and {} (key {key}): the smallest violating value {viol_part}, the largest safe value below it {safe_part}.",
                    s.value.show(),
                    v.value.show()
                ),
            }
        }
        Outcome::AllViolate => format!(
            "Every value tried violated (key {key}, from {} to {}): no safe value was found in the interval, so there is no frontier in it; widen it.",
            f.from.show(),
            f.to.show()
        ),
        Outcome::NoneViolate => format!(
            "No value tried violated (key {key}, from {} to {}, {} seeds each): there is no frontier in the interval; widen it or run more seeds.",
            f.from.show(),
            f.to.show(),
            f.request.seeds
        ),
    }
}

/// The frontier's document: the answer, the values tried, the minimal
/// scenario and how to reproduce it.
fn document(out: &FrontierOutput) -> Vec<Block> {
    let f = out.frontier;
    let r = &f.request;
    let mut doc = vec![
        Block::H(
            1,
            format!("Frontier of {} — {}", r.key, f.scenario.name),
        ),
        para(answer(f)),
        para(format!(
            "Each value was run on seeds 1..={} (the same seeds at every value), in batches of {} seeds; a value violates when any of its runs does, and a violating value stopped after the batch holding its first violation (its runs say how many were made), so its rate is that of the runs made. Bisection between {} and {} down to a resolution of {} ({} values tried). Scenario: {}.",
            r.seeds,
            redlock_harness::search::frontier::BATCH,
            f.from.show(),
            f.to.show(),
            resolution_text(f),
            f.trials.len(),
            r.file.display()
        )),
        Block::H(2, "Values tried".to_string()),
    ];
    values_tried(&mut doc, f);
    doc.push(Block::Chart(0));
    minimal(&mut doc, out);
    reproduce(&mut doc, f);
    doc
}

/// The table of the values tried, the boundary's two in bold.
fn values_tried(doc: &mut Vec<Block>, f: &Frontier) {
    let header = [
        "value",
        "tried",
        "runs",
        "violating runs",
        "violation rate",
        "95% interval",
        "first violating seed",
    ]
    .map(String::from)
    .to_vec();
    let boundary: Vec<f64> = match &f.outcome {
        Outcome::Found {
            violating, safe, ..
        } => vec![violating.value.x, safe.value.x],
        _ => Vec::new(),
    };
    let rows: Vec<Row> = by_value(f)
        .into_iter()
        .map(|t| {
            let (lo, hi) = wilson(t.violating, t.runs, Z95);
            let rate = t.violating as f64 / t.runs.max(1) as f64;
            let mut runs = t.runs.to_string();
            if stopped_early(f, t) {
                runs.push_str(" (stopped at the first violation)");
            }
            let mut r = row(vec![
                t.value.show(),
                format!("#{}", t.order),
                runs,
                t.violating.to_string(),
                pct(rate),
                format!("{}–{}", pct(lo), pct(hi)),
                t.seed.map(|s| s.to_string()).unwrap_or_else(|| "—".into()),
            ]);
            r.strong = boundary.contains(&t.value.x);
            r
        })
        .collect();
    doc.push(Block::Table(header, rows));
}

/// The section "Minimal scenario": the boundary's violation shrunk, or why not.
fn minimal(doc: &mut Vec<Block>, out: &FrontierOutput) {
    doc.push(Block::H(2, "Minimal scenario".to_string()));
    match out.minimal {
        Minimal::Made {
            path,
            before,
            after,
            faults,
        } => {
            doc.push(Block::P(vec![
                text("The boundary's violation, shrunk by "),
                code("shrink"),
                text(": "),
                code(path.display().to_string()),
                text(format!(" ({before} faults → {after}). Its faults:")),
            ]));
            if faults.is_empty() {
                doc.push(para("(none: the violation needs no fault)".to_string()));
            } else {
                doc.push(list(faults.clone()));
            }
        }
        Minimal::NotMade(why) => doc.push(para(format!(
            "The minimal scenario of the boundary's violation could not be made: {why}"
        ))),
        Minimal::NoBoundary => doc.push(para(
            "No boundary was found, so there is no violation at it to shrink.".to_string(),
        )),
    }
}

/// The section "Reproduce": the frontier's command, and the run of the
/// boundary's violation.
fn reproduce(doc: &mut Vec<Block>, f: &Frontier) {
    let r = &f.request;
    doc.push(Block::H(2, "Reproduce".to_string()));
    let mut cmds = vec![command(f)];
    if let Outcome::Found { violating: v, .. } = &f.outcome {
        if let Some(seed) = v.seed {
            cmds.push(format!(
                "redlock-sim run {} --seed {seed} --set {}={}",
                r.file.display(),
                r.key,
                v.value.show()
            ));
        }
    }
    doc.push(Block::List(
        cmds.into_iter().map(|c| vec![code(c)]).collect(),
    ));
}

fn resolution_text(f: &Frontier) -> String {
    let x = f.resolution;
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    match f.from.kind {
        redlock_harness::search::frontier::Kind::Duration => format!("{s} ms"),
        redlock_harness::search::frontier::Kind::Ttl => format!("{s}ttl"),
        _ => s.to_string(),
    }
}
