//! `history.csv`: one row per event, `time_ms,host,event,detail`.

use std::io;
use std::path::Path;

use redlock_harness::history::History;

/// The header row of `history.csv`.
pub const HISTORY_HEADER: [&str; 4] = ["time_ms", "host", "event", "detail"];

/// Writes `history` as CSV to `w`: the header, then [`redlock_harness::history::Event::row`]
/// of every event in order.
pub fn write_history_to<W: io::Write>(w: W, history: &History) -> io::Result<()> {
    let mut out = ::csv::Writer::from_writer(w);
    out.write_record(HISTORY_HEADER).map_err(into_io)?;
    for e in &history.events {
        out.write_record(e.row()).map_err(into_io)?;
    }
    out.flush()
}

/// Writes `history.csv` at `path`.
pub fn write_history(path: &Path, history: &History) -> io::Result<()> {
    let file = std::fs::File::create(path)?;
    write_history_to(io::BufWriter::new(file), history)
}

fn into_io(e: ::csv::Error) -> io::Error {
    match e.into_kind() {
        ::csv::ErrorKind::Io(e) => e,
        other => io::Error::other(format!("{other:?}")),
    }
}
