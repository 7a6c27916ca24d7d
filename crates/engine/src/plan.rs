//! The faults of one run, as the seed draws them, in both worlds: those
//! due at a time (the file's untriggered ones and a random nemesis's plan),
//! those waiting for their trigger, and the aimed nemesis.

use super::aim::Aimer;
use super::due::{Due, Origin, Waiting};
use super::nemesis;
use super::setup::rng_for;
use redlock_scenario::{Aim, Scenario, Trigger};

/// The faults of a run: those due at a time (the file's untriggered ones
/// and a random nemesis's plan), sorted; those waiting on a trigger; and
/// the aimed nemesis, when `aim = "lock"`.
pub fn fault_plan(s: &Scenario, seed: u64) -> (Vec<Due>, Vec<Waiting>, Option<Aimer>) {
    let mut queue = Vec::new();
    let mut waiting = Vec::new();
    for (index, f) in s.faults.iter().enumerate() {
        match &f.after {
            Trigger::Start => queue.push(Due {
                time: f.at,
                action: f.action.clone(),
                origin: Origin::File(index),
                placed: None,
            }),
            t => waiting.push(Waiting {
                trigger: t.clone(),
                at: f.at,
                action: f.action.clone(),
                index,
            }),
        }
    }
    // Each of the file's faults is planned once: due at a time, or waiting
    // for its trigger (which releases it once).
    assert_eq!(
        queue.len() + waiting.len(),
        s.faults.len(),
        "plan: the file's {} faults planned as {} due and {} waiting",
        s.faults.len(),
        queue.len(),
        waiting.len()
    );
    let mut aimer = None;
    if let Some(n) = &s.nemesis {
        let plan = nemesis::plan(s, n, &mut rng_for(seed, "world", "nemesis"));
        match n.aim {
            Aim::Random => queue.extend(plan),
            Aim::Lock => {
                let mut rng = rng_for(seed, "world", "aim");
                aimer = Some(Aimer::new(s, plan, n.clock_jump_target, &mut rng));
            }
        }
    }
    let mut queue: Vec<Due> = queue.into_iter().map(Due::on_ms).collect();
    queue.sort_by_key(|d| d.time);
    (queue, waiting, aimer)
}
