//! The engine's decisions, against a world that only writes down what it
//! is asked to do: what is skipped and why, which timer fires what, which
//! latency fault a restore belongs to, how pauses end, when a waiting
//! fault falls due.

use super::cuts::{Cause, Cuts, LinkState};
use super::due::{Due, Origin, Waiting};
use super::{ready, Engine, PauseEnd, World};
use redlock_history::{EventKind, FaultEvent, SkipReason, SkippedFault};
use redlock_scenario::{parse_str, DurRange, FaultAction, Restart, Scenario, Target, Trigger};
use std::cell::RefCell;
use std::time::Duration;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn scenario() -> Scenario {
    let text = "name = \"engine\"\nduration = \"10s\"\n[cluster]\nnodes = 3\nrestart = \"2s\"\n[clients]\ncount = 2\nttl = \"1s\"\n";
    parse_str(text, "engine.toml").unwrap_or_else(|e| panic!("{e}"))
}

/// Writes down every call; its hosts act at once.
struct Notebook {
    pause_end: PauseEnd,
    calls: RefCell<Vec<String>>,
    events: RefCell<Vec<(Duration, EventKind)>>,
}

impl Notebook {
    fn new(pause_end: PauseEnd) -> Notebook {
        Notebook {
            pause_end,
            calls: RefCell::default(),
            events: RefCell::default(),
        }
    }

    fn note(&self, call: String) {
        self.calls.borrow_mut().push(call);
    }

    fn calls(&self) -> Vec<String> {
        self.calls.borrow().clone()
    }

    fn skipped(&self) -> Vec<(SkippedFault, SkipReason)> {
        let events = self.events.borrow();
        let skips = events.iter().filter_map(|(_, k)| match k {
            EventKind::FaultSkipped { fault, reason } => Some((fault.clone(), *reason)),
            _ => None,
        });
        skips.collect()
    }

    fn faults(&self) -> Vec<(Duration, FaultEvent)> {
        let events = self.events.borrow();
        let faults = events.iter().filter_map(|(t, k)| match k {
            EventKind::Fault(f) => Some((*t, f.clone())),
            _ => None,
        });
        faults.collect()
    }
}

impl World for Notebook {
    fn instant(&self, due: Duration) -> Duration {
        due
    }

    fn master(&self) -> String {
        "n2".into()
    }

    fn record(&self, at: Duration, kind: EventKind) {
        self.events.borrow_mut().push((at, kind));
    }

    fn sync_links(&mut self, _cuts: &Cuts) {
        self.note("sync".into());
    }

    async fn crash(&mut self, _at: Duration, host: &str, kill: bool, _: &mut Cuts, _: Cause) {
        self.note(format!("crash {host} kill={kill}"));
    }

    async fn restart(&mut self, host: &str) {
        self.note(format!("restart {host}"));
    }

    fn pause(&mut self, host: &str, from: Duration, until: Duration) -> PauseEnd {
        self.note(format!("pause {host} {from:?}..{until:?}"));
        self.pause_end
    }

    fn resume(&mut self, host: &str) {
        self.note(format!("resume {host}"));
    }

    fn set_latency(&mut self, a: &str, b: &str, latency: Option<Duration>) {
        self.note(format!("latency {a}-{b} {latency:?}"));
    }

    fn jump_clock(&mut self, host: &str, by_ms: f64) {
        self.note(format!("jump {host} {by_ms}"));
    }

    fn set_clock_rate(&mut self, host: &str, _at: Duration, rate: f64) -> f64 {
        self.note(format!("rate {host} {rate}"));
        1.0
    }
}

fn due(time: Duration, action: FaultAction) -> Due {
    Due {
        time,
        action,
        origin: Origin::Nemesis,
        placed: None,
    }
}

fn crash(host: &str, restart: Option<Restart>) -> FaultAction {
    FaultAction::Crash {
        host: Target::Host(host.into()),
        restart,
        kill: false,
    }
}

/// Runs the engine to `until`, a millisecond at a time.
fn run_to(engine: &mut Engine, world: &mut Notebook, until: Duration) {
    let mut now = Duration::ZERO;
    while now <= until {
        ready(engine.apply_due(world, now));
        now += ms(1);
    }
}

#[test]
fn a_crash_of_a_node_already_down_is_skipped_and_the_restart_follows_the_first_crash() {
    let s = scenario();
    let queue = vec![
        due(ms(100), crash("n1", None)),
        due(ms(500), crash("n1", None)),
    ];
    let mut engine = Engine::new(&s, 1, queue);
    let mut world = Notebook::new(PauseEnd::Itself);
    run_to(&mut engine, &mut world, ms(3000));
    let skipped = vec![(
        SkippedFault::Crash { host: "n1".into() },
        SkipReason::AlreadyDown,
    )];
    assert_eq!(world.skipped(), skipped);
    // The cluster's policy (2 s) from the first crash.
    let restart = FaultEvent::Restart { host: "n1".into() };
    assert!(world.faults().contains(&(ms(2100), restart)));
    assert_eq!(
        engine.into_faults().applied.len(),
        1,
        "the skipped crash is not applied"
    );
}

#[test]
fn a_restart_due_after_a_second_crash_is_skipped_as_crashed_again() {
    let s = scenario();
    let queue = vec![
        due(ms(100), crash("n1", Some(Restart::After(ms(1000))))),
        due(
            ms(500),
            FaultAction::Restart {
                host: Target::Host("n1".into()),
            },
        ),
        due(ms(800), crash("n1", Some(Restart::Never))),
    ];
    let mut engine = Engine::new(&s, 1, queue);
    let mut world = Notebook::new(PauseEnd::Itself);
    run_to(&mut engine, &mut world, ms(3000));
    let skipped = vec![(
        SkippedFault::Restart { host: "n1".into() },
        SkipReason::CrashedAgain,
    )];
    assert_eq!(world.skipped(), skipped);
    let restarts = world
        .calls()
        .iter()
        .filter(|c| c.starts_with("restart"))
        .count();
    assert_eq!(
        restarts,
        1,
        "only the explicit restart: {:?}",
        world.calls()
    );
}

#[test]
fn a_restart_of_a_node_that_is_up_is_skipped_and_master_resolves_through_the_world() {
    let s = scenario();
    let queue = vec![due(
        ms(10),
        FaultAction::Restart {
            host: Target::Master,
        },
    )];
    let mut engine = Engine::new(&s, 1, queue);
    let mut world = Notebook::new(PauseEnd::Itself);
    run_to(&mut engine, &mut world, ms(20));
    let skipped = vec![(
        SkippedFault::Restart { host: "n2".into() },
        SkipReason::AlreadyUp,
    )];
    assert_eq!(world.skipped(), skipped);
}

#[test]
fn a_restore_belongs_to_the_latest_latency_fault_on_the_pair_in_either_order() {
    let s = scenario();
    let slow = |a: &str, b: &str, for_ms| FaultAction::Latency {
        between: (a.into(), b.into()),
        latency: DurRange::fixed(ms(300)),
        for_: Some(ms(for_ms)),
    };
    // The second fault names the pair the other way round.
    let queue = vec![
        due(ms(100), slow("c1", "n1", 200)),
        due(ms(200), slow("n1", "c1", 500)),
    ];
    let mut engine = Engine::new(&s, 1, queue);
    let mut world = Notebook::new(PauseEnd::Itself);
    run_to(&mut engine, &mut world, ms(1000));
    let latencies: Vec<String> = world
        .calls()
        .into_iter()
        .filter(|c| c.starts_with("latency"))
        .collect();
    assert_eq!(
        latencies,
        [
            "latency c1-n1 Some(300ms)",
            "latency n1-c1 Some(300ms)",
            "latency n1-c1 None"
        ],
        "the first fault's restore at 300 ms belongs to a superseded fault"
    );
}

#[test]
fn a_pause_the_world_ends_is_resumed_by_the_longest_not_the_first() {
    let s = scenario();
    let pause = |for_ms| FaultAction::Pause {
        host: Target::Host("c1".into()),
        for_: ms(for_ms),
    };
    let queue = vec![due(ms(100), pause(500)), due(ms(200), pause(100))];
    let mut engine = Engine::new(&s, 1, queue);
    let mut world = Notebook::new(PauseEnd::OnResume);
    run_to(&mut engine, &mut world, ms(1000));
    let resumes: Vec<String> = world
        .calls()
        .into_iter()
        .filter(|c| c.starts_with("resume"))
        .collect();
    assert_eq!(
        resumes,
        ["resume c1"],
        "one resume, at the end of the longer pause"
    );
    // A world whose pauses end by themselves is never resumed.
    let mut engine = Engine::new(&s, 1, vec![due(ms(100), pause(500))]);
    let mut world = Notebook::new(PauseEnd::Itself);
    run_to(&mut engine, &mut world, ms(1000));
    assert!(!world.calls().iter().any(|c| c.starts_with("resume")));
}

#[test]
fn a_pause_of_a_node_that_is_down_is_skipped() {
    let s = scenario();
    let pause = FaultAction::Pause {
        host: Target::Host("n1".into()),
        for_: ms(100),
    };
    let queue = vec![
        due(ms(100), crash("n1", Some(Restart::Never))),
        due(ms(200), pause),
    ];
    let mut engine = Engine::new(&s, 1, queue);
    let mut world = Notebook::new(PauseEnd::OnResume);
    run_to(&mut engine, &mut world, ms(500));
    let skipped = SkippedFault::Pause {
        host: "n1".into(),
        for_ms: 100,
    };
    assert_eq!(world.skipped(), vec![(skipped, SkipReason::Down)]);
}

#[test]
fn a_partition_holds_its_links_until_its_heal_and_the_links_follow() {
    let s = scenario();
    let partition = FaultAction::Partition {
        sides: vec![vec!["n1".into()], vec!["n2".into(), "n3".into()]],
        oneway: false,
        for_: Some(ms(300)),
    };
    let mut engine = Engine::new(&s, 1, vec![due(ms(100), partition)]);
    let mut world = Notebook::new(PauseEnd::Itself);
    run_to(&mut engine, &mut world, ms(200));
    assert_eq!(engine.cuts().wanted("n1", "n2"), LinkState::Held);
    assert_eq!(engine.cuts().wanted("n2", "n3"), LinkState::Healthy);
    run_to(&mut engine, &mut world, ms(400));
    assert_eq!(engine.cuts().wanted("n1", "n2"), LinkState::Healthy);
    let syncs = world.calls().iter().filter(|c| *c == "sync").count();
    assert!(
        syncs >= 2,
        "the links follow the cut and the heal: {:?}",
        world.calls()
    );
}

#[test]
fn a_waiting_fault_falls_due_when_its_trigger_is_seen() {
    let s = scenario();
    let mut engine = Engine::new(&s, 1, Vec::new());
    engine.wait_for(vec![Waiting {
        trigger: Trigger::Acquired("c1".into()),
        at: ms(50),
        action: crash("n3", Some(Restart::Never)),
        index: 0,
    }]);
    engine.release(|_| None);
    assert_eq!(engine.next_due(), None, "not seen yet");
    engine.release(|t| (*t == Trigger::Acquired("c1".into())).then_some(ms(1000)));
    assert_eq!(engine.next_due(), Some(ms(1050)));
    let mut world = Notebook::new(PauseEnd::Itself);
    run_to(&mut engine, &mut world, ms(1100));
    assert_eq!(world.calls()[0], "crash n3 kill=false");
    let applied = engine.into_faults().applied;
    assert_eq!(applied[0].origin, Origin::File(0));
}
