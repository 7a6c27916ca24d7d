//! The lab's outside checker on hand-made histories: ownership from the
//! nodes, stale and unprotected writes, the drivers' `HELD`s, acquisitions
//! from ownership for drivers that say nothing, failovers.

use redlock_harness::check::outside::check;
use redlock_harness::check::{StaleKind, Verdict};
use redlock_harness::history::keys::Shape;
use redlock_harness::history::{Event, EventKind, FaultEvent, History};
use redlock_harness::scenario::{Restart, Topology};
use std::time::Duration;

fn ev(ms: u64, host: &str, kind: EventKind) -> Event {
    Event {
        time: Duration::from_millis(ms),
        host: host.into(),
        kind,
    }
}

fn set(ms: u64, node: &str, token: &str, by: Option<&str>) -> Event {
    let kind = EventKind::KeySet {
        key: "lock".into(),
        shape: Shape::String,
        token: token.into(),
        expires_at: None,
        by: by.map(str::to_string),
    };
    ev(ms, node, kind)
}

fn del(ms: u64, node: &str) -> Event {
    let kind = EventKind::KeyRemoved {
        key: "lock".into(),
        mark: None,
        by: None,
    };
    ev(ms, node, kind)
}

fn write(ms: u64, client: &str, acq: u64, seq: u32) -> Event {
    let kind = EventKind::WriteApplied {
        client: client.into(),
        acq,
        seq,
        fence: None,
        resource: "lock".into(),
    };
    ev(ms, "store", kind)
}

fn held(ms: u64, client: &str, acq: u64) -> Event {
    let kind = EventKind::Acquired {
        acq,
        resource: "lock".into(),
        token: "-".into(),
        validity: Duration::from_millis(1000),
        valid_until: Duration::from_millis(ms + 1000),
        nodes: 0,
        fence: None,
    };
    ev(ms, client, kind)
}

fn history(events: Vec<Event>) -> History {
    History { events }
}

#[test]
fn a_write_while_another_client_owns_the_majority_is_stale() {
    let h = history(vec![
        set(10, "n1", "t1", Some("c1")),
        set(11, "n2", "t1", Some("c1")),
        write(20, "c1", 0, 1),
        // n2 comes back empty; c2 takes n2 and n3.
        ev(
            30,
            "lab",
            EventKind::Fault(FaultEvent::Crash {
                host: "n2".into(),
                restart: Restart::Immediate,
                kill: false,
            }),
        ),
        set(40, "n2", "t2", Some("c2")),
        set(41, "n3", "t2", Some("c2")),
        write(50, "c2", 0, 1),
        write(60, "c1", 0, 2),
    ]);
    let r = check(&h, Topology::Redlock, 3);
    assert_eq!(r.verdict, Verdict::Violation);
    assert_eq!(r.stale_writes.len(), 1);
    let w = &r.stale_writes[0];
    assert_eq!(
        w.writer,
        ("c1".to_string(), 1),
        "c1's first spell of ownership"
    );
    assert_eq!(w.applied, Duration::from_millis(60));
    assert_eq!(w.landed_in.0, "c2");
    // The two spells are the two acquisitions: c1 2 writes, c2 1, A B A.
    assert_eq!(r.interleavings.len(), 1);
    assert_eq!(r.unprotected_writes, Some(0));
}

#[test]
fn a_write_while_nobody_owns_is_unprotected_not_stale() {
    let h = history(vec![
        set(10, "n1", "t1", Some("c1")),
        write(20, "c1", 0, 1),
        del(30, "n1"),
        write(40, "c1", 0, 2),
    ]);
    let r = check(&h, Topology::Redlock, 1);
    assert_eq!(r.verdict, Verdict::Safe);
    assert_eq!(r.unprotected_writes, Some(1));
    assert!(r.stale_writes.is_empty());
}

#[test]
fn a_minority_is_nobody_and_a_write_after_another_held_is_stale() {
    // c1 holds by its own word, then c2 says it holds: c1's later write is
    // stale although the nodes show no majority for anyone.
    let h = history(vec![
        held(5, "c1", 1),
        set(6, "n1", "t1", Some("c1")),
        write(10, "c1", 1, 1),
        held(100, "c2", 1),
        write(110, "c1", 1, 2),
    ]);
    let r = check(&h, Topology::Redlock, 3);
    assert_eq!(
        r.unprotected_writes,
        Some(1),
        "c1's first write: a minority"
    );
    assert_eq!(r.stale_writes.len(), 1);
    assert_eq!(r.stale_writes[0].landed_in, ("c2".to_string(), 1));
    // c1's HELD says 1 s from 5 ms: it overlaps c2's from 100 ms.
    assert_eq!(r.overlaps.len(), 1);
}

#[test]
fn after_a_failover_the_new_master_decides() {
    let h = history(vec![
        set(10, "n1", "t1", Some("c1")),
        write(20, "c1", 0, 1),
        ev(
            30,
            "lab",
            EventKind::Fault(FaultEvent::Crash {
                host: "n1".into(),
                restart: Restart::Never,
                kill: false,
            }),
        ),
        ev(
            40,
            "sentinel",
            EventKind::Failover {
                old_master: "n1".into(),
                new_master: "n2".into(),
            },
        ),
        set(50, "n2", "t2", Some("c2")),
        write(60, "c1", 0, 2),
    ]);
    let r = check(&h, Topology::Single, 2);
    assert_eq!(r.stale_writes.len(), 1);
    assert_eq!(r.stale_writes[0].landed_in.0, "c2");
    // The replica's copy of c1's key, on a node that is not master, owns nothing.
    let h = history(vec![
        set(10, "n1", "t1", Some("c1")),
        set(15, "n2", "t1", None),
        ev(
            30,
            "lab",
            EventKind::Fault(FaultEvent::Crash {
                host: "n1".into(),
                restart: Restart::Never,
                kill: false,
            }),
        ),
        write(35, "c1", 0, 1),
        ev(
            40,
            "sentinel",
            EventKind::Failover {
                old_master: "n1".into(),
                new_master: "n2".into(),
            },
        ),
        write(45, "c1", 0, 2),
    ]);
    let r = check(&h, Topology::Single, 2);
    assert_eq!(r.verdict, Verdict::Safe);
    assert_eq!(
        r.unprotected_writes,
        Some(1),
        "between the crash and the failover"
    );
}

#[test]
fn a_lock_key_maps_a_librarys_key_to_its_resource() {
    let key_set = |ms, node: &str, by: &str| {
        let kind = EventKind::KeySet {
            key: "lib:lock".into(),
            shape: Shape::String,
            token: format!("t-{by}"),
            expires_at: None,
            by: Some(by.into()),
        };
        ev(ms, node, kind)
    };
    let lock_key = || EventKind::LockKey {
        resource: "lock".into(),
        key: "lib:lock".into(),
        by_client: false,
    };
    let h = history(vec![
        ev(1, "c1", lock_key()),
        key_set(10, "n1", "c1"),
        ev(
            15,
            "lab",
            EventKind::Fault(FaultEvent::Crash {
                host: "n1".into(),
                restart: Restart::Immediate,
                kill: false,
            }),
        ),
        key_set(20, "n1", "c2"),
        write(30, "c1", 0, 1),
    ]);
    let r = check(&h, Topology::Redlock, 1);
    assert_eq!(
        r.stale_writes.len(),
        1,
        "the write lands in c2's ownership of lib:lock"
    );
}

fn sent(ms: u64, client: &str, acq: u64, seq: u32) -> Event {
    ev(ms, client, EventKind::WriteSent { acq, seq })
}

#[test]
fn a_stale_write_is_classified_by_its_write_sent() {
    // c1 holds from 5 ms (1 s by its HELD, to 1005 ms); c2 from 2000 ms.
    // Its write sent at 900 ms and applied at 2500 ms was in flight; the
    // same write without a write_sent is taken as sent when applied: late.
    let events = |with_sent: bool| {
        let mut e = vec![held(5, "c1", 1), set(6, "n1", "t1", Some("c1"))];
        if with_sent {
            e.push(sent(900, "c1", 1, 1));
        }
        e.extend([held(2000, "c2", 1), write(2500, "c1", 1, 1)]);
        history(e)
    };
    let r = check(&events(true), Topology::Redlock, 1);
    assert_eq!(r.stale_writes.len(), 1);
    let w = &r.stale_writes[0];
    assert_eq!(w.sent, Some(Duration::from_millis(900)));
    assert_eq!(w.kind, StaleKind::InFlight);
    let r = check(&events(false), Topology::Redlock, 1);
    assert_eq!(r.stale_writes[0].sent, None);
    assert_eq!(r.stale_writes[0].kind, StaleKind::SentLate);
}

#[test]
fn a_silent_clients_write_sent_follows_its_writes_spell() {
    // c1 never says HELD: its writes come with acq 0 and are numbered by
    // its spell of ownership; its write_sent is numbered with them.
    let h = history(vec![
        set(10, "n1", "t1", Some("c1")),
        sent(20, "c1", 0, 1),
        del(30, "n1"),
        set(40, "n1", "t2", Some("c2")),
        write(50, "c1", 0, 1),
    ]);
    let r = check(&h, Topology::Redlock, 1);
    assert_eq!(r.stale_writes.len(), 1);
    let w = &r.stale_writes[0];
    assert_eq!(w.writer, ("c1".to_string(), 1));
    assert_eq!(w.sent, Some(Duration::from_millis(20)));
    assert_eq!(w.kind, StaleKind::InFlight);
}

#[test]
fn a_library_with_a_token_per_master_owns_by_client_when_it_says_so() {
    // Redisson's RedissonRedLock: one client per master, each its own id,
    // so c1's keys hold three different tokens; then c2 takes n2 and n3.
    let lock_key = |by_client| {
        let kind = EventKind::LockKey {
            resource: "lock".into(),
            key: "lock".into(),
            by_client,
        };
        ev(1, "c1", kind)
    };
    let events = |by_client| {
        vec![
            lock_key(by_client),
            set(10, "n1", "a:1", Some("c1")),
            set(11, "n2", "b:1", Some("c1")),
            set(12, "n3", "c:1", Some("c1")),
            write(20, "c1", 0, 1),
            del(30, "n2"),
            del(31, "n3"),
            set(40, "n2", "d:1", Some("c2")),
            set(41, "n3", "e:1", Some("c2")),
            write(50, "c2", 0, 1),
            write(60, "c1", 0, 2),
        ]
    };
    let r = check(&history(events(true)), Topology::Redlock, 3);
    assert_eq!(r.verdict, Verdict::Violation);
    assert_eq!(r.unprotected_writes, Some(0));
    assert_eq!(r.stale_writes.len(), 1);
    assert_eq!(r.stale_writes[0].landed_in.0, "c2");
    // Without BYCLIENT no token is on a majority: nobody ever owns, and
    // the stale write goes unseen (only the A B A of the writes is).
    let r = check(&history(events(false)), Topology::Redlock, 3);
    assert!(r.stale_writes.is_empty(), "{r:?}");
    assert_eq!(r.unprotected_writes, Some(3));
}
