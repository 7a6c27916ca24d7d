//! The reports, one module per product: [`run`] writes the outputs of
//! `redlock-sim run` (`history.csv`, `summary.json`, `report.md`,
//! `index.html`, `timeline.svg`, the summary on stdout); [`sweep`] those of
//! `redlock-sim sweep` and `merge` (the report, its charts, the
//! conclusions); [`set`] those of a sweep of several files; [`frontier`]
//! those of `redlock-sim frontier`; [`matrix`] the library matrix's. The
//! document model rendered as Markdown and HTML (`doc`) and the shipped
//! font and palette (`fonts`) are shared by them.
//!
//! The run's items are re-exported at the crate's root
//! (`redlock_report::write_run`, `redlock_report::summary_lines`, ...):
//! a run's outputs are what most callers write.

// What other crates use is `pub`; everything else is `pub(crate)` or less.
#![warn(unreachable_pub)]
// The docs are the developers'; `cargo doc --document-private-items`
// renders the private items they link to.
#![allow(rustdoc::private_intra_doc_links)]

/// The style every report page starts with (page, headings, tables); each
/// product adds its own rules after it.
macro_rules! base_css {
    () => {
        "\
body{font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;max-width:1240px;margin:2em auto;padding:0 1em;color:#222;line-height:1.45}\
h1{font-size:1.6em;margin-bottom:.3em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}\
h3{margin-top:1.4em}\
table{border-collapse:collapse;margin:.6em 0 1em;font-size:.9em}\
th,td{border:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top}\
th{background:#f4f4f4}tr.strong td{font-weight:600;background:#fff4f4}\
"
    };
}

pub mod compare;
mod doc;
mod fonts;
pub mod frontier;
pub mod gate;
pub mod matrix;
pub(crate) mod run;
pub mod set;
pub mod sweep;

pub use self::doc::shell_word;
pub use self::run::{
    index_html, report_md, summary_json, summary_lines, timeline_svg, write_history,
    write_history_to, write_run, LabInfo, RunOutput, HISTORY_HEADER, MAX_JSON_VIOLATIONS,
};
