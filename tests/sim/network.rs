//! The network is TCP as the scenario format states it (issue 21): in order
//! through latency changes, held through partitions and delivered on the
//! heal, a connect across a cut link waiting and leaving nothing behind, a
//! close after the data, latencies that do not depend on `tick`, faults
//! released by an event at its instant. The first tests drive turmoil (as
//! patched in `vendor/turmoil`) directly; the last ones the simulation.

use redlock_harness::history::{EventKind, History};
use redlock_harness::runner;
use redlock_harness::scenario::{self, Scenario};
use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use turmoil::net::{TcpListener, TcpStream};

const MS: Duration = Duration::from_millis(1);

fn sim(tick: Duration, latency: Duration) -> turmoil::Sim<'static> {
    turmoil::Builder::new()
        .tick_duration(tick)
        .min_message_latency(latency)
        .max_message_latency(latency)
        .simulation_duration(Duration::from_secs(60))
        .build()
}

/// What a reader saw: each byte with the simulated time it was read at,
/// and the end of the stream as `None`.
type Log = Rc<RefCell<Vec<(Duration, Option<u8>)>>>;

/// Serves one connection, logging what it reads until the end of the stream.
fn reader(sim: &mut turmoil::Sim<'static>, log: Log) {
    sim.host("server", move || {
        let log = log.clone();
        async move {
            let l = TcpListener::bind("0.0.0.0:9000").await?;
            let (mut s, _) = l.accept().await?;
            loop {
                let mut b = [0u8; 1];
                let n = s.read(&mut b).await?;
                let at = turmoil::sim_elapsed().unwrap();
                log.borrow_mut().push((at, (n == 1).then_some(b[0])));
                if n == 0 {
                    return Ok(());
                }
            }
        }
    });
}

/// A hop takes the link's latency, whatever the step: a connect is a round
/// trip (6 ms at 3 ms a hop) and a byte one hop more.
#[test]
fn a_hop_takes_its_latency_at_any_tick() {
    for tick in [MS, MS / 4, MS / 10] {
        let mut sim = sim(tick, 3 * MS);
        let log = Rc::new(RefCell::new(Vec::new()));
        reader(&mut sim, log.clone());
        sim.client("client", async {
            let mut s = TcpStream::connect("server:9000").await?;
            assert_eq!(turmoil::sim_elapsed().unwrap(), 6 * MS, "connect");
            s.write_all(b"x").await?;
            tokio::time::sleep(Duration::from_secs(1)).await;
            Ok(())
        });
        sim.run().unwrap();
        assert_eq!(log.borrow()[0], (9 * MS, Some(b'x')), "tick {tick:?}");
    }
}

/// A connection's segments arrive in order when its link's latency drops
/// while the first is in flight: the reset the client sends when it drops
/// the stream with a byte unread (it has no sequence number, and would
/// overtake) comes after its data, and the server reads the data first.
#[test]
fn a_connection_stays_in_order_when_its_link_speeds_up() {
    let mut sim = sim(MS, MS);
    let log = Rc::new(RefCell::new(Vec::new()));
    let seen = log.clone();
    sim.host("server", move || {
        let log = seen.clone();
        async move {
            let l = TcpListener::bind("0.0.0.0:9000").await?;
            let (mut s, _) = l.accept().await?;
            // A byte the client will not read: its drop sends a reset.
            s.write_all(b"z").await?;
            loop {
                let mut b = [0u8; 1];
                let n = s.read(&mut b).await.unwrap_or(0);
                let at = turmoil::sim_elapsed().unwrap();
                log.borrow_mut().push((at, (n == 1).then_some(b[0])));
                if n == 0 {
                    return Ok(());
                }
            }
        }
    });
    sim.client("client", async {
        let mut s = TcpStream::connect("server:9000").await?;
        s.write_all(b"a").await?;
        tokio::time::sleep(MS).await;
        drop(s);
        tokio::time::sleep(Duration::from_secs(1)).await;
        Ok(())
    });
    // t = 0: the SYN; t = 1 ms: the SYN-ACK and "z". Then the link takes
    // 100 ms: "a" leaves at 2 ms on it; from 3 ms it takes 1 ms again, for
    // the reset.
    sim.step().unwrap();
    sim.step().unwrap();
    sim.set_link_latency("client", "server", 100 * MS);
    sim.step().unwrap();
    sim.set_link_latency("client", "server", MS);
    sim.run().unwrap();
    assert_eq!(
        *log.borrow(),
        vec![(102 * MS, Some(b'a')), (102 * MS, None)]
    );
}

/// What a one-way hold keeps arrives in order a hop after the release.
#[test]
fn held_bytes_arrive_in_order_after_the_release() {
    let mut sim = sim(MS, 2 * MS);
    let log = Rc::new(RefCell::new(Vec::new()));
    reader(&mut sim, log.clone());
    sim.client("client", async {
        let mut s = TcpStream::connect("server:9000").await?;
        turmoil::hold_oneway("client", "server");
        s.write_all(b"a").await?;
        s.write_all(b"b").await?;
        drop(s);
        tokio::time::sleep(Duration::from_secs(1)).await;
        turmoil::release_oneway("client", "server");
        tokio::time::sleep(Duration::from_secs(1)).await;
        Ok(())
    });
    sim.run().unwrap();
    // Connected at 4 ms, released at 1.004 s: one hop later.
    let expect = vec![
        (1006 * MS, Some(b'a')),
        (1006 * MS, Some(b'b')),
        (1006 * MS, None),
    ];
    assert_eq!(*log.borrow(), expect);
}

/// A connect across a held link waits; given up, it leaves no socket, and
/// its SYN, delivered on the release, opens no connection.
#[test]
fn a_connect_across_a_held_link_waits_and_leaves_nothing_when_given_up() {
    let mut sim = sim(MS, MS);
    let accepted = Rc::new(RefCell::new(0));
    let count = accepted.clone();
    sim.host("server", move || {
        let count = count.clone();
        async move {
            let l = TcpListener::bind("0.0.0.0:9000").await?;
            loop {
                let _ = l.accept().await?;
                *count.borrow_mut() += 1;
            }
        }
    });
    sim.client("client", async {
        turmoil::hold_oneway("client", "server");
        let started = turmoil::sim_elapsed().unwrap();
        let r = tokio::time::timeout(
            Duration::from_millis(500),
            TcpStream::connect("server:9000"),
        )
        .await;
        assert!(r.is_err(), "the connect returned before its timeout");
        let waited = turmoil::sim_elapsed().unwrap() - started;
        assert_eq!(waited, Duration::from_millis(500));
        assert_eq!(turmoil::established_tcp_stream_count(), 0);
        turmoil::release_oneway("client", "server");
        tokio::time::sleep(Duration::from_millis(100)).await;
        Ok(())
    });
    sim.run().unwrap();
    assert_eq!(*accepted.borrow(), 0);
}

fn history_of(text: &str) -> History {
    let s = scenario::parse_str(text, "t.toml").unwrap();
    redlock_harness::sim::run(&s, 1).unwrap()
}

/// A latency fault released by c1's acquisition with `at = "0s"` already
/// slows the write c1 sends at that instant.
#[test]
fn a_fault_released_by_an_event_meets_what_is_sent_at_that_instant() {
    let h = history_of(
        r#"
duration = "4s"
[cluster]
nodes = 1
[network]
latency = "2ms..2ms"
[clients]
count = 1
ttl = "10s"
hold = "100ms"
writes = 1
think = "10s"
[[faults]]
at = "0s"
after = "c1:acquired"
do = "latency"
between = ["c1", "store"]
latency = "1s"
"#,
    );
    let at = |name: &str| {
        h.events
            .iter()
            .find(|e| e.kind.name() == name)
            .unwrap_or_else(|| panic!("no {name}"))
            .time
    };
    let sent = at("write_sent");
    assert_eq!(at("acquired"), sent);
    // On the connection opened when c1 started: one slowed hop.
    assert_eq!(at("write_applied"), sent + Duration::from_secs(1));
    assert!(h
        .events
        .iter()
        .any(|e| matches!(&e.kind, EventKind::Fault(_)) && e.time == sent));
}

fn every_scenario() -> Vec<PathBuf> {
    let mut files = crate::common::shipped_scenarios();
    let mut variants: Vec<PathBuf> = std::fs::read_dir("scenarios/variants")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    variants.sort();
    files.extend(variants);
    files
}

fn at_tick(f: &std::path::Path, tick: Option<&str>) -> (String, &'static str) {
    let sets: Vec<_> = tick
        .map(|t| runner::parse_set(&format!("tick={t}")).unwrap())
        .into_iter()
        .collect();
    let s: Scenario = runner::load_file(f, &sets).unwrap_or_else(|e| panic!("{e}"));
    let seed = s.seed;
    let run = runner::simulate(s, seed).unwrap_or_else(|e| panic!("{e}"));
    (run.trace.clone(), run.outcome())
}

/// Every shipped scenario, at its default seed, makes the same run at its
/// own tick and at 250us: the same trace, so the same verdict.
#[test]
fn every_shipped_scenario_runs_the_same_at_250us() {
    let files = every_scenario();
    assert!(files.len() >= 30, "{files:?}");
    let index: Vec<usize> = (0..files.len()).collect();
    let runs = crate::common::on_two_threads(&index, |i| {
        (at_tick(&files[i], None), at_tick(&files[i], Some("250us")))
    });
    let diffs: Vec<String> = runs
        .iter()
        .filter(|(_, (own, fine))| own != fine)
        .map(|(i, (own, fine))| format!("{}: {own:?} vs {fine:?}", files[*i].display()))
        .collect();
    assert!(diffs.is_empty(), "{diffs:#?}");
}
