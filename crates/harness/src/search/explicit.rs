//! Faults as explicit `[[faults]]` entries: the faults a run applied (the
//! nemesis's and the file's) turned into [`Fault`]s due at a time from the
//! start, and any [`Fault`] written back as the TOML table the scenario
//! format reads (`at`, `after`, `do` and the keys of its kind).
//!
//! Every time and length is written so that it parses back to the same
//! nanosecond (`"1234.567891ms"`), a clock jump to the same `f64`, so that
//! the written file replays exactly the run that was shrunk.

use crate::engine::due::{Applied, Origin};
use crate::scenario::{DurRange, Fault, FaultAction, Restart, Target, Trigger};
use std::time::Duration;

/// The applied faults as entries, in the order they were applied: each due
/// at its time from the start (no `after`), but one the aimed nemesis
/// placed at its event's own instant follows that event again
/// ([`at_event`]).
pub fn absolute(applied: &[Applied]) -> Vec<Fault> {
    applied
        .iter()
        .map(|a| Fault {
            at: a.time,
            after: at_event(a).unwrap_or(Trigger::Start),
            line: 0,
            action: a.action.clone(),
        })
        .map(|f| match f.after {
            Trigger::Start => f,
            _ => Fault {
                at: Duration::ZERO,
                ..f
            },
        })
        .collect()
}

/// The trigger of a fault the aimed nemesis placed at an event and due at
/// that event's instant (`after = "c4:lock_call@8462ms"`, `at = "0ms"`).
/// Released in the middle of that instant's step, such a fault is applied
/// at its end (a pause or clock fault: after the hosts ran the step; a cut:
/// from the event on, see `Context::hold_for`); one due at that time from
/// the start would be applied before the step. A fault placed later than
/// its event is applied before its step either way, so it stays due from
/// the start.
fn at_event(a: &Applied) -> Option<Trigger> {
    let p = a.placed.as_ref().filter(|p| p.time == a.time)?;
    Some(Trigger::Event {
        host: p.host.clone(),
        event: p.event.to_string(),
        from: p.time,
    })
}

/// The file's entries that wait for a trigger (`after`), as written, then
/// every other applied fault (the nemesis's, the file's untriggered ones)
/// due at its time from the start: for runs where a triggered fault must
/// keep its trigger to act at the same instruction of its host (a pause of
/// the client that just acquired, before its first write).
pub(crate) fn keeping_triggers(file: &[Fault], applied: &[Applied]) -> Vec<Fault> {
    let mut out: Vec<Fault> = file
        .iter()
        .filter(|f| f.after != Trigger::Start)
        .cloned()
        .map(|f| Fault { line: 0, ..f })
        .collect();
    let triggered = |a: &&Applied| match a.origin {
        Origin::File(i) => {
            // `applied` are the faults of a run of the scenario of `file`.
            assert!(
                i < file.len(),
                "an applied fault of faults[{i}] of a file of {}",
                file.len()
            );
            file[i].after != Trigger::Start
        }
        Origin::Nemesis => false,
    };
    let rest: Vec<Applied> = applied.iter().filter(|a| !triggered(a)).cloned().collect();
    out.extend(absolute(&rest));
    out
}

/// A duration as a string the format parses back to the same nanosecond:
/// milliseconds with up to six decimals (`"1234.567891ms"`, `"2000ms"`).
pub(crate) fn exact(d: Duration) -> String {
    let nanos = d.as_nanos();
    let (ms, frac) = (nanos / 1_000_000, nanos % 1_000_000);
    if frac == 0 {
        return format!("{ms}ms");
    }
    let frac = format!("{frac:06}");
    format!("{ms}.{}ms", frac.trim_end_matches('0'))
}

/// A signed millisecond amount as the format writes it (`"+8000ms"`,
/// `"-1234.5678901ms"`), parsing back to the same `f64`.
pub(crate) fn signed_ms(ms: f64) -> String {
    if ms.is_sign_negative() {
        format!("-{}ms", -ms)
    } else {
        format!("+{ms}ms")
    }
}

fn range(r: &DurRange) -> String {
    if r.lo == r.hi {
        exact(r.lo)
    } else {
        format!("{}..{}", exact(r.lo), exact(r.hi))
    }
}

fn target(t: &Target) -> String {
    match t {
        Target::Host(h) => h.clone(),
        Target::Master => "master".to_string(),
    }
}

/// A restart policy as the format writes it (`cluster.restart`, a crash's
/// `restart`).
pub(crate) fn restart(r: Restart) -> String {
    match r {
        Restart::Immediate => "immediate".to_string(),
        Restart::Never => "never".to_string(),
        Restart::After(d) => exact(d),
    }
}

fn trigger(t: &Trigger) -> Option<String> {
    match t {
        Trigger::Start => None,
        Trigger::Acquired(c) => Some(format!("{c}:acquired")),
        Trigger::Released(c) => Some(format!("{c}:released")),
        Trigger::Lost(c) => Some(format!("{c}:lost")),
        Trigger::Event { host, event, from } => Some(format!("{host}:{event}@{}", exact(*from))),
    }
}

fn strings(list: &[String]) -> toml_edit::Array {
    list.iter().map(String::as_str).collect()
}

/// One `[[faults]]` table: `at`, `after` (when it has a trigger), `do`,
/// then the keys of its kind in the format's order. A crash's `restart` is
/// written only when the crash has its own (else the cluster's applies, as
/// in the run).
pub(crate) fn entry(f: &Fault) -> toml_edit::Table {
    use toml_edit::value;
    let mut t = toml_edit::Table::new();
    t["at"] = value(exact(f.at));
    if let Some(after) = trigger(&f.after) {
        t["after"] = value(after);
    }
    t["do"] = value(f.action.kind());
    let for_ = |t: &mut toml_edit::Table, d: &Option<Duration>| {
        if let Some(d) = d {
            t["for"] = value(exact(*d));
        }
    };
    match &f.action {
        FaultAction::Crash {
            host, restart: r, ..
        } => {
            t["host"] = value(target(host));
            if let Some(r) = r {
                t["restart"] = value(restart(*r));
            }
        }
        FaultAction::Restart { host } => t["host"] = value(target(host)),
        FaultAction::Partition {
            sides,
            oneway,
            for_: d,
        } => {
            let sides: toml_edit::Array = sides.iter().map(|s| strings(s)).collect();
            t["sides"] = value(sides);
            if *oneway {
                t["oneway"] = value(true);
            }
            for_(&mut t, d);
        }
        FaultAction::Isolate { host, for_: d } => {
            t["host"] = value(target(host));
            for_(&mut t, d);
        }
        FaultAction::Heal => {}
        FaultAction::Pause { host, for_: d } => {
            t["host"] = value(target(host));
            t["for"] = value(exact(*d));
        }
        FaultAction::ClockJump { host, by_ms } => {
            t["host"] = value(target(host));
            t["by"] = value(signed_ms(*by_ms));
        }
        FaultAction::ClockRate { host, rate } => {
            t["host"] = value(target(host));
            t["rate"] = value(*rate);
        }
        FaultAction::Latency {
            between,
            latency,
            for_: d,
        } => {
            t["between"] = value(strings(&[between.0.clone(), between.1.clone()]));
            t["latency"] = value(range(latency));
            for_(&mut t, d);
        }
    }
    t
}

/// Every entry as an array of tables, for the document's `faults` key.
pub(crate) fn entries(faults: &[Fault]) -> toml_edit::ArrayOfTables {
    let mut out = toml_edit::ArrayOfTables::new();
    for f in faults {
        out.push(entry(f));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::parse_str;

    #[test]
    fn exact_durations_parse_back_to_the_nanosecond() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Up to about 11 days, every nanosecond digit significant.
            let d = Duration::from_nanos(x % 1_000_000_000_000_000 / 1000);
            let text = exact(d);
            assert_eq!(redlock_proto::duration::parse(&text), Ok(d), "{text}");
            let ms = (x as f64 / u64::MAX as f64 - 0.5) * 2e7;
            let text = signed_ms(ms);
            assert_eq!(
                redlock_proto::duration::parse_signed_ms(&text),
                Ok(ms),
                "{text}"
            );
        }
        assert_eq!(exact(Duration::from_millis(1500)), "1500ms");
        assert_eq!(exact(Duration::from_nanos(1_234_567_890)), "1234.56789ms");
        assert_eq!(exact(Duration::ZERO), "0ms");
        assert_eq!(signed_ms(-2000.0), "-2000ms");
    }

    /// Every kind of fault, written as an entry and parsed back by the
    /// scenario parser, is the same fault.
    #[test]
    fn every_kind_round_trips_through_the_parser() {
        let ns = Duration::from_nanos;
        let host = |h: &str| Target::Host(h.to_string());
        let actions = vec![
            FaultAction::Crash {
                host: host("n2"),
                restart: None,
                kill: false,
            },
            FaultAction::Crash {
                host: Target::Master,
                restart: Some(Restart::After(ns(1_999_999_999))),
                kill: false,
            },
            FaultAction::Crash {
                host: host("n1"),
                restart: Some(Restart::Never),
                kill: false,
            },
            FaultAction::Crash {
                host: host("n3"),
                restart: Some(Restart::Immediate),
                kill: false,
            },
            FaultAction::Crash {
                host: host("n1"),
                restart: Some(Restart::After(ns(2_200_000_000))),
                kill: true,
            },
            FaultAction::Restart { host: host("n2") },
            FaultAction::Partition {
                sides: vec![
                    vec!["c1".into(), "n1".into()],
                    vec!["n2".into()],
                    vec!["store".into(), "sentinel".into()],
                ],
                oneway: false,
                for_: Some(ns(1_234_567_891)),
            },
            FaultAction::Partition {
                sides: vec![vec!["c2".into()], vec!["n3".into()]],
                oneway: true,
                for_: None,
            },
            FaultAction::Isolate {
                host: host("c1"),
                for_: Some(ns(300_000_001)),
            },
            FaultAction::Isolate {
                host: Target::Master,
                for_: None,
            },
            FaultAction::Heal,
            FaultAction::Pause {
                host: host("c2"),
                for_: ns(987_654_321),
            },
            FaultAction::ClockJump {
                host: host("n1"),
                by_ms: -4321.123456789012,
            },
            FaultAction::ClockJump {
                host: host("c1"),
                by_ms: 8000.0,
            },
            FaultAction::ClockRate {
                host: host("n3"),
                rate: 1.0473829105,
            },
            FaultAction::Latency {
                between: ("c1".into(), "store".into()),
                latency: DurRange {
                    lo: ns(5_000_001),
                    hi: ns(2_000_000_000),
                },
                for_: Some(ns(3_000_000_000)),
            },
            FaultAction::Latency {
                between: ("n1".into(), "n2".into()),
                latency: DurRange::fixed(ns(40_000_000)),
                for_: None,
            },
        ];
        let triggers = [
            Trigger::Start,
            Trigger::Acquired("c1".into()),
            Trigger::Released("c2".into()),
            Trigger::Lost("c1".into()),
            Trigger::Event {
                host: "c2".into(),
                event: "lock_call".into(),
                from: ns(8_462_000_001),
            },
        ];
        let faults: Vec<Fault> = actions
            .into_iter()
            .enumerate()
            .map(|(i, action)| Fault {
                at: ns(1_000_000_007 * i as u64 + 123),
                after: triggers[i % triggers.len()].clone(),
                line: 0,
                action,
            })
            .collect();
        let mut doc = toml_edit::DocumentMut::new();
        doc["duration"] = toml_edit::value("30s");
        doc["cluster"]["topology"] = toml_edit::value("single");
        doc["cluster"]["nodes"] = toml_edit::value(3);
        doc.insert("faults", toml_edit::Item::ArrayOfTables(entries(&faults)));
        let text = doc.to_string();
        let parsed = parse_str(&text, "roundtrip.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
        let back: Vec<Fault> = parsed
            .faults
            .into_iter()
            .map(|f| Fault { line: 0, ..f })
            .collect();
        assert_eq!(back, faults, "{text}");
    }
}
