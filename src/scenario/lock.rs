//! Checks of `clients.lock` and `clients.reentry` against the rest of each
//! client's settings, once `[clients]` and `[hosts.cN]` are merged: a
//! `reentry` needs the reentrant lock, and the flaws of the `SET NX` lock that
//! have no meaning for Redisson's hash lock (`extend-resurrects`,
//! `plain-del-release`, `legacy-setnx`) are refused with it. Errors point at
//! the key that set the value, in `[hosts.cN]` or in `[clients]`.

use super::check::{Cx, Tbl, Val, R};
use super::types::{ClientSpec, LockKind, Variant};

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
pub(super) fn check(cx: &Cx, top: &Tbl, clients: &[ClientSpec]) -> R<()> {
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
fn where_set<'a>(cx: &Cx, top: &Tbl<'a>, client: &str, key: &str) -> Option<Val<'a>> {
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
