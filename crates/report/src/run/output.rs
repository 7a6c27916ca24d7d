//! What the outputs of one run are made from ([`RunOutput`]).

use redlock_harness::check::CheckResult;
use redlock_harness::history::History;
use redlock_harness::scenario::Scenario;

/// Everything the outputs of one run are made from.
pub struct RunOutput<'a> {
    /// The scenario that ran.
    pub scenario: &'a Scenario,
    /// The seed it ran with.
    pub seed: u64,
    /// The finished history.
    pub history: &'a History,
    /// What the checkers found in it.
    pub check: &'a CheckResult,
    /// `history.trace()`: 16 hex digits.
    pub trace: String,
    /// Wall-clock time the run took, in ms (not deterministic).
    pub wall_ms: f64,
    /// The `--set KEY=VALUE` overrides it ran with, as given (empty: none;
    /// the report then says nothing of them).
    pub sets: &'a [(String, toml::Value)],
    /// A lab run's command and clients (`None`: a simulated run).
    pub lab: Option<&'a redlock_harness::runner::lab::LabInfo>,
}

impl<'a> RunOutput<'a> {
    /// The outputs of `run`, without `--set` overrides.
    pub fn of(run: &'a redlock_harness::runner::Run) -> Self {
        RunOutput {
            scenario: &run.scenario,
            seed: run.seed,
            history: &run.history,
            check: &run.check,
            trace: run.trace.clone(),
            wall_ms: run.wall_ms,
            sets: &[],
            lab: None,
        }
    }

    /// Whether the run shows what the scenario's `expect` asks for: the one
    /// rule, [`redlock_harness::check::verdict::as_expected_of`] (`degraded` asks for a safe run
    /// that is degraded by the rules of `redlock_harness::check::verdict`).
    pub fn as_expected(&self) -> bool {
        redlock_harness::check::verdict::as_expected_of(self.scenario, self.check)
    }

    /// Whether the run saw its clients' lock calls: a simulated run does;
    /// a lab run does not (only what the nodes and the drivers say), so its
    /// lock calls, acquire latencies and time unavailable are not measured.
    pub(crate) fn sees_lock_calls(&self) -> bool {
        self.lab.is_none()
    }

    /// The writes a client gave up on before its store connection opened
    /// (`write_abandoned`): they never left it.
    pub fn abandoned_writes(&self) -> Vec<&'a redlock_harness::history::Event> {
        let abandoned = |e: &&redlock_harness::history::Event| {
            matches!(
                e.kind,
                redlock_harness::history::EventKind::WriteAbandoned { .. }
            )
        };
        self.history.events.iter().filter(abandoned).collect()
    }

    /// `safe`, `violation` or `degraded`: [`redlock_harness::check::verdict::outcome_of`].
    pub(crate) fn outcome(&self) -> &'static str {
        redlock_harness::check::verdict::outcome_of(self.scenario, self.check)
    }
}
