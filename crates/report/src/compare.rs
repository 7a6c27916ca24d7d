//! The outputs of `redlock-sim compare`: two library matrices side by side
//! (`agreement.csv`, `README.md`), from the pairs
//! `redlock_harness::sweep::compare` read. Each side is named as the
//! caller says (`node`, `redis`), in the columns and on the page.

use redlock_harness::stats::median;
use redlock_harness::sweep::compare::{Pair, Side};

/// `agreement.csv`: a row per cell both matrices ran.
pub fn agreement_csv(pairs: &[Pair], names: [&str; 2]) -> String {
    let [a, b] = names;
    let per = |n: &str| {
        ["violating", "ci_low", "ci_high"]
            .map(|c| format!("{n}_{c}"))
            .join(",")
    };
    let broke = |n: &str| {
        ["overlap", "in_flight", "sent_late", "in_overlap"]
            .map(|c| format!("{n}_{c}"))
            .join(",")
    };
    let mut out = format!(
        "library,version,language,fault,seeds,runs,{},{},intervals_overlap,{},{},{a}_wall_ms_median,{b}_wall_ms_median,{a}_conclusive,{b}_conclusive\n",
        per(a),
        per(b),
        broke(a),
        broke(b)
    );
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    for p in pairs {
        let mut rec = vec![
            p.library.clone(),
            p.version.clone(),
            p.language.clone(),
            p.fault.clone(),
            format!("{}..={}", p.seeds.0, p.seeds.1),
            p.runs.to_string(),
        ];
        for s in [&p.a, &p.b] {
            rec.extend([
                s.violating.to_string(),
                format!("{:.3}", s.low),
                format!("{:.3}", s.high),
            ]);
        }
        rec.push(overlap_word(p).to_string());
        for s in [&p.a, &p.b] {
            rec.extend(s.broke.iter().map(u64::to_string));
        }
        for s in [&p.a, &p.b] {
            rec.push(format!("{:.0}", s.wall_ms_median));
        }
        for s in [&p.a, &p.b] {
            rec.push(s.conclusive.to_string());
        }
        w.write_record(&rec).expect("a CSV row into memory");
    }
    out.push_str(&String::from_utf8(w.into_inner().expect("CSV into memory")).expect("UTF-8 CSV"));
    out
}

/// `yes`, `no`, or `unknown` when a side has no conclusive run.
fn overlap_word(p: &Pair) -> &'static str {
    match p.overlap() {
        Some(true) => "yes",
        Some(false) => "no",
        None => "unknown",
    }
}

/// The median over cells of each cell's median `wall_ms`, in seconds.
fn cost(pairs: &[Pair], side: fn(&Pair) -> &Side) -> String {
    let mut xs: Vec<f64> = pairs
        .iter()
        .map(|p| (side(p).wall_ms_median).round())
        .collect();
    xs.sort_by(f64::total_cmp);
    format!("{:.2}", median(&xs) / 1000.0)
}

/// A cell's violating runs of its conclusive runs, and its interval
/// (`—` without a conclusive run).
fn figures(s: &Side) -> [String; 2] {
    let interval = match s.conclusive {
        0 => "—".to_string(),
        _ => format!("{:.3}–{:.3}", s.low, s.high),
    };
    [format!("{}/{}", s.violating, s.conclusive), interval]
}

/// `README.md`: what was compared, how many cells agree, what a run cost,
/// the table, then `notes` (the explanation of the cells apart, written by
/// hand from the histories) when there are some.
pub fn page(pairs: &[Pair], names: [&str; 2], regenerate: &str, notes: Option<&str>) -> String {
    let [a, b] = names;
    let n = pairs.len();
    let agree = pairs.iter().filter(|p| p.overlap() == Some(true)).count();
    let known = pairs.iter().filter(|p| p.overlap().is_some()).count();
    let unknown = match n - known {
        0 => String::new(),
        u => format!(" {u} unknown: a side ran no conclusive run."),
    };
    let runs: u64 = pairs.iter().map(|p| p.runs).sum();
    let mut lines = vec![
        format!("# The library matrix on {a} and on {b}"),
        String::new(),
        format!("Regenerate: {regenerate}."),
        String::new(),
        format!("Every cell both matrices ran, on the same seeds: {n} cells, {runs} runs on each side."),
        "Violating runs of the conclusive ones on each, with the 95% Wilson interval of".to_string(),
        "the rate; how they broke (runs with a lock overlap / a stale write in flight /".to_string(),
        format!("sent late / in an overlap). **The intervals overlap in {agree} of {known} cells.**{unknown}"),
        String::new(),
        "What a run costs (the median over cells of each cell's median `wall_ms`, the".to_string(),
        "run from the lab's start to its report, servers started and stopped included):".to_string(),
        format!("{} s on {a}, {} s on {b}.", cost(pairs, |p| &p.a), cost(pairs, |p| &p.b)),
        String::new(),
        format!("| library | fault | {a} | {a} 95% | {b} | {b} 95% | overlap | {a} broke (ov/fl/late/in) | {b} broke (ov/fl/late/in) |"),
        "|---|---|---|---|---|---|---|---|---|".to_string(),
    ];
    for p in pairs {
        let how = |s: &Side| s.broke.map(|x| x.to_string()).join("/");
        let [av, ai] = figures(&p.a);
        let [bv, bi] = figures(&p.b);
        let mark = match p.overlap() {
            Some(false) => "**no**",
            _ => overlap_word(p),
        };
        lines.push(format!(
            "| {} {} | {} | {av} | {ai} | {bv} | {bi} | {mark} | {} | {} |",
            p.library,
            p.version,
            p.fault,
            how(&p.a),
            how(&p.b)
        ));
    }
    if let Some(notes) = notes {
        lines.push(String::new());
        lines.push(notes.trim_end().to_string());
    }
    lines.join("\n") + "\n"
}
