//! The node runs the resurrecting extension of the `extend-resurrects`
//! variant (`clients.variant`) natively; it must answer as `redis-server`
//! running the Lua does. The variants' scenarios are in `tests/sim/variants.rs`.

use crate::common;

use redlock_client::scripts::EXTEND_RESURRECT;
use redlock_proto::resp::Frame;

/// The node runs the resurrecting extension of `extend-resurrects` natively:
/// it must answer (and leave the key) as Redis 7.0 running the Lua does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resurrecting_extend_script_matches_redis() {
    common::require_redis("resurrecting_extend_script_matches_redis");
    let server = common::start_redis(1);
    let node = common::start_sim_node().await;
    let mut clients = [
        common::Client::connect(&server[0].addr()).await,
        common::Client::connect(&node).await,
    ];
    // (setup, script arguments after `EVAL body`)
    let cases: &[(&[&str], &[&str])] = &[
        (&[], &["1", "k", "tok", "5000"]), // missing: re-created
        (&["SET", "k", "tok"], &["1", "k", "tok", "5000"]), // ours: extended
        (&["SET", "k", "other"], &["1", "k", "tok", "5000"]), // theirs: -1
        (&[], &["1", "k", "tok", "0"]),    // missing, bad PX: error
        (&["SET", "k", "tok"], &["1", "k", "tok", "x"]), // ours, bad PX: error
        (&[], &["1", "k", "tok"]),         // missing, no PX: error
        (&["SET", "k", "tok"], &["1", "k"]), // no token: -1
        (&[], &["1", "k"]),                // missing, no token: error
        (&[], &["0"]),                     // no key: error
    ];
    for (setup, args) in cases {
        let mut replies = Vec::new();
        for c in clients.iter_mut() {
            c.call(&["FLUSHALL"]).await;
            if !setup.is_empty() {
                c.call(setup).await;
            }
            let mut cmd = vec!["EVAL", EXTEND_RESURRECT];
            cmd.extend_from_slice(args);
            let reply = c.call(&cmd).await;
            let value = c.call(&["GET", "k"]).await;
            let has_ttl = match c.call(&["PTTL", "k"]).await {
                Frame::Integer(ms) => ms > 0,
                other => panic!("PTTL: {other:?}"),
            };
            // Error replies name the script's SHA1 and line: compare whole.
            replies.push((reply, value, has_ttl));
        }
        assert_eq!(
            replies[0], replies[1],
            "setup {setup:?}, EVAL {args:?}: redis vs node"
        );
    }
}
