//! The regression gate of `matrix --baseline CSV`: every cell of a matrix
//! against the same cell of an earlier `matrix.csv`.
//!
//! A cell is the same when its library, version and fault are; failing
//! that, its library and fault, if each side holds one version of that
//! library (a library author's new version against the baseline of the
//! last). A cell regresses when its baseline had conclusive runs and no
//! violating one and it now has a violating run, or when both have
//! conclusive runs and their 95% Wilson intervals no longer overlap.
//! Cells without a baseline, or a baseline without a cell, are said, not
//! failed.

use super::matrix::MatrixOutput;
use std::collections::BTreeSet;

/// The columns of `matrix.csv` the gate reads.
pub const GATE_COLUMNS: [&str; 7] = [
    "library",
    "version",
    "scenario",
    "runs",
    "violating_runs",
    "ci_low",
    "ci_high",
];

/// One cell of the baseline.
#[derive(Clone, Debug, PartialEq)]
pub struct BaseCell {
    pub library: String,
    pub version: String,
    /// The fault's name (`matrix.csv`'s `scenario`).
    pub fault: String,
    pub violating: u64,
    /// Its conclusive runs (`runs` in a `matrix.csv` of before inconclusive
    /// runs were told apart).
    pub conclusive: u64,
    /// The interval; `None` without a conclusive run.
    pub interval: Option<(f64, f64)>,
}

/// What the gate found.
#[derive(Debug, Default, PartialEq)]
pub struct Gate {
    /// One line per regressed cell.
    pub regressions: Vec<String>,
    /// Cells compared.
    pub compared: usize,
    /// Cells of the matrix without a baseline cell, and baseline cells
    /// without a cell in the matrix.
    pub unmatched: Vec<String>,
}

/// Reads a baseline `matrix.csv` (`name` for messages): its cells, or what
/// is wrong with it.
pub fn read_baseline(text: &str, name: &str) -> Result<Vec<BaseCell>, String> {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header = r
        .headers()
        .map_err(|e| format!("{name}: not a CSV file: {e}"))?
        .clone();
    let at = |col: &str| header.iter().position(|h| h == col);
    for col in GATE_COLUMNS {
        if at(col).is_none() {
            return Err(format!(
                "{name}: no column `{col}`: a baseline is a matrix.csv written by `redlock-sim matrix`"
            ));
        }
    }
    let conclusive_at = at("conclusive_runs");
    let mut cells = Vec::new();
    for (i, rec) in r.records().enumerate() {
        let line = i + 2;
        let rec = rec.map_err(|e| format!("{name}: line {line}: {e}"))?;
        let get = |col: &str| rec.get(at(col).expect("checked above")).unwrap_or("");
        let num = |col: &str| {
            get(col).parse::<u64>().map_err(|_| {
                format!(
                    "{name}: line {line}: `{col}` is `{}`, not a count",
                    get(col)
                )
            })
        };
        let runs = num("runs")?;
        let conclusive = match conclusive_at.and_then(|c| rec.get(c)) {
            Some(v) => v.parse().map_err(|_| {
                format!("{name}: line {line}: `conclusive_runs` is `{v}`, not a count")
            })?,
            None => runs,
        };
        let rate = |col: &str| get(col).parse::<f64>().ok();
        let interval = match (rate("ci_low"), rate("ci_high")) {
            (Some(lo), Some(hi)) if conclusive > 0 => Some((lo, hi)),
            _ if conclusive == 0 => None,
            _ => {
                return Err(format!(
                    "{name}: line {line}: `ci_low`/`ci_high` are not rates"
                ))
            }
        };
        cells.push(BaseCell {
            library: get("library").to_string(),
            version: get("version").to_string(),
            fault: get("scenario").to_string(),
            violating: num("violating_runs")?,
            conclusive,
            interval,
        });
    }
    Ok(cells)
}

/// Every cell of `out` against its baseline cell.
pub fn compare(out: &MatrixOutput, base: &[BaseCell]) -> Gate {
    let mut gate = Gate::default();
    let mut used = vec![false; base.len()];
    for c in &out.cells {
        let Some(s) = c.swept() else { continue };
        let (l, f) = (c.library, &c.fault.name);
        let who = format!("{} {} under {f}", l.name, l.version);
        let Some(i) = match_cell(out, base, &l.name, &l.version, f) else {
            gate.unmatched.push(format!("{who}: not in the baseline"));
            continue;
        };
        used[i] = true;
        gate.compared += 1;
        let b = &base[i];
        let r = &s.row;
        let now = (r.violating_runs, r.conclusive_runs());
        let was = format!("{}/{}", b.violating, b.conclusive);
        let is = format!("{}/{}", now.0, now.1);
        let interval = (now.1 > 0).then_some((r.ci_low, r.ci_high));
        if b.conclusive > 0 && b.violating == 0 && now.0 > 0 {
            gate.regressions.push(format!(
                "{who}: no violating run in the baseline ({was}), now {is}"
            ));
        } else if let (Some((a, z)), Some((lo, hi))) = (b.interval, interval) {
            if hi < a || z < lo {
                gate.regressions.push(format!(
                    "{who}: {is} ({}–{}%) no longer overlaps the baseline's {was} ({}–{}%)",
                    pct(lo),
                    pct(hi),
                    pct(a),
                    pct(z)
                ));
            }
        }
    }
    for (b, used) in base.iter().zip(used) {
        if !used {
            let who = format!("{} {} under {}", b.library, b.version, b.fault);
            gate.unmatched
                .push(format!("{who}: in the baseline, not a cell here"));
        }
    }
    gate
}

/// The baseline cell of (library, version, fault): the same three, or the
/// library and fault when each side holds one version of the library.
fn match_cell(
    out: &MatrixOutput,
    base: &[BaseCell],
    library: &str,
    version: &str,
    fault: &str,
) -> Option<usize> {
    let exact = |b: &BaseCell| b.library == library && b.version == version && b.fault == fault;
    if let Some(i) = base.iter().position(exact) {
        return Some(i);
    }
    let versions_here = out
        .matrix
        .libraries
        .iter()
        .filter(|l| l.name == library)
        .count();
    let versions_there: BTreeSet<&str> = base
        .iter()
        .filter(|b| b.library == library)
        .map(|b| b.version.as_str())
        .collect();
    if versions_here != 1 || versions_there.len() != 1 {
        return None;
    }
    base.iter()
        .position(|b| b.library == library && b.fault == fault)
}

/// A rate as a whole percentage.
fn pct(x: f64) -> String {
    format!("{:.0}", 100.0 * x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_baseline_without_a_column_is_named() {
        let text = "library,version,scenario,runs,violating_runs,ci_low\nx,1,f,10,0,0\n";
        let e = read_baseline(text, "base.csv").unwrap_err();
        assert!(e.contains("base.csv") && e.contains("`ci_high`"), "{e}");
    }

    #[test]
    fn a_baseline_reads_its_cells_and_its_bad_lines_are_named() {
        let text = "library,version,scenario,runs,violating_runs,violation_rate,ci_low,ci_high,conclusive_runs\n\
                    x,1,crash,12,0,0.000000,0.000000,0.277533,10\n\
                    x,1,pause,10,10,1.000000,0.722467,1.000000,10\n\
                    x,1,never,3,0,,,,0\n";
        let cells = read_baseline(text, "b.csv").unwrap();
        assert_eq!(cells.len(), 3);
        assert_eq!((cells[0].violating, cells[0].conclusive), (0, 10));
        assert_eq!(cells[1].interval, Some((0.722467, 1.0)));
        assert_eq!(cells[2].interval, None);
        let bad = text.replace("x,1,pause,10,10", "x,1,pause,ten,10");
        let e = read_baseline(&bad, "b.csv").unwrap_err();
        assert!(e.contains("line 3") && e.contains("`runs`"), "{e}");
    }
}
