//! When a write was sent, measured from outside: the client's link to the
//! store reads it when the client sends it, however long the link then
//! keeps it; the history puts its `write_sent` in its place; whole runs
//! classify their stale writes by it (a write a cut held up was in flight,
//! a stopped client's writes were sent late).

use redlock_harness::history::EventKind;
use redlock_harness::lab::link::{Link, Setting};
use redlock_harness::lab::record::LabRecorder;
use redlock_harness::lab::store::{Sink, Store, StoreEvent};
use redlock_harness::scenario::Topology;
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
    let check = redlock_harness::check::outside::check(&h, Topology::Redlock, 1);
    // (Every write here is read at 20 s, so the first is stale too.)
    let late_stale = check
        .stale_writes
        .iter()
        .any(|w| w.writer == ("c1".to_string(), 1) && w.seq == 2);
    assert!(late_stale, "{:?}", check.stale_writes);
}

const BIN: &str = env!("CARGO_BIN_EXE_redlock-sim");

/// Runs `lab FILE --seed 1 -- CMD`; its `summary.json`.
fn lab_summary(file: &str, cmd: &[&str]) -> serde_json::Value {
    let dir = std::env::temp_dir().join(format!(
        "redlock-lab-sent-{}-{}",
        std::process::id(),
        file.len()
    ));
    let out = std::process::Command::new(BIN)
        .args(["lab", file, "--seed", "1", "--out"])
        .arg(&dir)
        .arg("--")
        .args(cmd)
        .output()
        .expect("the binary runs");
    assert!(
        matches!(out.status.code(), Some(0) | Some(1)),
        "lab failed: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(dir.join("summary.json")).expect("summary.json");
    let _ = std::fs::remove_dir_all(&dir);
    serde_json::from_str(&text).expect("summary.json parses")
}

/// The stale writes of `client`'s first acquisition:
/// `(how, sent_ms, superseded_ms, applied_ms)`.
fn stale_of(summary: &serde_json::Value, client: &str) -> Vec<(String, f64, f64, f64)> {
    let ms = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    summary["violations"]
        .as_array()
        .expect("violations")
        .iter()
        .filter(|v| v["kind"] == "stale_write")
        .filter(|v| v["writer"]["client"] == client && v["writer"]["acq"] == 1)
        .map(|v| {
            let how = v["how"].as_str().unwrap_or("").to_string();
            (
                how,
                ms(v, "sent_ms"),
                ms(v, "superseded_ms"),
                ms(v, "applied_ms"),
            )
        })
        .collect()
}

#[test]
fn a_write_a_slow_link_held_up_was_in_flight() {
    // c1's second write leaves at about 1.5 s, its link takes 3 s, c2
    // acquires at about 2 s when c1's keys expire: sent half a second
    // before, applied seconds after.
    let summary = lab_summary("scenarios/slow_link_stale_write.toml", &[BIN, "lab-client"]);
    let stale = stale_of(&summary, "c1");
    assert!(!stale.is_empty(), "no stale write of c1's: {summary:#}");
    for (how, sent, superseded, applied) in &stale {
        assert_eq!(how, "stale_in_flight", "{summary:#}");
        assert!(sent + 200.0 < *superseded, "{summary:#}");
        assert!(applied - sent > 2500.0, "{summary:#}");
    }
    assert!(summary["stale_in_flight"].as_u64() >= Some(1));
}

#[test]
fn a_stopped_clients_writes_were_sent_late() {
    // c1 is stopped 150 ms into its hold for 2.5 s, past its 1 s TTL; c2
    // acquires meanwhile; redis-py's Lock writes on when c1 wakes.
    let py = crate::runs::python();
    let cmd = [py.to_str().unwrap(), "drivers/python/redis_py_lock.py"];
    let summary = lab_summary("tests/data/lab/paused_client.toml", &cmd);
    let stale = stale_of(&summary, "c1");
    assert!(!stale.is_empty(), "no stale write of c1's: {summary:#}");
    for (how, sent, superseded, applied) in &stale {
        assert_eq!(how, "stale_sent_late", "{summary:#}");
        assert!(*sent > superseded + 500.0, "{summary:#}");
        assert!(applied - sent < SLACK.as_millis() as f64, "{summary:#}");
    }
}
