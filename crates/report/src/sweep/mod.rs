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

use std::io;
use std::path::Path;

mod against_spec;
pub(crate) mod charts;
mod conclusions;
mod costs;
mod coverage;
mod document;
pub(crate) mod format;
mod output;
#[cfg(test)]
mod tests;
pub(crate) mod tradeoff;
mod view;

pub use self::conclusions::conclusions;
pub use self::coverage::stdout_line;
use crate::doc::{md_escape, to_html, to_md, Figure, Style};
use document::{document, title};

pub use self::output::{Inconclusive, SweepOutput};

/// Creates `dir` (and its parents) and writes `report.md`, `index.html` and
/// the charts: for each varied key `violation_rate-<key>.svg`,
/// `acquire_rate-<key>.svg` and `acquire_latency-<key>.svg` (without varied
/// keys: `violation_rate.svg`, `acquire_rate.svg`, `acquire_latency.svg`),
/// and with more than one combination `tradeoff.svg`.
pub fn write_sweep(dir: &Path, out: &SweepOutput) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let charts = charts::render_all(out);
    let tradeoff = tradeoff::render(out);
    for c in charts.iter().chain(&tradeoff) {
        std::fs::write(dir.join(&c.file), &c.svg)?;
    }
    let doc = document(out, &charts, tradeoff.as_ref().map(|_| charts.len()));
    let figures: Vec<Figure> = charts
        .iter()
        .chain(&tradeoff)
        .map(|c| Figure {
            // The file name in angle brackets: dots and brackets are safe.
            md: format!("![{}](<{}>)", md_escape(&c.title, true), c.file),
            title: Some(&c.title),
            svg: &c.svg,
            file: None,
        })
        .collect();
    std::fs::write(dir.join("report.md"), to_md(&doc, &STYLE, &figures))?;
    std::fs::write(
        dir.join("index.html"),
        to_html(&doc, &title(out), &STYLE, &figures),
    )?;
    Ok(())
}

/// The sweep report's style (the report of a sweep of several files uses it
/// too).
pub(crate) const STYLE: Style = Style {
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
