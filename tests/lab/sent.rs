//! Whole lab runs classify their stale writes by when each was sent, as
//! the client's link to the store saw it: a write a cut held up was in
//! flight, a stopped client's writes were sent late. (The link, the store
//! and the recorder's part are tested in `crates/lab/src/sent/tests.rs`.)

const BIN: &str = env!("CARGO_BIN_EXE_redlock-sim");
/// Far above what an idle machine needs for a hop on loopback.
const SLACK: std::time::Duration = std::time::Duration::from_millis(400);

/// Runs `lab FILE --seed 1 -- CMD`; its `summary.json`.
fn lab_summary(file: &str, cmd: &[&str]) -> serde_json::Value {
    let dir = std::env::temp_dir().join(format!(
        "redlock-lab-sent-{}-{}",
        std::process::id(),
        file.len()
    ));
    let out = std::process::Command::new(BIN)
        .args(["lab", file, "--seed", "1", "--out"])
        .arg(&dir)
        .arg("--")
        .args(cmd)
        .output()
        .expect("the binary runs");
    assert!(
        matches!(out.status.code(), Some(0) | Some(1)),
        "lab failed: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(dir.join("summary.json")).expect("summary.json");
    let _ = std::fs::remove_dir_all(&dir);
    serde_json::from_str(&text).expect("summary.json parses")
}

/// The stale writes of `client`'s first acquisition:
/// `(how, sent_ms, superseded_ms, applied_ms)`.
fn stale_of(summary: &serde_json::Value, client: &str) -> Vec<(String, f64, f64, f64)> {
    let ms = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    summary["violations"]
        .as_array()
        .expect("violations")
        .iter()
        .filter(|v| v["kind"] == "stale_write")
        .filter(|v| v["writer"]["client"] == client && v["writer"]["acq"] == 1)
        .map(|v| {
            let how = v["how"].as_str().unwrap_or("").to_string();
            (
                how,
                ms(v, "sent_ms"),
                ms(v, "superseded_ms"),
                ms(v, "applied_ms"),
            )
        })
        .collect()
}

#[test]
fn a_write_a_slow_link_held_up_was_in_flight() {
    // c1's second write leaves at about 1.5 s, its link takes 3 s, c2
    // acquires at about 2 s when c1's keys expire: sent half a second
    // before, applied seconds after.
    let summary = lab_summary("scenarios/slow_link_stale_write.toml", &[BIN, "lab-client"]);
    let stale = stale_of(&summary, "c1");
    assert!(!stale.is_empty(), "no stale write of c1's: {summary:#}");
    for (how, sent, superseded, applied) in &stale {
        assert_eq!(how, "stale_in_flight", "{summary:#}");
        assert!(sent + 200.0 < *superseded, "{summary:#}");
        assert!(applied - sent > 2500.0, "{summary:#}");
    }
    assert!(summary["stale_in_flight"].as_u64() >= Some(1));
}

#[test]
fn a_stopped_clients_writes_were_sent_late() {
    // c1 is stopped 150 ms into its hold for 2.5 s, past its 1 s TTL; c2
    // acquires meanwhile; redis-py's Lock writes on when c1 wakes.
    let py = crate::runs::python();
    let cmd = [py.to_str().unwrap(), "drivers/python/redis_py_lock.py"];
    let summary = lab_summary("tests/data/lab/paused_client.toml", &cmd);
    let stale = stale_of(&summary, "c1");
    assert!(!stale.is_empty(), "no stale write of c1's: {summary:#}");
    for (how, sent, superseded, applied) in &stale {
        assert_eq!(how, "stale_sent_late", "{summary:#}");
        assert!(*sent > superseded + 500.0, "{summary:#}");
        assert!(applied - sent < SLACK.as_millis() as f64, "{summary:#}");
    }
}
