//! `report.md` and `index.html`: one document, rendered twice.
//!
//! The document says what ran, the verdict against the scenario's
//! `expect`, the figures, the chart, and for each violation a story for a
//! reader who never saw the code: who held the lock when, where the key
//! was on each node, which faults came before, and the events that led to
//! it. The HTML page has its CSS inline and shows the chart from
//! `timeline.svg` beside it.

use std::fmt::Write as _;

use super::facts::{fmt_len, fmt_ms, fmt_t, short_token, Facts, NOT_MEASURED};
use super::output::RunOutput;
use super::stories::{interleaving_story, overlap_story, stale_story};
use crate::doc::{bold, code, link, row, text, to_html, to_md, Block, Figure, Row, Style};
use redlock_harness::check::Verdict;
use redlock_harness::runner::lab::LabInfo;

/// Violations told in full; the others are listed in a table.
const MAX_STORIES: usize = 10;
/// Rows of the table of other violations.
const MAX_OTHER_ROWS: usize = 200;
/// Rows of the fault table and of the acquisitions table.
const MAX_LIST_ROWS: usize = 100;

/// `report.md` of a run.
pub fn report_md(out: &RunOutput) -> String {
    render_md(out, &Facts::new(out))
}

/// `index.html` of a run; it shows the timeline from `timeline.svg`
/// beside it.
pub fn index_html(out: &RunOutput) -> String {
    render_html(out, &Facts::new(out))
}

pub(crate) fn render_md(out: &RunOutput, facts: &Facts) -> String {
    to_md(&document(out, facts), &STYLE, &[figure()])
}

pub(crate) fn render_html(out: &RunOutput, facts: &Facts) -> String {
    to_html(&document(out, facts), &title(out), &STYLE, &[figure()])
}

/// The timeline, the one chart of the report (`Block::Chart(0)`), shown
/// from its file in both the Markdown and the HTML page.
fn figure() -> Figure<'static> {
    Figure {
        md: "![timeline](timeline.svg)".to_string(),
        title: None,
        svg: "",
        file: Some("timeline.svg"),
    }
}

const STYLE: Style = Style {
    css: CSS,
    escape_hash: false,
    num_columns: false,
    conclusions_list: false,
};

const CSS: &str = concat!(
    base_css!(),
    "\
td:nth-child(4){word-break:break-all}\
code{background:#f2f2f2;padding:0 .25em;border-radius:3px}\
.verdict{padding:.7em 1em;border-radius:6px;margin:1em 0;font-size:1.05em}\
.ok{background:#e8f5e9;border:1px solid #a5d6a7}.bad{background:#ffebee;border:1px solid #ef9a9a}\
.chart{overflow-x:auto;border:1px solid #eee;padding:4px}.chart svg,.chart img{display:block;max-width:100%;height:auto}\
"
);

fn title(out: &RunOutput) -> String {
    format!("{}, seed {}", out.scenario.name, out.seed)
}

/// `run`, or `lab` for a lab run.
fn command_name(out: &RunOutput) -> &'static str {
    if out.lab.is_some() {
        "lab"
    } else {
        "run"
    }
}

/// The `--set K=V --set K=V` flags the run had (as given, in order), for
/// the line "Run with `--set ...` (seed N)." at the top; `None` without
/// overrides (the report then says nothing of them).
fn sets_flags(out: &RunOutput) -> Option<String> {
    if out.sets.is_empty() {
        return None;
    }
    let sets: Vec<String> = out
        .sets
        .iter()
        .map(|(k, v)| {
            let v = redlock_harness::scenario::render_vary_value(v);
            format!("--set {k}={}", crate::doc::shell_word(&v))
        })
        .collect();
    Some(sets.join(" "))
}

/// The blocks of the report: heading, verdict, figures, timeline, outcome,
/// faults, acquisitions and the files.
fn document(out: &RunOutput, f: &Facts) -> Vec<Block> {
    let heading = format!("redlock-sim {}: {}", command_name(out), title(out));
    let mut doc = vec![Block::H(1, heading)];
    head(&mut doc, out);
    figures(&mut doc, out, f);
    if let Some(lab) = out.lab {
        lab_clients(&mut doc, lab, out.history);
    }
    timeline(&mut doc, out.lab.is_some());
    match out.check.verdict {
        Verdict::Safe => safe_outcome(&mut doc, out),
        Verdict::Violation => violations(&mut doc, out, f),
        Verdict::Inconclusive => {}
    }
    if !out.check.inconclusive.is_empty() {
        inconclusive(&mut doc, out);
    }
    abandoned_writes(&mut doc, out);
    faults(&mut doc, f);
    acquisitions(&mut doc, out);
    doc.push(Block::P(vec![
        text("Files: "),
        code("history.csv"),
        text(" (every event), "),
        code("summary.json"),
        text(" (the figures), "),
        code("timeline.svg"),
        text(" (the chart)."),
    ]));
    doc
}

/// The section "Inconclusive": what the run did not exercise, cause by
/// cause (a violation found all the same is still a violation).
fn inconclusive(doc: &mut Vec<Block>, out: &RunOutput) {
    let c = out.check;
    doc.push(Block::H(2, "Inconclusive".into()));
    doc.push(Block::P(vec![text(
        if c.verdict == Verdict::Inconclusive {
            "This run found no violation, but it did not exercise what its scenario sets out to \
         test, so it says nothing of safety:"
        } else {
            "The violation stands, but this run did not exercise all that its scenario sets out \
         to test:"
        },
    )]));
    let items = c
        .inconclusive
        .iter()
        .map(|cause| vec![code(cause.kind.as_str()), text(format!(": {}", cause.text))])
        .collect();
    doc.push(Block::List(items));
}

/// The `--set` flags, the description, the verdict and the setup.
fn head(doc: &mut Vec<Block>, out: &RunOutput) {
    let c = out.check;
    let s = out.scenario;
    if let Some(sets) = sets_flags(out) {
        doc.push(Block::P(vec![
            text("Run with "),
            code(sets),
            text(format!(" (seed {}).", out.seed)),
        ]));
    }
    if !s.description.trim().is_empty() {
        doc.push(Block::P(vec![text(s.description.trim())]));
    }
    let ok = out.as_expected();
    doc.push(Block::Verdict(
        ok,
        vec![
            bold(match out.outcome() {
                o if o == c.verdict.as_str() => format!("Verdict: {o}."),
                o => format!("Verdict: {}; outcome: {o}.", c.verdict.as_str()),
            }),
            text(format!(
                " The scenario expects {}: {}",
                s.expect.as_str(),
                if ok {
                    "the outcome is as expected."
                } else {
                    "the outcome is NOT as expected."
                }
            )),
        ],
    ));
    doc.push(Block::P(vec![text(setup_sentence(out))]));
}

/// The section "Figures": a table of the run's figures.
fn figures(doc: &mut Vec<Block>, out: &RunOutput, f: &Facts) {
    let c = out.check;
    let s = out.scenario;
    let l = &c.liveness;
    let seen = out.sees_lock_calls();
    let measured = |x: String| if seen { x } else { NOT_MEASURED.to_string() };
    doc.push(Block::H(2, "Figures".into()));
    let figures = vec![
        ("verdict", c.verdict.as_str().to_string()),
        (
            "outcome (safe, violation, inconclusive, or degraded)",
            out.outcome().to_string(),
        ),
        ("expected", s.expect.as_str().to_string()),
        ("lock overlaps", c.overlaps.len().to_string()),
        ("write interleavings", c.interleavings.len().to_string()),
        ("stale writes", c.stale_writes.len().to_string()),
        (
            "of which in flight / sent late / in overlap",
            c.stale_split().map(|n| n.to_string()).join(" / "),
        ),
        ("writes rejected by fencing", c.rejected_writes.to_string()),
        (
            "writes abandoned (never sent: the store connection never opened)",
            out.abandoned_writes().len().to_string(),
        ),
        ("lock calls", measured(l.attempts.to_string())),
        ("acquisitions", l.acquisitions.to_string()),
        ("acquire latency p50", measured(fmt_ms(l.acquire_p50_ms))),
        ("acquire latency p99", measured(fmt_ms(l.acquire_p99_ms))),
        (
            "unavailable (clients waiting, nobody holding; per resource, summed, to the last event)",
            measured(fmt_ms(l.unavailable_ms)),
        ),
        ("events", out.history.events.len().to_string()),
        (
            if out.lab.is_some() {
                "time since the start (last event)"
            } else {
                "simulated time (last event)"
            },
            fmt_t(f.end),
        ),
        ("trace", out.trace.clone()),
        ("wall time", fmt_ms(out.wall_ms)),
    ];
    let mut figures = figures;
    if let Some(lab) = out.lab {
        figures.push(("wall time, phase by phase", phases_text(lab, out.wall_ms)));
    }
    if let Some(n) = c.unprotected_writes {
        let row = (
            "unprotected writes (applied while nobody owned the lock)",
            n.to_string(),
        );
        figures.insert(7, row);
    }
    doc.push(Block::Table(
        vec!["figure".into(), "value".into()],
        figures
            .into_iter()
            .map(|(k, v)| row(vec![k.to_string(), v]))
            .collect(),
    ));
}

/// Where a lab run's wall time went: servers up, clients ready, the
/// scenario, after its end, the stop, the judging.
fn phases_text(lab: &LabInfo, wall_ms: f64) -> String {
    let p = &lab.phases;
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    let judging = (wall_ms - ms(p.total())).max(0.0);
    format!(
        "servers up {}; clients launched to READY {}; scenario {}; after its end {}; stop {}; judging {}",
        fmt_ms(ms(p.servers)),
        fmt_ms(ms(p.ready)),
        fmt_ms(ms(p.scenario)),
        fmt_ms(ms(p.after_end)),
        fmt_ms(ms(p.stop)),
        fmt_ms(judging)
    )
}

/// The section "Clients" of a lab run: the command, how each client ended,
/// its log.
fn lab_clients(doc: &mut Vec<Block>, lab: &LabInfo, history: &redlock_harness::history::History) {
    doc.push(Block::H(2, "Clients".into()));
    doc.push(Block::P(vec![
        text("Each client ran "),
        code(lab.cmd.join(" ")),
        text(" in a process group of its own; its output is in its log. A client that ended by itself before the run's duration, or failed, is marked. The nodes were served by "),
        code(lab.servers.clone()),
        text(if lab.servers.starts_with("redis-server") {
            " processes (their output is in servers/)."
        } else {
            "."
        }),
    ]));
    let items = lab
        .clients
        .iter()
        .map(|c| {
            let log = format!("clients/{}.log", c.name);
            let early = if c.early {
                " (ended early, or failed)"
            } else {
                ""
            };
            let errors = history
                .of(&c.name)
                .filter(|e| {
                    matches!(
                        e.kind,
                        redlock_harness::history::EventKind::StoreError { .. }
                    )
                })
                .count();
            let errors = match errors {
                0 => String::new(),
                n => format!("; {n} store command(s) refused (store_error in history.csv)"),
            };
            vec![
                bold(c.name.clone()),
                text(format!(": {}{early}{errors}; log: ", c.status)),
                link(log.clone(), log),
            ]
        })
        .collect();
    doc.push(Block::List(items));
}

/// The section "Timeline": the chart and how to read it.
fn timeline(doc: &mut Vec<Block>, lab: bool) {
    doc.push(Block::H(2, "Timeline".into()));
    doc.push(Block::Chart(0));
    if lab {
        doc.push(Block::P(vec![text(
            "A lab run: time is the wall clock's since the start, a client's lock calls are \
             not seen (only what its driver said: HELD opens a hold, RELEASED ends it), and a \
             node's key is colored by the client whose command created it.",
        )]));
    }
    let (time, calls) = if lab {
        ("wall time since the start", "")
    } else {
        ("simulated time", "its lock calls (thin grey) and ")
    };
    doc.push(Block::P(vec![text(format!(
        "Time runs left to right, in seconds of {time}. The top lane marks the faults. \
         Each client row shows {calls}its holds (its color), with the \
         parts where two clients held the lock at once in red, and its writes as ticks. Each node \
         row shows when the node held the lock key, colored by the client whose token it was \
         (grey for a failed attempt), when it was down (black) and paused (amber strip). \
         Blue shading marks partitions.",
    ))]));
}

/// The section "Outcome: safe": what did not happen, and the liveness figures.
fn safe_outcome(doc: &mut Vec<Block>, out: &RunOutput) {
    let c = out.check;
    let l = &c.liveness;
    doc.push(Block::H(2, "Outcome: safe".into()));
    let holders = {
        let mut v: Vec<&str> = c.holds.iter().map(|h| h.client.as_str()).collect();
        v.sort();
        v.dedup();
        v.len()
    };
    doc.push(Block::P(vec![
        bold("No violation."),
        text(format!(
            " Over {} acquisitions by {} client(s), no two holds of the same lock by \
             different clients overlapped, the store applied no write after a later \
             acquisition of its lock, and never applied the writes of two acquisitions \
             interleaved. {} write(s) were refused by fencing. {}",
            l.acquisitions,
            holders,
            c.rejected_writes,
            liveness_sentence(out),
        )),
    ]));
}

/// The lock calls, the acquire latencies and the time unavailable, in a
/// sentence; a lab run does not see lock calls, so it says they were not
/// measured.
fn liveness_sentence(out: &RunOutput) -> String {
    let l = &out.check.liveness;
    if !out.sees_lock_calls() {
        return "The lab does not see lock calls: the lock calls, the acquire latencies \
                and the time clients waited while nobody held the lock were not measured."
            .to_string();
    }
    format!(
        "Of {} lock calls, {} succeeded; acquiring took {} at the median and {} at the \
         99th percentile, and for {} in total clients were waiting for the lock while nobody \
         held it (per resource, summed over resources, up to the last event).",
        l.attempts,
        l.acquisitions,
        fmt_ms(l.acquire_p50_ms),
        fmt_ms(l.acquire_p99_ms),
        fmt_ms(l.unavailable_ms),
    )
}

/// The section "Violations": a story for each of the first ones, a table of the others.
fn violations(doc: &mut Vec<Block>, out: &RunOutput, f: &Facts) {
    let c = out.check;
    doc.push(Block::H(
        2,
        format!(
            "Violations: {} lock overlap(s), {} stale write(s), {} write interleaving(s)",
            c.overlaps.len(),
            c.stale_writes.len(),
            c.interleavings.len()
        ),
    ));
    let mut n = 0;
    for o in c.overlaps.iter().take(MAX_STORIES) {
        n += 1;
        overlap_story(doc, out, f, n, o);
    }
    for w in c.stale_writes.iter().take(MAX_STORIES) {
        n += 1;
        stale_story(doc, out, f, n, w);
    }
    for i in c.interleavings.iter().take(MAX_STORIES) {
        n += 1;
        interleaving_story(doc, out, f, n, i);
    }
    other_violations(doc, out);
}

/// The violations past the first [`MAX_STORIES`] of each kind, as a table.
fn other_violations(doc: &mut Vec<Block>, out: &RunOutput) {
    let c = out.check;
    let rest_o = c.overlaps.iter().skip(MAX_STORIES);
    let rest_s = c.stale_writes.iter().skip(MAX_STORIES);
    let rest_i = c.interleavings.iter().skip(MAX_STORIES);
    let rest = rest_o.len() + rest_s.len() + rest_i.len();
    if rest == 0 {
        return;
    }
    doc.push(Block::H(3, format!("{rest} more violation(s)")));
    let mut rows: Vec<Row> = Vec::new();
    for o in c.overlaps.iter().skip(MAX_STORIES) {
        rows.push(row(vec![
            "lock overlap".into(),
            o.a.resource.clone(),
            format!(
                "{} #{} and {} #{}",
                o.a.client, o.a.acq, o.b.client, o.b.acq
            ),
            format!("{} to {}", fmt_t(o.from), fmt_t(o.to)),
        ]));
    }
    for w in c.stale_writes.iter().skip(MAX_STORIES) {
        rows.push(row(vec![
            "stale write".into(),
            w.resource.clone(),
            format!(
                "{} #{} write {} in {} #{}",
                w.writer.0, w.writer.1, w.seq, w.landed_in.0, w.landed_in.1
            ),
            format!("applied {}", fmt_t(w.applied)),
        ]));
    }
    for i in c.interleavings.iter().skip(MAX_STORIES) {
        rows.push(row(vec![
            "write interleaving".into(),
            i.resource.clone(),
            format!(
                "{} #{} and {} #{}",
                i.first.0, i.first.1, i.second.0, i.second.1
            ),
            i.times.map(fmt_t).join(", "),
        ]));
    }
    let total = rows.len();
    rows.truncate(MAX_OTHER_ROWS);
    doc.push(Block::Table(
        vec![
            "kind".into(),
            "lock".into(),
            "acquisitions".into(),
            "times".into(),
        ],
        rows,
    ));
    if total > MAX_OTHER_ROWS {
        doc.push(Block::P(vec![text(format!(
            "… and {} more (see summary.json and history.csv).",
            total - MAX_OTHER_ROWS
        ))]));
    }
}

/// The section "Faults": a table of the faults injected.
fn faults(doc: &mut Vec<Block>, f: &Facts) {
    doc.push(Block::H(2, "Faults".into()));
    if f.markers.is_empty() {
        doc.push(Block::P(vec![text("No fault was injected in this run.")]));
        return;
    }
    let rows: Vec<Row> = f
        .markers
        .iter()
        .take(MAX_LIST_ROWS)
        .map(|m| row(vec![fmt_t(m.time), m.what.clone(), m.text.clone()]))
        .collect();
    doc.push(Block::Table(
        vec!["time".into(), "fault".into(), "what happened".into()],
        rows,
    ));
    if f.markers.len() > MAX_LIST_ROWS {
        doc.push(Block::P(vec![text(format!(
            "… and {} more in history.csv.",
            f.markers.len() - MAX_LIST_ROWS
        ))]));
    }
}

/// The section "Acquisitions": a table of the holds, overlapping ones in bold.
fn acquisitions(doc: &mut Vec<Block>, out: &RunOutput) {
    let c = out.check;
    doc.push(Block::H(2, "Acquisitions".into()));
    if c.holds.is_empty() {
        doc.push(Block::P(vec![text("No client acquired the lock.")]));
        return;
    }
    let overlapping: std::collections::BTreeSet<(&str, u64)> = c
        .overlaps
        .iter()
        .flat_map(|o| {
            [
                (o.a.client.as_str(), o.a.acq),
                (o.b.client.as_str(), o.b.acq),
            ]
        })
        .collect();
    // The lock column only when the run used more than one lock.
    let several = c.holds.iter().any(|h| h.resource != c.holds[0].resource);
    let rows: Vec<Row> = c
        .holds
        .iter()
        .take(MAX_LIST_ROWS)
        .map(|h| Row {
            strong: overlapping.contains(&(h.client.as_str(), h.acq)),
            cells: several
                .then(|| h.resource.clone())
                .into_iter()
                .chain([
                    h.client.clone(),
                    format!("#{}", h.acq),
                    short_token(&h.token),
                    h.fence.map_or("-".to_string(), |x| x.to_string()),
                    fmt_t(h.start),
                    fmt_t(h.end),
                    h.end_reason.as_str().to_string(),
                ])
                .collect(),
        })
        .collect();
    doc.push(Block::Table(
        several
            .then_some("lock")
            .into_iter()
            .chain([
                "client",
                "acquisition",
                "token",
                "fence",
                "from",
                "to",
                "ended by",
            ])
            .map(String::from)
            .collect(),
        rows,
    ));
    if c.holds.len() > MAX_LIST_ROWS {
        doc.push(Block::P(vec![text(format!(
            "… and {} more in history.csv.",
            c.holds.len() - MAX_LIST_ROWS
        ))]));
    }
}

/// The section "Writes abandoned", when a client gave up on a write whose
/// connection to the store never opened.
fn abandoned_writes(doc: &mut Vec<Block>, out: &RunOutput) {
    let writes = out.abandoned_writes();
    if writes.is_empty() {
        return;
    }
    doc.push(Block::H(2, "Writes abandoned".into()));
    doc.push(Block::P(vec![text(format!(
        "{} write(s) never left their client: the client gave up on each (its lock ran out) \
         while its connection to the store was still being opened, a handshake that a \
         partition or a slow link held. Nothing of them reached the store, and they are not \
         counted as sent. The client then opened a new connection for its next write.",
        writes.len()
    ))]));
    let rows: Vec<Row> = writes
        .iter()
        .take(MAX_LIST_ROWS)
        .filter_map(|e| match e.kind {
            redlock_harness::history::EventKind::WriteAbandoned { acq, seq } => Some(row(vec![
                e.host.clone(),
                format!("#{acq}"),
                seq.to_string(),
                fmt_t(e.time),
            ])),
            _ => None,
        })
        .collect();
    let header = ["client", "acquisition", "write", "given up at"];
    doc.push(Block::Table(header.map(String::from).to_vec(), rows));
}

fn setup_sentence(out: &RunOutput) -> String {
    let s = out.scenario;
    let cl = &s.cluster;
    let mut text = format!(
        "Setup: {} topology with {} node(s), {} client(s), {} for {}; persistence {}, restart {}.",
        s.cluster.topology.as_str(),
        cl.nodes,
        s.clients.len(),
        if out.lab.is_some() {
            "run in real time"
        } else {
            "simulated"
        },
        fmt_len(s.duration),
        cl.persistence.as_str(),
        match cl.restart {
            redlock_harness::scenario::Restart::Immediate => "immediate".to_string(),
            redlock_harness::scenario::Restart::Never => "never".to_string(),
            redlock_harness::scenario::Restart::After(d) => format!("after {}", fmt_len(d)),
        }
    );
    if let Some(c) = s.clients.first() {
        let _ = write!(
            text,
            " Clients (as c1): TTL {}, hold {}, {} write(s) per acquisition, renew {}, fencing {}, variant {}.",
            fmt_len(c.ttl),
            if let redlock_harness::scenario::Hold::For(h) = c.hold {
                if h.lo == h.hi {
                    fmt_len(h.lo)
                } else {
                    format!("{} to {}", fmt_len(h.lo), fmt_len(h.hi))
                }
            } else {
                "until the validity check fails".to_string()
            },
            c.writes,
            if c.renew { "on" } else { "off" },
            if c.fencing { "on" } else { "off" },
            c.variant.as_str()
        );
        if c.lock == redlock_harness::scenario::LockKind::Reentrant {
            let _ = write!(
                text,
                " Lock: Redisson's reentrant lock (a hash {{owner: count}}), {} nested re-acquisition(s) per hold.",
                c.reentry
            );
        }
    }
    text
}
