//! The library matrix's report (`redlock-sim matrix FILE --out DIR`): lock
//! libraries down the side, faults across, each cell a lab sweep of one
//! library's driver on the fault's scenario for its kind, in
//! `DIR/<library>-<version>/<fault>/`. This module writes what covers them all:
//! `matrix.csv` (a row per library and fault), `matrix.svg` (the matrix
//! drawn, a cell's colour its violation rate), `report.md` and
//! `index.html`, which open with the answer (which libraries broke under
//! what, which never did), say how each cell broke (lock overlaps, stale
//! writes, and how those got late: in flight, sent late, in overlap) and
//! which way of getting late dominated for each library, and link every
//! violating cell to a run report.

use std::io;
use std::path::Path;

use plotters::prelude::*;

use super::doc::{bold, code, link, para, text, to_html, to_md, Block, Figure, Inline, Row};
use super::fonts::{ensure_font, FAMILY};
use super::sweep::format::{interval, pct};
use super::sweep::STYLE;
use redlock_harness::check::StaleKind;
pub use redlock_harness::runner::lab::Servers;
use redlock_harness::scenario::matrix::{Fault, LibKind, Library, Matrix};
pub use redlock_harness::sweep::matrix::{Cell, Outcome, Swept};
use redlock_harness::sweep::settle::Rule;
use redlock_harness::sweep::stats::SummaryRow;

/// Everything the matrix's report is made from.
pub struct MatrixOutput<'a> {
    pub matrix: &'a Matrix,
    /// Library by library, each fault in the file's order.
    pub cells: Vec<Cell<'a>>,
    /// The command that regenerates it, as it could be typed again.
    pub command: String,
    /// What served the nodes; `None` for a merge of shards of a version
    /// that did not record it.
    pub servers: Option<Servers>,
}

/// The columns of `matrix.csv`: the nine first, in its order, then
/// the liveness figure the lab has and what this report adds (runs with a
/// stale write in flight, sent late, in overlap; last, the conclusive
/// runs, of which every figure is: with none, no rate; then why the cell
/// stopped where it did, `violating`, `safe` or `budget`: see
/// `redlock_harness::sweep::settle`).
pub(crate) const COLUMNS: [&str; 19] = [
    "library",
    "version",
    "language",
    "scenario",
    "runs",
    "violating_runs",
    "violation_rate",
    "ci_low",
    "ci_high",
    "acquisitions_per_run",
    "kind",
    "runs_with_overlap",
    "runs_with_stale_write",
    "file",
    "runs_with_stale_in_flight",
    "runs_with_stale_sent_late",
    "runs_with_stale_in_overlap",
    "conclusive_runs",
    "stopped",
];

/// The sweep of `l` on `f`, if that is a cell.
fn swept_at<'o>(out: &'o MatrixOutput, l: &Library, f: &Fault) -> Option<&'o Swept<'o>> {
    out.cells
        .iter()
        .find(|c| std::ptr::eq(c.library, l) && std::ptr::eq(c.fault, f))
        .and_then(Cell::swept)
}

/// When the matrix is here only in part (a shard, or a merge lacking
/// shards): how many of its cells, and which shards hold the rest.
fn part(out: &MatrixOutput) -> Option<String> {
    let mut elsewhere: Vec<(usize, usize)> = out
        .cells
        .iter()
        .filter_map(|c| match c.outcome {
            Outcome::Elsewhere(k, n) => Some((k, n)),
            _ => None,
        })
        .collect();
    if elsewhere.is_empty() {
        return None;
    }
    let here = out.cells.iter().filter(|c| c.swept().is_some()).count();
    let all = here + elsewhere.len();
    elsewhere.sort_unstable();
    elsewhere.dedup();
    let n = elsewhere[0].1;
    let ks: Vec<String> = elsewhere.iter().map(|(k, _)| k.to_string()).collect();
    Some(format!(
        "Part of the matrix: {here} of its {all} cells are here; the others are in shard{} {} of {n} \
         (`redlock-sim merge` joins the shards' directories).",
        if ks.len() == 1 { "" } else { "s" },
        ks.join(", ")
    ))
}

/// The answer, in lines: each library that broke, under what (its rates);
/// then those that never did.
pub fn answer(out: &MatrixOutput) -> Vec<String> {
    let mut broke = Vec::new();
    let mut never = Vec::new();
    let mut untested = Vec::new();
    for l in &out.matrix.libraries {
        let cells: Vec<&Cell> = out
            .cells
            .iter()
            .filter(|c| std::ptr::eq(c.library, l))
            .collect();
        let hits: Vec<String> = cells
            .iter()
            .filter_map(|c| c.swept().map(|s| (c, &s.row)))
            .filter(|(_, r)| r.violating_runs > 0)
            .map(|(c, r)| {
                let of = r.conclusive_runs();
                format!("{} ({}/{of})", c.fault.name, r.violating_runs)
            })
            .collect();
        let runs: u64 = cells
            .iter()
            .filter_map(|c| c.swept())
            .map(|s| s.row.conclusive_runs())
            .sum();
        let who = format!("{} {} ({})", l.name, l.version, l.language);
        let unjudged: Vec<String> = cells
            .iter()
            .filter(|c| c.swept().is_some_and(|s| s.row.conclusive_runs() == 0))
            .map(|c| c.fault.name.clone())
            .collect();
        if !unjudged.is_empty() {
            untested.push(format!("{who} under {}", unjudged.join(", ")));
        }
        if cells.iter().all(|c| c.swept().is_none()) {
            continue;
        } else if hits.is_empty() {
            never.push(format!("{who}: 0 violations in {runs} conclusive runs"));
        } else {
            broke.push(format!("{who} broke under {}", hits.join(", ")));
        }
    }
    let mut lines: Vec<String> = part(out).into_iter().collect();
    lines.extend(broke);
    if !untested.is_empty() {
        lines.push(format!(
            "Not judged (no conclusive run: see \"Inconclusive runs\"): {}.",
            untested.join("; ")
        ));
    }
    for f in &out.matrix.faults {
        let cells: Vec<&SummaryRow> = out
            .cells
            .iter()
            .filter(|c| std::ptr::eq(c.fault, f))
            .filter_map(|c| c.swept().map(|s| &s.row))
            .collect();
        if !cells.is_empty() && cells.iter().all(|r| r.violating_runs == 0) {
            let runs: u64 = cells.iter().map(|r| r.conclusive_runs()).sum();
            lines.push(format!(
                "No library broke under {}: 0 violations in {runs} conclusive runs.",
                f.name
            ));
        }
    }
    if never.is_empty() {
        lines.push("Every library broke under at least one fault.".into());
    } else {
        lines.push(format!("Never broke: {}.", never.join("; ")));
    }
    lines
}

/// Writes `matrix.csv`, `matrix.svg`, `report.md` and `index.html` into
/// `dir` (which exists: the cells' sweeps are in it).
pub fn write_matrix(dir: &Path, out: &MatrixOutput) -> io::Result<()> {
    write_csv(&dir.join("matrix.csv"), out)?;
    let svg = chart(out);
    std::fs::write(dir.join("matrix.svg"), &svg)?;
    let doc = document(out);
    let fig = Figure {
        md: "![the matrix](matrix.svg)".to_string(),
        title: Some("violation rate of each library under each fault"),
        svg: &svg,
        file: Some("matrix.svg"),
    };
    let title = format!("library matrix {}", out.matrix.name);
    let figs = [fig];
    std::fs::write(dir.join("report.md"), to_md(&doc, &STYLE, &figs))?;
    std::fs::write(dir.join("index.html"), to_html(&doc, &title, &STYLE, &figs))?;
    Ok(())
}

fn write_csv(path: &Path, out: &MatrixOutput) -> io::Result<()> {
    let mut w = csv::Writer::from_path(path)?;
    w.write_record(COLUMNS)?;
    for c in &out.cells {
        let Some(s) = c.swept() else {
            continue;
        };
        let (l, r) = (c.library, &s.row);
        let mut record = vec![
            l.name.clone(),
            l.version.clone(),
            l.language.clone(),
            c.fault.name.clone(),
            r.runs.to_string(),
            r.violating_runs.to_string(),
            rate_text(r.violation_rate),
            rate_text(r.ci_low),
            rate_text(r.ci_high),
            format!("{:.2}", s.acquisitions),
            l.kind.as_str().to_string(),
            s.kinds.0.to_string(),
            s.kinds.1.to_string(),
            s.file.to_string(),
        ];
        record.extend(r.stale_kinds.iter().map(|k| k.runs.to_string()));
        record.push(r.conclusive_runs().to_string());
        record.push(s.stop.as_str().to_string());
        w.write_record(&record)?;
    }
    w.flush()
}

/// A rate with 6 decimals; empty where there is none (no conclusive run).
fn rate_text(x: f64) -> String {
    if x.is_nan() {
        String::new()
    } else {
        format!("{x:.6}")
    }
}

fn document(out: &MatrixOutput) -> Vec<Block> {
    let m = out.matrix;
    let mut doc = vec![Block::H(
        1,
        format!("Which lock libraries survive which faults ({})", m.name),
    )];
    doc.push(Block::H(2, "Answer".into()));
    doc.push(Block::List(
        answer(out).into_iter().map(|l| vec![text(l)]).collect(),
    ));
    doc.push(para(m.description.clone()));
    doc.push(Block::Chart(0));
    let mut intro = vec![
        text(format!(
            "Each cell: seeds {}..={} at most (its budget) of the fault's scenario for the \
             library's kind, in order, stopped once its verdict is settled (see \"Where the cells \
             stopped\"), run by ",
            m.seeds.start(),
            m.seeds.end()
        )),
        code("redlock-sim lab"),
        text(
            " against the library's driver and judged from outside. A cell reads violating runs \
           / runs, then the 95% Wilson interval of the violation rate. The lab does not see \
           lock calls, so the liveness figure in matrix.csv is the mean number of acquisitions \
           per run (acquisitions_per_run), not a waiting time. ",
        ),
    ];
    intro.extend(served_by(out.servers));
    doc.push(Block::P(intro));
    doc.push(table(out));
    doc.push(Block::H(2, "How they broke".into()));
    doc.push(para(
        "Of each cell's violating runs: those where two clients held the lock at once (a lock \
         overlap), and those where a write landed after the next holder had acquired (a stale \
         write). A library that learns it lost the lock and stops writing can overlap without \
         a stale write; a write a partition held back is stale without an overlap, and no lock \
         stops it (fencing does). Of the runs with a stale write, how it got late, by when the \
         client sent it (the lab measures it where the client's link to the store reads it): \
         in flight (sent while its lock stood, held up by the network or the store), sent late \
         (sent after the writer's own hold had ended: a pause, or no check), in overlap (sent \
         while the writer still held by its own validity, after another acquisition)."
            .to_string(),
    ));
    doc.push(kinds_table(out));
    doc.push(Block::List(dominant_kinds(out)));
    doc.push(Block::H(2, "Where the cells stopped".into()));
    doc.push(para(stop_rule_text(Rule::of(m))));
    doc.push(Block::List(stops(out)));
    doc.push(Block::H(2, "Violating cells".into()));
    doc.push(Block::List(violating_links(out)));
    doc.push(Block::H(2, "Inconclusive runs".into()));
    doc.push(Block::List(inconclusive_cells(out)));
    doc.push(Block::H(2, "Not cells".into()));
    doc.push(Block::List(not_cells(out)));
    doc.push(Block::H(2, "Libraries".into()));
    doc.push(Block::List(
        m.libraries.iter().map(|l| library_line(out, l)).collect(),
    ));
    doc.push(Block::H(2, "Regenerate".into()));
    doc.push(Block::P(vec![code(out.command.clone())]));
    doc
}

/// A library's line: its command and settings, and the cells whose runs
/// used another command than the file gives now (as each recorded it).
fn library_line(out: &MatrixOutput, l: &Library) -> Vec<Inline> {
    let mut line = vec![
        bold(format!("{} {}", l.name, l.version)),
        text(format!(" ({}, {}): ", l.language, l.kind.as_str())),
        code(l.command.join(" ")),
    ];
    if !l.set.is_empty() {
        line.push(text(", every scenario with ".to_string()));
        line.push(code(l.set.join(" ")));
    }
    // Each other command, with the faults of the cells that ran it.
    let mut other: Vec<(&[String], Vec<&str>)> = Vec::new();
    let same = |c: &&Cell| c.library.name == l.name && c.library.version == l.version;
    for c in out.cells.iter().filter(same) {
        let Some(ran) = c.swept().and_then(|s| s.command.as_deref()) else {
            continue;
        };
        if ran == l.command.as_slice() {
            continue;
        }
        match other.iter_mut().find(|(cmd, _)| *cmd == ran) {
            Some((_, faults)) => faults.push(&c.fault.name),
            None => other.push((ran, vec![&c.fault.name])),
        }
    }
    let all = (out.cells.iter().filter(same))
        .filter(|c| c.swept().is_some())
        .count();
    for (cmd, faults) in other {
        let which = match faults.len() == all {
            true => "every one of its runs used ".to_string(),
            false => format!("its runs under \"{}\" used ", faults.join("\", \"")),
        };
        line.push(text(format!("; {which}")));
        line.push(code(cmd.join(" ")));
    }
    line
}

/// Which servers the runs had, in words.
fn served_by(servers: Option<Servers>) -> Vec<Inline> {
    let (by, flag) = match servers {
        Some(Servers::Node) => ("the project's node", "--servers node"),
        Some(Servers::Redis) => ("real redis-server and redis-sentinel", "--servers redis"),
        None => {
            return vec![text(
                "Which servers served it was not recorded (shards of an older version).",
            )]
        }
    };
    vec![text(format!("Served by {by} (")), code(flag), text(").")]
}

fn stop_rule_text(rule: Rule) -> String {
    use redlock_harness::stats::{wilson, Z95};
    use redlock_harness::sweep::settle::SAFE_AT;
    let first = rule.violating_after;
    // 72% for 10 runs, 83% for 20: the lower end, rounded down.
    let low = (wilson(first as u64, first as u64, Z95).0 * 100.0).floor();
    format!(
        "A cell runs its seeds in order and stops as soon as its verdict is settled: when its \
         first {first} conclusive runs all violated (the interval's lower end is then above \
         {low}%), or when {SAFE_AT} conclusive runs had no violation (its upper end is then at \
         most 3.6%, the fewest runs for which it is). Any other cell runs every seed of its budget. Inconclusive runs count for \
         neither."
    )
}

/// How many cells stopped for each reason, the runs the early stops
/// saved of the budget, and each cell that ran its whole budget.
fn stops(out: &MatrixOutput) -> Vec<Vec<Inline>> {
    use redlock_harness::sweep::settle::Stop;
    let budget = out.matrix.seeds.clone().count() as u64;
    let swept: Vec<(&Cell, &Swept)> = out
        .cells
        .iter()
        .filter_map(|c| c.swept().map(|s| (c, s)))
        .collect();
    let mut lines = Vec::new();
    for stop in [Stop::Violating, Stop::Safe, Stop::Budget] {
        let these: Vec<&(&Cell, &Swept)> = swept.iter().filter(|(_, s)| s.stop == stop).collect();
        if these.is_empty() {
            continue;
        }
        let runs: u64 = these.iter().map(|(_, s)| s.row.runs).sum();
        let saved: u64 = these
            .iter()
            .map(|(_, s)| budget.saturating_sub(s.row.runs))
            .sum();
        let worded = stop.worded(Rule::of(out.matrix));
        let mut line = format!("{} cells {worded}: {runs} runs", these.len());
        if saved > 0 {
            line.push_str(&format!(", {saved} fewer than their budgets"));
        }
        lines.push(vec![text(line)]);
    }
    lines
}

/// The matrix as a table: a row per library, a column per fault, each
/// cell `text` of its sweep (`—` where there is no cell).
fn grid(out: &MatrixOutput, text: fn(&Swept) -> String) -> Block {
    let mut head = vec!["library".to_string()];
    head.extend(out.matrix.faults.iter().map(|f| f.name.clone()));
    let rows = out
        .matrix
        .libraries
        .iter()
        .map(|l| {
            let mut cells = vec![format!("{} {}", l.name, l.version)];
            for f in &out.matrix.faults {
                cells.push(swept_at(out, l, f).map_or("—".to_string(), text));
            }
            Row {
                cells,
                strong: false,
            }
        })
        .collect();
    Block::Table(head, rows)
}

fn table(out: &MatrixOutput) -> Block {
    grid(out, |s| {
        let r = &s.row;
        let of = r.conclusive_runs();
        let rate = match of {
            0 => "no conclusive run".to_string(),
            _ => format!(
                "{}/{of} ({})",
                r.violating_runs,
                interval(r.ci_low, r.ci_high)
            ),
        };
        match r.inconclusive_runs {
            0 => rate,
            n => format!("{rate}; {n} inconclusive"),
        }
    })
}

/// Each cell with inconclusive runs: how many, and why (each distinct
/// cause once, with its seeds).
fn inconclusive_cells(out: &MatrixOutput) -> Vec<Vec<Inline>> {
    let mut items = Vec::new();
    for c in &out.cells {
        let Some(s) = c.swept() else { continue };
        if s.inconclusive.is_empty() {
            continue;
        }
        let mut why: Vec<(String, Vec<u64>)> = Vec::new();
        for (seed, causes) in &s.inconclusive {
            match why.iter_mut().find(|(w, _)| w == causes) {
                Some((_, seeds)) => seeds.push(*seed),
                None => why.push((causes.clone(), vec![*seed])),
            }
        }
        let told: Vec<String> = why
            .iter()
            .map(|(w, seeds)| {
                let seeds: Vec<String> = seeds.iter().map(u64::to_string).collect();
                format!("seed {}: {w}", seeds.join(", "))
            })
            .collect();
        items.push(vec![
            bold(format!("{} × {}", c.library.name, c.fault.name)),
            text(format!(
                ": {} of {} runs inconclusive; {}",
                s.inconclusive.len(),
                s.row.runs,
                told.join("; ")
            )),
        ]);
    }
    if items.is_empty() {
        items.push(vec![text(
            "none: every run tested what its scenario sets out to test",
        )]);
    }
    items
}

fn kinds_table(out: &MatrixOutput) -> Block {
    grid(out, |s| match s.kinds {
        (0, 0) => "none".to_string(),
        (o, 0) => format!("overlap {o}, stale 0"),
        (o, st) => {
            let [f, l, v] = s.row.stale_kinds.map(|k| k.runs);
            format!("overlap {o}, stale {st} (in flight {f}, sent late {l}, in overlap {v})")
        }
    })
}

/// For each library that broke: which way of getting late its stale
/// writes mostly took (by runs, over its cells), or that it broke by lock
/// overlaps alone.
fn dominant_kinds(out: &MatrixOutput) -> Vec<Vec<Inline>> {
    let mut items = Vec::new();
    for l in &out.matrix.libraries {
        let swept: Vec<&Swept> = out
            .cells
            .iter()
            .filter(|c| std::ptr::eq(c.library, l))
            .filter_map(Cell::swept)
            .collect();
        if swept.iter().all(|s| s.row.violating_runs == 0) {
            continue;
        }
        let runs = [0, 1, 2].map(|k| swept.iter().map(|s| s.row.stale_kinds[k].runs).sum::<u64>());
        let who = bold(format!("{} {}", l.name, l.version));
        items.push(vec![who, text(format!(": {}", dominant_phrase(runs)))]);
    }
    if items.is_empty() {
        items.push(vec![text("no library broke")]);
    }
    items
}

/// "mostly in flight (runs: in flight 5, sent late 2, in overlap 0)", or
/// that there was no stale write.
fn dominant_phrase(runs: [u64; 3]) -> String {
    let counts = format!(
        "runs: in flight {}, sent late {}, in overlap {}",
        runs[0], runs[1], runs[2]
    );
    let leaders: Vec<&str> = StaleKind::dominant(runs)
        .into_iter()
        .map(StaleKind::short)
        .collect();
    match leaders.as_slice() {
        [] => "no stale write: it broke by lock overlaps alone".to_string(),
        [one] => format!("mostly {one} ({counts})"),
        tied => format!("{} equally ({counts})", tied.join(" and ")),
    }
}

fn violating_links(out: &MatrixOutput) -> Vec<Vec<Inline>> {
    let mut items = Vec::new();
    for c in &out.cells {
        let Some(s) = c.swept() else {
            continue;
        };
        let Some(first) = s.violating.first() else {
            continue;
        };
        let (r, dir) = (&s.row, &s.dir);
        // The first violating run whose report is there (a matrix of
        // before `--keep-runs` may have lost it).
        let run = match s.reported {
            Some(seed) if seed == *first => link(
                format!("seed {seed}'s run report"),
                format!("{dir}/seed-{seed}/index.html"),
            ),
            Some(seed) => link(
                format!("seed {seed}'s run report (seed {first}'s was not kept)"),
                format!("{dir}/seed-{seed}/index.html"),
            ),
            None => text(format!("seed {first} (its run report was not kept)")),
        };
        items.push(vec![
            bold(format!("{} × {}", c.library.name, c.fault.name)),
            text(format!(
                ": {} of {} conclusive runs ({}); ",
                r.violating_runs,
                r.conclusive_runs(),
                pct(r.violation_rate)
            )),
            run,
            text(", "),
            link("the cell's sweep", format!("{dir}/index.html")),
            text(" ("),
            code(s.file.to_string()),
            text(")"),
        ]);
    }
    if items.is_empty() {
        items.push(vec![text("none")]);
    }
    items
}

fn not_cells(out: &MatrixOutput) -> Vec<Vec<Inline>> {
    let mut kinds: Vec<LibKind> = Vec::new();
    for l in &out.matrix.libraries {
        if !kinds.contains(&l.kind) {
            kinds.push(l.kind);
        }
    }
    let mut items: Vec<Vec<Inline>> = Vec::new();
    for f in &out.matrix.faults {
        for k in &kinds {
            if let Err(why) = f.file_for(*k) {
                let what = format!("{} for {} libraries", f.name, k.as_str());
                items.push(vec![bold(what), text(format!(": {why}"))]);
            }
        }
    }
    for l in &out.matrix.libraries {
        if let Some(names) = &l.faults {
            let what = format!("{} {}", l.name, l.version);
            let only = format!(
                ": run only under {}, as the matrix file says",
                names.join(", ")
            );
            items.push(vec![bold(what), text(only)]);
        }
    }
    if items.is_empty() {
        items.push(vec![text(
            "none: every library has a cell under every fault",
        )]);
    }
    items
}

/// The narrowest cell, and the narrowest column of library names; wider
/// ones when a fault's or a library's name needs it (about 7.5 px a
/// character at 13 px).
const CELL_W: u32 = 150;
const CELL_H: u32 = 44;
const LEFT: u32 = 260;
const TOP: u32 = 110;

/// The matrix as an SVG: a cell's colour goes from green (no violation) to
/// red (every run), grey where there is no cell; each reads `v/n` (of its
/// conclusive runs), `n/a` where none was.
pub(crate) fn chart(out: &MatrixOutput) -> String {
    ensure_font();
    let m = out.matrix;
    let longest = m
        .faults
        .iter()
        .map(|f| f.name.chars().count())
        .max()
        .unwrap_or(0);
    let cell_w = CELL_W.max(longest as u32 * 15 / 2 + 12);
    let label = |l: &Library| format!("{} {}", l.name, l.version);
    let widest = m.libraries.iter().map(|l| label(l).chars().count()).max();
    let left = LEFT.max(widest.unwrap_or(0) as u32 * 15 / 2 + 20);
    let w = left + cell_w * m.faults.len() as u32 + 20;
    let h = TOP + CELL_H * m.libraries.len() as u32 + 20;
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (w, h)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let text = |s: &str, x: u32, y: u32, size: u32, c: &RGBColor| {
            let style = TextStyle::from((FAMILY, size).into_font()).color(c);
            let _ = root.draw(&Text::new(s.to_string(), (x as i32, y as i32), style));
        };
        text(
            "Violating runs of each library under each fault",
            10,
            10,
            20,
            &BLACK,
        );
        let sub = format!(
            "lab runs, seeds {}..={} a cell, violating / conclusive; grey: not a cell, n/a: no conclusive run",
            m.seeds.start(),
            m.seeds.end()
        );
        text(&sub, 10, 38, 14, &RGBColor(0x66, 0x66, 0x66));
        for (j, f) in m.faults.iter().enumerate() {
            text(&f.name, left + cell_w * j as u32 + 6, TOP - 26, 13, &BLACK);
        }
        for (i, l) in m.libraries.iter().enumerate() {
            let y = TOP + CELL_H * i as u32;
            text(&label(l), 10, y + 14, 13, &BLACK);
            for (j, f) in m.faults.iter().enumerate() {
                let x = left + cell_w * j as u32;
                let (fill, label) = match swept_at(out, l, f).map(|s| &s.row) {
                    Some(r) if r.conclusive_runs() == 0 => {
                        (RGBColor(0xbb, 0xbb, 0xbb), "n/a".to_string())
                    }
                    Some(r) => (
                        rate_colour(r.violation_rate),
                        format!("{}/{}", r.violating_runs, r.conclusive_runs()),
                    ),
                    None => (RGBColor(0xdd, 0xdd, 0xdd), "—".to_string()),
                };
                let rect = Rectangle::new(
                    [
                        (x as i32 + 2, y as i32 + 2),
                        ((x + cell_w) as i32 - 2, (y + CELL_H) as i32 - 2),
                    ],
                    fill.filled(),
                );
                let _ = root.draw(&rect);
                text(&label, x + cell_w / 2 - 16, y + 14, 15, &BLACK);
            }
        }
        let _ = root.present();
    }
    buf
}

/// Green at 0 (no violation), then yellow through orange to red at 1.
fn rate_colour(r: f64) -> RGBColor {
    let r = r.clamp(0.0, 1.0);
    let mix = |a: (u8, u8, u8), b: (u8, u8, u8), k: f64| {
        let f = |x: u8, y: u8| (x as f64 + (y as f64 - x as f64) * k).round() as u8;
        RGBColor(f(a.0, b.0), f(a.1, b.1), f(a.2, b.2))
    };
    let (yellow, orange, red) = ((0xff, 0xd5, 0x4f), (0xfb, 0x8c, 0x00), (0xe5, 0x39, 0x35));
    if r == 0.0 {
        RGBColor(0x8b, 0xc3, 0x4a)
    } else if r < 0.5 {
        mix(yellow, orange, r * 2.0)
    } else {
        mix(orange, red, (r - 0.5) * 2.0)
    }
}

#[cfg(test)]
mod tests {
    use super::dominant_phrase;

    #[test]
    fn the_dominant_kind_is_the_one_most_runs_had() {
        assert!(dominant_phrase([5, 2, 0]).starts_with("mostly in flight (runs: in flight 5,"));
        assert!(dominant_phrase([0, 3, 1]).starts_with("mostly sent late"));
        assert!(dominant_phrase([2, 2, 0]).starts_with("in flight and sent late equally"));
        assert!(dominant_phrase([0, 0, 0]).starts_with("no stale write"));
    }
}
