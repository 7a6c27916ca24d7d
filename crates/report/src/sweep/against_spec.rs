//! The sweep report's comparison of each client variant with the spec
//! client, seed by seed (computed in [`redlock_harness::sweep::baseline`]): the section
//! "Against the spec client" of `report.md` and `index.html`, and the
//! conclusion sentence the command line also prints.

use std::fmt::Write as _;

use super::output::{run_command, SweepOutput, MAX_TABLE_ROWS};
use crate::doc::{link, para, text, Block, Inline, Row};
use redlock_harness::sweep::baseline::{twin, Caught, BASELINE};

/// The section "Against the spec client" (see [`redlock_harness::sweep::baseline`]).
pub(crate) fn section(out: &SweepOutput, doc: &mut Vec<Block>) {
    let others = out.keys.len() > 1;
    doc.push(Block::H(2, "Against the spec client".into()));
    doc.push(para(format!(
        "Each variant's runs are paired with the {BASELINE} client's runs of the same seed{}: \
         the same seed draws the same faults. A variant is caught at a seed where its run \
         violated and the {BASELINE} client's run was safe; where both violated, the faults \
         alone may explain it. Seeds needed: how many of the paired seeds, in order, a \
         campaign had to run to catch it. A flaw that changes any timing sends its run down \
         another path than the {BASELINE} client's, so read a catch by replaying it.",
        if others {
            " and the same values of the other keys"
        } else {
            ""
        }
    )));
    table(out, doc);
    let items: Vec<Vec<Inline>> = out
        .caught
        .iter()
        .take(MAX_TABLE_ROWS)
        .filter_map(|c| first_catch(out, c))
        .collect();
    if !items.is_empty() {
        doc.push(para(format!(
            "The first catch of each variant, and its {BASELINE}-client twin (with \
             --set expect=safe, the twin's command exits 0 when its run is safe):"
        )));
        doc.push(Block::List(items));
    }
}

/// The table of the variants against the spec client, caught ones in bold.
fn table(out: &SweepOutput, doc: &mut Vec<Block>) {
    let mut head: Vec<String> = out.keys.to_vec();
    head.extend(
        [
            "violating (paired seeds)",
            "spec violating",
            "both violating",
            "caught (violating, spec safe)",
            "first catch",
            "seeds needed",
        ]
        .map(String::from),
    );
    let rows = out
        .caught
        .iter()
        .take(MAX_TABLE_ROWS)
        .map(|c| {
            let mut cells = c.values.clone();
            cells.extend([
                format!("{} of {}", c.violating, c.paired),
                c.spec_violating.to_string(),
                c.both.to_string(),
                c.seeds.len().to_string(),
                c.seeds.first().map_or("—".into(), |s| format!("seed {s}")),
                c.needed
                    .map_or(format!("not caught in {}", c.paired), |n| n.to_string()),
            ]);
            Row {
                cells,
                strong: !c.seeds.is_empty(),
            }
        })
        .collect();
    doc.push(Block::Table(head, rows));
    if out.caught.len() > MAX_TABLE_ROWS {
        doc.push(para(format!(
            "… and {} more combinations, not shown.",
            out.caught.len() - MAX_TABLE_ROWS
        )));
    }
}

/// The first catch of `c` with the commands replaying it and its twin, and
/// a link to its report when the sweep wrote one; `None` when not caught.
fn first_catch(out: &SweepOutput, c: &Caught) -> Option<Vec<Inline>> {
    let seed = *c.seeds.first()?;
    let twin = twin(out.keys, &c.values)?;
    let commands = format!(
        "{}: {} (and the {BASELINE} client, safe: {})",
        c.values.join(", "),
        run_command(out, &c.values, seed),
        run_command(out, &twin, seed) + " --set expect=safe"
    );
    // The run's own report, when the sweep wrote it (runs/).
    let report = out
        .replay
        .iter()
        .filter(|(v, _)| *v == c.values)
        .flat_map(|(_, seeds)| seeds)
        .find(|(s, _)| *s == seed);
    Some(match report {
        Some((_, Some(href))) => {
            vec![
                link(format!("seed {seed}"), href.clone()),
                text(": "),
                text(commands),
            ]
        }
        Some((_, None)) | None => vec![text(commands)],
    })
}

/// One sentence: which variants were caught where the spec client was safe,
/// at which seed first, and which were not (at most [`MAX_CAUGHT`] named).
pub(crate) fn sentence(caught: &[Caught], keys: usize) -> String {
    let what = if keys == 1 {
        "variants"
    } else {
        "combinations"
    };
    let name = |c: &Caught| c.values.join(", ");
    let yes: Vec<String> = caught
        .iter()
        .filter_map(|c| {
            let (first, needed) = (c.seeds.first()?, c.needed?);
            Some(format!(
                "{} (first at seed {first}, {needed} seed{} needed; {} of {} seeds)",
                name(c),
                if needed == 1 { "" } else { "s" },
                c.seeds.len(),
                c.paired
            ))
        })
        .collect();
    let no: Vec<String> = caught
        .iter()
        .filter(|c| c.seeds.is_empty())
        .map(|c| {
            if c.both > 0 {
                format!(
                    "{} ({} seeds; it violated only where {BASELINE} did too, {} times)",
                    name(c),
                    c.paired,
                    c.both
                )
            } else {
                format!("{} ({} seeds)", name(c), c.paired)
            }
        })
        .collect();
    let named = |v: &[String]| {
        let mut s = v
            .iter()
            .take(MAX_CAUGHT)
            .cloned()
            .collect::<Vec<_>>()
            .join("; ");
        if v.len() > MAX_CAUGHT {
            let _ = write!(s, "; and {} more", v.len() - MAX_CAUGHT);
        }
        s
    };
    let mut s = format!(
        "Against the {BASELINE} client (a violation at a seed where it was safe): {} of {} {what} caught",
        yes.len(),
        caught.len()
    );
    if !yes.is_empty() {
        let _ = write!(s, ": {}", named(&yes));
    }
    if !no.is_empty() {
        let _ = write!(s, ". Not caught: {}", named(&no));
    }
    s.push('.');
    s
}

/// Variants named in the sentence about the spec client, per list.
const MAX_CAUGHT: usize = 16;
