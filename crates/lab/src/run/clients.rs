//! A lab run's clients: each spawned in its own process group with the
//! lab's environment (and, when the scenario gives it a clock of its own,
//! libfaketime's), the ready barrier waited for, libfaketime's reach
//! checked once a client is heard from, and each exit noted.

use super::{ClientEnd, Lab, LabError, Setup, READY_WAIT};
use crate::faketime::{self, FakeClock};
use crate::net::LabNet;
use crate::process::{self, Reaper};
use redlock_check::verdict::{Cause, CauseKind};
use redlock_engine::setup::{clock_draws, rng_for};
use redlock_history::EventKind;
use redlock_node::sentinel::answer;
use redlock_scenario::{Hold, Scenario, Topology};
use std::sync::Arc;
use std::time::{Duration, Instant};

impl Lab {
    pub(super) fn spawn_clients(
        &mut self,
        setup: &Setup,
        reaper: &Arc<Reaper>,
    ) -> Result<(), LabError> {
        assert!(
            self.world.clients.is_empty() && self.ends.is_empty(),
            "a run's clients are spawned once"
        );
        for spec in &self.scenario.clients {
            let mut env = client_env(&self.scenario, spec, setup.seed, &self.world.net);
            let log = setup.logs.join(format!("{}.log", spec.name));
            let mut cleared: &[&str] = &[];
            if let Some(clock) = self.fake_clock(setup, &spec.name, reaper)? {
                env.extend(clock.env());
                cleared = &crate::faketime::CLEARED;
                self.world.clocks.insert(spec.name.clone(), clock);
                self.unreached.push(spec.name.clone());
            }
            let p = process::spawn(&setup.cmd, &env, cleared, &log, reaper).map_err(|e| {
                LabError::BadInput(format!(
                    "lab: cannot start the client command `{}`: {e}",
                    setup.cmd.join(" ")
                ))
            })?;
            let twice = self.world.clients.insert(spec.name.clone(), p).is_some();
            assert!(!twice, "client {} spawned twice in a run", spec.name);
            self.ends.insert(
                spec.name.clone(),
                ClientEnd {
                    name: spec.name.clone(),
                    log,
                    status: String::new(),
                    early: false,
                    failed: false,
                },
            );
        }
        Ok(())
    }

    /// The clock libfaketime gives `client` in this run, if it needs one:
    /// its spec in `clients/<client>.faketime`.
    fn fake_clock(
        &self,
        setup: &Setup,
        client: &str,
        reaper: &Reaper,
    ) -> Result<Option<FakeClock>, LabError> {
        let s = &self.scenario;
        if !faketime::needed(s, setup.seed, client) {
            return Ok(None);
        }
        // A clock the lab sets has a key that set it: a client libfaketime
        // cannot reach is refused naming it ([`Lab::check_reach`]).
        assert!(
            crate::refuse::client_clock_key(s, "").is_some(),
            "client {client} needs libfaketime, yet no key of scenario {} sets its clock",
            s.name
        );
        // refuse::check made sure the library is there.
        let lib = faketime::library().expect("libfaketime, checked before the run");
        let (offset, rate) = clock_draws(s, setup.seed)[client];
        let file = setup.logs.join(format!("{client}.faketime"));
        let clock = FakeClock::start(&lib, &file, client, offset, rate)
            .map_err(|e| LabError::Failed(format!("lab: cannot set {client}'s clock: {e}")))?;
        for f in clock.leftovers() {
            reaper.note(&format!("f{f}"));
        }
        Ok(Some(clock))
    }

    /// The ready barrier: waits until every client said `READY` (or
    /// exited), then starts the run's clock and answers them all. A client
    /// that uses the lock before it says `READY` is one that never will:
    /// the run's clock then started at the clients' launch, and nothing
    /// waits. A client not ready [`READY_WAIT`] after its launch is a cause
    /// of an inconclusive run; the others go on.
    pub(super) async fn wait_ready(&mut self) -> Result<(), LabError> {
        assert_eq!(
            self.ends.len(),
            self.scenario.clients.len(),
            "every client is spawned before the ready barrier"
        );
        let launched = Instant::now();
        let without_ready = loop {
            self.check_reach()?;
            self.note_exits(false);
            let rec = &self.world.rec;
            let names: Vec<String> = self.ends.keys().cloned().collect();
            if names.iter().any(|c| rec.used_lock(c) && !rec.is_ready(c)) {
                break true;
            }
            let pending: Vec<String> = names
                .into_iter()
                .filter(|c| !rec.is_ready(c) && self.ends[c].status.is_empty())
                .collect();
            if pending.is_empty() {
                break false;
            }
            if launched.elapsed() >= READY_WAIT {
                for c in pending {
                    let text = format!(
                        "{c} was not ready {} s after its launch (no READY)",
                        READY_WAIT.as_secs()
                    );
                    self.causes.push(Cause::new(CauseKind::NeverReady, text));
                }
                break false;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        };
        let any_ready = self.ends.keys().any(|c| self.world.rec.is_ready(c));
        if any_ready && !without_ready {
            self.world.rec.start_now();
        }
        self.world.store.open_ready();
        Ok(())
    }

    /// Looks, once, at the processes of each client with a clock of its
    /// own when it is first heard from (its program is running by then):
    /// a process libfaketime cannot reach refuses the run.
    pub(super) fn check_reach(&mut self) -> Result<(), LabError> {
        if self.unreached.is_empty() {
            return Ok(());
        }
        let rec = &self.world.rec;
        let (heard, waiting): (Vec<String>, Vec<String>) =
            self.unreached.drain(..).partition(|c| rec.heard_from(c));
        self.unreached = waiting;
        if heard.is_empty() {
            return Ok(());
        }
        let lib = faketime::library().expect("libfaketime, checked before the run");
        for client in heard {
            assert!(
                self.world.clocks.contains_key(&client),
                "client {client} looked at for libfaketime has no clock of its own"
            );
            let pgid = self.world.clients[&client].pid() as i32;
            if let Some(why) = crate::reach::unreachable_in_group(pgid, &lib) {
                let (key, _) = crate::refuse::client_clock_key(&self.scenario, "")
                    .expect("a client with a clock of its own has a key that set it");
                return Err(LabError::BadInput(format!(
                    "redlock-sim lab: scenario {}: {key}: the lab sets client {client}'s clock \
                     through libfaketime, and cannot reach it: {why}; the run is refused \
                     rather than run as if the clock had moved",
                    self.scenario.name
                )));
            }
        }
        Ok(())
    }

    /// Records each client that exited since the last look.
    pub(super) fn note_exits(&mut self, ended: bool) {
        for (name, p) in &mut self.world.clients {
            let end = self.ends.get_mut(name).expect("every client has an end");
            if !end.status.is_empty() {
                continue;
            }
            if let Some(status) = p.exited() {
                end.status = status.to_string();
                end.early = !ended || !status.success();
                // Before the end the lab sends a client no signal that
                // ends it (a pause is SIGSTOP and SIGCONT).
                end.failed = !ended && !status.success();
                let kind = EventKind::ClientExited {
                    status: end.status.clone(),
                };
                self.world.rec.record(name, kind);
            }
        }
    }
}

/// A duration in whole milliseconds, as the environment gives it.
fn env_millis(d: Duration) -> String {
    d.as_millis().to_string()
}

/// The environment of one client (the lab's contract).
fn client_env(
    s: &Scenario,
    c: &redlock_scenario::ClientSpec,
    seed: u64,
    net: &LabNet,
) -> Vec<(String, String)> {
    let addr = |to: &str| {
        net.addr(&c.name, to)
            .map_or(String::new(), |a| a.to_string())
    };
    let nodes: Vec<String> = (1..=s.cluster.nodes)
        .map(|i| addr(&format!("n{i}")))
        .collect();
    // The links open before the clients start.
    assert!(
        nodes.iter().all(|a| !a.is_empty()) && !addr("store").is_empty(),
        "client {} is started before its links to the nodes and the store",
        c.name
    );
    let range = |lo: Duration, hi: Duration| format!("{}..{}", env_millis(lo), env_millis(hi));
    let hold = match c.hold {
        Hold::Validity => "validity".to_string(),
        Hold::For(r) => range(r.lo, r.hi),
    };
    let start = c.start.draw(&mut rng_for(seed, &c.name, "lab_start"));
    let mut env = vec![
        ("REDLOCK_CLIENT", c.name.clone()),
        ("REDLOCK_NODES", nodes.join(",")),
        ("REDLOCK_STORE", addr("store")),
        ("REDLOCK_RESOURCE", c.resource.clone()),
        ("REDLOCK_TTL_MS", env_millis(c.ttl)),
        ("REDLOCK_HOLD_MS", hold),
        ("REDLOCK_WRITES", c.writes.to_string()),
        ("REDLOCK_THINK_MS", range(c.think.lo, c.think.hi)),
        ("REDLOCK_START_MS", env_millis(start)),
        ("REDLOCK_DURATION_MS", env_millis(s.duration)),
        ("REDLOCK_RENEW", if c.renew { "1" } else { "0" }.to_string()),
        ("REDLOCK_RETRY_COUNT", c.retry_count.to_string()),
        ("REDLOCK_RETRY_DELAY_MS", env_millis(c.retry_delay)),
        ("REDLOCK_REQUEST_TIMEOUT_MS", env_millis(c.request_timeout)),
        ("REDLOCK_SEED", seed.to_string()),
        (
            "REDLOCK_FENCING",
            if c.fencing { "1" } else { "0" }.to_string(),
        ),
    ];
    if s.cluster.topology == Topology::Single {
        env.push(("REDLOCK_SENTINEL", addr("sentinel")));
        env.push(("REDLOCK_MASTER_NAME", answer::MASTER_NAME.to_string()));
    }
    env.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}
