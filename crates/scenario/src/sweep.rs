//! `[sweep]`: seeds, the values to vary, their combinations, and how a
//! varied value is shown in CSV columns.

use super::check::{join, Checked, TableAt};
use super::raw::{self, RawKind};
use super::types::Sweep;

/// Largest number of `[sweep.vary]` combinations.
const MAX_CELLS: usize = 1_000_000;
/// Keys of `[sweep]`.
const SWEEP_KEYS: &[&str] = &["seeds", "vary"];

impl Sweep {
    /// Number of combinations of `vary` values (1 when nothing varies).
    pub fn cell_count(&self) -> usize {
        self.vary
            .iter()
            .fold(1usize, |n, (_, vs)| n.saturating_mul(vs.len()))
    }

    /// The `index`-th combination as overrides for
    /// [`parse_with_overrides`](super::parse_with_overrides):
    /// the first varied key changes slowest, the last fastest. `None` past
    /// the end.
    pub fn cell(&self, index: usize) -> Option<Vec<(String, toml::Value)>> {
        if index >= self.cell_count() {
            return None;
        }
        let mut rest = index;
        let mut out = Vec::with_capacity(self.vary.len());
        for (path, values) in self.vary.iter().rev() {
            let n = values.len().max(1);
            out.push((path.clone(), values.get(rest % n)?.clone()));
            rest /= n;
        }
        // index < cell_count, the product of the lists' lengths: every
        // digit of the index was used.
        assert_eq!(
            rest,
            0,
            "sweep cell {index} past {} cells",
            self.cell_count()
        );
        out.reverse();
        Some(out)
    }
}

/// Renders a `vary` value as written, for CSV columns: strings without
/// quotes (`1.2ttl`, `immediate`), numbers and booleans as TOML prints them.
pub fn render_vary_value(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `[sweep]`.
pub(super) fn sweep(cx: &super::check::FileErrors, t: &TableAt) -> Checked<Sweep> {
    t.check_keys(cx, SWEEP_KEYS)?;
    let seeds = match t.get("seeds") {
        None => 1..=100,
        Some(v) => match &v.node.kind {
            RawKind::Int(n) if *n >= 1 => 1..=(*n as u64),
            RawKind::Int(n) => {
                return Err(v.err(cx, format!("{n} seeds: there must be at least one")))
            }
            RawKind::Str(s) => {
                let usage = "write a count (seeds = 500 means 1..=500) or an inclusive range like \"1000..=1999\"";
                let Some((lo, hi)) = s.split_once("..=") else {
                    return Err(v.err(cx, format!("{s:?} is not a seed range: {usage}")));
                };
                let (Ok(lo), Ok(hi)) = (lo.trim().parse::<u64>(), hi.trim().parse::<u64>()) else {
                    return Err(v.err(cx, format!("{s:?} is not a seed range: {usage}")));
                };
                if lo > hi {
                    return Err(v.err(
                        cx,
                        format!("seed range {s:?} runs backwards: its start is after its end"),
                    ));
                }
                lo..=hi
            }
            _ => return Err(v.wrong(cx, "a seed count or a range like \"1000..=1999\"")),
        },
    };
    let mut vary: Vec<(String, Vec<toml::Value>)> = Vec::new();
    if let Some(vt) = t.table(cx, "vary")? {
        let mut flat = Vec::new();
        raw::flatten_vary(vt.table, "", &mut flat);
        let mut cells: usize = 1;
        for (path, e) in flat {
            let key = join("sweep.vary", &path);
            let line = e.key_line.or(e.value.line);
            let RawKind::Array(values) = &e.value.kind else {
                return Err(cx.err(
                    &key,
                    line,
                    format!(
                        "expected a list of values, e.g. {path:?} = [...], found {}",
                        e.value.kind.type_name()
                    ),
                ));
            };
            if values.is_empty() {
                return Err(cx.err(&key, line, "the list of values is empty: give at least one"));
            }
            if vary.iter().any(|(p, _)| *p == path) {
                return Err(cx.err(&key, line, format!("{path:?} is varied twice")));
            }
            cells = cells.saturating_mul(values.len());
            if cells > MAX_CELLS {
                return Err(cx.err(
                    &key,
                    line,
                    format!("more than {MAX_CELLS} combinations of values to sweep"),
                ));
            }
            let values: Vec<toml::Value> = values.iter().map(raw::to_toml).collect();
            let mut seen = std::collections::BTreeSet::new();
            for v in &values {
                let shown = render_vary_value(v);
                if !seen.insert(shown.clone()) {
                    return Err(cx.err(&key, line, format!("the value {shown} is listed twice")));
                }
            }
            vary.push((path, values));
        }
    }
    Ok(Sweep { seeds, vary })
}
