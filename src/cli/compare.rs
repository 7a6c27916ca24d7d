//! `redlock-sim compare A B --out DIR [--names A,B]`: two library
//! matrices of the same file side by side ([`redlock_harness::sweep::compare`]),
//! written as `agreement.csv` and `README.md` ([`redlock_report::compare`]);
//! `DIR/notes.md`, when there is one, ends the page.

use super::exit;
use redlock_harness::sweep::compare::compare;
use redlock_report::compare::{agreement_csv, page};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `compare A B --out DIR [--names A,B]`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The first matrix's output directory (its matrix.csv and cells).
    a: PathBuf,
    /// The second's: its cells, in its matrix.csv's order, that A ran too.
    b: PathBuf,
    /// Where agreement.csv and README.md go.
    #[arg(long)]
    out: PathBuf,
    /// The two sides' names, in the columns and on the page (node,redis).
    #[arg(long, value_delimiter = ',', num_args = 1, default_values_t = ["a".to_string(), "b".to_string()])]
    names: Vec<String>,
}

/// Reads both, writes both files; exit 2 (nothing written) for a
/// directory that is no matrix's or bad names, 70 when writing fails.
pub(crate) fn command(args: Args) -> ExitCode {
    let names = match names(&args.names) {
        Ok(n) => n,
        Err(e) => return bad(&e),
    };
    for dir in [&args.a, &args.b] {
        if !dir.join("matrix.csv").is_file() {
            return bad(&format!(
                "{} holds no matrix.csv: give a `matrix` output directory",
                dir.display()
            ));
        }
    }
    let pairs = match compare(&args.a, &args.b) {
        Ok(p) => p,
        Err(e) => return bad(&e),
    };
    let notes = std::fs::read_to_string(args.out.join("notes.md")).ok();
    let regenerate = format!(
        "`redlock-sim compare {} {} --out {} --names {},{}`",
        args.a.display(),
        args.b.display(),
        args.out.display(),
        names[0],
        names[1]
    );
    let csv = agreement_csv(&pairs, names);
    let md = page(&pairs, names, &regenerate, notes.as_deref());
    if let Err(e) = write(&args.out, &csv, &md) {
        eprintln!(
            "redlock-sim compare: cannot write to {}: {e}",
            args.out.display()
        );
        return ExitCode::from(exit::SOFTWARE);
    }
    let agree = pairs.iter().filter(|p| p.overlap() == Some(true)).count();
    let unknown = pairs.iter().filter(|p| p.overlap().is_none()).count();
    println!(
        "cells: {} (intervals overlap in {agree}; unknown {unknown})",
        pairs.len()
    );
    println!("report: {}", args.out.join("README.md").display());
    ExitCode::SUCCESS
}

/// Two distinct names of letters, digits, `_` or `-`.
fn names(given: &[String]) -> Result<[&str; 2], String> {
    let ok = |n: &str| {
        !n.is_empty()
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    match given {
        [a, b] if ok(a) && ok(b) && a != b => Ok([a, b]),
        _ => Err(format!(
            "--names {}: two distinct names of letters, digits, _ or - (node,redis)",
            given.join(",")
        )),
    }
}

fn bad(e: &str) -> ExitCode {
    eprintln!("redlock-sim compare: {e}");
    ExitCode::from(exit::BAD_INPUT)
}

fn write(out: &Path, csv: &str, md: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(out)?;
    std::fs::write(out.join("agreement.csv"), csv)?;
    std::fs::write(out.join("README.md"), md)
}
