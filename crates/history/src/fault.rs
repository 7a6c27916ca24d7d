//! Fault events as the history records them: what a fault did, with its
//! parameters typed ([`FaultEvent`]), or why it could do nothing
//! ([`SkippedFault`], [`SkipReason`]); each written in the `detail` column
//! as `what=<name>` and `key=value` pairs.

use redlock_scenario::Restart;
use std::fmt;

/// A fault as it was applied, for the history: its kind and parameters,
/// with the master resolved to its host and a latency drawn. Its
/// [`Display`](fmt::Display) is the `detail` column: `what=<name>` then
/// `key=value` pairs (`what=crash host=n1 restart=never`). Durations are in
/// whole milliseconds, as written.
#[derive(Clone, Debug, PartialEq)]
pub enum FaultEvent {
    /// `host` lost power (with `kill`: its process was killed, its
    /// connections closed); `restart` is what it does next.
    Crash {
        host: String,
        restart: Restart,
        kill: bool,
    },
    /// `host`, down after a crash, was started again.
    Restart { host: String },
    /// The network was cut between the hosts of every two `sides` (only
    /// from each side to the later ones when `oneway`), for `for_ms` when
    /// timed, else until a heal.
    Partition {
        sides: Vec<Vec<String>>,
        oneway: bool,
        for_ms: Option<u64>,
    },
    /// `host` was cut off from every other host, for `for_ms` when timed.
    Isolate { host: String, for_ms: Option<u64> },
    /// Every partition and isolation was removed.
    Heal,
    /// `host` was paused (stop-the-world) for `for_ms`.
    Pause { host: String, for_ms: u64 },
    /// `host`'s wall clock stepped by `by_ms` (negative: backwards).
    ClockJump { host: String, by_ms: f64 },
    /// `host`'s clock rate changed from `from` to `rate`.
    ClockRate { host: String, rate: f64, from: f64 },
    /// The link `between` two hosts got a one-way latency of `latency_ms`,
    /// for `for_ms` when timed.
    Latency {
        between: (String, String),
        latency_ms: u64,
        for_ms: Option<u64>,
    },
}

impl FaultEvent {
    /// The fault's name, as in scenario files (`crash`, `clock-rate`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            FaultEvent::Crash { kill: false, .. } => "crash",
            FaultEvent::Crash { kill: true, .. } => "kill",
            FaultEvent::Restart { .. } => "restart",
            FaultEvent::Partition { .. } => "partition",
            FaultEvent::Isolate { .. } => "isolate",
            FaultEvent::Heal => "heal",
            FaultEvent::Pause { .. } => "pause",
            FaultEvent::ClockJump { .. } => "clock-jump",
            FaultEvent::ClockRate { .. } => "clock-rate",
            FaultEvent::Latency { .. } => "latency",
        }
    }

    /// The one host the fault is about, if it is about one.
    pub fn host(&self) -> Option<&str> {
        match self {
            FaultEvent::Crash { host, .. }
            | FaultEvent::Restart { host }
            | FaultEvent::Isolate { host, .. }
            | FaultEvent::Pause { host, .. }
            | FaultEvent::ClockJump { host, .. }
            | FaultEvent::ClockRate { host, .. } => Some(host),
            FaultEvent::Partition { .. } | FaultEvent::Heal | FaultEvent::Latency { .. } => None,
        }
    }

    /// How long the fault lasts, in whole ms, when it ends by itself.
    pub fn for_ms(&self) -> Option<u64> {
        match self {
            FaultEvent::Partition { for_ms, .. }
            | FaultEvent::Isolate { for_ms, .. }
            | FaultEvent::Latency { for_ms, .. } => *for_ms,
            FaultEvent::Pause { for_ms, .. } => Some(*for_ms),
            _ => None,
        }
    }
}

/// A partition's sides as written in the history: hosts joined by `+`,
/// sides by `|` (`c1|n1+n2`).
pub fn sides_text(sides: &[Vec<String>]) -> String {
    let text: Vec<String> = sides.iter().map(|s| s.join(" ")).collect();
    text.join("|").replace(' ', "+")
}

/// A restart policy as written in the history: `immediate`, `never` or the
/// delay (`1.5s`).
fn restart_text(r: Restart) -> String {
    match r {
        Restart::Immediate => "immediate".into(),
        Restart::Never => "never".into(),
        Restart::After(d) => redlock_proto::duration::format(d),
    }
}

/// ` for_ms=N` when the fault is timed.
fn write_for(f: &mut fmt::Formatter<'_>, for_ms: &Option<u64>) -> fmt::Result {
    match for_ms {
        Some(ms) => write!(f, " for_ms={ms}"),
        None => Ok(()),
    }
}

impl fmt::Display for FaultEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "what={}", self.name())?;
        match self {
            FaultEvent::Crash { host, restart, .. } => {
                write!(f, " host={host} restart={}", restart_text(*restart))
            }
            FaultEvent::Restart { host } => write!(f, " host={host}"),
            FaultEvent::Partition {
                sides,
                oneway,
                for_ms,
            } => {
                write!(f, " sides={} oneway={oneway}", sides_text(sides))?;
                write_for(f, for_ms)
            }
            FaultEvent::Isolate { host, for_ms } => {
                write!(f, " host={host}")?;
                write_for(f, for_ms)
            }
            FaultEvent::Heal => Ok(()),
            FaultEvent::Pause { host, for_ms } => write!(f, " host={host} for_ms={for_ms}"),
            FaultEvent::ClockJump { host, by_ms } => write!(f, " host={host} by_ms={by_ms}"),
            FaultEvent::ClockRate { host, rate, from } => {
                write!(f, " host={host} rate={rate} from={from}")
            }
            FaultEvent::Latency {
                between: (a, b),
                latency_ms,
                for_ms,
            } => {
                write!(f, " between={a}+{b} latency_ms={latency_ms}")?;
                write_for(f, for_ms)
            }
        }
    }
}

/// A fault that could do nothing, for the history: written like a
/// [`FaultEvent`] (`what=crash host=n1`), without what it would have done.
#[derive(Clone, Debug, PartialEq)]
pub enum SkippedFault {
    /// Crashing `host`, which was down.
    Crash { host: String },
    /// Restarting `host`, which was up or had crashed again.
    Restart { host: String },
    /// Pausing `host` for `for_ms`, while it was down.
    Pause { host: String, for_ms: u64 },
}

impl SkippedFault {
    /// The fault's name, as in scenario files.
    pub fn name(&self) -> &'static str {
        match self {
            SkippedFault::Crash { .. } => "crash",
            SkippedFault::Restart { .. } => "restart",
            SkippedFault::Pause { .. } => "pause",
        }
    }

    /// The host it was meant for.
    pub fn host(&self) -> &str {
        match self {
            SkippedFault::Crash { host }
            | SkippedFault::Restart { host }
            | SkippedFault::Pause { host, .. } => host,
        }
    }
}

impl fmt::Display for SkippedFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "what={} host={}", self.name(), self.host())?;
        match self {
            SkippedFault::Pause { for_ms, .. } => write!(f, " for_ms={for_ms}"),
            SkippedFault::Crash { .. } | SkippedFault::Restart { .. } => Ok(()),
        }
    }
}

/// Why a fault was skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkipReason {
    /// A crash of a node that was down.
    AlreadyDown,
    /// A restart of a node that was up.
    AlreadyUp,
    /// A crash's delayed restart, after the node had crashed again: the
    /// later crash's restart applies.
    CrashedAgain,
    /// A pause of a node that was down.
    Down,
}

impl SkipReason {
    /// As written in the history (`already_down`).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            SkipReason::AlreadyDown => "already_down",
            SkipReason::AlreadyUp => "already_up",
            SkipReason::CrashedAgain => "crashed_again",
            SkipReason::Down => "down",
        }
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EventKind;
    use std::time::Duration;

    fn detail(kind: EventKind) -> String {
        kind.detail()
    }

    fn host(h: &str) -> String {
        h.to_string()
    }

    // The strings below are what the untyped history wrote (a run of every
    // fault kind before the faults were typed): the detail column must not
    // change.
    #[test]
    fn a_crash_is_written_as_before() {
        let crash = |restart| {
            detail(EventKind::Fault(FaultEvent::Crash {
                host: host("n1"),
                restart,
                kill: false,
            }))
        };
        assert_eq!(crash(Restart::Never), "what=crash host=n1 restart=never");
        // An addition: a killed process is written as a kill.
        let kill = EventKind::Fault(FaultEvent::Crash {
            host: host("n2"),
            restart: Restart::Immediate,
            kill: true,
        });
        assert_eq!(detail(kill), "what=kill host=n2 restart=immediate");
        assert_eq!(
            crash(Restart::Immediate),
            "what=crash host=n1 restart=immediate"
        );
        assert_eq!(
            crash(Restart::After(Duration::from_millis(1500))),
            "what=crash host=n1 restart=1.5s"
        );
        assert_eq!(
            crash(Restart::After(Duration::from_millis(250))),
            "what=crash host=n1 restart=250ms"
        );
    }

    #[test]
    fn a_restart_is_written_as_before() {
        let restart = FaultEvent::Restart { host: host("n1") };
        assert_eq!(detail(EventKind::Fault(restart)), "what=restart host=n1");
    }

    #[test]
    fn a_partition_is_written_as_before() {
        let sides = |s: &[&[&str]]| -> Vec<Vec<String>> {
            s.iter()
                .map(|x| x.iter().map(|h| host(h)).collect())
                .collect()
        };
        let timed = FaultEvent::Partition {
            sides: sides(&[&["c1"], &["n1", "n2"]]),
            oneway: true,
            for_ms: Some(300),
        };
        assert_eq!(
            detail(EventKind::Fault(timed)),
            "what=partition sides=c1|n1+n2 oneway=true for_ms=300"
        );
        let open = FaultEvent::Partition {
            sides: sides(&[&["c1", "n3"], &["n1"], &["n2"]]),
            oneway: false,
            for_ms: None,
        };
        assert_eq!(
            detail(EventKind::Fault(open)),
            "what=partition sides=c1+n3|n1|n2 oneway=false"
        );
    }

    #[test]
    fn an_isolation_is_written_as_before() {
        let isolate = |for_ms| {
            detail(EventKind::Fault(FaultEvent::Isolate {
                host: host("n2"),
                for_ms,
            }))
        };
        assert_eq!(isolate(Some(1234)), "what=isolate host=n2 for_ms=1234");
        assert_eq!(isolate(None), "what=isolate host=n2");
    }

    #[test]
    fn a_heal_is_written_as_before() {
        assert_eq!(detail(EventKind::Fault(FaultEvent::Heal)), "what=heal");
    }

    #[test]
    fn a_pause_is_written_as_before() {
        let pause = FaultEvent::Pause {
            host: host("c1"),
            for_ms: 150,
        };
        assert_eq!(
            detail(EventKind::Fault(pause)),
            "what=pause host=c1 for_ms=150"
        );
    }

    #[test]
    fn a_clock_jump_is_written_as_before() {
        let jump = |by_ms| {
            detail(EventKind::Fault(FaultEvent::ClockJump {
                host: host("c4"),
                by_ms,
            }))
        };
        assert_eq!(jump(-1500.0), "what=clock-jump host=c4 by_ms=-1500");
        assert_eq!(jump(8000.0), "what=clock-jump host=c4 by_ms=8000");
        assert_eq!(
            jump(-4325.777244497811),
            "what=clock-jump host=c4 by_ms=-4325.777244497811"
        );
    }

    #[test]
    fn a_clock_rate_change_is_written_as_before() {
        let rate = |rate, from| {
            detail(EventKind::Fault(FaultEvent::ClockRate {
                host: host("c1"),
                rate,
                from,
            }))
        };
        assert_eq!(rate(0.5, 1.0), "what=clock-rate host=c1 rate=0.5 from=1");
        assert_eq!(
            rate(1.25, 0.5),
            "what=clock-rate host=c1 rate=1.25 from=0.5"
        );
    }

    #[test]
    fn a_slow_link_is_written_as_before() {
        let latency = |latency_ms, for_ms| {
            detail(EventKind::Fault(FaultEvent::Latency {
                between: (host("c1"), host("n1")),
                latency_ms,
                for_ms,
            }))
        };
        assert_eq!(
            latency(1200, Some(500)),
            "what=latency between=c1+n1 latency_ms=1200 for_ms=500"
        );
        assert_eq!(
            latency(10, None),
            "what=latency between=c1+n1 latency_ms=10"
        );
    }

    #[test]
    fn skipped_faults_are_written_as_before() {
        let skipped = |fault, reason| detail(EventKind::FaultSkipped { fault, reason });
        let crash = SkippedFault::Crash { host: host("n1") };
        let restart = |h: &str| SkippedFault::Restart { host: host(h) };
        let pause = SkippedFault::Pause {
            host: host("n3"),
            for_ms: 2000,
        };
        assert_eq!(
            skipped(crash, SkipReason::AlreadyDown),
            "what=crash host=n1 reason=already_down"
        );
        assert_eq!(
            skipped(restart("n1"), SkipReason::AlreadyUp),
            "what=restart host=n1 reason=already_up"
        );
        assert_eq!(
            skipped(restart("n3"), SkipReason::CrashedAgain),
            "what=restart host=n3 reason=crashed_again"
        );
        assert_eq!(
            skipped(pause, SkipReason::Down),
            "what=pause host=n3 for_ms=2000 reason=down"
        );
    }

    #[test]
    fn fault_events_are_named_fault_and_fault_skipped() {
        assert_eq!(EventKind::Fault(FaultEvent::Heal).name(), "fault");
        let skipped = EventKind::FaultSkipped {
            fault: SkippedFault::Crash { host: host("n1") },
            reason: SkipReason::AlreadyDown,
        };
        assert_eq!(skipped.name(), "fault_skipped");
    }
}
