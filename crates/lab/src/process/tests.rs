//! The lab's client processes: a group that a pause stops and a stop ends,
//! a client that ignores SIGTERM killed after its grace, an early exit seen.

use crate::process::{spawn, ClientProcess, Reaper};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

const MS: Duration = Duration::from_millis(1);

fn sh(script: &str, dir: &Path, reaper: &Arc<Reaper>) -> ClientProcess {
    let argv = ["sh".to_string(), "-c".to_string(), script.to_string()];
    let env = [("REDLOCK_CLIENT".to_string(), "c1".to_string())];
    spawn(&argv, &env, &[], &dir.join("c1.log"), reaper).unwrap()
}

/// Waits until `cond` holds, failing after a generous deadline.
async fn until(what: &str, mut cond: impl FnMut() -> bool) {
    let t = Instant::now();
    while !cond() {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "{what}: not within 5 s"
        );
        tokio::time::sleep(10 * MS).await;
    }
}

/// A fresh directory for one test's logs, removed when the test ends.
struct Scratch(std::path::PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn dir(name: &str) -> Scratch {
    let path = std::env::temp_dir().join(format!("redlock-sim-lab-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&path);
    std::fs::create_dir_all(&path).unwrap();
    Scratch(path)
}

/// Whether any process of group `pgid` is alive (zombies aside).
fn group_alive(pgid: u32) -> bool {
    let mut alive = false;
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...
        let Some(rest) = stat.rsplit_once(") ").map(|(_, r)| r) else {
            continue;
        };
        let f: Vec<&str> = rest.split(' ').collect();
        if f.len() > 2 && f[2] == pgid.to_string() && f[0] != "Z" {
            alive = true;
        }
    }
    alive
}

fn lines(p: &Path) -> usize {
    std::fs::read_to_string(p).map_or(0, |s| s.lines().count())
}

#[tokio::test]
async fn a_paused_group_does_nothing_until_resumed_and_a_stop_ends_all_of_it() {
    let d = dir("pause");
    let ticks = d.join("ticks");
    let script = format!(
        "echo \"$REDLOCK_CLIENT\"; sleep 1000 & while :; do echo x >> {}; sleep 0.01; done",
        ticks.display()
    );
    let w = Reaper::start().unwrap();
    let mut p = sh(&script, &d, &w);
    until("running", || lines(&ticks) > 3).await;
    p.pause();
    tokio::time::sleep(100 * MS).await;
    let at_pause = lines(&ticks);
    tokio::time::sleep(300 * MS).await;
    assert_eq!(lines(&ticks), at_pause, "ran while stopped");
    p.resume();
    until("resumed", || lines(&ticks) > at_pause).await;
    let pgid = p.pid();
    p.stop(Duration::from_secs(2)).await.unwrap();
    until("the group gone after the stop", || !group_alive(pgid)).await;
    assert_eq!(std::fs::read_to_string(d.join("c1.log")).unwrap(), "c1\n");
}

#[tokio::test]
async fn a_client_that_ignores_sigterm_is_killed_after_its_grace() {
    let d = dir("term");
    let w = Reaper::start().unwrap();
    let mut p = sh(
        "trap '' TERM; echo ready; while :; do sleep 0.05; done",
        &d,
        &w,
    );
    let log = d.join("c1.log");
    until("trap set", || lines(&log) == 1).await;
    let t = Instant::now();
    let status = p.stop(300 * MS).await.unwrap();
    assert!(
        t.elapsed() >= 300 * MS,
        "stopped before the grace: {:?}",
        t.elapsed()
    );
    assert_eq!(status.signal(), Some(libc::SIGKILL));
    let pgid = p.pid();
    until("the group gone after the kill", || !group_alive(pgid)).await;
}

#[tokio::test]
async fn an_early_exit_is_seen_and_a_stopped_client_is_still_ended() {
    let d = dir("exit");
    let w = Reaper::start().unwrap();
    let mut p = sh("sleep 1000 & exit 3", &d, &w);
    let pgid = p.pid();
    until("exit seen", || p.exited().is_some()).await;
    assert_eq!(p.exited().unwrap().code(), Some(3));
    until("what it started gone with it", || !group_alive(pgid)).await;

    // A stopped client is resumed, so that SIGTERM ends it within the grace.
    let mut q = sh("while :; do sleep 0.05; done", &d, &w);
    q.pause();
    let t = Instant::now();
    let status = q.stop(Duration::from_secs(3)).await.unwrap();
    assert_eq!(status.signal(), Some(libc::SIGTERM));
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
}

#[tokio::test]
async fn the_reaper_kills_the_groups_left_when_the_lab_goes() {
    let d = dir("reaper");
    let w = Reaper::start().unwrap();
    let p = sh("sleep 1000 & while :; do sleep 0.05; done", &d, &w);
    let pgid = p.pid();
    // The lab dies without dropping its clients: only the reaper is left
    // to end them when its pipe closes.
    std::mem::forget(p);
    drop(w);
    until("group killed", || !group_alive(pgid)).await;
}

#[tokio::test]
async fn the_reaper_removes_a_noted_file_after_the_group_that_makes_it_again() {
    let d = dir("reaper-file");
    // Named as the reaper removes files: libfaketime's, under /dev/shm.
    let file = format!("/dev/shm/redlock-sim-reaper-test-{}", std::process::id());
    std::fs::write(&file, b"").unwrap();
    let w = Reaper::start().unwrap();
    // Noted before the client, as the lab notes libfaketime's segment.
    w.note(&format!("f{file}"));
    // A client that makes the file again and again, as one that starts
    // while the lab goes would. (Its process is a zombie of this test once
    // killed, so the reaper waits its whole second before removing.)
    let p = sh(&format!("while :; do : > '{file}'; done"), &d, &w);
    std::fs::remove_file(&file).unwrap();
    until("the client makes the file", || Path::new(&file).exists()).await;
    std::mem::forget(p);
    drop(w);
    let gone = !Path::new(&file).exists();
    let _ = std::fs::remove_file(&file);
    assert!(gone, "{file} made again after the reaper removed it");
}

#[tokio::test]
async fn a_command_that_cannot_start_is_an_error() {
    let d = dir("missing");
    let argv = ["/nonexistent/driver".to_string()];
    let w = Reaper::start().unwrap();
    let e = spawn(&argv, &[], &[], &d.join("c1.log"), &w)
        .err()
        .expect("spawned a missing program");
    assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
}

#[test]
fn a_group_line_is_the_pid_after_a_plus() {
    let mut buf = [0u8; 24];
    assert_eq!(super::group_line(7, &mut buf), b"+7\n");
    assert_eq!(super::group_line(4194304, &mut buf), b"+4194304\n");
    assert_eq!(super::group_line(i32::MAX, &mut buf), b"+2147483647\n");
}
