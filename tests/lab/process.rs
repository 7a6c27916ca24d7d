//! The lab's client processes: a group that a pause stops and a stop ends,
//! a client that ignores SIGTERM killed after its grace, an early exit seen.

use redlock_sim::lab::process::{spawn, ClientProcess};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const MS: Duration = Duration::from_millis(1);

fn sh(script: &str, dir: &Path) -> ClientProcess {
    let argv = ["sh".to_string(), "-c".to_string(), script.to_string()];
    let env = [("REDLOCK_CLIENT".to_string(), "c1".to_string())];
    spawn(&argv, &env, &dir.join("c1.log")).unwrap()
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("redlock-sim-lab-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
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
    let mut p = sh(&script, &d);
    tokio::time::sleep(200 * MS).await;
    assert!(lines(&ticks) > 3, "not running");
    p.pause();
    tokio::time::sleep(100 * MS).await;
    let at_pause = lines(&ticks);
    tokio::time::sleep(300 * MS).await;
    assert_eq!(lines(&ticks), at_pause, "ran while stopped");
    p.resume();
    tokio::time::sleep(200 * MS).await;
    assert!(lines(&ticks) > at_pause, "did not resume");
    let pgid = p.pid();
    p.stop(Duration::from_secs(2)).await.unwrap();
    tokio::time::sleep(50 * MS).await;
    assert!(!group_alive(pgid), "the group outlived the stop");
    assert_eq!(std::fs::read_to_string(d.join("c1.log")).unwrap(), "c1\n");
}

#[tokio::test]
async fn a_client_that_ignores_sigterm_is_killed_after_its_grace() {
    let d = dir("term");
    let mut p = sh("trap '' TERM; while :; do sleep 0.05; done", &d);
    tokio::time::sleep(100 * MS).await;
    let t = Instant::now();
    let status = p.stop(300 * MS).await.unwrap();
    assert!(
        t.elapsed() >= 300 * MS,
        "stopped before the grace: {:?}",
        t.elapsed()
    );
    assert!(!status.success());
    tokio::time::sleep(50 * MS).await;
    assert!(!group_alive(p.pid()));
}

#[tokio::test]
async fn an_early_exit_is_seen_and_a_stopped_client_is_still_ended() {
    let d = dir("exit");
    let mut p = sh("exit 3", &d);
    let t = Instant::now();
    while p.exited().is_none() {
        assert!(t.elapsed() < Duration::from_secs(2), "exit not seen");
        tokio::time::sleep(10 * MS).await;
    }
    assert_eq!(p.exited().unwrap().code(), Some(3));

    let mut q = sh("while :; do sleep 0.05; done", &d);
    q.pause();
    let status = q.stop(Duration::from_secs(2)).await.unwrap();
    assert!(!status.success());
}

#[test]
fn a_command_that_cannot_start_is_an_error() {
    let d = dir("missing");
    let argv = ["/nonexistent/driver".to_string()];
    let e = spawn(&argv, &[], &d.join("c1.log"))
        .err()
        .expect("spawned a missing program");
    assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
}
