//! The rows of a sweep seen along one varied key: its values and, for each
//! combination of the other keys, the row at each value (the charts and the
//! conclusions read the summary this way).

use std::collections::BTreeMap;

use super::output::SweepOutput;
use redlock_harness::sweep::stats::SummaryRow;

/// One varied key: its values and, for each combination of the other keys,
/// the row at each value.
pub(crate) struct KeyView<'r> {
    /// The key (`cluster.restart`); empty for a sweep of seeds only.
    pub(crate) name: String,
    /// Its values, in the order of `[sweep.vary]`.
    pub(crate) values: Vec<String>,
    /// The other varied keys, in order.
    pub(crate) others: Vec<String>,
    /// One per combination of the other keys, in sweep order.
    pub(crate) groups: Vec<Group<'r>>,
}

/// A combination of the other keys' values.
pub(crate) struct Group<'r> {
    /// `cluster.topology = single`; empty when no other key varies.
    pub(crate) label: String,
    /// The row at each value of the key (`None`: no such row).
    pub(crate) cells: Vec<Option<&'r SummaryRow>>,
}

pub(crate) fn value_at(row: &SummaryRow, j: usize) -> &str {
    row.values.get(j).map_or("", String::as_str)
}

/// The rows along key `i`.
pub(crate) fn key_view<'r>(out: &SweepOutput<'r>, i: usize) -> KeyView<'r> {
    let name = out.keys.get(i).cloned().unwrap_or_default();
    // Values: as `[sweep.vary]` lists them, then any other value seen.
    let mut values: Vec<String> = Vec::new();
    let seen: Vec<&str> = {
        let mut v: Vec<&str> = Vec::new();
        for r in out.rows {
            let x = value_at(r, i);
            if !v.contains(&x) {
                v.push(x);
            }
        }
        v
    };
    if let Some(sweep) = &out.scenario.sweep {
        if let Some((_, vs)) = sweep.vary.iter().find(|(k, _)| *k == name) {
            for v in vs {
                let s = redlock_harness::scenario::render_vary_value(v);
                if seen.contains(&s.as_str()) && !values.contains(&s) {
                    values.push(s);
                }
            }
        }
    }
    for s in seen {
        if !values.iter().any(|v| v == s) {
            values.push(s.to_string());
        }
    }
    let index: BTreeMap<&str, usize> = values
        .iter()
        .enumerate()
        .map(|(k, v)| (v.as_str(), k))
        .collect();
    let mut groups: Vec<Group<'r>> = Vec::new();
    let mut group_of: BTreeMap<Vec<&str>, usize> = BTreeMap::new();
    for r in out.rows {
        let others: Vec<&str> = (0..out.keys.len())
            .filter(|&j| j != i)
            .map(|j| value_at(r, j))
            .collect();
        let g = *group_of.entry(others).or_insert_with(|| {
            let label = (0..out.keys.len())
                .filter(|&j| j != i)
                .map(|j| format!("{} = {}", out.keys[j], value_at(r, j)))
                .collect::<Vec<_>>()
                .join(", ");
            groups.push(Group {
                label,
                cells: vec![None; values.len()],
            });
            groups.len() - 1
        });
        if let Some(&k) = index.get(value_at(r, i)) {
            let cell = &mut groups[g].cells[k];
            if cell.is_none() {
                *cell = Some(r);
            }
        }
    }
    let others = (0..out.keys.len())
        .filter(|&j| j != i)
        .map(|j| out.keys[j].clone())
        .collect();
    KeyView {
        name,
        values,
        others,
        groups,
    }
}
