//! Resuming a sweep: which runs `runs.csv` already holds, and which of the
//! plan's runs are left to do (of one shard, when it is one). Reads only:
//! the command layer creates `runs.csv` with its header and drops a last
//! line a killed sweep left unfinished before it asks.

use super::rows;
use super::Plan;
use std::collections::BTreeSet;
use std::io;
use std::path::Path;

/// The runs `path` holds, by their index in the plan; a file that is not
/// there holds none. Rows of another sweep (a seed or values the plan has
/// no run for) are refused with `InvalidInput` (exit 2): finished runs are
/// never dropped.
pub fn done_runs(plan: &Plan, path: &Path) -> io::Result<BTreeSet<usize>> {
    let mut done = BTreeSet::new();
    if !path.exists() {
        return Ok(done);
    }
    let by_values = plan.cell_index();
    for row in rows::read(path, &plan.keys)? {
        let Some(i) = plan.index_of(&by_values, &row) else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} holds runs of another sweep (seed {} with {:?}); choose another --out",
                    path.display(),
                    row.seed,
                    row.values
                ),
            ));
        };
        done.insert(i);
    }
    Ok(done)
}

/// The plan's runs not in `done`, in run order; with `shard` `(k, n)`,
/// only the shard's: every n-th run from the k-th (1-based).
pub fn todo(plan: &Plan, shard: Option<(usize, usize)>, done: &BTreeSet<usize>) -> Vec<usize> {
    if let Some((k, n)) = shard {
        assert!(
            (1..=n).contains(&k),
            "shard {k}/{n}: the flag's parser lets only 1 <= K <= N through"
        );
    }
    let todo: Vec<usize> = (0..plan.total_runs())
        .filter(|i| shard.is_none_or(|(k, n)| i % n == k - 1))
        .filter(|i| !done.contains(i))
        .collect();
    assert!(
        todo.len() + done.len() <= plan.total_runs(),
        "{} runs to do and {} done, of {} in the plan",
        todo.len(),
        done.len(),
        plan.total_runs()
    );
    todo
}
