//! The story of each violation in a run's report: who held the lock where,
//! which fault let the second client in, the stale write and the events
//! that led to it.

use std::time::Duration;

use super::facts::{excerpt, fmt_len, fmt_t, short_token, the_lock, Facts};
use super::output::RunOutput;
use crate::doc::{bold, row, text, Block, Inline, Row};
use redlock_harness::check::{Hold, Interleaving, Overlap, StaleKind, StaleWrite};
use redlock_harness::history::{Event, EventKind, FaultEvent};

/// Rows of an event excerpt.
const EXCERPT_ROWS: usize = 40;
/// Faults listed before a violation.
const MAX_FAULTS_BEFORE: usize = 15;

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

/// The story of lock overlap number `n`: the two holds, where the key was,
/// the faults before and the events that led to it.
pub(super) fn overlap_story(
    doc: &mut Vec<Block>,
    out: &RunOutput,
    f: &Facts,
    n: usize,
    o: &Overlap,
) {
    let (a, bh) = (&o.a, &o.b);
    doc.push(Block::H(
        3,
        format!(
            "Violation {n}: {} and {} held {} at the same time",
            a.client,
            bh.client,
            the_lock(&a.resource)
        ),
    ));
    doc.push(Block::P(vec![
        text(hold_sentence(a, "acquired")),
        text(" "),
        text(hold_sentence(bh, "acquired")),
        text(" "),
        bold(format!(
            "From {} to {} both held it: {} of overlap.",
            fmt_t(o.from),
            fmt_t(o.to),
            fmt_len(o.to.saturating_sub(o.from))
        )),
    ]));

    // Where the key was.
    if !f.nodes.is_empty() {
        where_the_key_was(doc, out, f, o);
        node_changes(doc, out, f, o);
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

/// On which nodes each token of overlap `o` was, and a table of the nodes'
/// keys at the two acquisitions.
fn where_the_key_was(doc: &mut Vec<Block>, out: &RunOutput, f: &Facts, o: &Overlap) {
    let (a, bh) = (&o.a, &o.b);
    let b_nodes = f.nodes_with_token(&bh.token, bh.start);
    let a_nodes = f.nodes_with_token(&a.token, bh.start);
    let list = |v: &[String]| {
        if v.is_empty() {
            "no node".to_string()
        } else {
            v.join(", ")
        }
    };
    let quorum = if out.scenario.cluster.topology == redlock_harness::scenario::Topology::Redlock {
        format!(
            " A majority is {} of {}.",
            out.scenario.cluster.nodes / 2 + 1,
            out.scenario.cluster.nodes
        )
    } else {
        String::new()
    };
    doc.push(Block::P(vec![text(format!(
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
    doc.push(Block::P(vec![text(
        "Who the lock key on each node belonged to (client and acquisition):",
    )]));
    doc.push(Block::Table(vec!["node".into(), at_a, at_b], rows));
}

/// What changed on the nodes between the two acquisitions of overlap `o`.
fn node_changes(doc: &mut Vec<Block>, out: &RunOutput, f: &Facts, o: &Overlap) {
    let (a, bh) = (&o.a, &o.b);
    let changes: Vec<Vec<Inline>> = out
        .history
        .events
        .iter()
        .filter(|e| e.time > a.start && e.time <= bh.start)
        .filter_map(|e| node_change(f, e))
        .collect();
    if !changes.is_empty() {
        doc.push(Block::P(vec![text(format!(
            "What changed on the nodes between the two acquisitions ({} to {}):",
            fmt_t(a.start),
            fmt_t(bh.start)
        ))]));
        doc.push(Block::List(cap_list(changes, 20)));
    }
}

/// The story of stale write number `n`: when it was sent and applied, why
/// fencing let it through, the faults before and the events that led to it.
pub(super) fn stale_story(
    doc: &mut Vec<Block>,
    out: &RunOutput,
    f: &Facts,
    n: usize,
    w: &StaleWrite,
) {
    let (wc, wa) = (&w.writer.0, w.writer.1);
    let (lc, la) = (&w.landed_in.0, w.landed_in.1);
    doc.push(Block::H(
        3,
        format!(
            "Violation {n}: a stale write of {wc} under {} landed in {}",
            the_lock(&w.resource),
            acq_name(lc, la)
        ),
    ));
    doc.push(Block::P(stale_paragraph(out, w)));
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

/// The paragraph telling stale write `w`: its acquisition, when it was sent
/// and applied, the writer's hold, and fencing.
fn stale_paragraph(out: &RunOutput, w: &StaleWrite) -> Vec<Inline> {
    let (wc, wa) = (&w.writer.0, w.writer.1);
    let (lc, la) = (&w.landed_in.0, w.landed_in.1);
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
    let hold = hold_of(out, wc, wa);
    let mut p = vec![
        text(format!(
            "{wc} acquired {} at {} (acquisition #{wa}). {sent}",
            the_lock(&w.resource),
            fmt_t(w.acquired),
        )),
        bold(format!(
            "{} after {} of the same lock had succeeded at {}",
            fmt_len(w.applied.saturating_sub(w.landed_in_start)),
            acq_name(lc, la),
            fmt_t(w.landed_in_start),
        )),
        text(": the writer's lock was gone. "),
    ];
    if let Some(h) = hold {
        p.push(text(format!(
            "{wc}'s hold had ended at {}, when {}. ",
            fmt_t(h.end),
            h.end_reason.describe()
        )));
    }
    p.extend(how_late(w));
    p.push(text(fence));
    p
}

/// How stale write `w` got late ([`StaleKind`]), in a sentence.
fn how_late(w: &StaleWrite) -> Vec<Inline> {
    let sent = w
        .sent
        .map_or("applied".to_string(), |s| format!("sent at {}", fmt_t(s)));
    let (kind, why) = match w.kind {
        StaleKind::InFlight => (
            StaleKind::InFlight.short(),
            format!(
                "{sent}, while the writer held the lock and before the first later acquisition succeeded at {}; the network or the store delayed it past that. ",
                fmt_t(w.superseded_at)
            ),
        ),
        StaleKind::SentLate => (
            StaleKind::SentLate.short(),
            format!(
                "{sent}, after the writer's own hold had ended (the first later acquisition succeeded at {}): the writer did not know its lock was gone. ",
                fmt_t(w.superseded_at)
            ),
        ),
        StaleKind::InOverlap => (
            StaleKind::InOverlap.short(),
            format!(
                "{sent}, after the first later acquisition at {}, while the writer still held the lock by its own validity: the lock itself failed. ",
                fmt_t(w.superseded_at)
            ),
        ),
    };
    vec![
        text("This write was "),
        bold(kind),
        text(format!(" ({}): {why}", w.kind.as_str())),
    ]
}

/// The hold of `client`'s acquisition `acq`, if it has one.
fn hold_of<'a>(out: &'a RunOutput, client: &str, acq: u64) -> Option<&'a Hold> {
    out.check
        .holds
        .iter()
        .find(|h| h.client == client && h.acq == acq)
}

/// A fencing token, or `-` without one.
fn fence_or_dash(x: Option<u64>) -> String {
    x.map_or("-".to_string(), |v| v.to_string())
}

/// The table of the three interleaved writes of `i`.
fn interleaving_table(doc: &mut Vec<Block>, i: &Interleaving) {
    let (ac, aa) = (&i.first.0, i.first.1);
    let (bc, ba) = (&i.second.0, i.second.1);
    let rows = vec![(ac, aa, 0usize), (bc, ba, 1usize), (ac, aa, 2usize)]
        .into_iter()
        .map(|(cl, acq, k)| {
            row(vec![
                (k + 1).to_string(),
                fmt_t(i.times[k]),
                cl.clone(),
                format!("#{acq}"),
                i.seqs[k].to_string(),
                fence_or_dash(i.fences[k]),
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
}

/// The two holds of interleaving `i`, and which of its writes landed
/// outside its writer's hold.
fn interleaving_holds(out: &RunOutput, i: &Interleaving) -> Vec<Inline> {
    let (ac, aa) = (&i.first.0, i.first.1);
    let (bc, ba) = (&i.second.0, i.second.1);
    let mut p: Vec<Inline> = Vec::new();
    for (cl, acq) in [(ac, aa), (bc, ba)] {
        match hold_of(out, cl, acq) {
            Some(h) => p.push(text(format!(
                "{}'s hold for acquisition #{}: {} to {}, ended when {}. ",
                cl,
                acq,
                fmt_t(h.start),
                fmt_t(h.end),
                h.end_reason.describe()
            ))),
            None => p.push(text(format!(
                "{} has no recorded acquisition #{} (no acquired event). ",
                cl, acq
            ))),
        }
    }
    // Which of the three writes landed outside its writer's hold.
    let mut outside = 0;
    for (k, (cl, acq)) in [(ac, aa), (bc, ba), (ac, aa)].into_iter().enumerate() {
        let w = i.times[k];
        match hold_of(out, cl, acq) {
            Some(h) if w > h.end => {
                outside += 1;
                p.push(bold(format!(
                    "{cl}'s write at {} was applied {} after its hold had ended at {} ({}): it wrote without holding the lock. ",
                    fmt_t(w),
                    fmt_len(w.saturating_sub(h.end)),
                    fmt_t(h.end),
                    h.end_reason.describe()
                )));
            }
            Some(h) if w < h.start => {
                outside += 1;
                p.push(bold(format!(
                    "{cl}'s write at {} was applied before its hold started at {}. ",
                    fmt_t(w),
                    fmt_t(h.start)
                )));
            }
            _ => {}
        }
    }
    if outside == 0 {
        p.push(bold(
            "Every one of these writes was applied while its writer held the lock: the two holds overlapped.",
        ));
    }
    p
}

/// The story of write interleaving number `n`: the three writes, the holds,
/// fencing, the faults before and the events around it.
pub(super) fn interleaving_story(
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
            "Violation {n}: writes of {ac} and {bc} under {} interleaved at the store",
            the_lock(&i.resource)
        ),
    ));
    doc.push(Block::P(vec![
        text(format!(
            "The store applied a write of {} at {}, then a write of {} at {}, then again a write of {} at {}. ",
            acq_name(ac, aa),
            fmt_t(i.times[0]),
            acq_name(bc, ba),
            fmt_t(i.times[1]),
            acq_name(ac, aa),
            fmt_t(i.times[2]),
        )),
        text("The resource saw the writes of two lock holders mixed."),
    ]));
    interleaving_table(doc, i);
    doc.push(Block::P(interleaving_holds(out, i)));
    let fences = i.fences;
    let fencing = if fences.iter().all(Option::is_none) {
        "Fencing was off: the store had no token to tell the late write from a current one."
            .to_string()
    } else {
        format!(
            "Fencing tokens: {ac} wrote with {} and {}, {bc} with {}. The store refuses a write whose token is lower than the highest it has accepted.",
            fence_or_dash(fences[0]),
            fence_or_dash(fences[2]),
            fence_or_dash(fences[1])
        )
    };
    doc.push(Block::P(vec![text(fencing)]));

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
        | EventKind::Reentered { acq, .. }
        | EventKind::ReentryReleased { acq, .. }
        | EventKind::ReentryFailed { acq, .. }
        | EventKind::WriteSent { acq, .. }
        | EventKind::WriteAbandoned { acq, .. } => hit(&e.host, *acq),
        EventKind::WriteApplied { client, acq, .. }
        | EventKind::WriteRejected { client, acq, .. } => hit(client, *acq),
        EventKind::Fault { .. } | EventKind::FaultSkipped { .. } | EventKind::Failover { .. } => {
            true
        }
        _ => false,
    }
}

/// A node event as a list item, or `None`.
fn node_change(f: &Facts, e: &Event) -> Option<Vec<Inline>> {
    let when = fmt_t(e.time);
    let change = match &e.kind {
        EventKind::KeySet { key, token, .. } => {
            format!("{}: key {} set for {}", e.host, key, f.owner_label(token))
        }
        EventKind::KeyRemoved { key, mark, by } => {
            let what = match mark {
                Some((shape, m)) => format!("key {key}'s {} {m}", shape.mark_name()),
                None => format!("key {key}"),
            };
            let who = by.as_ref().map_or(String::new(), |c| format!(" by {c}"));
            format!("{}: {what} removed{who}", e.host)
        }
        EventKind::KeyExpired { key, mark, .. } => match mark {
            Some((shape, m)) => {
                format!("{}: key {key}'s {} {m} expired", e.host, shape.mark_name())
            }
            None => format!("{}: key {key} expired (its time ran out)", e.host),
        },
        EventKind::NodeUp { keys } => format!("{}: (re)started with {} key(s)", e.host, keys),
        EventKind::Fault(FaultEvent::Crash { .. }) => {
            let m = f
                .markers
                .iter()
                .find(|m| m.time == e.time && m.what == "crash");
            m.map_or_else(|| format!("{}: crash", e.host), |m| m.text.clone())
        }
        _ => return None,
    };
    Some(vec![bold(when), text(format!(" — {change}"))])
}

fn cap_list(mut items: Vec<Vec<Inline>>, cap: usize) -> Vec<Vec<Inline>> {
    if items.len() > cap {
        let more = items.len() - cap;
        items.truncate(cap);
        items.push(vec![text(format!(
            "… and {more} more (see the events below and history.csv)"
        ))]);
    }
    items
}

fn faults_before(doc: &mut Vec<Block>, f: &Facts, at: Duration, what: &str) {
    let before: Vec<_> = f.markers.iter().filter(|m| m.time <= at).collect();
    if before.is_empty() {
        doc.push(Block::P(vec![text(format!(
            "No fault was injected before {what} at {}: the violation comes from timing, clocks \
             and the algorithm alone.",
            fmt_t(at)
        ))]));
        return;
    }
    doc.push(Block::P(vec![text(format!(
        "Faults before {what} at {}:",
        fmt_t(at)
    ))]));
    let skip = before.len().saturating_sub(MAX_FAULTS_BEFORE);
    let mut items: Vec<Vec<Inline>> = Vec::new();
    if skip > 0 {
        items.push(vec![text(format!("({skip} earlier fault(s) not shown)"))]);
    }
    for m in before.into_iter().skip(skip) {
        items.push(vec![bold(fmt_t(m.time)), text(format!(" — {}", m.text))]);
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
    doc.push(Block::P(vec![text(intro)]));
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
        doc.push(Block::P(vec![text(format!(
            "{left_out} routine event(s) of that stretch are left out here; history.csv has them all."
        ))]));
    }
}
