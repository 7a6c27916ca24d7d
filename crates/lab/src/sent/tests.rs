//! When a write was sent, measured from outside: the client's link to the
//! store reads it when the client sends it, however long the link then
//! keeps it; the history puts its `write_sent` in its place. (Whole runs
//! that classify their stale writes by it: `tests/lab/sent.rs`.)

use super::*;

use crate::link::{Link, Setting};
use crate::record::LabRecorder;
use crate::store::{Sink, Store, StoreEvent};
use redlock_history::EventKind;
use redlock_scenario::Topology;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const MS: Duration = Duration::from_millis(1);
const SLACK: Duration = Duration::from_millis(400);

#[tokio::test]
async fn a_write_through_a_slow_link_is_sent_when_the_link_read_it() {
    let seen: Arc<Mutex<Vec<(Instant, StoreEvent)>>> = Arc::default();
    let log = seen.clone();
    let sink: Sink = Arc::new(move |e| log.lock().unwrap().push((Instant::now(), e)));
    let store = Store::start(&["c1".to_string()], sink).await.unwrap();
    let server = store.addr("c1").unwrap();
    let link = Link::open_timed(server, Setting::open(MS), 1, Some(store.send_times()))
        .await
        .unwrap();
    let mut c = tokio::net::TcpStream::connect(link.addr).await.unwrap();
    tokio::time::sleep(50 * MS).await;
    // Connected: from now on the link takes a second to the store.
    link.up.send_replace(Setting::open(1000 * MS));
    let before = Instant::now();
    c.write_all(b"*3\r\n$5\r\nWRITE\r\n$2\r\nc1\r\n$4\r\nlock\r\n")
        .await
        .unwrap();
    let mut reply = [0u8; 5];
    c.read_exact(&mut reply).await.unwrap();
    assert_eq!(&reply, b"+OK\r\n");
    let seen = seen.lock().unwrap();
    let (applied, sent) = seen
        .iter()
        .find_map(|(t, e)| match e {
            StoreEvent::Write { sent, .. } => Some((*t, *sent)),
            _ => None,
        })
        .expect("the write was reported");
    let sent = sent.expect("a write through a link has a send time");
    assert!(
        sent >= before && sent - before < SLACK,
        "sent {:?} after the call",
        sent.saturating_duration_since(before)
    );
    assert!(
        applied - sent >= 950 * MS,
        "applied {:?} after it was sent, under the link's second",
        applied - sent
    );
}

#[test]
fn a_write_sent_is_put_in_its_place_in_time() {
    let origin = Instant::now();
    let rec = LabRecorder::new(origin, &["lock".to_string()], Topology::Redlock, 1);
    std::thread::sleep(20 * MS);
    rec.record("lab", EventKind::NodeUp { keys: 0 });
    std::thread::sleep(20 * MS);
    rec.store(StoreEvent::Write {
        client: "c1".into(),
        resource: "lock".into(),
        fence: None,
        applied: true,
        highest: 0,
        sent: Some(origin + 5 * MS),
    });
    let h = rec.history();
    let kinds: Vec<&str> = h.events.iter().map(|e| e.kind.name()).collect();
    assert_eq!(kinds, ["write_sent", "node_up", "write_applied"]);
    assert_eq!(h.events[0].host, "c1");
    assert_eq!(h.events[0].time, 5 * MS);
    assert!(h.events.windows(2).all(|w| w[0].time <= w[1].time));
}

/// A write a slow link delivered after its writer had released and taken
/// the lock again belongs to the hold it was sent in, not to the one open
/// when it landed: another client's `HELD` came between, so it is stale.
/// (Timed by when it landed, it was the writer's own new hold's first
/// write, and the run read safe.) `HELD` and `RELEASED` are timed when the
/// driver said them.
#[test]
fn a_late_write_belongs_to_the_hold_it_was_sent_in() {
    let origin = Instant::now()
        .checked_sub(Duration::from_secs(20))
        .expect("a clock 20 s old");
    let rec = LabRecorder::new(origin, &["lock".to_string()], Topology::Redlock, 1);
    let at = |ms: u64| Some(origin + Duration::from_millis(ms));
    let held = |c: &str, ms: u64| StoreEvent::Held {
        client: c.into(),
        resource: "lock".into(),
        valid_ms: 1950,
        sent: at(ms),
    };
    let released = |c: &str, ms: u64| StoreEvent::Released {
        client: c.into(),
        resource: "lock".into(),
        sent: at(ms),
    };
    let write = |ms: u64| StoreEvent::Write {
        client: "c1".into(),
        resource: "lock".into(),
        fence: None,
        applied: true,
        highest: 0,
        sent: at(ms),
    };
    // In the order the store read them: c1's second write comes last.
    for e in [
        held("c1", 30),
        write(40),
        held("c2", 2100),
        released("c1", 2600),
        released("c2", 3600),
        held("c1", 3700),
        write(1528),
    ] {
        rec.store(e);
    }
    let h = rec.history();
    assert!(h.events.windows(2).all(|w| w[0].time <= w[1].time));
    let acquired: Vec<(String, Duration)> = h
        .events
        .iter()
        .filter(|e| e.kind.name() == "acquired")
        .map(|e| (e.host.clone(), e.time))
        .collect();
    assert_eq!(
        acquired,
        [
            ("c1".into(), 30 * MS),
            ("c2".into(), 2100 * MS),
            ("c1".into(), 3700 * MS)
        ]
    );
    let late = h
        .events
        .iter()
        .rev()
        .find(|e| e.kind.name() == "write_applied")
        .unwrap();
    assert!(
        matches!(late.kind, EventKind::WriteApplied { acq: 1, seq: 2, .. }),
        "{late:?}"
    );
    let check = redlock_check::outside::check(&h, Topology::Redlock, 1);
    // (Every write here is read at 20 s, so the first is stale too.)
    let late_stale = check
        .stale_writes
        .iter()
        .any(|w| w.writer == ("c1".to_string(), 1) && w.seq == 2);
    assert!(late_stale, "{:?}", check.stale_writes);
}

#[test]
fn a_command_is_sent_when_the_chunk_holding_its_first_byte_was_read() {
    let times = SendTimes::default();
    let peer: SocketAddr = "127.0.0.1:9".parse().unwrap();
    let t0 = Instant::now();
    let t = |ms| t0 + Duration::from_millis(ms);
    times.open(peer, vec![(0, t(0))]);
    times.read(peer, 10, t(5));
    times.read(peer, 30, t(9));
    assert_eq!(times.sent_at(peer, 3), Some(t(0)));
    assert_eq!(times.sent_at(peer, 10), Some(t(5)));
    assert_eq!(times.sent_at(peer, 29), Some(t(5)));
    assert_eq!(times.sent_at(peer, 40), Some(t(9)));
    let other: SocketAddr = "127.0.0.1:10".parse().unwrap();
    assert_eq!(times.sent_at(other, 0), None);
    times.close(peer);
    assert_eq!(times.sent_at(peer, 40), None);
}
