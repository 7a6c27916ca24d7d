//! A reader that goes away (`redlock-sim run ... | head -1`) ends the
//! program quietly, as it ends `cat`: killed by SIGPIPE, no "internal
//! error" on stderr.

use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_redlock-sim");

#[test]
fn a_closed_pipe_ends_the_program_quietly() {
    let out = std::env::temp_dir().join(format!("redlock-sim-pipe-{}", std::process::id()));
    let mut child = Command::new(BIN)
        .args(["run", "scenarios/failover_race.toml", "--out"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away before the program writes its first line.
    drop(child.stdout.take());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGPIPE), "{status:?}: {stderr}");
    assert!(!stderr.contains("internal error"), "{stderr}");
    let _ = std::fs::remove_dir_all(&out);
}
