//! `runs.csv`: one row per run, in the contract's columns
//! `scenario,seed,<one column per varied key>,verdict,lock_overlaps,
//! write_interleavings,stale_writes,rejected_writes,attempts,acquisitions,acquire_p50_ms,
//! acquire_p99_ms,unavailable_ms,trace,wall_ms`, then (additions) how
//! the stale writes got late: `stale_in_flight,stale_sent_late,
//! stale_in_overlap`, which add up to `stale_writes`, and `inconclusive`:
//! why an inconclusive run tested nothing (its causes, joined by `; `;
//! empty for a conclusive run). A lab run sees no lock calls: its
//! `attempts`, `acquire_p50_ms`, `acquire_p99_ms` and `unavailable_ms` are
//! empty (not measured), and read back as such. A `runs.csv` written
//! before the `inconclusive` column reads back with every run conclusive.

use crate::runner::Run;
use std::io;
use std::path::Path;

/// The columns after the varied keys.
pub(crate) const FIGURES: [&str; 16] = [
    "verdict",
    "lock_overlaps",
    "write_interleavings",
    "stale_writes",
    "rejected_writes",
    "attempts",
    "acquisitions",
    "acquire_p50_ms",
    "acquire_p99_ms",
    "unavailable_ms",
    "trace",
    "wall_ms",
    "stale_in_flight",
    "stale_sent_late",
    "stale_in_overlap",
    "inconclusive",
];

/// One run of a sweep.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunRow {
    pub scenario: String,
    pub seed: u64,
    /// The varied values, as written in `[sweep.vary]`.
    pub values: Vec<String>,
    pub verdict: String,
    pub(crate) lock_overlaps: u64,
    pub(crate) write_interleavings: u64,
    pub stale_writes: u64,
    pub(crate) rejected_writes: u64,
    pub(crate) attempts: u64,
    pub(crate) acquisitions: u64,
    pub(crate) acquire_p50_ms: f64,
    pub(crate) acquire_p99_ms: f64,
    pub(crate) unavailable_ms: f64,
    /// The run saw its clients' lock calls (a simulated run); false for a
    /// lab run, whose four figures above are not measured (0 here, empty
    /// in `runs.csv`).
    pub(crate) lock_calls_seen: bool,
    pub trace: String,
    pub wall_ms: f64,
    /// The stale writes in flight, sent late and in overlap
    /// ([`crate::check::StaleKind::ALL`]'s order).
    pub(crate) stale_split: [u64; 3],
    /// Why the run is inconclusive (its causes, joined by `; `); empty
    /// when it is conclusive.
    pub inconclusive: String,
}

/// The header line's fields for these varied keys.
pub fn header(keys: &[String]) -> Vec<String> {
    let mut h = vec!["scenario".to_string(), "seed".to_string()];
    h.extend(keys.iter().cloned());
    h.extend(FIGURES.iter().map(|f| f.to_string()));
    h
}

fn millis_text(v: f64) -> String {
    format!("{v:.3}")
}

impl RunRow {
    /// The row of a finished run.
    pub(crate) fn from_run(run: &Run, values: Vec<String>) -> RunRow {
        let c = &run.check;
        let stale_split = c.stale_split();
        assert_eq!(
            stale_split.iter().sum::<u64>(),
            c.stale_writes.len() as u64,
            "the kinds of the stale writes do not add up to them"
        );
        RunRow {
            scenario: run.scenario.name.clone(),
            seed: run.seed,
            values,
            verdict: c.verdict.as_str().to_string(),
            lock_overlaps: c.overlaps.len() as u64,
            write_interleavings: c.interleavings.len() as u64,
            stale_writes: c.stale_writes.len() as u64,
            rejected_writes: c.rejected_writes,
            attempts: c.liveness.attempts,
            acquisitions: c.liveness.acquisitions,
            acquire_p50_ms: c.liveness.acquire_p50_ms,
            acquire_p99_ms: c.liveness.acquire_p99_ms,
            unavailable_ms: c.liveness.unavailable_ms,
            lock_calls_seen: true,
            trace: run.trace.clone(),
            wall_ms: run.wall_ms,
            stale_split,
            inconclusive: causes_text(c),
        }
    }

    /// Whether the run tested what its scenario sets out to test.
    pub fn conclusive(&self) -> bool {
        self.verdict != crate::check::Verdict::Inconclusive.as_str()
    }

    /// The row of a finished lab run: its lock calls not measured.
    pub(crate) fn from_lab_run(run: &Run) -> RunRow {
        RunRow {
            attempts: 0,
            acquire_p50_ms: 0.0,
            acquire_p99_ms: 0.0,
            unavailable_ms: 0.0,
            lock_calls_seen: false,
            ..RunRow::from_run(run, Vec::new())
        }
    }

    /// The row of a finished lab run from its `summary.json` (what the
    /// report writes of it); `None` if a figure is missing or the verdict
    /// is none of the three.
    pub(crate) fn from_lab_summary(v: &serde_json::Value) -> Option<RunRow> {
        let n = |k: &str| v.get(k)?.as_u64();
        let text = |k: &str| Some(v.get(k)?.as_str()?.to_string());
        let verdict = known_verdict(text("verdict")?)?;
        let causes: Vec<&str> = v
            .get("inconclusive")?
            .as_array()?
            .iter()
            .filter_map(|c| c.get("cause")?.as_str())
            .collect();
        let inconclusive = match verdict == crate::check::Verdict::Inconclusive.as_str() {
            true => causes.join("; "),
            false => String::new(),
        };
        Some(RunRow {
            scenario: text("scenario")?,
            seed: n("seed")?,
            values: Vec::new(),
            verdict,
            lock_overlaps: n("lock_overlaps")?,
            write_interleavings: n("write_interleavings")?,
            stale_writes: n("stale_writes")?,
            rejected_writes: n("rejected_writes")?,
            acquisitions: n("acquisitions")?,
            lock_calls_seen: false,
            trace: text("trace")?,
            wall_ms: v.get("wall_ms")?.as_f64()?,
            stale_split: [
                n("stale_in_flight")?,
                n("stale_sent_late")?,
                n("stale_in_overlap")?,
            ],
            inconclusive,
            ..RunRow::default()
        })
    }

    pub fn fields(&self) -> Vec<String> {
        let mut f = vec![self.scenario.clone(), self.seed.to_string()];
        f.extend(self.values.iter().cloned());
        let seen = |v: String| {
            if self.lock_calls_seen {
                v
            } else {
                String::new()
            }
        };
        f.extend([
            self.verdict.clone(),
            self.lock_overlaps.to_string(),
            self.write_interleavings.to_string(),
            self.stale_writes.to_string(),
            self.rejected_writes.to_string(),
            seen(self.attempts.to_string()),
            self.acquisitions.to_string(),
            seen(millis_text(self.acquire_p50_ms)),
            seen(millis_text(self.acquire_p99_ms)),
            seen(millis_text(self.unavailable_ms)),
            self.trace.clone(),
            millis_text(self.wall_ms),
        ]);
        f.extend(self.stale_split.map(|n| n.to_string()));
        f.push(self.inconclusive.clone());
        assert_eq!(
            f.len(),
            2 + self.values.len() + FIGURES.len(),
            "a row's fields are not its columns"
        );
        f
    }

    /// [`RunRow::fields`] but `wall_ms`, the only one that depends on the
    /// machine: what a replay of the run must give again.
    pub fn replayable_fields(&self) -> Vec<String> {
        let mut f = self.fields();
        let wall = FIGURES.iter().position(|c| *c == "wall_ms");
        f.remove(2 + self.values.len() + wall.expect("wall_ms is a column"));
        f
    }

    /// Parses a record with `nkeys` varied columns; `None` if malformed
    /// (a verdict that is none of the three is).
    /// The four figures of lock calls are all empty (not measured) or all
    /// numbers.
    pub(crate) fn parse(rec: &csv::StringRecord, nkeys: usize) -> Option<RunRow> {
        // A row of an older runs.csv lacks the last column.
        if rec.len() != 2 + nkeys + FIGURES.len() && rec.len() != 1 + nkeys + FIGURES.len() {
            return None;
        }
        let g = |i: usize| rec.get(i).unwrap_or("").to_string();
        let b = 2 + nkeys;
        let unmeasured = [5, 7, 8, 9].map(|k| g(b + k).is_empty());
        let seen = !unmeasured[0];
        if unmeasured.contains(&seen) {
            return None;
        }
        let n = |i: usize| g(i).parse::<u64>().ok();
        let f = |i: usize| g(i).parse::<f64>().ok();
        // A figure not measured reads as 0.
        let m = |i: usize| if seen { f(i) } else { Some(0.0) };
        let verdict = known_verdict(g(b))?;
        Some(RunRow {
            scenario: g(0),
            seed: n(1)?,
            values: (2..b).map(g).collect(),
            verdict,
            lock_overlaps: n(b + 1)?,
            write_interleavings: n(b + 2)?,
            stale_writes: n(b + 3)?,
            rejected_writes: n(b + 4)?,
            attempts: if seen { n(b + 5)? } else { 0 },
            acquisitions: n(b + 6)?,
            acquire_p50_ms: m(b + 7)?,
            acquire_p99_ms: m(b + 8)?,
            unavailable_ms: m(b + 9)?,
            lock_calls_seen: seen,
            trace: g(b + 10),
            wall_ms: f(b + 11)?,
            stale_split: [n(b + 12)?, n(b + 13)?, n(b + 14)?],
            inconclusive: g(b + 15),
        })
    }
}

/// `s` when it is a verdict ([`crate::check::Verdict`]'s spelling): a row
/// of any other is malformed.
fn known_verdict(s: String) -> Option<String> {
    use crate::check::Verdict as V;
    [V::Safe, V::Violation, V::Inconclusive]
        .iter()
        .any(|v| v.as_str() == s)
        .then_some(s)
}

/// The causes of an inconclusive run, joined by `; `; empty otherwise.
pub(crate) fn causes_text(c: &crate::check::CheckResult) -> String {
    if c.verdict != crate::check::Verdict::Inconclusive {
        return String::new();
    }
    let texts: Vec<&str> = c.inconclusive.iter().map(|x| x.text.as_str()).collect();
    texts.join("; ")
}

/// Reads the whole rows of a `runs.csv` whose header matches `keys` (or
/// an older one's, without `inconclusive`). A malformed last line (a sweep
/// killed while writing it) is dropped.
pub fn read(path: &Path, keys: &[String]) -> io::Result<Vec<RunRow>> {
    let mut rd = csv::ReaderBuilder::new().flexible(true).from_path(path)?;
    let want = header(keys);
    let got: Vec<String> = rd.headers()?.iter().map(str::to_string).collect();
    // An older runs.csv: every column but the last, `inconclusive`.
    let older = got.len() + 1 == want.len() && got[..] == want[..got.len()];
    if got != want && !older {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{}: columns {got:?} are not this sweep's {want:?}",
                path.display()
            ),
        ));
    }
    let mut rows = Vec::new();
    for rec in rd.records() {
        match rec.ok().and_then(|r| RunRow::parse(&r, keys.len())) {
            Some(row) => rows.push(row),
            None => continue,
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lab_row() -> RunRow {
        RunRow {
            scenario: "s".into(),
            seed: 3,
            values: Vec::new(),
            verdict: "violation".into(),
            lock_overlaps: 0,
            write_interleavings: 1,
            stale_writes: 2,
            rejected_writes: 0,
            attempts: 0,
            acquisitions: 5,
            acquire_p50_ms: 0.0,
            acquire_p99_ms: 0.0,
            unavailable_ms: 0.0,
            lock_calls_seen: false,
            trace: "t".into(),
            wall_ms: 1.5,
            stale_split: [1, 1, 0],
            inconclusive: String::new(),
        }
    }

    #[test]
    fn a_lab_rows_lock_call_figures_are_empty_and_read_back_as_not_measured() {
        let row = lab_row();
        let f = row.fields();
        let at = |name: &str| 2 + FIGURES.iter().position(|c| *c == name).unwrap();
        for name in [
            "attempts",
            "acquire_p50_ms",
            "acquire_p99_ms",
            "unavailable_ms",
        ] {
            assert_eq!(f[at(name)], "", "{name}");
        }
        assert_eq!(f[at("acquisitions")], "5");
        let rec = csv::StringRecord::from(f.clone());
        assert_eq!(RunRow::parse(&rec, 0), Some(row.clone()));
        // One figure empty and the others not: malformed.
        let mut mixed = f;
        mixed[at("attempts")] = "7".into();
        assert_eq!(RunRow::parse(&csv::StringRecord::from(mixed), 0), None);
        let seen = RunRow {
            lock_calls_seen: true,
            attempts: 7,
            ..row
        };
        let rec = csv::StringRecord::from(seen.fields());
        assert_eq!(RunRow::parse(&rec, 0), Some(seen));
    }

    /// A summary counts each run as safe, violating or inconclusive: a row
    /// of any other verdict (an edited `runs.csv`) is malformed, not a run.
    #[test]
    fn a_row_of_an_unknown_verdict_is_malformed() {
        let at = 2 + FIGURES.iter().position(|c| *c == "verdict").unwrap();
        for (verdict, known) in [
            ("safe", true),
            ("violation", true),
            ("inconclusive", true),
            ("degraded", false),
            ("Safe", false),
            ("", false),
        ] {
            let mut f = lab_row().fields();
            f[at] = verdict.into();
            let row = RunRow::parse(&csv::StringRecord::from(f), 0);
            assert_eq!(row.is_some(), known, "{verdict:?}");
        }
        let mut json = serde_json::json!({
            "scenario": "s", "seed": 3, "verdict": "safe", "inconclusive": [],
            "lock_overlaps": 0, "write_interleavings": 0, "stale_writes": 0,
            "rejected_writes": 0, "acquisitions": 1, "trace": "t", "wall_ms": 1.0,
            "stale_in_flight": 0, "stale_sent_late": 0, "stale_in_overlap": 0,
        });
        assert!(RunRow::from_lab_summary(&json).is_some());
        json["verdict"] = "degraded".into();
        assert!(RunRow::from_lab_summary(&json).is_none());
    }
}
