//! Pub/sub against a real `redis-server` (7.0.15), under RESP2 and RESP3,
//! as transcripts of four connections ([`crate::transcript`]):
//! `SUBSCRIBE`/`PSUBSCRIBE` and their confirmations and counts, `PUBLISH`
//! to channel and pattern subscribers (its count; a client subscribed
//! both ways gets both), `UNSUBSCRIBE`/`PUNSUBSCRIBE` of some, of all and
//! of none, RESP2's subscribed mode (the commands refused and the words,
//! `PING`'s form, an unknown command or subcommand, a wrong arity, `QUIT`),
//! RESP3's push frames (a client that publishes to itself gets the
//! message before the count), `PUBSUB CHANNELS|NUMSUB|NUMPAT`, `RESET`, a
//! script that publishes (Redisson's unlock) or may not subscribe, and
//! what a departed subscriber leaves.

use crate::common::{self, start_redis, start_sim_node};
use crate::transcript::{eval, on, on_all, run, same, Step};

/// Redisson's release: delete the lock and announce it on its channel.
const REDISSON_UNLOCK: &str = "if (redis.call('exists', KEYS[1]) == 0) then return nil; end; \
     redis.call('del', KEYS[1]); redis.call('publish', KEYS[2], ARGV[1]); return 1;";

fn steps() -> Vec<Step> {
    vec![
        on(0, "SUBSCRIBE ch1 ch2 ch1"),
        on(2, "PSUBSCRIBE ch* other?"),
        on(1, "PUBLISH ch1 hello"),
        on(1, "PUBLISH ch3 three"),
        on(1, "PUBLISH otherX x"),
        on(1, "PUBLISH nobody x"),
        on(0, "GET x"),
        on(0, "SET x 1"),
        on(0, "PING hi"),
        on(0, "PING a b"),
        on(0, "CLIENT GETNAME"),
        on(0, "CLIENT NOSUCH"),
        on(0, "CLIENT GETNAME x"),
        on(0, "NOSUCH cmd"),
        on(0, "GET"),
        on(0, "SUBSCRIBE"),
        on(0, "EVAL return 1 0"),
        on(0, "PUBLISH ch1 x"),
        on(1, "PUBSUB CHANNELS ch1"),
        on(1, "PUBSUB CHANNELS nomatch*"),
        on(1, "PUBSUB NUMSUB ch1 ch2 nope"),
        on(1, "PUBSUB NUMSUB"),
        on(1, "PUBSUB NUMPAT"),
        on(1, "PUBSUB NUMPAT x"),
        on(1, "PUBSUB CHANNELS a b"),
        on(1, "PUBSUB NOSUCH"),
        on(1, "PUBSUB"),
        on(1, "PUBSUB SHARDCHANNELS"),
        on(1, "PUBLISH ch1"),
        on(0, "PSUBSCRIBE ch?"),
        on(1, "PUBLISH ch2 both"),
        on(0, "PUNSUBSCRIBE"),
        on(0, "UNSUBSCRIBE ch1 nope"),
        on(1, "PUBLISH ch1 gone"),
        on(0, "UNSUBSCRIBE"),
        on(0, "UNSUBSCRIBE"),
        on(0, "PUNSUBSCRIBE"),
        on(0, "GET x"),
        on(0, "PING"),
        on(2, "PUNSUBSCRIBE other?"),
        on(2, "PUNSUBSCRIBE x y"),
        on(1, "PUBSUB NUMPAT"),
        // RESET leaves subscribed mode.
        on(3, "SUBSCRIBE r"),
        on(3, "RESET"),
        on(1, "PUBLISH r x"),
        on(1, "PUBSUB NUMSUB r"),
        on(3, "GET x"),
        // Scripts: Redisson's unlock publishes; a script may not subscribe.
        on(0, "SUBSCRIBE redisson_lock__channel:{lk}"),
        on(1, "SET lk owner"),
        Step::Send(
            1,
            vec![eval(
                REDISSON_UNLOCK,
                &["lk", "redisson_lock__channel:{lk}"],
                &["0"],
            )],
        ),
        Step::Send(
            1,
            vec![eval("return redis.call('subscribe','x')", &[], &[])],
        ),
        Step::Send(1, vec![eval("return redis.pcall('unsubscribe')", &[], &[])]),
        Step::Send(1, vec![eval("return redis.call('reset')", &[], &[])]),
        Step::Send(
            1,
            vec![eval(
                "return redis.call('pubsub','numsub','redisson_lock__channel:{lk}')",
                &[],
                &[],
            )],
        ),
        // A subscriber that leaves is no longer counted.
        Step::Close(0),
        Step::Sleep(50),
        on(1, "PUBLISH redisson_lock__channel:{lk} 0"),
        on(1, "PUBSUB NUMSUB redisson_lock__channel:{lk}"),
        on(2, "QUIT"),
    ]
}

/// RESP3 only: a client may publish to itself and run anything while
/// subscribed.
fn resp3_steps() -> Vec<Step> {
    vec![
        on(1, "SUBSCRIBE me"),
        on(1, "PUBLISH me hi"),
        on(1, "SET x 1"),
        on(1, "GET x"),
        on_all(1, &["PSUBSCRIBE m*", "PUBLISH me twice"]),
        on(3, "PUBLISH me other"),
        on(1, "RESET"),
        on(3, "PUBLISH me after"),
    ]
}

async fn pubsub(proto: u8) {
    let servers = start_redis(1);
    let node = start_sim_node().await;
    let hello = (proto == 3).then_some("HELLO 3");
    let mut script = steps();
    if proto == 3 {
        script.extend(resp3_steps());
    }
    let r = run(&servers[0].addr(), 4, hello, &script).await;
    let n = run(&node, 4, hello, &script).await;
    same(&r, &n, &format!("pub/sub, RESP{proto}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pubsub_resp2() {
    common::require_redis("pubsub_resp2");
    pubsub(2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pubsub_resp3() {
    common::require_redis("pubsub_resp3");
    pubsub(3).await;
}
