//! `redlock-sim matrix FILE [--out DIR] [--jobs J] [--fresh] ...`: every
//! library of the matrix file on every fault's scenario for its kind, as
//! `redlock-sim lab FILE --seeds A..=B -- CMD` would run it, into
//! `DIR/<library>-<version>/<fault>/`; then the matrix's `matrix.csv`, `matrix.svg`,
//! `report.md` and `index.html` ([`redlock_report::matrix`]). The matrix is
//! a sweep over libraries ([`redlock_harness::sweep::matrix`]); a cell whose
//! `runs.csv` already holds every seed is read, not run again (`--fresh`
//! runs it again), so an interrupted matrix resumes.

use super::exit;
use super::lab::load;
use super::matrix_cells::{lab_args, plan, run, KeepRuns, Options, Planned, SERVED};
use super::progress::MatrixProgress;
use redlock_harness::scenario::matrix::{parse, Fault, Library, Matrix};
use redlock_harness::sweep::matrix::{
    cell_dir, cells, check_shards, kept, recorded_command, shard_of, shards, swept, ShardMark,
    COMMAND, SHARD_MARK,
};
use redlock_harness::sweep::settle::Rule;
use redlock_report::gate::{compare, BaseCell};
use redlock_report::matrix::{answer, write_matrix, Cell, MatrixOutput, Outcome};
use redlock_report::shell_word;
use std::path::{Path, PathBuf};

/// `matrix FILE [--out DIR] [--jobs J] [--fresh] [--servers node|redis]
/// [--seeds A..=B] [--baseline CSV] [--shard K/N] [--keep-runs all|first]`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The matrix file (TOML), e.g. scenarios/libraries/matrix.toml.
    pub file: PathBuf,
    /// Output directory (default: reports/<name>/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Slots the matrix's runs share, its cells side by side, a run taking
    /// its library's weight (default 1; on 2 cores 12 on the node, the JVM
    /// libraries weighing 2, and 3 with --servers redis: see docs/lab.md).
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// Run every cell again, even one already swept.
    #[arg(long)]
    pub fresh: bool,
    /// What serves the nodes, as `lab --servers` (node or redis).
    #[arg(long, default_value = "node", value_parser = super::servers)]
    pub servers: redlock_harness::runner::lab::Servers,
    /// Run these seeds (A..=B, or N for 1..=N) instead of the file's:
    /// each cell's budget.
    #[arg(long, value_parser = redlock_harness::sweep::parse_seeds)]
    pub seeds: Option<std::ops::RangeInclusive<u64>>,
    /// Compare every cell with the same cell of an earlier matrix.csv:
    /// exit 1, naming them, where a cell with no violating run there now
    /// has one, or where the two intervals no longer overlap.
    #[arg(long)]
    pub baseline: Option<PathBuf>,
    /// Run only the K-th of N disjoint parts of the matrix (whole cells,
    /// every N-th); join the shards' directories with `merge`.
    #[arg(long, value_parser = redlock_harness::sweep::parse_shard)]
    pub shard: Option<(usize, usize)>,
    /// Which runs' reports each cell keeps: all (every seed-<N>/), or
    /// first: its first violating run's alone, the others removed once the
    /// cell is done (a cell read back too) and its report linking only it.
    #[arg(long, value_enum, default_value = "all")]
    pub keep_runs: KeepRuns,
}

/// What the cells need of the arguments.
fn options(a: &Args) -> Options {
    Options {
        jobs: a.jobs,
        servers: a.servers,
        fresh: a.fresh,
        keep_runs: a.keep_runs,
    }
}

/// Runs `matrix` and returns its exit code.
pub(crate) fn main(args: Args) -> u8 {
    let (text, matrix) = match read_matrix(&args) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let baseline = match args.baseline.as_deref().map(read_baseline).transpose() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("redlock-sim matrix: --baseline {e}");
            return exit::BAD_INPUT;
        }
    };
    // Every cell's scenario and command checked before anything runs.
    for (l, f) in cells(&matrix).filter(|(l, f)| l.runs_under(f)) {
        if let Ok(file) = f.file_for(l.kind) {
            if let Err(code) = load(&lab_args(&options(&args), l, file, PathBuf::new())) {
                return code;
            }
        }
    }
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new("reports").join(&matrix.name));
    if let Err(e) =
        served_alike(&args, &matrix, &dir).and_then(|()| commands_alike(&args, &matrix, &dir))
    {
        eprintln!("redlock-sim matrix: {e}");
        return exit::BAD_INPUT;
    }
    let mut out = MatrixOutput {
        matrix: &matrix,
        cells: Vec::new(),
        command: command(&args),
        servers: Some(args.servers),
    };
    // A shard says what it is before its cells run, so that a merge of an
    // interrupted one reads the cells it finished.
    if let Some(shard) = args.shard {
        let mark = ShardMark {
            text,
            seeds: matrix.seeds.clone(),
            shard,
            servers: Some(args.servers),
        };
        let written = std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(dir.join(SHARD_MARK), mark.to_toml()));
        if let Err(e) = written {
            eprintln!("redlock-sim matrix: cannot write to {}: {e}", dir.display());
            return exit::SOFTWARE;
        }
    }
    let owner = shards(&matrix, args.shard.map_or(1, |(_, n)| n));
    let mine = owner
        .iter()
        .filter(|o| args.shard.is_none_or(|(k, _)| o.2 == k));
    // A cell finished earlier is read back: the time left is the others'.
    let to_run =
        |l: &Library, f: &Fault| args.fresh || kept(&dir.join(cell_dir(l, f)), &matrix).is_none();
    let progress = MatrixProgress::new(mine.map(|o| (o.0.language.as_str(), to_run(o.0, o.1))));
    let mut planned = Vec::new();
    for (l, f) in cells(&matrix) {
        let p = match (args.shard, shard_of(&owner, l, f)) {
            (Some((mine, n)), Some(k)) if k != mine => Ok(Planned::Settled(Cell {
                library: l,
                fault: f,
                outcome: Outcome::Elsewhere(k, n),
            })),
            _ => plan(&options(&args), &matrix, (l, f), &dir),
        };
        match p {
            Ok(p) => planned.push(p),
            Err(code) => return code,
        }
    }
    out.cells = match run(&options(&args), &matrix, planned, progress) {
        Ok(cells) => cells,
        Err(code) => return code,
    };
    finish(&dir, &out, baseline.as_deref())
}

/// Checks, before anything is written, that no cell of `dir` holds runs
/// of other servers than `--servers` (unless `--fresh` runs them again):
/// a cell read back or gone on with would mix two backends in one verdict.
/// A cell of a version that did not record it is taken as it is.
fn served_alike(a: &Args, m: &Matrix, dir: &Path) -> Result<(), String> {
    if a.fresh {
        return Ok(());
    }
    for (l, f) in cells(m) {
        let path = dir.join(cell_dir(l, f)).join(SERVED);
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let was = text.trim();
        if was != a.servers.as_str() {
            return Err(format!(
                "{}: the cell's runs were served by {was}, and --servers {} would mix them \
                 with its own: give --servers {was}, --fresh, or another --out",
                path.display(),
                a.servers.as_str()
            ));
        }
    }
    Ok(())
}

/// Checks, before anything is written, that no cell of `dir` that will go
/// on after runs it had finished recorded another client command than
/// the matrix file gives (unless `--fresh` runs it again): its verdict
/// would mix two programs. A finished cell is read back with the command
/// it recorded, whatever the file says now.
fn commands_alike(a: &Args, m: &Matrix, dir: &Path) -> Result<(), String> {
    if a.fresh {
        return Ok(());
    }
    for (l, f) in cells(m) {
        let cell = dir.join(cell_dir(l, f));
        let Some(ran) = recorded_command(&cell) else {
            continue;
        };
        if ran == l.command || kept(&cell, m).is_some() || !has_runs(&cell) {
            continue;
        }
        return Err(format!(
            "{}: the cell's runs used `{}`, and the matrix file now gives `{}`: going on \
             would mix two commands in one verdict: give its command back, --fresh, or \
             another --out",
            cell.join(COMMAND).display(),
            ran.join(" "),
            l.command.join(" ")
        ));
    }
    Ok(())
}

/// Whether a cell's directory holds runs: a `runs.csv`, or a run's
/// report (`seed-<N>/index.html`).
fn has_runs(cell: &Path) -> bool {
    let run_report = |e: std::fs::DirEntry| {
        let name = e.file_name();
        name.to_str().is_some_and(|n| n.starts_with("seed-"))
            && e.path().join("index.html").is_file()
    };
    cell.join("runs.csv").is_file()
        || std::fs::read_dir(cell).is_ok_and(|d| d.flatten().any(run_report))
}

/// The matrix file, read and parsed, `--seeds` applied; exit 2 if bad.
fn read_matrix(a: &Args) -> Result<(String, Matrix), u8> {
    let name = a.file.display().to_string();
    let text = std::fs::read_to_string(&a.file).map_err(|e| {
        eprintln!("redlock-sim matrix: {name}: {e}");
        2
    })?;
    let mut matrix = parse(&text, &name).map_err(|e| {
        eprintln!("{e}");
        2
    })?;
    if let Some(seeds) = &a.seeds {
        matrix.seeds = seeds.clone();
    }
    Ok((text, matrix))
}

/// Writes the matrix's outputs, prints the answer,
/// gates on the baseline; the exit code.
fn finish(dir: &Path, out: &MatrixOutput, base: Option<&[BaseCell]>) -> u8 {
    if let Err(e) = write_matrix(dir, out) {
        eprintln!("redlock-sim matrix: cannot write to {}: {e}", dir.display());
        return exit::SOFTWARE;
    }
    super::die_quietly_on_broken_pipe();
    for line in answer(out) {
        println!("{line}");
    }
    println!("report: {}", dir.join("index.html").display());
    match base {
        Some(base) => gate(out, base),
        None => 0,
    }
}

/// `merge DIR... --out DIR` of a matrix's shards: their cells copied into
/// `out`, and the outputs the whole matrix would have written; exit 2,
/// nothing written, when the directories are not shards of one matrix.
pub(crate) fn merge(dirs: &[PathBuf], out_dir: &Path) -> u8 {
    let mut marks = Vec::new();
    for d in dirs {
        let path = d.join(SHARD_MARK);
        let mark = std::fs::read_to_string(&path)
            .map_err(|e| format!("{}: {e}", path.display()))
            .and_then(|t| ShardMark::parse(&t, &path.display().to_string()));
        match mark {
            Ok(m) => marks.push((d.display().to_string(), m)),
            Err(e) => {
                eprintln!("redlock-sim merge: {e}");
                return exit::BAD_INPUT;
            }
        }
    }
    let same = |d: &PathBuf| match (d.canonicalize(), out_dir.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if let Some(d) = dirs.iter().find(|d| same(d)) {
        eprintln!(
            "redlock-sim merge: --out {} is one of the shards: merge into a directory of its own",
            d.display()
        );
        return exit::BAD_INPUT;
    }
    let (n, held) = match check_shards(&marks) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("redlock-sim merge: {e}");
            return exit::BAD_INPUT;
        }
    };
    let first = &marks[0].1;
    let name = format!("{}/{SHARD_MARK}", marks[0].0);
    let mut matrix = match parse(&first.text, &name) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{e}");
            return exit::BAD_INPUT;
        }
    };
    matrix.seeds = first.seeds.clone();
    let owner = shards(&matrix, n);
    for (l, f, k) in &owner {
        let Some(i) = marks.iter().position(|(_, m)| m.shard.0 == *k) else {
            continue;
        };
        let rel = cell_dir(l, f);
        if let Err(e) = copy_dir(&dirs[i].join(&rel), &out_dir.join(&rel)) {
            eprintln!(
                "redlock-sim merge: cannot copy {rel} into {}: {e}",
                out_dir.display()
            );
            return exit::SOFTWARE;
        }
    }
    let cells = merged_cells(&matrix, &owner, &held, n, out_dir);
    let shown: Vec<String> = dirs
        .iter()
        .map(|d| shell_word(&d.display().to_string()))
        .collect();
    let out = MatrixOutput {
        matrix: &matrix,
        cells,
        servers: first.servers,
        command: format!(
            "redlock-sim merge {} --out {}",
            shown.join(" "),
            shell_word(&out_dir.display().to_string())
        ),
    };
    finish(out_dir, &out, None)
}

/// Every cell of the merged matrix: read back from `dir` where a held
/// shard finished it, else in the shard that owns it.
fn merged_cells<'m>(
    m: &'m Matrix,
    owner: &[(&'m Library, &'m Fault, usize)],
    held: &[usize],
    n: usize,
    dir: &Path,
) -> Vec<Cell<'m>> {
    cells(m)
        .map(|(l, f)| {
            let outcome = match (shard_of(owner, l, f), f.file_for(l.kind)) {
                (None, Ok(_)) => Outcome::NotACell("not among this library's faults"),
                (None, Err(why)) => Outcome::NotACell(why),
                (Some(k), Ok(file)) => {
                    let rel = cell_dir(l, f);
                    let at = dir.join(&rel);
                    match kept(&at, m).filter(|_| held.contains(&k)) {
                        Some(rows) => {
                            Outcome::Ran(Box::new(swept(file, rel, &at, &rows, Rule::of(m))))
                        }
                        None => Outcome::Elsewhere(k, n),
                    }
                }
                (Some(_), Err(_)) => unreachable!("a shard's cell has a scenario"),
            };
            Cell {
                library: l,
                fault: f,
                outcome,
            }
        })
        .collect()
}

/// Copies the directory `from` (if it exists) to `to`, recursively.
fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    if !from.is_dir() {
        return Ok(());
    }
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

/// The baseline file's cells, or what is wrong with it.
fn read_baseline(path: &Path) -> Result<Vec<BaseCell>, String> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
    redlock_report::gate::read_baseline(&text, &name)
}

/// Says what the gate found; 1 when a cell regressed.
fn gate(out: &MatrixOutput, base: &[BaseCell]) -> u8 {
    let g = compare(out, base);
    for u in &g.unmatched {
        println!("baseline: {u}");
    }
    for r in &g.regressions {
        println!("regression: {r}");
    }
    println!(
        "baseline: {} cells compared, {} regressed",
        g.compared,
        g.regressions.len()
    );
    u8::from(!g.regressions.is_empty())
}

fn command(a: &Args) -> String {
    let mut c = format!(
        "redlock-sim matrix {}",
        shell_word(&a.file.display().to_string())
    );
    if let Some(o) = &a.out {
        c.push_str(&format!(" --out {}", shell_word(&o.display().to_string())));
    }
    c.push_str(&format!(" --jobs {}", a.jobs));
    if let Some(s) = &a.seeds {
        c.push_str(&format!(" --seeds {}..={}", s.start(), s.end()));
    }
    if a.servers == redlock_harness::runner::lab::Servers::Redis {
        c.push_str(" --servers redis");
    }
    if let Some((k, n)) = a.shard {
        c.push_str(&format!(" --shard {k}/{n}"));
    }
    if a.keep_runs == KeepRuns::First {
        c.push_str(" --keep-runs first");
    }
    c
}
