//! `report.md` and `index.html`: one document, rendered twice.
//!
//! The document says what ran, the verdict against the scenario's
//! `expect`, the figures, the chart, and for each violation a story for a
//! reader who never saw the code: who held the lock when, where the key
//! was on each node, which faults came before, and the events that led to
//! it. The HTML page is self-contained (inline CSS, the SVG inlined).

use std::fmt::Write as _;
use std::time::Duration;

use super::doc::{b, code, row, t, to_html, to_md, Block, Figure, In, Row, Style};
use super::{excerpt, fmt_len, fmt_ms, fmt_t, short_token, Facts, RunOutput};
use crate::check::{Hold, Interleaving, Overlap, StaleWrite, Verdict};
use crate::history::{Event, EventKind};

/// Violations told in full; the others are listed in a table.
const MAX_STORIES: usize = 10;
/// Rows of the table of other violations.
const MAX_OTHER_ROWS: usize = 200;
/// Rows of an event excerpt.
const EXCERPT_ROWS: usize = 40;
/// Faults listed before a violation.
const MAX_FAULTS_BEFORE: usize = 15;
/// Rows of the fault table and of the acquisitions table.
const MAX_LIST_ROWS: usize = 100;

/// `report.md` of a run.
pub fn report_md(out: &RunOutput) -> String {
    render_md(out, &Facts::new(out))
}

/// `index.html` of a run, with the timeline inlined.
pub fn index_html(out: &RunOutput) -> String {
    let facts = Facts::new(out);
    let svg = super::timeline::render(out, &facts);
    render_html(out, &facts, &svg)
}

pub(crate) fn render_md(out: &RunOutput, facts: &Facts) -> String {
    to_md(&document(out, facts), &STYLE, &[figure("")])
}

pub(crate) fn render_html(out: &RunOutput, facts: &Facts, svg: &str) -> String {
    to_html(&document(out, facts), &title(out), &STYLE, &[figure(svg)])
}

/// The timeline, the one chart of the report (`Block::Chart(0)`).
fn figure(svg: &str) -> Figure<'_> {
    Figure {
        md: "![timeline](timeline.svg)".to_string(),
        title: None,
        svg,
    }
}

const STYLE: Style = Style {
    css: CSS,
    escape_hash: false,
    num_columns: false,
    conclusions_list: false,
};

const CSS: &str = "\
body{font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;max-width:1240px;margin:2em auto;padding:0 1em;color:#222;line-height:1.45}\
h1{font-size:1.6em;margin-bottom:.3em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}\
h3{margin-top:1.4em}\
table{border-collapse:collapse;margin:.6em 0 1em;font-size:.9em}\
th,td{border:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top}\
th{background:#f4f4f4}tr.strong td{font-weight:600;background:#fff4f4}\
td:nth-child(4){word-break:break-all}\
code{background:#f2f2f2;padding:0 .25em;border-radius:3px}\
.verdict{padding:.7em 1em;border-radius:6px;margin:1em 0;font-size:1.05em}\
.ok{background:#e8f5e9;border:1px solid #a5d6a7}.bad{background:#ffebee;border:1px solid #ef9a9a}\
.chart{overflow-x:auto;border:1px solid #eee;padding:4px}.chart svg{display:block;max-width:100%;height:auto}\
";

fn title(out: &RunOutput) -> String {
    format!("{}, seed {}", out.scenario.name, out.seed)
}

fn document(out: &RunOutput, f: &Facts) -> Vec<Block> {
    let c = out.check;
    let s = out.scenario;
    let l = &c.liveness;
    let mut doc = vec![Block::H(1, format!("redlock-sim run: {}", title(out)))];
    if !s.description.trim().is_empty() {
        doc.push(Block::P(vec![t(s.description.trim())]));
    }
    let ok = out.as_expected();
    doc.push(Block::Verdict(
        ok,
        vec![
            b(match out.outcome() {
                o if o == c.verdict.as_str() => format!("Verdict: {o}."),
                o => format!("Verdict: {}; outcome: {o}.", c.verdict.as_str()),
            }),
            t(format!(
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
    doc.push(Block::P(vec![t(setup_sentence(out))]));

    doc.push(Block::H(2, "Figures".into()));
    let figures = vec![
        ("verdict", c.verdict.as_str().to_string()),
        (
            "outcome (safe, violation, or degraded)",
            out.outcome().to_string(),
        ),
        ("expected", s.expect.as_str().to_string()),
        ("lock overlaps", c.overlaps.len().to_string()),
        ("write interleavings", c.interleavings.len().to_string()),
        ("stale writes", c.stale_writes.len().to_string()),
        ("writes rejected by fencing", c.rejected_writes.to_string()),
        ("lock calls", l.attempts.to_string()),
        ("acquisitions", l.acquisitions.to_string()),
        ("acquire latency p50", fmt_ms(l.acquire_p50_ms)),
        ("acquire latency p99", fmt_ms(l.acquire_p99_ms)),
        (
            "unavailable (clients waiting, nobody holding)",
            fmt_ms(l.unavailable_ms),
        ),
        ("events", out.history.events.len().to_string()),
        ("simulated time (last event)", fmt_t(f.end)),
        ("trace", out.trace.clone()),
        ("wall time", fmt_ms(out.wall_ms)),
    ];
    doc.push(Block::Table(
        vec!["figure".into(), "value".into()],
        figures
            .into_iter()
            .map(|(k, v)| row(vec![k.to_string(), v]))
            .collect(),
    ));

    doc.push(Block::H(2, "Timeline".into()));
    doc.push(Block::Chart(0));
    doc.push(Block::P(vec![t(
        "Time runs left to right, in seconds of simulated time. The top lane marks the faults. \
         Each client row shows its lock calls (thin grey) and its holds (its color), with the \
         parts where two clients held the lock at once in red, and its writes as ticks. Each node \
         row shows when the node held the lock key, colored by the client whose token it was \
         (grey for a failed attempt), when it was down (black) and paused (amber strip). \
         Blue shading marks partitions.",
    )]));

    if c.verdict == Verdict::Safe {
        doc.push(Block::H(2, "Outcome: safe".into()));
        let holders = {
            let mut v: Vec<&str> = c.holds.iter().map(|h| h.client.as_str()).collect();
            v.sort();
            v.dedup();
            v.len()
        };
        doc.push(Block::P(vec![
            b("No violation."),
            t(format!(
                " Over {} acquisitions by {} client(s), no two holds of the same lock by \
                 different clients overlapped, the store applied no write after a later \
                 acquisition of its lock, and never applied the writes of two acquisitions \
                 interleaved. {} write(s) were refused by fencing. Of {} lock calls, {} \
                 succeeded; acquiring took {} at the median and {} at the 99th percentile, and \
                 for {} in total clients were waiting for the lock while nobody held it.",
                l.acquisitions,
                holders,
                c.rejected_writes,
                l.attempts,
                l.acquisitions,
                fmt_ms(l.acquire_p50_ms),
                fmt_ms(l.acquire_p99_ms),
                fmt_ms(l.unavailable_ms),
            )),
        ]));
    } else {
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
            overlap_story(&mut doc, out, f, n, o);
        }
        for w in c.stale_writes.iter().take(MAX_STORIES) {
            n += 1;
            stale_story(&mut doc, out, f, n, w);
        }
        for i in c.interleavings.iter().take(MAX_STORIES) {
            n += 1;
            interleaving_story(&mut doc, out, f, n, i);
        }
        let rest_o = c.overlaps.iter().skip(MAX_STORIES);
        let rest_s = c.stale_writes.iter().skip(MAX_STORIES);
        let rest_i = c.interleavings.iter().skip(MAX_STORIES);
        let rest = rest_o.len() + rest_s.len() + rest_i.len();
        if rest > 0 {
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
                doc.push(Block::P(vec![t(format!(
                    "… and {} more (see summary.json and history.csv).",
                    total - MAX_OTHER_ROWS
                ))]));
            }
        }
    }

    doc.push(Block::H(2, "Faults".into()));
    if f.markers.is_empty() {
        doc.push(Block::P(vec![t("No fault was injected in this run.")]));
    } else {
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
            doc.push(Block::P(vec![t(format!(
                "… and {} more in history.csv.",
                f.markers.len() - MAX_LIST_ROWS
            ))]));
        }
    }

    doc.push(Block::H(2, "Acquisitions".into()));
    if c.holds.is_empty() {
        doc.push(Block::P(vec![t("No client acquired the lock.")]));
    } else {
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
            doc.push(Block::P(vec![t(format!(
                "… and {} more in history.csv.",
                c.holds.len() - MAX_LIST_ROWS
            ))]));
        }
    }
    doc.push(Block::P(vec![
        t("Files: "),
        code("history.csv"),
        t(" (every event), "),
        code("summary.json"),
        t(" (the figures), "),
        code("timeline.svg"),
        t(" (the chart)."),
    ]));
    doc
}

fn setup_sentence(out: &RunOutput) -> String {
    let s = out.scenario;
    let cl = &s.cluster;
    let mut text = format!(
        "Setup: {} topology with {} node(s), {} client(s), simulated for {}; persistence {}, restart {}.",
        s.cluster.topology.as_str(),
        cl.nodes,
        s.clients.len(),
        fmt_len(s.duration),
        cl.persistence.as_str(),
        match cl.restart {
            crate::scenario::Restart::Immediate => "immediate".to_string(),
            crate::scenario::Restart::Never => "never".to_string(),
            crate::scenario::Restart::After(d) => format!("after {}", fmt_len(d)),
        }
    );
    if let Some(c) = s.clients.first() {
        let _ = write!(
            text,
            " Clients (as c1): TTL {}, hold {}, {} write(s) per acquisition, renew {}, fencing {}, variant {}.",
            fmt_len(c.ttl),
            if c.hold.lo == c.hold.hi {
                fmt_len(c.hold.lo)
            } else {
                format!("{} to {}", fmt_len(c.hold.lo), fmt_len(c.hold.hi))
            },
            c.writes,
            if c.renew { "on" } else { "off" },
            if c.fencing { "on" } else { "off" },
            c.variant.as_str()
        );
    }
    text
}

/// `c1's acquisition #2`.
fn acq_name(client: &str, acq: u64) -> String {
    format!("{client}'s acquisition #{acq}")
}

fn hold_sentence(h: &Hold, verb: &str) -> String {
    let fence = h
        .fence
        .map_or(String::new(), |x| format!(", fencing token {x}"));
    format!(
        "{} {verb} the lock at {} (acquisition #{}, token {}{fence}) and held it until {}, when {} ({} in all).",
        h.client,
        fmt_t(h.start),
        h.acq,
        short_token(&h.token),
        fmt_t(h.end),
        h.end_reason.describe(),
        fmt_len(h.length()),
    )
}

fn overlap_story(doc: &mut Vec<Block>, out: &RunOutput, f: &Facts, n: usize, o: &Overlap) {
    let (a, bh) = (&o.a, &o.b);
    doc.push(Block::H(
        3,
        format!(
            "Violation {n}: {} and {} held the lock {} at the same time",
            a.client, bh.client, a.resource
        ),
    ));
    doc.push(Block::P(vec![
        t(hold_sentence(a, "acquired")),
        t(" "),
        t(hold_sentence(bh, "acquired")),
        t(" "),
        b(format!(
            "From {} to {} both held it: {} of overlap.",
            fmt_t(o.from),
            fmt_t(o.to),
            fmt_len(o.to.saturating_sub(o.from))
        )),
    ]));

    // Where the key was.
    if !f.nodes.is_empty() {
        let b_nodes = f.nodes_with_token(&bh.token, bh.start);
        let a_nodes = f.nodes_with_token(&a.token, bh.start);
        let list = |v: &[String]| {
            if v.is_empty() {
                "no node".to_string()
            } else {
                v.join(", ")
            }
        };
        let quorum = if out.scenario.cluster.topology == crate::scenario::Topology::Redlock {
            format!(
                " A majority is {} of {}.",
                out.scenario.cluster.nodes / 2 + 1,
                out.scenario.cluster.nodes
            )
        } else {
            String::new()
        };
        doc.push(Block::P(vec![t(format!(
            "When {} acquired at {}, its token was on {} of {} node(s) ({}), while {}'s token was still on {} ({}).{quorum}",
            bh.client,
            fmt_t(bh.start),
            b_nodes.len(),
            f.nodes.len(),
            list(&b_nodes),
            a.client,
            a_nodes.len(),
            list(&a_nodes),
        ))]));
        let at_a = format!("when {} acquired ({})", a.client, fmt_t(a.start));
        let at_b = format!("when {} acquired ({})", bh.client, fmt_t(bh.start));
        let rows: Vec<Row> = f
            .nodes
            .iter()
            .map(|node| {
                row(vec![
                    node.clone(),
                    f.node_state_at(node, a.start),
                    f.node_state_at(node, bh.start),
                ])
            })
            .collect();
        doc.push(Block::P(vec![t(
            "Who the lock key on each node belonged to (client and acquisition):",
        )]));
        doc.push(Block::Table(vec!["node".into(), at_a, at_b], rows));

        let changes: Vec<Vec<In>> = out
            .history
            .events
            .iter()
            .filter(|e| e.time > a.start && e.time <= bh.start)
            .filter_map(|e| node_change(f, e))
            .collect();
        if !changes.is_empty() {
            doc.push(Block::P(vec![t(format!(
                "What changed on the nodes between the two acquisitions ({} to {}):",
                fmt_t(a.start),
                fmt_t(bh.start)
            ))]));
            doc.push(Block::List(cap_list(changes, 20)));
        }
    }

    faults_before(doc, f, bh.start, &format!("{} acquired", bh.client));

    let from = a.start.saturating_sub(Duration::from_secs(1));
    let keys = [(a.client.as_str(), a.acq), (bh.client.as_str(), bh.acq)];
    let keep = |e: &Event| involves(e, &keys);
    events_table(
        doc,
        out,
        from,
        o.from,
        &keep,
        &format!(
            "The events that led to it, from {} ({}) to the start of the overlap at {}:",
            fmt_t(from),
            if a.start >= Duration::from_secs(1) {
                format!("1 s before {} acquired", a.client)
            } else {
                "the start of the run".to_string()
            },
            fmt_t(o.from)
        ),
    );
}

fn stale_story(doc: &mut Vec<Block>, out: &RunOutput, f: &Facts, n: usize, w: &StaleWrite) {
    let (wc, wa) = (&w.writer.0, w.writer.1);
    let (lc, la) = (&w.landed_in.0, w.landed_in.1);
    doc.push(Block::H(
        3,
        format!(
            "Violation {n}: a stale write of {wc} to {} landed in {}",
            w.resource,
            acq_name(lc, la)
        ),
    ));
    let sent = match w.sent {
        Some(s) => format!(
            "It sent write {} at {}; the store applied it at {}, ",
            w.seq,
            fmt_t(s),
            fmt_t(w.applied)
        ),
        None => format!(
            "The store applied its write {} at {}, ",
            w.seq,
            fmt_t(w.applied)
        ),
    };
    let fence = match w.fence {
        None => "Fencing was off: the store had no token to tell the late write from a current one.".to_string(),
        Some(x) => format!(
            "Its fencing token {x} was accepted: the store had not yet seen a higher one (the later holder had not written yet), so fencing could not refuse it."
        ),
    };
    let hold = out
        .check
        .holds
        .iter()
        .find(|h| h.client == *wc && h.acq == wa);
    let mut p = vec![
        t(format!(
            "{wc} acquired {} at {} (acquisition #{wa}). {sent}",
            w.resource,
            fmt_t(w.acquired),
        )),
        b(format!(
            "{} after {} of the same lock had succeeded at {}",
            fmt_len(w.applied.saturating_sub(w.landed_in_start)),
            acq_name(lc, la),
            fmt_t(w.landed_in_start),
        )),
        t(": the writer's lock was gone. "),
    ];
    if let Some(h) = hold {
        p.push(t(format!(
            "{wc}'s hold had ended at {}, when {}. ",
            fmt_t(h.end),
            h.end_reason.describe()
        )));
    }
    if let Some(s) = w.sent {
        if s > w.landed_in_start {
            p.push(t("The write was sent after the later acquisition: the writer did not know its lock was gone. "));
        } else if hold.is_some_and(|h| s <= h.end) {
            p.push(t(
                "The write was sent while the writer still held the lock and arrived late. ",
            ));
        }
    }
    p.push(t(fence));
    doc.push(Block::P(p));
    faults_before(doc, f, w.applied, "the stale write");
    let from = w.acquired.saturating_sub(Duration::from_secs(1));
    let keys = [(wc.as_str(), wa), (lc.as_str(), la)];
    let keep = |e: &Event| involves(e, &keys);
    events_table(
        doc,
        out,
        from,
        w.applied,
        &keep,
        &format!(
            "The events that led to it, from {} ({}) to the stale write at {}:",
            fmt_t(from),
            if w.acquired >= Duration::from_secs(1) {
                format!("1 s before {wc} acquired")
            } else {
                "the start of the run".to_string()
            },
            fmt_t(w.applied)
        ),
    );
}

fn interleaving_story(
    doc: &mut Vec<Block>,
    out: &RunOutput,
    f: &Facts,
    n: usize,
    i: &Interleaving,
) {
    let (ac, aa) = (&i.first.0, i.first.1);
    let (bc, ba) = (&i.second.0, i.second.1);
    doc.push(Block::H(
        3,
        format!(
            "Violation {n}: writes of {ac} and {bc} to {} interleaved at the store",
            i.resource
        ),
    ));
    doc.push(Block::P(vec![
        t(format!(
            "The store applied a write of {} at {}, then a write of {} at {}, then again a write of {} at {}. ",
            acq_name(ac, aa),
            fmt_t(i.times[0]),
            acq_name(bc, ba),
            fmt_t(i.times[1]),
            acq_name(ac, aa),
            fmt_t(i.times[2]),
        )),
        t("The resource saw the writes of two lock holders mixed."),
    ]));
    let fence = |x: Option<u64>| x.map_or("-".to_string(), |v| v.to_string());
    let rows = vec![(ac, aa, 0usize), (bc, ba, 1usize), (ac, aa, 2usize)]
        .into_iter()
        .map(|(cl, acq, k)| {
            row(vec![
                (k + 1).to_string(),
                fmt_t(i.times[k]),
                cl.clone(),
                format!("#{acq}"),
                i.seqs[k].to_string(),
                fence(i.fences[k]),
            ])
        })
        .collect();
    doc.push(Block::Table(
        [
            "write",
            "applied at",
            "client",
            "acquisition",
            "seq",
            "fencing token",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    ));
    let hold_of = |cl: &str, acq: u64| {
        out.check
            .holds
            .iter()
            .find(|h| h.client == cl && h.acq == acq)
    };
    let mut p: Vec<In> = Vec::new();
    for (cl, acq) in [(ac, aa), (bc, ba)] {
        match hold_of(cl, acq) {
            Some(h) => p.push(t(format!(
                "{}'s hold for acquisition #{}: {} to {}, ended when {}. ",
                cl,
                acq,
                fmt_t(h.start),
                fmt_t(h.end),
                h.end_reason.describe()
            ))),
            None => p.push(t(format!(
                "{} has no recorded acquisition #{} (no acquired event). ",
                cl, acq
            ))),
        }
    }
    // Which of the three writes landed outside its writer's hold.
    let mut outside = 0;
    for (k, (cl, acq)) in [(ac, aa), (bc, ba), (ac, aa)].into_iter().enumerate() {
        let w = i.times[k];
        match hold_of(cl, acq) {
            Some(h) if w > h.end => {
                outside += 1;
                p.push(b(format!(
                    "{cl}'s write at {} was applied {} after its hold had ended at {} ({}): it wrote without holding the lock. ",
                    fmt_t(w),
                    fmt_len(w.saturating_sub(h.end)),
                    fmt_t(h.end),
                    h.end_reason.describe()
                )));
            }
            Some(h) if w < h.start => {
                outside += 1;
                p.push(b(format!(
                    "{cl}'s write at {} was applied before its hold started at {}. ",
                    fmt_t(w),
                    fmt_t(h.start)
                )));
            }
            _ => {}
        }
    }
    if outside == 0 {
        p.push(b(
            "Every one of these writes was applied while its writer held the lock: the two holds overlapped.",
        ));
    }
    doc.push(Block::P(p));
    let fences = i.fences;
    let fencing = if fences.iter().all(Option::is_none) {
        "Fencing was off: the store had no token to tell the late write from a current one."
            .to_string()
    } else {
        format!(
            "Fencing tokens: {ac} wrote with {} and {}, {bc} with {}. The store refuses a write whose token is lower than the highest it has accepted.",
            fence(fences[0]),
            fence(fences[2]),
            fence(fences[1])
        )
    };
    doc.push(Block::P(vec![t(fencing)]));

    faults_before(doc, f, i.times[1], &format!("{bc}'s write"));

    let from = i.times[0].saturating_sub(Duration::from_secs(1));
    let keys = [(ac.as_str(), aa), (bc.as_str(), ba)];
    let keep = |e: &Event| involves(e, &keys);
    events_table(
        doc,
        out,
        from,
        i.times[2],
        &keep,
        &format!(
            "The events around it, from {} ({}) to the third write at {}:",
            fmt_t(from),
            if i.times[0] >= Duration::from_secs(1) {
                "1 s before the first of the three writes"
            } else {
                "the start of the run"
            },
            fmt_t(i.times[2])
        ),
    );
}

/// Does `e` belong to one of the acquisitions `keys`?
fn involves(e: &Event, keys: &[(&str, u64)]) -> bool {
    let hit = |c: &str, a: u64| keys.iter().any(|(kc, ka)| *kc == c && *ka == a);
    match &e.kind {
        EventKind::Acquired { acq, .. }
        | EventKind::ReleaseStart { acq }
        | EventKind::Released { acq, .. }
        | EventKind::Lost { acq, .. }
        | EventKind::ValidityExpired { acq }
        | EventKind::Extended { acq, .. }
        | EventKind::WriteSent { acq, .. } => hit(&e.host, *acq),
        EventKind::WriteApplied { client, acq, .. }
        | EventKind::WriteRejected { client, acq, .. } => hit(client, *acq),
        EventKind::Fault { .. } | EventKind::FaultSkipped { .. } | EventKind::Failover { .. } => {
            true
        }
        _ => false,
    }
}

/// A node event as a list item, or `None`.
fn node_change(f: &Facts, e: &Event) -> Option<Vec<In>> {
    let when = fmt_t(e.time);
    let text = match &e.kind {
        EventKind::KeySet { key, token, .. } => {
            format!("{}: key {} set for {}", e.host, key, f.owner_label(token))
        }
        EventKind::KeyRemoved { key } => format!("{}: key {} removed", e.host, key),
        EventKind::NodeUp { keys } => format!("{}: (re)started with {} key(s)", e.host, keys),
        EventKind::Fault { what, .. } if what == "crash" => {
            let m = f
                .markers
                .iter()
                .find(|m| m.time == e.time && m.what == "crash");
            m.map_or_else(|| format!("{}: crash", e.host), |m| m.text.clone())
        }
        _ => return None,
    };
    Some(vec![b(when), t(format!(" — {text}"))])
}

fn cap_list(mut items: Vec<Vec<In>>, cap: usize) -> Vec<Vec<In>> {
    if items.len() > cap {
        let more = items.len() - cap;
        items.truncate(cap);
        items.push(vec![t(format!(
            "… and {more} more (see the events below and history.csv)"
        ))]);
    }
    items
}

fn faults_before(doc: &mut Vec<Block>, f: &Facts, at: Duration, what: &str) {
    let before: Vec<_> = f.markers.iter().filter(|m| m.time <= at).collect();
    if before.is_empty() {
        doc.push(Block::P(vec![t(format!(
            "No fault was injected before {what} at {}: the violation comes from timing, clocks \
             and the algorithm alone.",
            fmt_t(at)
        ))]));
        return;
    }
    doc.push(Block::P(vec![t(format!(
        "Faults before {what} at {}:",
        fmt_t(at)
    ))]));
    let skip = before.len().saturating_sub(MAX_FAULTS_BEFORE);
    let mut items: Vec<Vec<In>> = Vec::new();
    if skip > 0 {
        items.push(vec![t(format!("({skip} earlier fault(s) not shown)"))]);
    }
    for m in before.into_iter().skip(skip) {
        items.push(vec![b(fmt_t(m.time)), t(format!(" — {}", m.text))]);
    }
    doc.push(Block::List(items));
}

fn events_table(
    doc: &mut Vec<Block>,
    out: &RunOutput,
    from: Duration,
    to: Duration,
    keep: &dyn Fn(&Event) -> bool,
    intro: &str,
) {
    let (rows, left_out) = excerpt(out.history, from, to, keep, EXCERPT_ROWS);
    doc.push(Block::P(vec![t(intro)]));
    let table: Vec<Row> = rows
        .into_iter()
        .map(|r| match r.and_then(|i| out.history.events.get(i)) {
            Some(e) => {
                let [tm, host, ev, detail] = e.row();
                Row {
                    cells: vec![tm, host, ev, detail],
                    strong: keep(e)
                        && matches!(
                            e.kind,
                            EventKind::Acquired { .. }
                                | EventKind::Fault { .. }
                                | EventKind::Failover { .. }
                                | EventKind::WriteApplied { .. }
                        ),
                }
            }
            None => row(vec![
                "…".into(),
                String::new(),
                String::new(),
                String::new(),
            ]),
        })
        .collect();
    doc.push(Block::Table(
        ["time_ms", "host", "event", "detail"]
            .map(String::from)
            .to_vec(),
        table,
    ));
    if left_out > 0 {
        doc.push(Block::P(vec![t(format!(
            "{left_out} routine event(s) of that stretch are left out here; history.csv has them all."
        ))]));
    }
}
