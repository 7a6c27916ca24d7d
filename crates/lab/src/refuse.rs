//! What a scenario may ask of the lab. Keys that cannot mean in the lab what
//! they mean in the simulation are refused, naming the file, the key and
//! the line (exit 2); `tick` is ignored, with a note.
//!
//! Refused, and why:
//! - a client's clock set at its start (`clocks.drift` or `clocks.offset`
//!   reaching the clients, `[hosts.cN] clock_rate`/`clock_offset`) when
//!   libfaketime is not installed ([`super::faketime`]);
//! - a client's clock changed during the run (a `clock-jump` or
//!   `clock-rate` fault on a client, `nemesis.clock_jump_target` `client` or
//!   `any`) when libfaketime is not installed; any jump of a client's
//!   clock ([`super::faketime`] says why);
//! - clock faults and pauses of the `sentinel`, clock faults of the `store`:
//!   they run inside the lab's process;
//! - `after = "cN:released"` and `"cN:lost"`: only the client knows when it
//!   let go or lost the lock; the lab sees ownership (`acquired`);
//! - `clients.variant`, `lock`, `reentry`: they choose the built-in
//!   client's code; a lab client is the command's own. (`fencing` is the
//!   store's: it hands out tokens, `FENCE`, and refuses stale ones.)

use redlock_scenario::{
    key_line, FaultAction, JumpTarget, LockKind, Scenario, ScenarioError, Target, Trigger, Variant,
};

/// The notes for a scenario the lab can run, or the first key it cannot.
pub fn check(s: &Scenario, text: &str, file: &str) -> Result<Vec<String>, ScenarioError> {
    let err = |key: &str, line: Option<usize>, message: String| ScenarioError {
        file: file.to_string(),
        key: key.to_string(),
        line,
        message,
    };
    let clients: Vec<&str> = s.clients.iter().map(|c| c.name.as_str()).collect();
    let is_client = |h: &str| clients.contains(&h);
    if let Some(e) = client_clocks(s, text, &is_client) {
        return Err(err(&e.0, e.1, e.2));
    }
    for (i, f) in s.faults.iter().enumerate() {
        // The key's own line, else the line of its `[[faults]]`.
        let at = |k: &str| {
            let key = format!("faults[{i}].{k}");
            let line = key_line(text, &key).or((f.line > 0).then_some(f.line));
            (key, line)
        };
        if let Trigger::Released(_) | Trigger::Lost(_) = f.after {
            let m = "the lab sees when a client owns the lock (after = \"cN:acquired\"), not when it let go or lost it: only the client knows";
            let (key, line) = at("after");
            return Err(err(&key, line, m.into()));
        }
        if let Trigger::Event { .. } = f.after {
            let m = "the lab sees when a client owns the lock (after = \"cN:acquired\"), not each lock event of a client at an instant";
            let (key, line) = at("after");
            return Err(err(&key, line, m.into()));
        }
        if let Some(m) = refused_action(&f.action, &is_client) {
            let (key, line) = at("host");
            return Err(err(&key, line, m));
        }
    }
    if let Some(n) = &s.nemesis {
        if n.clock_jump_every.is_some() && n.clock_jump_target != JumpTarget::Node {
            let line = key_line(text, "nemesis.clock_jump_target");
            return Err(err("nemesis.clock_jump_target", line, refused_jump()));
        }
    }
    for c in &s.clients {
        let code = [
            ("variant", c.variant != Variant::Spec),
            ("lock", c.lock != LockKind::SetNx),
            ("reentry", c.reentry > 0),
        ];
        if let Some((k, _)) = code.iter().find(|(_, set)| *set) {
            let m = format!(
                "clients.{k} chooses the built-in client's code; a lab client is the command's own"
            );
            let key = format!("clients.{k}");
            return Err(err(&key, key_line(text, &format!("clients.{k}")), m));
        }
    }
    // The refusals are complete: without libfaketime no key that sets or
    // changes a client's clock is left (the run would name it only once
    // the client ran, `client_clock_key`).
    assert!(
        super::faketime::library().is_some() || client_clock_key(s, text).is_none(),
        "{file}: a client's clock is set, libfaketime is missing, and the lab did not refuse it"
    );
    // Every fault's trigger is one the lab sees: the start, or ownership.
    assert!(
        s.faults
            .iter()
            .all(|f| matches!(f.after, Trigger::Start | Trigger::Acquired(_))),
        "{file}: a trigger the lab cannot see was not refused"
    );
    let mut notes = Vec::new();
    if key_line(text, "tick").is_some() {
        notes.push("tick is ignored: the lab runs in real time".to_string());
    }
    Ok(notes)
}

/// The first key that sets a client's clock when libfaketime is missing,
/// or the clock of the store or the sentinel: `(key, line, message)`.
fn client_clocks(
    s: &Scenario,
    text: &str,
    is_client: &dyn Fn(&str) -> bool,
) -> Option<(String, Option<usize>, String)> {
    for (h, o) in &s.hosts {
        let set = o.clock_rate.is_some() || o.clock_offset.is_some();
        let table = format!("hosts.{h}");
        if set && (h == "store" || h == "sentinel") {
            let m = format!("the lab cannot set the clock of the {h} (it runs inside the lab)");
            return Some((table.clone(), clock_line(text, &table), m));
        }
    }
    let why = format!("a client's clock is set through libfaketime, {MISSING}");
    let missing = super::faketime::library().is_none();
    start_clock_key(s, text, is_client)
        .filter(|_| missing)
        .map(|(key, line)| (key, line, why))
}

/// The first key that gives a client a clock of its own from its start:
/// `(key, line)`.
fn start_clock_key(
    s: &Scenario,
    text: &str,
    is_client: &dyn Fn(&str) -> bool,
) -> Option<(String, Option<usize>)> {
    if s.clocks.drift > 0.0 {
        return Some(("clocks.drift".into(), key_line(text, "clocks.drift")));
    }
    if s.clocks.offset.lo_ms != 0.0 || s.clocks.offset.hi_ms != 0.0 {
        return Some(("clocks.offset".into(), key_line(text, "clocks.offset")));
    }
    s.hosts
        .iter()
        .find(|(h, o)| is_client(h) && (o.clock_rate.is_some() || o.clock_offset.is_some()))
        .map(|(h, _)| {
            let table = format!("hosts.{h}");
            let line = clock_line(text, &table);
            (table, line)
        })
}

/// The first key that sets or changes a client's clock, the `clock-rate`
/// faults on a client included: `(key, line)`.
pub fn client_clock_key(s: &Scenario, text: &str) -> Option<(String, Option<usize>)> {
    let clients: Vec<&str> = s.clients.iter().map(|c| c.name.as_str()).collect();
    let is_client = |h: &str| clients.contains(&h);
    start_clock_key(s, text, &is_client).or_else(|| {
        s.faults
            .iter()
            .enumerate()
            .find_map(|(i, f)| match &f.action {
                FaultAction::ClockRate {
                    host: Target::Host(h),
                    ..
                } if is_client(h) => {
                    let key = format!("faults[{i}].host");
                    let line = key_line(text, &key).or((f.line > 0).then_some(f.line));
                    Some((key, line))
                }
                FaultAction::ClockRate { .. }
                | FaultAction::Crash { .. }
                | FaultAction::Restart { .. }
                | FaultAction::Partition { .. }
                | FaultAction::Isolate { .. }
                | FaultAction::Heal
                | FaultAction::Pause { .. }
                | FaultAction::ClockJump { .. }
                | FaultAction::Latency { .. } => None,
            })
    })
}

/// Why the lab cannot apply `a`, if it cannot.
fn refused_action(a: &FaultAction, is_client: &dyn Fn(&str) -> bool) -> Option<String> {
    let (host, jump) = match a {
        FaultAction::ClockJump { host, .. } => (host, true),
        FaultAction::ClockRate { host, .. } => (host, false),
        FaultAction::Pause { host, .. } => {
            return matches!(host, Target::Host(h) if h == "sentinel")
                .then(|| "the lab cannot pause the sentinel (it runs inside the lab)".into());
        }
        FaultAction::Crash { .. }
        | FaultAction::Restart { .. }
        | FaultAction::Partition { .. }
        | FaultAction::Isolate { .. }
        | FaultAction::Heal
        | FaultAction::Latency { .. } => return None,
    };
    match host {
        Target::Host(h) if is_client(h) && jump => Some(refused_jump()),
        Target::Host(h) if is_client(h) => super::faketime::library().is_none().then(|| {
            format!("the lab changes the clock of client {h} through libfaketime, {MISSING}")
        }),
        Target::Host(h) if h == "store" || h == "sentinel" => {
            Some(format!("the lab cannot change the clock of the {h}"))
        }
        _ => None,
    }
}

/// Why the lab cannot jump the wall clock of a client (always, today).
fn refused_jump() -> String {
    "the lab cannot jump a client's clock: libfaketime moves the monotonic clock with \
     the wall clock, and a jump moves only the wall clock (its option to leave the \
     monotonic clock alone breaks Python's sleeps in 0.9.10, Debian's)"
        .to_string()
}

/// libfaketime is missing.
const MISSING: &str =
    "which is not installed (Debian's faketime package: apt-get install faketime)";

/// The line of `[hosts.X]`'s clock key (`clock_rate`, else `clock_offset`).
fn clock_line(text: &str, table: &str) -> Option<usize> {
    key_line(text, &format!("{table}.clock_rate"))
        .or_else(|| key_line(text, &format!("{table}.clock_offset")))
}
