//! `CLUSTER` and the cluster-only commands against a real `redis-server`
//! (7.0.15, cluster support disabled), under RESP2 and RESP3: rueidis
//! sends `CLUSTER SLOTS` at connect and reads the error as a single node.

use crate::common::{self, start_redis, start_sim_node};
use crate::transcript::{on, run, same};

async fn cluster(proto: u8) {
    let servers = start_redis(1);
    let node = start_sim_node().await;
    let steps: Vec<_> = [
        "CLUSTER SLOTS",
        "CLUSTER SHARDS",
        "CLUSTER NODES",
        "CLUSTER INFO",
        "CLUSTER MYID",
        "CLUSTER KEYSLOT a",
        "CLUSTER HELP",
        "CLUSTER NOSUCH",
        "CLUSTER",
        "CLUSTER SLOTS x",
        "CLUSTER KEYSLOT",
        "CLUSTER SETSLOT 1",
        "READONLY",
        "READWRITE",
        "ASKING",
        "READONLY x",
    ]
    .iter()
    .map(|c| on(0, c))
    .collect();
    let hello = (proto == 3).then_some("HELLO 3");
    let r = run(&servers[0].addr(), 1, hello, &steps).await;
    let n = run(&node, 1, hello, &steps).await;
    same(&r, &n, &format!("CLUSTER, RESP{proto}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_commands_resp2() {
    common::require_redis("cluster_commands_resp2");
    cluster(2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_commands_resp3() {
    common::require_redis("cluster_commands_resp3");
    cluster(3).await;
}
