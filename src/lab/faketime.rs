//! A client's clock, set at its start through libfaketime (Debian's
//! `faketime` package): the scenario's drawn offset and rate of each client
//! (`clocks.drift`, `clocks.offset`, `[hosts.cN] clock_rate`,
//! `clock_offset`), as `LD_PRELOAD` and `FAKETIME="+<offset s> x<rate>"` in
//! its environment. libfaketime then moves the client's wall clock by the
//! offset and runs its wall and monotonic clocks at the rate (its sleeps
//! and timers too), for every runtime that reads time through libc
//! (Python, Node, Rust, the JVM...; not Go, which reads the clock itself).
//! A clock that changes during the run (`clock-jump`, `clock-rate` on a
//! client) is not done this way: refused ([`super::refuse`]).

use std::path::{Path, PathBuf};

/// Where distributions put the multi-threaded libfaketime.
const PLACES: [&str; 4] = [
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
    "/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1",
    "/usr/lib/faketime/libfaketimeMT.so.1",
    "/usr/local/lib/faketime/libfaketimeMT.so.1",
];

/// The library, if installed.
pub fn library() -> Option<PathBuf> {
    PLACES
        .iter()
        .map(Path::new)
        .find(|p| p.exists())
        .map(Path::to_path_buf)
}

/// Whether a client's clock of this offset (ms) and rate needs faking.
pub fn needed(offset_ms: f64, rate: f64) -> bool {
    offset_ms != 0.0 || rate != 1.0
}

/// The environment that gives a client this clock, with `lib`.
pub fn env(lib: &Path, offset_ms: f64, rate: f64) -> Vec<(String, String)> {
    assert!(rate > 0.0, "faketime: a clock rate must be positive");
    let preload = match std::env::var("LD_PRELOAD") {
        Ok(p) if !p.is_empty() => format!("{}:{p}", lib.display()),
        _ => lib.display().to_string(),
    };
    let sign = if offset_ms < 0.0 { "-" } else { "+" };
    let spec = format!("{sign}{:.3} x{rate:.9}", offset_ms.abs() / 1e3);
    vec![
        ("LD_PRELOAD".to_string(), preload),
        ("FAKETIME".to_string(), spec),
    ]
}
