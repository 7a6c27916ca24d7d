//! Nothing outlives the lab: each client's whole process group is gone and
//! every port the lab bound is free after a normal end, after a SIGINT in
//! the middle of a run, and when a client ignores SIGTERM. The clients are
//! shell scripts that leave a `sleep` behind in their group and write
//! their pids and the addresses they were given to a file.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_redlock-sim");

/// A client that leaves a `sleep` in its group, notes `$$`, the sleep's
/// pid and its addresses, says it is ready, then runs `rest`.
fn client(rest: &str) -> String {
    format!(
        "sleep 1000 & echo \"$$ $! $REDLOCK_NODES $REDLOCK_STORE\" >> \"$LEFT_FILE\"; {} {rest}",
        crate::common::SAY_READY
    )
}

fn start_lab(dir: &Path, script: &str) -> Child {
    let mut cmd = Command::new(BIN);
    cmd.args(["lab", "tests/data/lab/idle.toml", "--out"])
        .arg(dir.join("out"))
        .args(["--", "sh", "-c", script])
        .env("LEFT_FILE", dir.join("left"))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // The lab as a terminal starts it: SIGINT at its default. A test run
    // in the background of a non-interactive shell (`bash scripts/test.sh
    // &`, as some CI runners and users start it) inherits SIGINT ignored,
    // and so would the lab: the interrupt below would then do nothing and
    // the lab would end by itself, successfully (that was the clean
    // clone's failure, not the machine's load).
    // SAFETY: between fork and exec only `signal`, async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    cmd.spawn().expect("the binary starts")
}

fn fresh_dir(name: &str) -> crate::common::Scratch {
    crate::common::Scratch::dir(&format!("left-{name}"))
}

/// The pids and addresses the clients noted: two lines, one per client.
fn noted(dir: &Path) -> (Vec<i32>, Vec<String>) {
    let text = std::fs::read_to_string(dir.join("left")).unwrap_or_default();
    let mut pids = Vec::new();
    let mut addrs = Vec::new();
    for line in text.lines() {
        let mut f = line.split_whitespace();
        pids.extend(f.by_ref().take(2).filter_map(|p| p.parse::<i32>().ok()));
        for a in f {
            addrs.extend(a.split(',').map(str::to_string));
        }
    }
    (pids, addrs)
}

/// Alive: it exists and is no zombie.
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Waits up to 10 s for every one of `pids` to be gone: the reaper
/// kills at once, and a loaded machine may run it late.
pub fn wait_gone(pids: &[i32]) {
    let t = Instant::now();
    while pids.iter().any(|p| alive(*p)) && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Every noted process gone, and every noted port free, within 10 s (the
/// reaper acts on its own, at once; a loaded machine may run it late).
fn nothing_left(dir: &Path) {
    let (pids, addrs) = noted(dir);
    assert_eq!(
        pids.len(),
        4,
        "two clients noted themselves and a sleep each"
    );
    assert!(
        addrs.len() >= 4,
        "the clients noted their addresses: {addrs:?}"
    );
    wait_gone(&pids);
    let left: Vec<&i32> = pids.iter().filter(|p| alive(**p)).collect();
    assert!(left.is_empty(), "processes outlived the lab: {left:?}");
    for a in &addrs {
        // std's listener reuses addresses, as a server restarting would:
        // only a socket still listening holds the port.
        assert!(
            std::net::TcpListener::bind(a.as_str()).is_ok(),
            "{a} is still bound after the lab ended"
        );
    }
}

fn wait_noted(dir: &Path, lab: &mut Child) {
    let t = Instant::now();
    while noted(dir).0.len() < 4 {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the clients never started"
        );
        assert!(lab.try_wait().unwrap().is_none(), "the lab ended early");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_normal_end_leaves_nothing_running() {
    let dir = fresh_dir("end");
    // The client exits by itself at the end; its sleep stays in its group.
    let mut lab = start_lab(&dir, &client("sleep 1.2; exit 0"));
    let status = lab.wait().unwrap();
    assert!(
        status.code().is_some(),
        "the lab ended by itself: {status:?}"
    );
    nothing_left(&dir);
    let log = std::fs::read_to_string(dir.join("out/clients/c1.log"));
    assert!(log.is_ok(), "each client has its log");
}

#[test]
fn a_client_that_ignores_sigterm_is_killed() {
    let dir = fresh_dir("term");
    let mut lab = start_lab(&dir, &client("trap '' TERM; while :; do sleep 0.05; done"));
    let t = Instant::now();
    let status = lab.wait().unwrap();
    assert!(
        status.code().is_some(),
        "the lab ended by itself: {status:?}"
    );
    // duration 1 s, two TTLs and 5 s of grace, then SIGTERM and 1 s.
    assert!(
        t.elapsed() < Duration::from_secs(30),
        "the lab waited {:?}",
        t.elapsed()
    );
    nothing_left(&dir);
    let history = std::fs::read_to_string(dir.join("out/history.csv")).unwrap();
    assert!(
        !history.contains("client_exited"),
        "no client exited by itself"
    );
}

#[test]
fn a_sigint_mid_run_leaves_nothing_running() {
    let dir = fresh_dir("int");
    let mut lab = start_lab(&dir, &client("while :; do sleep 0.05; done"));
    wait_noted(&dir, &mut lab);
    // SAFETY: signalling a child of ours that has not been reaped.
    unsafe {
        libc::kill(lab.id() as i32, libc::SIGINT);
    }
    let status = lab.wait().unwrap();
    assert!(
        !status.success(),
        "an interrupted lab does not claim success"
    );
    nothing_left(&dir);
}

#[test]
fn a_client_that_fails_or_sends_garbage_is_recorded_and_the_run_goes_on() {
    let dir = fresh_dir("bad");
    // c1 says it is ready, names another client in a WRITE and sends an
    // unknown command, then lives to the end; c2 fails at once.
    let script = r#"if [ "$REDLOCK_CLIENT" = c2 ]; then exit 3; fi
        cli() { redis-cli -h "${REDLOCK_STORE%:*}" -p "${REDLOCK_STORE##*:}" "$@"; }
        cli READY c1; cli WRITE c2 lock; cli NONSENSE 1 2; sleep 1.2"#;
    let out = Command::new(BIN)
        .args(["lab", "tests/data/lab/idle.toml", "--out"])
        .arg(dir.join("out"))
        .args(["--", "sh", "-c", script])
        .output()
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    // The run went on to its end, and tested nothing: inconclusive, not
    // safe, and the command fails.
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("verdict: inconclusive\n"), "{stdout}");
    assert!(
        stdout.contains("inconclusive: c2 ended before the run's end (exit status: 3)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("inconclusive: no client ever held the lock"),
        "{stdout}"
    );
    let history = std::fs::read_to_string(dir.join("out/history.csv")).unwrap();
    let errors: Vec<&str> = history
        .lines()
        .filter(|l| l.contains(",c1,store_error,"))
        .collect();
    assert_eq!(errors.len(), 2, "both bad commands recorded: {history}");
    assert!(
        history.contains(",c2,client_exited,status=exit status: 3"),
        "{history}"
    );
    let report = std::fs::read_to_string(dir.join("out/report.md")).unwrap();
    assert!(
        report.contains("**c2**: exit status: 3 (ended early, or failed)"),
        "{report}"
    );
    assert!(report.contains("[clients/c2.log]"), "{report}");
    assert!(report.contains("2 store command(s) refused"), "{report}");
}

/// `redlock-sim lab ... | head -1`: the reader goes away before the lab
/// prints. The lab still runs to its end, stops its clients and writes its
/// files; then, as `cat` does, it dies of SIGPIPE, with no "internal
/// error" (it once panicked there: the lab keeps SIGPIPE ignored for its
/// sockets).
#[test]
fn a_closed_stdout_ends_the_lab_quietly_after_its_run() {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    let dir = fresh_dir("pipe");
    let mut lab = Command::new(BIN)
        .args(["lab", "tests/data/lab/idle.toml", "--out"])
        .arg(dir.join("out"))
        .args(["--", "sh", "-c", &client("sleep 1.2; exit 0")])
        .env("LEFT_FILE", dir.join("left"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    drop(lab.stdout.take());
    let mut stderr = String::new();
    lab.stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = lab.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGPIPE), "{status:?}: {stderr}");
    assert!(!stderr.contains("internal error"), "{stderr}");
    assert!(dir.join("out/report.md").exists(), "the files were written");
    nothing_left(&dir);
}
