//! The `[clients]` keys (and a client's keys under `[hosts.cN]`): their
//! defaults, how each is read, and the checks of `lock` and `reentry` against
//! the rest of each client's settings once `[clients]` and `[hosts.cN]` are
//! merged: a `reentry` needs the reentrant lock, and the flaws of the `SET NX`
//! lock that have no meaning for Redisson's hash lock (`extend-resurrects`,
//! `plain-del-release`, `legacy-setnx`) are refused with it. Errors point at
//! the key that set the value, in `[hosts.cN]` or in `[clients]`.

use std::time::Duration;

use super::check::{Checked, FileErrors, TableAt, ValueAt};
use super::types::*;

pub(super) const CLIENT_KEYS: &[&str] = &[
    "count",
    "resource",
    "ttl",
    "hold",
    "writes",
    "think",
    "start",
    "retry_count",
    "retry_delay",
    "request_timeout",
    "reconnect_backoff",
    "drift_factor",
    "renew",
    "fencing",
    "variant",
    "lock",
    "reentry",
];
pub(super) const CLIENT_HOST_KEYS: &[&str] = &[
    "clock_rate",
    "clock_offset",
    "resource",
    "ttl",
    "hold",
    "writes",
    "think",
    "start",
    "retry_count",
    "retry_delay",
    "request_timeout",
    "reconnect_backoff",
    "drift_factor",
    "renew",
    "fencing",
    "variant",
    "lock",
    "reentry",
];

pub(super) fn default_client(i: usize) -> ClientSpec {
    ClientSpec {
        name: format!("c{i}"),
        resource: "lock".to_string(),
        ttl: Duration::from_secs(10),
        hold: Hold::For(DurRange {
            lo: Duration::from_secs(1),
            hi: Duration::from_secs(3),
        }),
        writes: 2,
        think: DurRange {
            lo: Duration::ZERO,
            hi: Duration::from_millis(500),
        },
        start: DurRange::fixed(Duration::ZERO),
        retry_count: 3,
        retry_delay: Duration::from_millis(200),
        request_timeout: Duration::from_millis(50),
        reconnect_backoff: Duration::from_secs(1),
        drift_factor: 0.01,
        renew: false,
        fencing: false,
        variant: Variant::Spec,
        lock: LockKind::SetNx,
        reentry: 0,
    }
}

/// Applies the client keys present in `t` to `spec` (not `count`, not clock keys).
pub(super) fn apply_client_keys(
    cx: &FileErrors,
    t: &TableAt,
    spec: &mut ClientSpec,
) -> Checked<()> {
    for e in &t.table.entries {
        let Some(v) = t.get(&e.key) else { continue };
        match e.key.as_str() {
            "resource" => {
                let s = v.str(cx)?;
                if s.is_empty() {
                    return Err(v.err(cx, "the resource name must not be empty"));
                }
                spec.resource = s.to_string();
            }
            "ttl" => spec.ttl = v.positive(cx, None)?,
            "hold" => {
                spec.hold = match v.str(cx) {
                    Ok("validity") => Hold::Validity,
                    // A bad range is a range; any other bad value names the
                    // other spelling too.
                    Ok(s) if s.contains("..") => Hold::For(v.dur_range(cx)?),
                    _ => Hold::For(v.dur_range(cx).map_err(|mut e| {
                        e.message
                            .push_str("; or \"validity\": hold until the validity check fails");
                        e
                    })?),
                }
            }
            "writes" => spec.writes = v.int_in(cx, 0, 1_000_000)? as u32,
            "think" => spec.think = v.dur_range(cx)?,
            "start" => spec.start = v.dur_range(cx)?,
            "retry_count" => spec.retry_count = v.int_in(cx, 1, 1_000_000)? as u32,
            "retry_delay" => spec.retry_delay = v.duration(cx, None)?,
            "request_timeout" => spec.request_timeout = v.positive(cx, None)?,
            "reconnect_backoff" => spec.reconnect_backoff = v.positive(cx, None)?,
            "drift_factor" => {
                let f = v.float(cx)?;
                if f < 0.0 {
                    return Err(v.err(
                        cx,
                        format!("{f} is negative; drift_factor must be 0 or more"),
                    ));
                }
                spec.drift_factor = f;
            }
            "renew" => spec.renew = v.bool(cx)?,
            "fencing" => spec.fencing = v.bool(cx)?,
            "variant" => {
                let options: Vec<(&str, Variant)> =
                    Variant::ALL.iter().map(|v| (v.as_str(), *v)).collect();
                spec.variant = v.choice(cx, &options)?;
            }
            "lock" => {
                let options: Vec<(&str, LockKind)> =
                    LockKind::ALL.iter().map(|k| (k.as_str(), *k)).collect();
                spec.lock = v.choice(cx, &options)?;
            }
            "reentry" => spec.reentry = v.int_in(cx, 0, MAX_REENTRY as i64)? as u32,
            _ => {}
        }
    }
    Ok(())
}

/// The `SET NX` lock's flaws that do not combine with the reentrant lock, and
/// why.
const SET_NX_ONLY: &[(Variant, &str)] = &[
    (
        Variant::ExtendResurrects,
        "its extension re-creates a missing key with SET, and the reentrant lock is a hash renewed by Redisson's script",
    ),
    (
        Variant::PlainDelRelease,
        "the reentrant lock is released one level at a time by a script that counts, never by a plain DEL",
    ),
    (
        Variant::LegacySetnx,
        "it is a different lock (a SETNX timestamp), not a hash",
    ),
];

/// Checks every client's `lock`, `reentry` and `variant` together.
pub(crate) fn check(cx: &FileErrors, top: &TableAt, clients: &[ClientSpec]) -> Checked<()> {
    for c in clients {
        let at = |key: &str| where_set(cx, top, &c.name, key);
        if c.reentry > 0 && c.lock != LockKind::Reentrant {
            let message = format!(
                "reentry = {} needs lock = \"reentrant\", but {} takes the {} lock, which cannot be re-entered",
                c.reentry,
                c.name,
                c.lock.as_str()
            );
            return Err(match at("reentry") {
                Some(v) => v.err(cx, message),
                None => cx.err("clients.reentry", None, message),
            });
        }
        if c.lock != LockKind::Reentrant {
            continue;
        }
        if let Some((v, why)) = SET_NX_ONLY.iter().find(|(v, _)| *v == c.variant) {
            let message = format!(
                "variant \"{}\" does not combine with lock = \"reentrant\" ({}): {why}",
                v.as_str(),
                c.name
            );
            return Err(match at("variant").or_else(|| at("lock")) {
                Some(v) => v.err(cx, message),
                None => cx.err("clients.variant", None, message),
            });
        }
    }
    Ok(())
}

/// The value of a client key as written for `client`: in `[hosts.<client>]`
/// when set there, else in `[clients]`.
fn where_set<'a>(
    cx: &FileErrors,
    top: &TableAt<'a>,
    client: &str,
    key: &str,
) -> Option<ValueAt<'a>> {
    let host = top
        .table(cx, "hosts")
        .ok()
        .flatten()
        .and_then(|h| h.table(cx, client).ok().flatten())
        .and_then(|t| t.get(key));
    host.or_else(|| {
        top.table(cx, "clients")
            .ok()
            .flatten()
            .and_then(|t| t.get(key))
    })
}
