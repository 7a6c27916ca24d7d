//! Lock + unlock round trips per second against five local `redis-server`
//! processes, with the real client on real TCP: one task in a loop, and 16
//! tasks each on its own resource. `cargo bench --bench real_redis`.

use redlock_client::{Config, Redlock};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[path = "../tests/support/mod.rs"]
mod common;

async fn loop_for(client: Arc<Redlock>, resource: String, d: Duration) -> u64 {
    let start = Instant::now();
    let mut n = 0;
    while start.elapsed() < d {
        let lock = client
            .lock(&resource, Duration::from_secs(10))
            .await
            .unwrap();
        client.unlock(&lock).await;
        n += 1;
    }
    n
}

fn main() {
    common::require_redis("real_redis bench");
    let servers = common::start_redis(5);
    let addrs: Vec<String> = servers.iter().map(|s| s.addr()).collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let d = Duration::from_secs(3);
    rt.block_on(async {
        let one = Arc::new(Redlock::connect_tcp(addrs.clone(), Config::default()));
        loop_for(one.clone(), "warmup".into(), Duration::from_millis(300)).await;
        let n = loop_for(one, "bench".into(), d).await;
        let single = n as f64 / d.as_secs_f64();
        println!(
            "1 task, 5 servers: {single:.0} lock+unlock/s ({:.1} µs each)",
            1e6 / single
        );
        let tasks: Vec<_> = (0..16)
            .map(|i| {
                let c = Arc::new(Redlock::connect_tcp(addrs.clone(), Config::default()));
                tokio::spawn(loop_for(c, format!("bench-{i}"), d))
            })
            .collect();
        let mut total = 0;
        for t in tasks {
            total += t.await.unwrap();
        }
        let many = total as f64 / d.as_secs_f64();
        println!(
            "16 tasks, 5 servers: {many:.0} lock+unlock/s ({:.1}x one task)",
            many / single
        );
    });
}
