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
