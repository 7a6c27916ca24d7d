//! The outputs of `redlock-sim run` (see `cli-and-outputs.md`):
//! `history.csv`, `summary.json`, `report.md`, `index.html` and
//! `timeline.svg`, plus the summary printed on stdout.
//!
//! Everything here reads a finished run ([`RunOutput`]) and never panics,
//! whatever the history holds (fault events are typed: nothing is parsed
//! back out of strings).

mod csv;
mod facts;
mod markdown;
mod output;
mod stories;
mod timeline;

pub use self::csv::{write_history, write_history_to, HISTORY_HEADER};
pub use self::markdown::{index_html, report_md};
pub use self::output::RunOutput;
pub use self::timeline::timeline_svg;
pub use redlock_harness::runner::lab::LabInfo;

pub(crate) use self::facts::*;

use std::fmt::Write as _;
use std::io;
use std::path::Path;

use serde_json::{json, Value};

use redlock_harness::check::{CheckResult, StaleKind};

/// Creates `dir` (and its parents) and writes the five files of a run:
/// `history.csv`, `summary.json`, `timeline.svg`, `report.md`, `index.html`.
pub fn write_run(dir: &Path, out: &RunOutput) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    write_history(&dir.join("history.csv"), out.history)?;
    let json = serde_json::to_string_pretty(&summary_json(out)).map_err(io::Error::other)?;
    std::fs::write(dir.join("summary.json"), json + "\n")?;
    let facts = Facts::new(out);
    let svg = timeline::render(out, &facts);
    std::fs::write(dir.join("timeline.svg"), &svg)?;
    std::fs::write(dir.join("report.md"), markdown::render_md(out, &facts))?;
    std::fs::write(dir.join("index.html"), markdown::render_html(out, &facts))?;
    Ok(())
}

/// The summary printed by `run`, one `key: value` per line, each ending in
/// a newline: `scenario`, `seed`, `verdict` (for an inconclusive run, an
/// `inconclusive` line per cause after it), `expected`, `lock_overlaps`,
/// `write_interleavings`, `stale_writes` (then how they got late:
/// `stale_in_flight`, `stale_sent_late`, `stale_in_overlap`),
/// `rejected_writes`, `attempts` (`not measured` for a lab run),
/// `acquisitions`, `trace`. (The command line adds `report: <path>` itself.) Deterministic:
/// no wall-clock figures.
pub fn summary_lines(out: &RunOutput) -> String {
    let c = out.check;
    let mut s = String::new();
    let _ = writeln!(s, "scenario: {}", out.scenario.name);
    let _ = writeln!(s, "seed: {}", out.seed);
    let _ = writeln!(s, "verdict: {}", c.verdict.as_str());
    // Why it says nothing of safety: one line per cause.
    if c.verdict == redlock_harness::check::Verdict::Inconclusive {
        for cause in &c.inconclusive {
            let _ = writeln!(s, "inconclusive: {cause}");
        }
    }
    let _ = writeln!(s, "expected: {}", out.scenario.expect.as_str());
    // `degraded` is judged from the liveness figures (check::verdict::outcome_of).
    let _ = writeln!(s, "outcome: {}", out.outcome());
    let _ = writeln!(s, "lock_overlaps: {}", c.overlaps.len());
    let _ = writeln!(s, "write_interleavings: {}", c.interleavings.len());
    let _ = writeln!(s, "stale_writes: {}", c.stale_writes.len());
    for (kind, n) in StaleKind::ALL.iter().zip(c.stale_split()) {
        let _ = writeln!(s, "{}: {n}", kind.as_str());
    }
    let _ = writeln!(s, "rejected_writes: {}", c.rejected_writes);
    if out.sees_lock_calls() {
        let _ = writeln!(s, "attempts: {}", c.liveness.attempts);
    } else {
        let _ = writeln!(s, "attempts: {NOT_MEASURED}");
    }
    let _ = writeln!(s, "acquisitions: {}", c.liveness.acquisitions);
    if let Some(n) = c.unprotected_writes {
        let _ = writeln!(s, "unprotected_writes: {n}");
    }
    if let Some(lab) = out.lab {
        let _ = writeln!(s, "servers: {}", lab.servers);
    }
    let _ = writeln!(s, "trace: {}", out.trace);
    s
}

/// At most this many violations are listed in `summary.json` (the counts
/// are always complete).
pub const MAX_JSON_VIOLATIONS: usize = 1000;

/// The content of `summary.json`: `scenario`, `seed`, `verdict`,
/// `expected`, `as_expected`, `lock_overlaps`, `write_interleavings`, `stale_writes`,
/// `stale_in_flight`, `stale_sent_late`, `stale_in_overlap`, `abandoned_writes`,
/// `rejected_writes`, `attempts`, `acquisitions`, `acquire_p50_ms`,
/// `acquire_p99_ms`, `unavailable_ms` (these four null for a lab run, which
/// does not see lock calls), `trace`, `events`, `end_ms` (time of
/// the last event), `wall_ms`, and `violations`: the first
/// [`MAX_JSON_VIOLATIONS`] overlaps, stale writes and interleavings with their times in ms
/// (`violations_listed` says how many are listed), and `inconclusive`: each
/// cause that kept the run from testing what it should (`kind`, `cause`),
/// empty for a conclusive run (a violating run may have some too).
pub fn summary_json(out: &RunOutput) -> Value {
    let c = out.check;
    let l = &c.liveness;
    // What a lab run cannot measure is null, never 0.
    let seen = out.sees_lock_calls();
    let violations = violations_json(c);
    let split = c.stale_split();
    let mut v = json!({
        "scenario": out.scenario.name,
        "seed": out.seed,
        "verdict": c.verdict.as_str(),
        "outcome": out.outcome(),
        "expected": out.scenario.expect.as_str(),
        "as_expected": out.as_expected(),
        "lock_overlaps": c.overlaps.len(),
        "write_interleavings": c.interleavings.len(),
        "stale_writes": c.stale_writes.len(),
        "stale_in_flight": split[0],
        "stale_sent_late": split[1],
        "stale_in_overlap": split[2],
        "rejected_writes": c.rejected_writes,
        "abandoned_writes": out.abandoned_writes().len(),
        "attempts": seen.then_some(l.attempts),
        "acquisitions": l.acquisitions,
        "acquire_p50_ms": seen.then(|| finite(l.acquire_p50_ms)),
        "acquire_p99_ms": seen.then(|| finite(l.acquire_p99_ms)),
        "unavailable_ms": seen.then(|| finite(l.unavailable_ms)),
        "trace": out.trace,
        "events": out.history.events.len(),
        "end_ms": millis_rounded(last_time(out.history)),
        "wall_ms": finite(out.wall_ms),
        "violations_listed": violations.len(),
        "violations": violations,
        "inconclusive": c.inconclusive.iter().map(|cause| json!({
            "kind": cause.kind.as_str(),
            "cause": cause.text,
        })).collect::<Vec<Value>>(),
    });
    // The lab's outside checker counts what the simulation has no use for.
    if let (Some(n), Some(map)) = (c.unprotected_writes, v.as_object_mut()) {
        map.insert("unprotected_writes".into(), json!(n));
    }
    if let (Some(lab), Some(map)) = (out.lab, v.as_object_mut()) {
        map.insert("phases_ms".into(), phases_json(&lab.phases, out.wall_ms));
    }
    v
}

/// Where a lab run's wall time went, in ms: the run's phases in order,
/// then `judging` (the rest of `wall_ms`: the history checked).
fn phases_json(p: &redlock_harness::runner::lab::Phases, wall_ms: f64) -> Value {
    let ms = millis_rounded;
    let rest = (wall_ms - p.total().as_secs_f64() * 1e3).max(0.0);
    json!({
        "servers": ms(p.servers),
        "ready": ms(p.ready),
        "scenario": ms(p.scenario),
        "after_end": ms(p.after_end),
        "stop": ms(p.stop),
        "judging": (rest * 1e3).round() / 1e3,
    })
}

/// The first [`MAX_JSON_VIOLATIONS`] violations of `c`: overlaps, then
/// stale writes, then interleavings.
fn violations_json(c: &CheckResult) -> Vec<Value> {
    let mut violations: Vec<Value> = Vec::new();
    for o in c.overlaps.iter().take(MAX_JSON_VIOLATIONS) {
        violations.push(json!({
            "kind": "lock_overlap",
            "resource": o.a.resource,
            "from_ms": millis_rounded(o.from),
            "to_ms": millis_rounded(o.to),
            "overlap_ms": millis_rounded(o.to.saturating_sub(o.from)),
            "first": hold_json(&o.a),
            "second": hold_json(&o.b),
        }));
    }
    for w in c
        .stale_writes
        .iter()
        .take(MAX_JSON_VIOLATIONS - violations.len())
    {
        violations.push(json!({
            "kind": "stale_write",
            "resource": w.resource,
            "writer": { "client": w.writer.0, "acq": w.writer.1, "acquired_ms": millis_rounded(w.acquired) },
            "seq": w.seq,
            "fence": w.fence,
            "sent_ms": w.sent.map(millis_rounded),
            "applied_ms": millis_rounded(w.applied),
            "landed_in": { "client": w.landed_in.0, "acq": w.landed_in.1, "acquired_ms": millis_rounded(w.landed_in_start) },
            "superseded_ms": millis_rounded(w.superseded_at),
            "how": w.kind.as_str(),
        }));
    }
    for i in c
        .interleavings
        .iter()
        .take(MAX_JSON_VIOLATIONS - violations.len())
    {
        violations.push(interleaving_json(i));
    }
    violations
}

/// A hold in `summary.json`.
fn hold_json(h: &redlock_harness::check::Hold) -> Value {
    json!({
        "client": h.client,
        "acq": h.acq,
        "resource": h.resource,
        "token": h.token,
        "fence": h.fence,
        "start_ms": millis_rounded(h.start),
        "end_ms": millis_rounded(h.end),
        "end_reason": h.end_reason.as_str(),
    })
}

/// A write interleaving in `summary.json`, with its three writes.
fn interleaving_json(i: &redlock_harness::check::Interleaving) -> Value {
    let side = |k: usize, (client, acq): &(String, u64)| {
        json!({
            "client": client,
            "acq": acq,
            "seq": i.seqs[k],
            "fence": i.fences[k],
            "time_ms": millis_rounded(i.times[k]),
        })
    };
    json!({
        "kind": "write_interleaving",
        "resource": i.resource,
        "first": { "client": i.first.0, "acq": i.first.1 },
        "second": { "client": i.second.0, "acq": i.second.1 },
        "times_ms": i.times.map(millis_rounded),
        "writes": [side(0, &i.first), side(1, &i.second), side(2, &i.first)],
    })
}
