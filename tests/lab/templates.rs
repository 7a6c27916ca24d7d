//! The template drivers, one per language (`drivers/python/template.py`,
//! `drivers/node/template.js`, `drivers/go/template/main.go`,
//! `drivers/java/Template.java`, `drivers/php/template.php`,
//! `examples/lab_driver.rs`): each runs whole as the clients of
//! `tests/data/lab/template_paused.toml`, where c1 is stopped past its TTL
//! between its two writes and c2, which renews, takes the lock meanwhile.
//! Each run must be conclusive and safe, with both clients ready and
//! holding, c2's renewals said (`extended`), and c1's `RELEASED` right after
//! its stop ends, with no write between: the template's check before the
//! second write found the lock gone and said so at once.
//!
//! No assertion rests on a close timing. The stop comes 300 ms after c1's
//! key was set, between its first write (sent right after its `HELD`) and
//! its second (due 600 ms into the hold); the key expires 1 s after it was
//! set, so c2 cannot take the lock before c1 is stopped, and c1 wakes 1.5 s
//! after its key's end: whatever holds the key then, c1's token (unique to
//! its acquisition) is gone, so its check fails whatever the timing, and
//! the one margin asserted (`RELEASED` within 300 ms of the wake: a check's
//! round trip on loopback and a runtime resuming after SIGCONT, a few ms on
//! an idle machine) is wide.

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_redlock-sim");
const SCENARIO: &str = "tests/data/lab/template_paused.toml";
/// How soon after its stop ends c1 must say RELEASED (ms).
const RELEASED_WITHIN_MS: f64 = 300.0;

/// Runs the scenario (seed 1) with `cmd` as the clients and checks what the
/// module documentation says.
fn judge(cmd: &[&str], env: &[(&str, String)]) {
    let dir = std::env::temp_dir().join(format!(
        "redlock-lab-template-{}-{}",
        std::process::id(),
        Path::new(cmd.last().unwrap())
            .display()
            .to_string()
            .replace('/', "_")
    ));
    let out = Command::new(BIN)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .args(["lab", SCENARIO, "--seed", "1", "--out"])
        .arg(&dir)
        .arg("--")
        .args(cmd)
        .output()
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let history = std::fs::read_to_string(dir.join("history.csv")).unwrap_or_default();
    let logs: String = ["c1", "c2"]
        .iter()
        .map(|c| {
            let log = std::fs::read_to_string(dir.join(format!("clients/{c}.log")));
            format!("--- {c}.log\n{}\n", log.unwrap_or_default())
        })
        .collect();
    let context = format!(
        "{stdout}\n{}\n{logs}\n{history}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !stdout.contains("inconclusive") && stdout.contains("verdict: safe"),
        "the run is not conclusive and safe:\n{context}"
    );
    assert_eq!(out.status.code(), Some(0), "{context}");

    let rows: Vec<(f64, &str, &str, &str)> = history
        .lines()
        .skip(1)
        .map(|l| {
            let mut f = l.splitn(4, ',');
            let t = f.next().unwrap().parse().unwrap();
            (
                t,
                f.next().unwrap(),
                f.next().unwrap(),
                f.next().unwrap_or(""),
            )
        })
        .collect();
    let first = |host: &str, event: &str| rows.iter().find(|r| r.1 == host && r.2 == event);
    for c in ["c1", "c2"] {
        assert!(
            first(c, "ready").is_some(),
            "{c} never said READY:\n{context}"
        );
        assert!(
            first(c, "acquired").is_some(),
            "{c} never held the lock:\n{context}"
        );
    }
    assert!(
        first("c2", "extended").is_some(),
        "c2 renews (REDLOCK_RENEW=1) and never said HELD after a renewal:\n{context}"
    );
    let pause = rows
        .iter()
        .find(|r| r.1 == "lab" && r.2 == "fault" && r.3.starts_with("what=pause host=c1 "))
        .unwrap_or_else(|| panic!("c1 was never stopped:\n{context}"));
    let for_ms: f64 = pause.3.split("for_ms=").nth(1).unwrap().parse().unwrap();
    let (stopped, woke) = (pause.0, pause.0 + for_ms);
    let acquired = first("c1", "acquired").unwrap().0;
    assert!(
        rows.iter()
            .any(|r| r.1 == "c1" && r.2 == "write_sent" && acquired <= r.0 && r.0 < stopped),
        "c1 did not write before its stop:\n{context}"
    );
    let released = rows
        .iter()
        .find(|r| r.1 == "c1" && r.2 == "release_start" && r.0 > acquired)
        .unwrap_or_else(|| panic!("c1 never said RELEASED:\n{context}"))
        .0;
    assert!(
        released >= stopped && released - woke < RELEASED_WITHIN_MS,
        "c1 said RELEASED at {released} ms, not within {RELEASED_WITHIN_MS} ms of its \
         wake at {woke} ms (stopped at {stopped} ms):\n{context}"
    );
    assert!(
        !rows
            .iter()
            .any(|r| r.1 == "c1" && r.2 == "write_sent" && stopped <= r.0 && r.0 <= released),
        "c1 wrote after its stop, before its RELEASED:\n{context}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Whether `program args` runs and succeeds.
fn runs(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn the_python_template_says_released_at_a_loss() {
    let py = crate::runs::python();
    judge(&[py.to_str().unwrap(), "drivers/python/template.py"], &[]);
}

#[test]
fn the_node_template_says_released_at_a_loss() {
    let modules = Path::new("tests/libs/node/node_modules");
    assert!(
        modules.join("ioredis").exists(),
        "ioredis is missing: `bash scripts/test.sh` installs it (npm ci --prefix tests/libs/node)"
    );
    let abs = std::fs::canonicalize(modules).expect("node_modules");
    let env = [("NODE_PATH", abs.display().to_string())];
    judge(&["node", "drivers/node/template.js"], &env);
}

#[test]
fn the_go_template_says_released_at_a_loss() {
    judge(&[&crate::runs::go("template")], &[]);
}

#[test]
fn the_java_template_says_released_at_a_loss() {
    // A single source file: `java Template.java` compiles it in memory, which
    // needs a JDK (javac's module), not a JRE alone.
    assert!(
        runs("javac", &["-version"]),
        "a JDK is missing: `bash scripts/test.sh` installs it (apt-get install openjdk-17-jdk-headless)"
    );
    judge(&["java", "drivers/java/Template.java"], &[]);
}

#[test]
fn the_php_template_says_released_at_a_loss() {
    assert!(
        runs("php", &["-r", "exit(class_exists('Redis') ? 0 : 1);"]),
        "PHP with phpredis is missing: `bash scripts/test.sh` installs it (apt-get install php-cli php-redis)"
    );
    judge(&["php", "drivers/php/template.php"], &[]);
}

#[test]
fn the_rust_template_says_released_at_a_loss() {
    let driver = rust_template();
    judge(&[driver.to_str().unwrap()], &[]);
}

/// `examples/lab_driver.rs`, built here. `cargo test` builds the examples
/// only when it builds every target (not with `--test lab`), and no
/// `CARGO_BIN_EXE_*` names an example: so the test runs `cargo build
/// --example lab_driver` (at once when it is fresh) with the cargo that
/// built this test, into this test binary's own target directory and
/// profile (`<target>/<profile>/deps/lab-<hash>`), and runs
/// `<target>/<profile>/examples/lab_driver`. `scripts/test.sh` builds the
/// examples before the tests start and names their directory in
/// `REDLOCK_SIM_EXAMPLES`: a cargo run from a test would wait for the build
/// directory's lock while the suite builds the other tests.
fn rust_template() -> PathBuf {
    if let Some(exe) = crate::common::prebuilt_example("lab_driver") {
        return exe;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("<target>/<profile>/deps/");
    let target_dir = profile_dir.parent().expect("<target>/");
    let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => "dev",
        Some(name) => name,
        None => panic!("no profile in {}", exe.display()),
    };
    let out = Command::new(env!("CARGO"))
        .args([
            "build",
            "--example",
            "lab_driver",
            "--profile",
            profile,
            "--target-dir",
        ])
        .arg(target_dir)
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo build --example lab_driver failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    profile_dir.join("examples").join("lab_driver")
}
