//! What the lab cannot do as the simulation does it is refused before
//! anything runs: exit 2, an error naming the file, the line and the key,
//! and nothing written.

use std::path::PathBuf;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_redlock-sim");

const HEAD: &str = "name = \"refused\"\nduration = \"1s\"\n\n[cluster]\nnodes = 1\n\n[clients]\ncount = 2\nttl = \"200ms\"\n";

/// [`HEAD`] in the `single` topology (a sentinel).
const SINGLE: &str = "\n[hosts.sentinel]\n";

/// Runs `lab` on `HEAD` + `rest`; (exit code, stderr, whether --out exists).
fn lab(name: &str, rest: &str, cmd: &[&str]) -> (Option<i32>, String, bool) {
    let dir = std::env::temp_dir().join(format!("redlock-refused-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("s.toml");
    let head = if rest.starts_with(SINGLE) {
        HEAD.replace("nodes = 1", "topology = \"single\"\nnodes = 2")
    } else {
        HEAD.to_string()
    };
    std::fs::write(&file, format!("{head}{rest}")).unwrap();
    let out: PathBuf = dir.join("out");
    let o = Command::new(BIN)
        .arg("lab")
        .arg(&file)
        .arg("--out")
        .arg(&out)
        .arg("--")
        .args(cmd)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let written = out.exists();
    let _ = std::fs::remove_dir_all(&dir);
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        written,
    )
}

#[test]
fn what_the_lab_cannot_do_is_refused_with_the_key_and_its_line() {
    // (case, rest of the file, the line and key the error names, a word of
    // the reason)
    let cases = [
        (
            "jump",
            "\n[[faults]]\nat = \"1ms\"\ndo = \"clock-jump\"\nhost = \"c1\"\nby = \"-10s\"\n",
            "s.toml:14: faults[0].host",
            "monotonic",
        ),
        (
            "nemesis-jump",
            "\n[nemesis]\nclock_jump_every = \"1s\"\nclock_jump = \"-1s..1s\"\nclock_jump_target = \"client\"\n",
            "s.toml:14: nemesis.clock_jump_target",
            "monotonic",
        ),
        (
            "sentinel-clock",
            "\n[hosts.sentinel]\n\n[[faults]]\nat = \"1ms\"\ndo = \"clock-rate\"\nhost = \"sentinel\"\nrate = 2.0\n",
            "s.toml:17: faults[0].host",
            "sentinel",
        ),
        (
            "store-clock",
            "\n[[faults]]\nat = \"1ms\"\ndo = \"clock-rate\"\nhost = \"store\"\nrate = 2.0\n",
            "s.toml:14: faults[0].host",
            "store",
        ),
        (
            "released",
            "\n[[faults]]\nat = \"1ms\"\nafter = \"c1:released\"\ndo = \"crash\"\nhost = \"n1\"\n",
            "s.toml:13: faults[0].after",
            "only the client knows",
        ),
        (
            "variant",
            "variant = \"plain-del-release\"\n",
            "s.toml:10: clients.variant",
            "the command's own",
        ),
    ];
    for (name, rest, at, why) in cases {
        let (code, err, written) = lab(name, rest, &["true"]);
        assert_eq!(code, Some(2), "{name}: {err}");
        assert!(err.contains(at), "{name}: expected `{at}` in: {err}");
        assert!(err.contains(why), "{name}: expected `{why}` in: {err}");
        assert!(!written, "{name}: a refused run wrote its directory");
    }
}

#[test]
fn a_command_that_cannot_start_is_exit_2_and_writes_nothing() {
    let (code, err, written) = lab("cmd", "", &["/nonexistent/driver"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("/nonexistent/driver"), "{err}");
    assert!(!written, "a run that could not start wrote its directory");
}

/// The Go driver `scripts/test.sh` builds (`drivers/go/build.sh`).
fn go_driver() -> &'static str {
    let p = "drivers/go/bin/redislock";
    assert!(
        std::path::Path::new(p).is_file(),
        "{p} is missing: `bash scripts/test.sh` builds it (bash drivers/go/build.sh)"
    );
    p
}

#[test]
fn a_client_clock_on_a_go_driver_is_refused_with_its_reason_and_nothing_written() {
    let go = go_driver();
    let rest = "\n[hosts.c1]\nclock_rate = 1.5\n";
    // The command is the Go program itself: refused before anything runs.
    let (code, err, written) = lab("go-direct", rest, &[go]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("s.toml:12: hosts.c1"), "{err}");
    assert!(err.contains("is a Go program"), "{err}");
    assert!(!written, "a refused run wrote its directory");
    // A wrapper starts it: found when the client first talks to the store.
    let wrapped = format!("exec {go}");
    let (code, err, written) = lab("go-wrapped", rest, &["sh", "-c", &wrapped]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("hosts.c1: the lab sets client c1's clock"),
        "{err}"
    );
    assert!(err.contains("a Go program"), "{err}");
    assert!(!written, "a refused run wrote its directory");
    // No clock of its own: the same wrapped driver runs.
    let (code, err, written) = lab("go-no-clock", "", &["sh", "-c", &wrapped]);
    assert!(matches!(code, Some(0 | 1)), "{err}");
    assert!(written);
}
