//! The reports, one module per product: [`run`] writes the outputs of
//! `redlock-sim run` (`history.csv`, `summary.json`, `report.md`,
//! `index.html`, `timeline.svg`, the summary on stdout); [`sweep`] those of
//! `redlock-sim sweep` and `merge` (the report, its charts, the
//! conclusions); [`frontier`] those of `redlock-sim frontier`. [`doc`] (the document model rendered as Markdown and HTML)
//! and [`fonts`] (the shipped font, the palette) are shared by them.
//!
//! The run's items are re-exported here (`report::write_run`,
//! `report::summary_lines`, ...), as before the split.

mod doc;
mod fonts;
pub mod frontier;
pub mod run;
pub mod sweep;

pub use self::run::{
    index_html, report_md, summary_json, summary_lines, timeline_svg, write_history,
    write_history_to, write_run, RunOutput, HISTORY_HEADER, MAX_JSON_VIOLATIONS,
};
pub use self::sweep::charts as sweep_charts;
