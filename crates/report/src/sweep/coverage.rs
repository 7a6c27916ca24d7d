//! A sweep report that holds only part of its sweep (one `--shard`, or a
//! `merge` lacking shards) says so: how many runs of how many, and which
//! shards; its rates are of the runs held.

use crate::doc::{bold, text, Block};
use redlock_harness::sweep::tally::Coverage;

/// `1,200`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The notice that opens a partial report, right after its setup:
/// "**Partial:** this merge holds …".
pub(crate) fn notice(c: &Coverage) -> Block {
    Block::P(vec![bold("Partial:"), text(format!(" {}", words(c)))])
}

fn words(c: &Coverage) -> String {
    let what = if c.merged {
        format!(
            "this merge holds {} of the sweep's {} runs ({})",
            thousands(c.held),
            thousands(c.total),
            c.shards
        )
    } else {
        format!(
            "this sweep is {} of a larger sweep: it holds {} of its {} runs (join the shards with redlock-sim merge)",
            c.shards,
            thousands(c.held),
            thousands(c.total)
        )
    };
    format!("{what}. Rates below are of the runs held, not of the whole sweep.")
}

/// The line the command line prints: `runs: 600 of 1200 (shards 1 of 2
/// present; missing: 2)`.
pub fn stdout_line(c: &Coverage) -> String {
    format!("runs: {} of {} ({})", c.held, c.total, c.shards)
}

#[cfg(test)]
mod tests {
    use crate::sweep::coverage::*;

    #[test]
    fn the_notice_gives_runs_held_of_all_and_the_shards() {
        let c = Coverage {
            held: 600,
            total: 1200,
            shards: "shards 1 of 2 present; missing: 2".into(),
            merged: true,
        };
        assert_eq!(
            words(&c),
            "this merge holds 600 of the sweep's 1,200 runs (shards 1 of 2 present; \
             missing: 2). Rates below are of the runs held, not of the whole sweep."
        );
        assert_eq!(
            stdout_line(&c),
            "runs: 600 of 1200 (shards 1 of 2 present; missing: 2)"
        );
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(999), "999");
    }
}
