//! The files of a sweep's directory the command layer writes or deletes:
//! `sweep.json`, `runs.csv` (rewritten whole, in run order) and, under
//! `--fresh`, the earlier sweep's files ([`redlock_harness::sweep::meta`] decides
//! what is allowed; this module does it).

use redlock_harness::sweep::meta::{Meta, CHART_PREFIXES, META_FILE, SWEEP_FILES};
use redlock_harness::sweep::rows::{header, RunRow};
use std::io;
use std::path::Path;

/// Writes `dir/sweep.json`.
pub(crate) fn write_meta(dir: &Path, meta: &Meta) -> io::Result<()> {
    let text = serde_json::to_string_pretty(meta).map_err(io::Error::other)?;
    std::fs::write(dir.join(META_FILE), text + "\n")
}

/// Writes a complete `runs.csv` (header and rows).
pub(crate) fn write_rows(path: &Path, keys: &[String], rows: &[RunRow]) -> io::Result<()> {
    let tmp = path.with_extension("csv.tmp");
    {
        let mut w = csv::Writer::from_path(&tmp)?;
        w.write_record(header(keys))?;
        for r in rows {
            w.write_record(r.fields())?;
        }
        w.flush()?;
    }
    std::fs::rename(tmp, path)
}

/// Deletes the files a sweep writes in `dir` (and its `runs/`), nothing else.
pub(crate) fn discard(dir: &Path) -> io::Result<()> {
    let mut names: Vec<String> = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let chart = name.ends_with(".svg") && CHART_PREFIXES.iter().any(|p| name.starts_with(p));
        if (chart || SWEEP_FILES.contains(&name.as_str())) && entry.file_type()?.is_file() {
            names.push(name);
        }
    }
    names.sort();
    for name in names {
        std::fs::remove_file(dir.join(name))?;
    }
    match std::fs::remove_dir_all(dir.join("runs")) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}
