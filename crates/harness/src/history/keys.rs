//! The history events of a node's writes: which changes of a lock's key
//! (created, given an expiry, removed) a node's effects (`SET`, `HSET`,
//! `PEXPIREAT`, `DEL`, `FLUSHALL`) make. The simulation's nodes and the
//! lab's record them alike.

use super::EventKind;
use bytes::Bytes;
use redlock_node::Node;
use std::collections::BTreeMap;

/// The history events of one effect. `owners` is the token (or hash owner)
/// last recorded for each lock key of this node: a reentrant lock's count
/// going up or down (an `HSET` of the same owner) is no new key.
pub(crate) fn key_events(
    resources: &[String],
    owners: &mut BTreeMap<String, String>,
    cmd: &[Bytes],
    by: Option<&str>,
) -> Vec<EventKind> {
    let by = by.map(str::to_string);
    let s = |i: usize| {
        cmd.get(i)
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default()
    };
    let ours = |k: &str| resources.iter().any(|r| r == k);
    let name = s(0).to_ascii_uppercase();
    match name.as_str() {
        "SET" | "HSET" if ours(&s(1)) => {
            let before = owners.insert(s(1), s(2));
            if before.as_ref() == Some(&s(2)) && name == "HSET" {
                return vec![];
            }
        }
        "DEL" => {
            owners.remove(&s(1));
        }
        // A replica's full resync, or a flush: the lock keys this node held
        // are gone (a key it never held is not).
        "FLUSHALL" => {
            let gone = std::mem::take(owners).into_keys();
            return gone
                .map(|key| EventKind::KeyRemoved {
                    key,
                    by: by.clone(),
                })
                .collect();
        }
        _ => {}
    }
    match name.as_str() {
        "SET" if ours(&s(1)) => vec![EventKind::KeySet {
            key: s(1),
            token: s(2),
            expires_at: if s(3).eq_ignore_ascii_case("PXAT") {
                s(4).parse().ok()
            } else {
                None
            },
            by: by.clone(),
        }],
        // The reentrant lock's hash, created by the take script (or by the
        // HSET that replicates an HINCRBY): the owner (the field) stands for
        // the token.
        "HSET" if ours(&s(1)) => vec![EventKind::KeySet {
            key: s(1),
            token: s(2),
            expires_at: None,
            by: by.clone(),
        }],
        "PEXPIREAT" if ours(&s(1)) => {
            vec![EventKind::KeyExpiry {
                key: s(1),
                expires_at: s(2).parse().unwrap_or(0),
            }]
        }
        "DEL" if ours(&s(1)) => vec![EventKind::KeyRemoved {
            key: s(1),
            by: by.clone(),
        }],
        _ => vec![],
    }
}

/// The lock keys `node` holds now (loaded from its disk), with their token
/// (a hash's first field: the reentrant lock's owner).
pub(crate) fn lock_keys(node: &Node, resources: &[String]) -> BTreeMap<String, String> {
    let ks = node.keyspace();
    let token = |v: &redlock_node::keyspace::Value| match v {
        redlock_node::keyspace::Value::Str(b) => String::from_utf8_lossy(b).into_owned(),
        redlock_node::keyspace::Value::Hash(h) => h
            .iter()
            .next()
            .map(|(f, _)| String::from_utf8_lossy(f).into_owned())
            .unwrap_or_default(),
        // No lock this project knows keeps its token in a list or a sorted
        // set (python-redis-lock's list is a signal, not the lock).
        redlock_node::keyspace::Value::List(_) | redlock_node::keyspace::Value::ZSet(_) => {
            String::new()
        }
    };
    ks.entries()
        .filter_map(|(k, e)| {
            let key = String::from_utf8_lossy(k).into_owned();
            resources.contains(&key).then(|| (key, token(&e.value)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn cmd(parts: &[&str]) -> Vec<Bytes> {
        parts.iter().map(|p| Bytes::from(p.to_string())).collect()
    }

    #[test]
    fn a_flush_removes_only_the_lock_keys_the_node_held() {
        let resources = vec!["lock".to_string(), "other".to_string()];
        let mut owners = BTreeMap::new();
        // A replica's resync at time 0: it held nothing, so nothing goes.
        assert!(key_events(&resources, &mut owners, &cmd(&["FLUSHALL"]), None).is_empty());
        let set = key_events(&resources, &mut owners, &cmd(&["SET", "lock", "t1"]), None);
        assert_eq!(set.len(), 1);
        let flushed = key_events(&resources, &mut owners, &cmd(&["FLUSHALL"]), None);
        assert_eq!(
            flushed,
            vec![EventKind::KeyRemoved {
                key: "lock".into(),
                by: None
            }]
        );
        assert!(key_events(&resources, &mut owners, &cmd(&["FLUSHALL"]), None).is_empty());
    }
}
