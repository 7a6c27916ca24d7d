use super::*;
use std::collections::BTreeMap;

fn cmd(parts: &[&str]) -> Vec<Bytes> {
    parts.iter().map(|p| Bytes::from(p.to_string())).collect()
}

fn lock() -> Vec<String> {
    vec!["lock".to_string(), "other".to_string()]
}

/// The `detail` of each event, as `history.csv` writes it.
fn details(events: &[EventKind]) -> Vec<String> {
    events
        .iter()
        .map(|e| format!("{} {}", e.name(), e.detail()))
        .collect()
}

fn run(node: &mut NodeKeys, parts: &[&str], by: Option<&str>, now: i64) -> Vec<String> {
    details(&key_events(&lock(), node, &cmd(parts), by, now))
}

#[test]
fn a_string_is_set_extended_removed_and_expired() {
    let mut n = NodeKeys::new();
    assert_eq!(
        run(&mut n, &["SET", "lock", "t1", "PXAT", "100"], Some("c1"), 0),
        ["key_set key=lock token=t1 expires_at=100 by=c1"]
    );
    // The same value again: an extension, not a new mark.
    assert_eq!(
        run(
            &mut n,
            &["SET", "lock", "t1", "PXAT", "200"],
            Some("c1"),
            50
        ),
        ["key_extended key=lock expires_at=200 by=c1"]
    );
    assert_eq!(
        run(&mut n, &["PEXPIREAT", "lock", "300"], Some("c1"), 60),
        ["key_extended key=lock expires_at=300 by=c1"]
    );
    // A DEL of a key still in its time: a deletion, by whoever asked.
    assert_eq!(
        run(&mut n, &["DEL", "lock"], Some("c1"), 300),
        ["key_removed key=lock by=c1"]
    );
    // A DEL of a key past its time is its expiry, whatever command made
    // the node notice (c2's SET found it expired).
    run(
        &mut n,
        &["SET", "lock", "t1", "PXAT", "400"],
        Some("c1"),
        350,
    );
    assert_eq!(
        run(&mut n, &["DEL", "lock"], Some("c2"), 401),
        ["key_expired key=lock expires_at=400"]
    );
    // Keys that are not lock keys are not followed.
    assert!(run(&mut n, &["SET", "x", "v"], Some("c1"), 0).is_empty());
}

#[test]
fn a_hash_field_is_a_mark_its_count_is_not() {
    let mut n = NodeKeys::new();
    assert_eq!(
        run(&mut n, &["HSET", "lock", "uuid:1", "1"], Some("c1"), 0),
        ["key_set key=lock field=uuid:1 expires_at=- by=c1"]
    );
    // A reentrant lock's count going up is no new mark.
    assert!(run(&mut n, &["HSET", "lock", "uuid:1", "2"], Some("c1"), 1).is_empty());
    assert_eq!(
        run(&mut n, &["HSET", "lock", "uuid:2", "1"], Some("c2"), 2),
        ["key_set key=lock field=uuid:2 expires_at=- by=c2"]
    );
    assert_eq!(
        run(&mut n, &["HDEL", "lock", "uuid:1"], Some("c1"), 3),
        ["key_removed key=lock field=uuid:1 by=c1"]
    );
    assert!(n.contains_key("lock"), "one field left");
    run(&mut n, &["HDEL", "lock", "uuid:2"], Some("c2"), 4);
    assert!(!n.contains_key("lock"), "the key goes with its last field");
}

#[test]
fn a_sorted_set_member_lives_until_its_score() {
    let mut n = NodeKeys::new();
    // Symfony's save: its token and `__write__`, then the key's expiry.
    assert_eq!(
        run(
            &mut n,
            &["ZADD", "lock", "1000", "tok1", "1000", "__write__"],
            Some("c1"),
            0
        ),
        [
            "key_set key=lock member=tok1 score=1000 by=c1",
            "key_set key=lock member=__write__ score=1000 by=c1"
        ]
    );
    assert_eq!(
        run(&mut n, &["PEXPIREAT", "lock", "1000"], Some("c1"), 0),
        ["key_extended key=lock expires_at=1000 by=c1"]
    );
    // putOffExpiration: the same member, a later score.
    assert_eq!(
        run(&mut n, &["ZADD", "lock", "1500", "tok1"], Some("c1"), 500),
        ["key_extended key=lock member=tok1 score=1500 by=c1"]
    );
    // c2's ZREMRANGEBYSCORE (the node writes it as ZREM) removes what ran
    // out: an expiry, not c2's deletion; c1's own delete is a removal.
    assert_eq!(
        run(&mut n, &["ZREM", "lock", "__write__"], Some("c2"), 1200),
        ["key_expired key=lock member=__write__ score=1000"]
    );
    assert_eq!(
        run(&mut n, &["ZREM", "lock", "tok1"], Some("c1"), 1200),
        ["key_removed key=lock member=tok1 by=c1"]
    );
    assert!(!n.contains_key("lock"));
}

#[test]
fn expire_finds_keys_and_members_that_ran_out() {
    let mut n = NodeKeys::new();
    run(&mut n, &["SET", "lock", "t", "PXAT", "100"], None, 0);
    run(&mut n, &["ZADD", "other", "50", "a", "80", "b"], None, 0);
    assert_eq!(next_expiry(&n), Some(50));
    assert!(expire(&mut n, 49).is_empty());
    assert_eq!(
        details(&expire(&mut n, 50)),
        ["key_expired key=other member=a score=50"]
    );
    // A key is still there at exactly its expiry millisecond.
    assert_eq!(
        details(&expire(&mut n, 100)),
        ["key_expired key=other member=b score=80"]
    );
    assert_eq!(
        details(&expire(&mut n, 101)),
        ["key_expired key=lock expires_at=100"]
    );
    assert!(n.is_empty());
    // What already ran out adds nothing when the node removes it.
    assert!(run(&mut n, &["DEL", "lock"], Some("c2"), 200).is_empty());
}

#[test]
fn a_flush_removes_only_the_lock_keys_the_node_held() {
    let mut n = NodeKeys::new();
    // A replica's resync at time 0: it held nothing, so nothing goes.
    assert!(run(&mut n, &["FLUSHALL"], None, 0).is_empty());
    run(&mut n, &["SET", "lock", "t1"], None, 0);
    assert_eq!(
        run(&mut n, &["FLUSHALL"], None, 1),
        ["key_removed key=lock"]
    );
    assert!(run(&mut n, &["FLUSHALL"], None, 2).is_empty());
}

#[test]
fn raw_byte_tokens_are_written_escaped_on_one_line() {
    assert_eq!(printable(b"ab-=/+09"), "ab-=/+09");
    assert_eq!(
        printable(b"a b,c\n\"\\\xff"),
        "a\\x20b\\x2cc\\x0a\\x22\\x5c\\xff"
    );
    let mut n = NodeKeys::new();
    let set = vec![
        Bytes::from_static(b"SET"),
        Bytes::from_static(b"lock"),
        Bytes::from_static(b"\x00\n,x"),
    ];
    let out = details(&key_events(&lock(), &mut n, &set, None, 0));
    assert_eq!(
        out,
        ["key_set key=lock token=\\x00\\x0a\\x2cx expires_at=-"]
    );
}

#[test]
fn a_rebuild_makes_every_shape_again_without_a_client() {
    let effects = vec![
        cmd(&["SET", "lock", "t1", "PXAT", "900"]),
        cmd(&["ZADD", "other", "700", "m"]),
        cmd(&["PEXPIREAT", "other", "700"]),
    ];
    let (held, events) = rebuilt(&lock(), &effects, 0);
    assert_eq!(
        details(&events),
        [
            "key_set key=lock token=t1 expires_at=900",
            "key_set key=other member=m score=700",
            "key_extended key=other expires_at=700"
        ]
    );
    let marks: BTreeMap<&String, Vec<&String>> = held
        .iter()
        .map(|(k, s)| (k, s.marks.keys().collect()))
        .collect();
    assert_eq!(marks.len(), 2);
}
