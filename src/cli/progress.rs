//! A sweep's progress on stderr: a bar on a terminal, plain lines every
//! 10% otherwise (the runs per second and the time left are wall-clock
//! figures, never in an output file).

use std::io::{self, IsTerminal, Write};
use std::time::Instant;

/// Progress: a bar on a terminal, plain lines every 10% otherwise.
pub(crate) struct Progress {
    bar: Option<indicatif::ProgressBar>,
    total: usize,
    done: usize,
    violations: usize,
    start: Instant,
    shown: bool,
}

impl Progress {
    /// Progress over `total` runs; silent unless `show`.
    pub(crate) fn new(total: usize, show: bool) -> Progress {
        let bar = (show && io::stderr().is_terminal()).then(|| {
            let b = indicatif::ProgressBar::new(total as u64);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{bar:40} {pos}/{len} runs, {msg}, {per_sec}, {eta} left",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            b
        });
        Progress {
            bar,
            total,
            done: 0,
            violations: 0,
            start: Instant::now(),
            shown: show,
        }
    }

    /// One run done (`violation`: it violated).
    pub(crate) fn tick(&mut self, violation: bool) {
        self.done += 1;
        self.violations += violation as usize;
        if let Some(b) = &self.bar {
            b.set_message(format!("{} violating", self.violations));
            b.inc(1);
        } else if self.shown
            && (self.done * 10 / self.total != (self.done - 1) * 10 / self.total
                || self.done == self.total)
        {
            let secs = self.start.elapsed().as_secs_f64();
            let rate = self.done as f64 / secs.max(1e-9);
            let left = (self.total - self.done) as f64 / rate.max(1e-9);
            let _ = writeln!(
                io::stderr(),
                "{}/{} runs, {} violating, {rate:.1} runs/s, {left:.0}s left",
                self.done,
                self.total,
                self.violations
            );
        }
    }

    /// All runs done.
    pub(crate) fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish();
        }
    }
}

/// A matrix's progress on stderr, a line as each cell ends: cells done of
/// all (per language), runs so far, and the time left: the cells still to
/// run at the pace of those run so far (cells read back cost nothing:
/// neither in the pace nor in what is left). Wall-clock figures, never in
/// an output file.
pub(crate) struct MatrixProgress {
    /// Each language: cells done, cells in all.
    languages: std::collections::BTreeMap<String, (usize, usize)>,
    runs: usize,
    /// Cells to run (not read back), and those run so far.
    to_run: usize,
    ran_cells: usize,
    start: Instant,
}

impl MatrixProgress {
    /// Progress over these cells: each its language, and whether it is to
    /// run (false: read back).
    pub(crate) fn new<'a>(cells: impl Iterator<Item = (&'a str, bool)>) -> MatrixProgress {
        let mut languages = std::collections::BTreeMap::new();
        let mut to_run = 0;
        for (l, runs) in cells {
            languages.entry(l.to_string()).or_insert((0, 0)).1 += 1;
            to_run += usize::from(runs);
        }
        MatrixProgress {
            languages,
            runs: 0,
            to_run,
            ran_cells: 0,
            start: Instant::now(),
        }
    }

    /// The line said as the cell named `what` ends (after [`Self::done`]).
    pub(crate) fn line(&self, what: &str) -> String {
        let done: usize = self.languages.values().map(|d| d.0).sum();
        let all: usize = self.languages.values().map(|d| d.1).sum();
        let per: Vec<String> = self
            .languages
            .iter()
            .map(|(l, (d, n))| format!("{l} {d}/{n}"))
            .collect();
        let secs = self.start.elapsed().as_secs();
        let left = match self.ran_cells {
            0 => String::new(),
            n => {
                let cells = self.to_run.saturating_sub(n) as u64;
                format!("; about {} left", minutes(secs * cells / n as u64))
            }
        };
        format!(
            "[{done}/{all} cells: {}; {} runs in {}{left}] {what}:",
            per.join(", "),
            self.runs,
            minutes(secs)
        )
    }

    /// A cell of `language` done: `runs` run now, `swept` whether it was
    /// one of the cells to run (not read back; a cell cut back to its stop
    /// is one, and runs nothing).
    pub(crate) fn done(&mut self, language: &str, runs: usize, swept: bool) {
        if let Some(d) = self.languages.get_mut(language) {
            d.0 += 1;
        }
        self.runs += runs;
        self.ran_cells += usize::from(swept);
    }
}

/// Seconds as `1h02m`, `14m05s` or `40s`.
fn minutes(secs: u64) -> String {
    match secs {
        s if s >= 3600 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        s if s >= 60 => format!("{}m{:02}s", s / 60, s % 60),
        s => format!("{s}s"),
    }
}
