//! From a checked run to its outcome, and whether that is what the
//! scenario expects: the verdict rules every command, sweep and report
//! applies (`safe`, `violation`, `inconclusive`, `degraded`; exit codes 0
//! and 1 of `run` and `lab`).
//!
//! **Inconclusive runs** (`cli-and-outputs.md`, under `lab`): a run that
//! found no violation is `inconclusive`, not `safe`, when it did not
//! exercise what its scenario sets out to test ([`Cause`]): a scripted
//! fault never acted (its `after` trigger never came, it was due after the
//! run, or its host was already down: [`never_acted`]); and, in the lab
//! only, no client ever held the lock, a client failed or was never ready,
//! or the servers answered a client's lock command with an error. A
//! violation found in such a run is still a violation. An inconclusive run
//! never shows what its scenario expects.

use super::{CheckResult, Liveness, Verdict};
use redlock_engine::RunFaults;
use redlock_history::SkipReason;
use redlock_scenario::{Expect, FaultAction, Scenario, Target, Trigger};

/// A safe run is *degraded* when either
///
/// - **unavailable**: `unavailable_ms` ≥ [`DEGRADED_UNAVAILABLE`] × the
///   scenario's `duration` (for at least half of the run some client was
///   inside a lock call while nobody held the lock), or
/// - **slow**: `acquire_p50_ms` ≥ [`DEGRADED_ACQUIRE`] × the largest client
///   `ttl` (the median successful lock call took at least a quarter of the
///   TTL, so at most three quarters of it is left as validity).
///
/// Both figures are the checker's ([`Liveness`]) for this one run, so the
/// rule needs nothing but the run. A run with a violation is never
/// degraded: it is a violation.
///
/// The thresholds leave a wide margin between the flawed and the correct
/// client in `scenarios/variants/` (`no-release-on-failure`: unavailable
/// for most of the run against about a tenth; `sequential`: a median
/// acquisition of half the TTL against a tenth), and keep the correct client
/// in every shipped scenario, random partitions included, below both.
pub(crate) const DEGRADED_UNAVAILABLE: f64 = 0.5;

/// See [`DEGRADED_UNAVAILABLE`].
pub(crate) const DEGRADED_ACQUIRE: f64 = 0.25;

/// Is `liveness` degraded for `scenario` (the liveness half of the rule of
/// [`DEGRADED_UNAVAILABLE`]; safety is not looked at)?
pub(crate) fn is_degraded(scenario: &Scenario, liveness: &Liveness) -> bool {
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    liveness.unavailable_ms >= DEGRADED_UNAVAILABLE * ms(scenario.duration)
        || liveness.acquire_p50_ms >= DEGRADED_ACQUIRE * ms(scenario.max_ttl)
}

/// The outcome of a run: `"violation"` when the verdict is a violation,
/// `"inconclusive"` when it is inconclusive, else `"degraded"` when the run
/// is degraded (see [`DEGRADED_UNAVAILABLE`]), else `"safe"`. The same
/// whatever the scenario expects.
pub fn outcome_of(scenario: &Scenario, check: &CheckResult) -> &'static str {
    match check.verdict {
        Verdict::Violation => "violation",
        Verdict::Inconclusive => "inconclusive",
        Verdict::Safe if is_degraded(scenario, &check.liveness) => "degraded",
        Verdict::Safe => "safe",
    }
}

/// Whether a run shows what its scenario's `expect` asks for (an
/// inconclusive run never does):
/// - `safe`: no violation (a degraded run is still safe);
/// - `violation`: at least one violation;
/// - `degraded`: no violation, and degraded by the rule of
///   [`DEGRADED_UNAVAILABLE`] (unavailable ≥ 50% of `duration`, or median
///   acquisition ≥ 25% of the TTL).
///
/// This is the one definition: `Run::as_expected` and
/// `RunOutput::as_expected` (`summary.json`, the report) both call it.
pub fn as_expected_of(scenario: &Scenario, check: &CheckResult) -> bool {
    match scenario.expect {
        Expect::Safe => check.verdict == Verdict::Safe,
        Expect::Violation => check.verdict == Verdict::Violation,
        Expect::Degraded => outcome_of(scenario, check) == "degraded",
    }
}

/// Why a run that found no violation is inconclusive: it did not exercise
/// what its scenario sets out to test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cause {
    pub kind: CauseKind,
    /// One line naming the fault, the client, or the command and the
    /// reply: what the `inconclusive:` line of the summary says.
    pub text: String,
}

/// The kinds of [`Cause`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CauseKind {
    /// A scripted fault (`[[faults]]`) never acted.
    FaultNeverActed,
    /// No client ever held the lock (the lab).
    NeverHeld,
    /// A client exited with a non-zero status, or died of a signal the lab
    /// did not send, before the run's end (the lab).
    ClientFailed,
    /// A client was not ready 30 s after its launch (the lab).
    NeverReady,
    /// The servers answered a client's lock command with an error (the lab).
    ServerError,
}

impl CauseKind {
    /// `fault_never_acted`, `never_held`, `client_failed`, `never_ready`,
    /// `server_error`.
    pub fn as_str(self) -> &'static str {
        match self {
            CauseKind::FaultNeverActed => "fault_never_acted",
            CauseKind::NeverHeld => "never_held",
            CauseKind::ClientFailed => "client_failed",
            CauseKind::NeverReady => "never_ready",
            CauseKind::ServerError => "server_error",
        }
    }
}

impl Cause {
    pub fn new(kind: CauseKind, text: impl Into<String>) -> Cause {
        Cause {
            kind,
            text: text.into(),
        }
    }
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// Sets `check`'s causes and its verdict from them: a violation stays a
/// violation; otherwise a run with a cause is inconclusive.
pub fn conclude(check: &mut CheckResult, causes: Vec<Cause>) {
    assert!(
        check.verdict != Verdict::Inconclusive,
        "a run is concluded once"
    );
    if check.verdict == Verdict::Safe && !causes.is_empty() {
        check.verdict = Verdict::Inconclusive;
    }
    check.inconclusive = causes;
}

/// The scripted faults of `scenario` that never acted in a run whose
/// faults went as `faults` says: each one that came due and could do
/// nothing, and each one that never came due.
pub fn never_acted(scenario: &Scenario, faults: &RunFaults) -> Vec<Cause> {
    // `faults` are this scenario's run's: each of its file's faults came
    // due at most once, and was then applied or skipped.
    let mut came_due = vec![0usize; scenario.faults.len()];
    let file = faults.applied.iter().filter_map(|a| match a.origin {
        redlock_engine::due::Origin::File(i) => Some(i),
        redlock_engine::due::Origin::Nemesis => None,
    });
    for i in file.chain(faults.skipped.iter().map(|(i, _)| *i)) {
        assert!(
            i < came_due.len(),
            "verdict: fault {i} of a file with {} faults",
            came_due.len()
        );
        came_due[i] += 1;
        assert_eq!(
            came_due[i], 1,
            "verdict: the file's fault {i} came due twice"
        );
    }
    let acted = |i: usize| {
        faults
            .applied
            .iter()
            .any(|a| a.origin == redlock_engine::due::Origin::File(i))
    };
    let mut out = Vec::new();
    for (i, f) in scenario.faults.iter().enumerate() {
        if acted(i) {
            continue;
        }
        let why = match faults.skipped.iter().find(|(k, _)| *k == i) {
            Some((_, reason)) => skip_text(*reason).to_string(),
            None => match &f.after {
                Trigger::Start => "it was due after the run ended".to_string(),
                t => format!("its trigger, {}, never came", trigger_text(t)),
            },
        };
        let text = format!("fault {} ({}) never acted: {why}", i + 1, fault_text(f));
        out.push(Cause::new(CauseKind::FaultNeverActed, text));
    }
    out
}

/// A `[[faults]]` entry in a few words: `crash master after c1:acquired,
/// line 31`.
fn fault_text(f: &redlock_scenario::Fault) -> String {
    let host = |t: &Target| match t {
        Target::Host(h) => h.clone(),
        Target::Master => "master".to_string(),
    };
    let on = match &f.action {
        FaultAction::Crash { host: h, .. }
        | FaultAction::Restart { host: h }
        | FaultAction::Isolate { host: h, .. }
        | FaultAction::Pause { host: h, .. }
        | FaultAction::ClockJump { host: h, .. }
        | FaultAction::ClockRate { host: h, .. } => format!(" {}", host(h)),
        FaultAction::Latency { between, .. } => format!(" {}-{}", between.0, between.1),
        FaultAction::Partition { .. } | FaultAction::Heal => String::new(),
    };
    let when = match &f.after {
        Trigger::Start => format!("at {} ms", f.at.as_millis()),
        t => format!("{} ms after {}", f.at.as_millis(), trigger_text(t)),
    };
    let line = if f.line > 0 {
        format!(", line {}", f.line)
    } else {
        String::new()
    };
    format!("{}{on} {when}{line}", f.action.kind())
}

/// A trigger as a scenario file writes it: `c1:acquired`.
fn trigger_text(t: &Trigger) -> String {
    match t {
        Trigger::Start => "the start".to_string(),
        Trigger::Acquired(c) => format!("{c}:acquired"),
        Trigger::Released(c) => format!("{c}:released"),
        Trigger::Lost(c) => format!("{c}:lost"),
        Trigger::Event { host, event, from } => {
            format!("{host}:{event}@{}ms", from.as_millis())
        }
    }
}

/// Why a fault that came due did nothing.
fn skip_text(r: SkipReason) -> &'static str {
    match r {
        SkipReason::AlreadyDown => "its node was already down",
        SkipReason::AlreadyUp => "its node was already up",
        SkipReason::CrashedAgain => "its node had crashed again",
        SkipReason::Down => "its host was down",
    }
}
