//! `lab --servers redis`: the lab on real `redis-server` and
//! `redis-sentinel` processes. The verdicts the contract promises (the
//! failover race through a real sentinel, an immediate restart breaking
//! Redlock and a delayed one not), the history read from the servers, the
//! refusals, and nothing left behind: no server process and no data
//! directory after a normal end, a SIGINT or a SIGKILL of the lab.

use super::leftovers::alive;
use super::runs::lab;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_redlock-sim");
const REDIS: &[&str] = &["--servers", "redis"];

fn need_servers(test: &str) {
    crate::common::require_redis(test);
    let sentinel = Command::new("redis-sentinel")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        sentinel,
        "{test}: redis-sentinel is not installed; `{}` installs it (or: apt-get install \
         redis-sentinel)",
        crate::common::INSTALL
    );
}

fn out_dir(name: &str) -> crate::common::Scratch {
    crate::common::Scratch::fresh(&format!("real-{name}"))
}

#[test]
fn an_immediate_restart_breaks_redlock_on_real_redis_and_a_delayed_one_does_not() {
    need_servers("an_immediate_restart_breaks_redlock_on_real_redis");
    let cmd = [BIN, "lab-client"];
    let file = "tests/data/lab/crash_restart.toml";
    assert_eq!(
        lab(file, "1..=2", 2, REDIS, &cmd),
        ["violation", "violation"]
    );
    let delayed = [REDIS, &["--set", "cluster.restart=1500ms"]].concat();
    assert_eq!(lab(file, "1..=2", 2, &delayed, &cmd), ["safe", "safe"]);
}

#[test]
fn the_failover_race_breaks_the_lock_through_a_real_sentinel() {
    need_servers("the_failover_race_breaks_the_lock_through_a_real_sentinel");
    let dir = out_dir("failover");
    let out = Command::new(BIN)
        .args(["lab", "tests/data/lab/failover_race.toml", "--seed", "1"])
        .args(REDIS)
        .arg("--out")
        .arg(&dir)
        .args(["--", BIN, "lab-client"])
        .output()
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("verdict: violation"), "{stdout}");
    assert!(stdout.contains("servers: redis-server 7."), "{stdout}");
    let history = std::fs::read_to_string(dir.join("history.csv")).expect("history.csv");
    // The failover as the real sentinel announced it, and the keys as the
    // servers made them: c1's on n1, c2's on the promoted n2, each naming
    // its client (read from MONITOR, not from the drivers).
    assert!(
        history.contains(",sentinel,failover,old=n1 new=n2"),
        "{history}"
    );
    let set_by = |node: &str, client: &str| {
        history.lines().any(|l| {
            l.contains(&format!(",{node},key_set,")) && l.ends_with(&format!("by={client}"))
        })
    };
    assert!(set_by("n1", "c1"), "c1's key on n1:\n{history}");
    assert!(set_by("n2", "c2"), "c2's key on n2:\n{history}");
    assert!(dir.join("servers/sentinel.1.log").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The `redis-server` and `redis-sentinel` processes lab `pid` started
/// (Redis rewrites its command line: they are found by parent and name).
fn servers_of(pid: u32) -> Vec<i32> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let status = std::fs::read_to_string(format!("/proc/{p}/status")).unwrap_or_default();
        let field = |k: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(k))
                .map(|v| v.trim().to_string())
        };
        let ours = field("PPid:").as_deref() == Some(pid.to_string().as_str());
        let redis = field("Name:").is_some_and(|n| n.starts_with("redis-"));
        if ours && redis && alive(p) {
            found.push(p);
        }
    }
    found
}

/// Whether a data directory of lab `pid` is left.
fn data_left(pid: u32) -> bool {
    let mark = format!("redlock-sim-{pid}-");
    std::fs::read_dir(std::env::temp_dir())
        .expect("the temporary directory")
        .flatten()
        .any(|e| e.file_name().to_string_lossy().starts_with(&mark))
}

/// Starts a real-Redis lab run of `failover_race.toml`, waits until
/// its servers run, ends it with `signal` (none: lets it end), and checks
/// that no server, sentinel or data directory is left within 3 s.
fn ends_clean(signal: Option<i32>) {
    let dir = out_dir(&format!("left-{signal:?}"));
    let mut lab = Command::new(BIN)
        .args(["lab", "tests/data/lab/failover_race.toml"])
        .args(REDIS)
        .arg("--out")
        .arg(&dir)
        .args(["--", BIN, "lab-client"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary starts");
    let pid = lab.id();
    let t = Instant::now();
    while servers_of(pid).len() < 3 && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let servers = servers_of(pid);
    assert_eq!(servers.len(), 3, "two servers and a sentinel started");
    assert!(
        data_left(pid),
        "the run's data directory exists while it runs"
    );
    if let Some(sig) = signal {
        std::thread::sleep(Duration::from_millis(300));
        // SAFETY: a signal to our own child, not yet reaped.
        unsafe {
            libc::kill(pid as i32, sig);
        }
    }
    let _ = lab.wait();
    let left = || servers.iter().any(|p| alive(*p)) || data_left(pid);
    let t = Instant::now();
    while left() && t.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let alive_now: Vec<&i32> = servers.iter().filter(|p| alive(**p)).collect();
    assert!(
        alive_now.is_empty(),
        "servers left by lab {pid}: {alive_now:?}"
    );
    assert!(!data_left(pid), "data left by lab {pid}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn nothing_of_real_redis_outlives_the_lab_whatever_ends_it() {
    need_servers("nothing_of_real_redis_outlives_the_lab_whatever_ends_it");
    ends_clean(None);
    ends_clean(Some(libc::SIGINT));
    ends_clean(Some(libc::SIGKILL));
}

/// A directory holding only links to the programs named, for a PATH
/// without the others.
fn path_with(name: &str, programs: &[&str]) -> crate::common::Scratch {
    let d = out_dir(name);
    std::fs::create_dir_all(&d).unwrap();
    for p in programs {
        let real = crate::common::which(p).expect("installed");
        std::os::unix::fs::symlink(real, d.join(p)).unwrap();
    }
    d
}

fn lab_with_path(path: &Path, file: &str, out: &Path) -> (Option<i32>, String) {
    let o = Command::new(BIN)
        .env("PATH", path)
        .args(["lab", file])
        .args(REDIS)
        .arg("--out")
        .arg(out)
        .args(["--", BIN, "lab-client"])
        .output()
        .expect("the binary runs");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_missing_server_program_is_exit_2_naming_its_package_and_nothing_written() {
    need_servers("a_missing_server_program_is_exit_2_naming_its_package");
    let out = out_dir("missing-out");
    let none = path_with("missing-none", &["sh"]);
    let (code, err) = lab_with_path(&none, "tests/data/lab/crash_restart.toml", &out);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("apt-get install redis-server"), "{err}");
    assert!(!out.exists(), "nothing written");
    // A redlock cluster needs no sentinel; a single one does.
    let server_only = path_with("missing-sentinel", &["sh", "redis-server"]);
    let (code, err) = lab_with_path(&server_only, "tests/data/lab/failover_race.toml", &out);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("apt-get install redis-sentinel"), "{err}");
    assert!(!out.exists(), "nothing written");
}

#[test]
fn a_power_loss_under_everysec_is_refused_on_real_redis_naming_its_key() {
    need_servers("a_power_loss_under_everysec_is_refused_on_real_redis");
    let out = out_dir("everysec");
    let o = Command::new(BIN)
        .args(["lab", "tests/data/lab/crash_restart.toml"])
        .args(REDIS)
        .args(["--set", "cluster.persistence=everysec"])
        .arg("--out")
        .arg(&out)
        .args(["--", BIN, "lab-client"])
        .output()
        .expect("the binary runs");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("faults[1].do") && err.contains("do = \"kill\""),
        "{err}"
    );
    assert!(!out.exists(), "nothing written");
    // A kill is what the lab can do: it runs, and the appendonly file
    // brings the key back, as `everysec` keeps what the kernel had.
    let text = std::fs::read_to_string("tests/data/lab/crash_restart.toml").unwrap();
    let killed = text.replace("do = \"crash\"", "do = \"kill\"");
    assert_ne!(killed, text);
    let file = out_dir("everysec-kill.toml");
    std::fs::write(&file, killed).unwrap();
    let extra = [REDIS, &["--set", "cluster.persistence=everysec"]].concat();
    let v = lab(
        file.to_str().unwrap(),
        "1..=1",
        1,
        &extra,
        &[BIN, "lab-client"],
    );
    assert_eq!(v, ["safe"]);
    let _ = std::fs::remove_file(file);
}
