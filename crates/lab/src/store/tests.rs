//! The lab's store: fencing as the simulation's store has it, the client
//! taken from the port, bad commands answered and reported, a Redis client
//! library's handshake, a pause that holds writes.

use crate::store::{Sink, Store, StoreEvent};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const SLACK: Duration = Duration::from_millis(400);

async fn store() -> (Store, Arc<Mutex<Vec<StoreEvent>>>) {
    let seen: Arc<Mutex<Vec<StoreEvent>>> = Arc::default();
    let log = seen.clone();
    let sink: Sink = Arc::new(move |e| log.lock().unwrap().push(e));
    let clients = vec!["c1".to_string(), "c2".to_string()];
    (Store::start(&clients, sink).await.unwrap(), seen)
}

/// A connection of the `redis` crate, as a Rust driver would open it.
async fn redis(store: &Store, client: &str) -> redis::aio::MultiplexedConnection {
    let url = format!("redis://{}/", store.addr(client).unwrap());
    let c = redis::Client::open(url).unwrap();
    c.get_multiplexed_async_connection().await.unwrap()
}

async fn call(c: &mut redis::aio::MultiplexedConnection, args: &[&str]) -> Result<String, String> {
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    cmd.query_async::<String>(c)
        .await
        .map_err(|e| e.to_string())
}

fn write(client: &str, fence: Option<u64>, applied: bool, highest: u64) -> StoreEvent {
    StoreEvent::Write {
        client: client.into(),
        resource: "lock".into(),
        fence,
        applied,
        highest,
        // Straight to the store, through no link: no send time.
        sent: None,
    }
}

#[tokio::test]
async fn a_write_with_a_lower_fence_is_rejected_and_every_write_is_reported() {
    let (store, seen) = store().await;
    let mut c1 = redis(&store, "c1").await;
    let mut c2 = redis(&store, "c2").await;
    assert_eq!(
        call(&mut c1, &["WRITE", "c1", "lock", "5"]).await.unwrap(),
        "OK"
    );
    let refused = call(&mut c2, &["WRITE", "c2", "lock", "3"])
        .await
        .unwrap_err();
    assert!(refused.contains("REJECTED"), "{refused}");
    assert_eq!(
        call(&mut c2, &["WRITE", "c2", "lock", "5"]).await.unwrap(),
        "OK"
    );
    assert_eq!(call(&mut c1, &["WRITE", "c1", "lock"]).await.unwrap(), "OK");
    assert_eq!(
        call(&mut c1, &["HELD", "c1", "lock", "900"]).await.unwrap(),
        "OK"
    );
    assert_eq!(
        call(&mut c1, &["RELEASED", "c1", "lock"]).await.unwrap(),
        "OK"
    );
    assert_eq!(
        call(&mut c1, &["LOCKKEY", "lock", "{lock}:x"])
            .await
            .unwrap(),
        "OK"
    );
    assert_eq!(
        call(&mut c1, &["LOCKKEY", "lock", "lock", "byclient"])
            .await
            .unwrap(),
        "OK"
    );
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![
            write("c1", Some(5), true, 0),
            write("c2", Some(3), false, 5),
            write("c2", Some(5), true, 5),
            write("c1", None, true, 5),
            StoreEvent::Held {
                client: "c1".into(),
                resource: "lock".into(),
                valid_ms: 900,
                sent: None,
            },
            StoreEvent::Released {
                client: "c1".into(),
                resource: "lock".into(),
                sent: None,
            },
            StoreEvent::LockKey {
                client: "c1".into(),
                resource: "lock".into(),
                key: "{lock}:x".into(),
                by_client: false,
            },
            StoreEvent::LockKey {
                client: "c1".into(),
                resource: "lock".into(),
                key: "lock".into(),
                by_client: true,
            },
        ]
    );
}

#[tokio::test]
async fn a_bad_command_is_answered_and_reported_and_the_connection_goes_on() {
    let (store, seen) = store().await;
    let mut c1 = redis(&store, "c1").await;
    for (args, says) in [
        (
            &["WRITE", "c2", "lock"][..],
            "names client 'c2' on c1's connection",
        ),
        (
            &["WRITE", "c1"][..],
            "usage WRITE <client> <resource> [<fence>]",
        ),
        (
            &["HELD", "c1", "lock", "soon"][..],
            "valid_ms 'soon' is not a whole number",
        ),
        (
            &["WRITE", "c1", "lock", "-1"][..],
            "fence '-1' is not a whole number",
        ),
        (
            &["LOCKKEY", "lock", "lock", "bytoken"][..],
            "usage LOCKKEY <resource> <key> [BYCLIENT]",
        ),
    ] {
        let e = call(&mut c1, args).await.unwrap_err();
        assert!(e.contains(says), "{args:?}: {e}");
    }
    assert_eq!(call(&mut c1, &["PING"]).await.unwrap(), "PONG");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 5);
    assert!(seen
        .iter()
        .all(|e| matches!(e, StoreEvent::Bad { client, .. } if client == "c1")));
}

#[tokio::test]
async fn a_paused_store_applies_the_writes_it_holds_when_it_resumes() {
    let (store, seen) = store().await;
    let mut c1 = redis(&store, "c1").await;
    store.set_paused(true);
    let pending = tokio::spawn(async move { call(&mut c1, &["WRITE", "c1", "lock"]).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(seen.lock().unwrap().is_empty(), "applied while paused");
    store.set_paused(false);
    let reply = tokio::time::timeout(SLACK, pending)
        .await
        .expect("no reply after the resume");
    assert_eq!(reply.unwrap().unwrap(), "OK");
    assert_eq!(
        seen.lock().unwrap().clone(),
        vec![write("c1", None, true, 0)]
    );
}

#[tokio::test]
async fn a_client_that_floods_the_store_is_refused_past_its_share_and_reported_once() {
    use crate::store::MAX_COMMANDS;
    let (store, seen) = store().await;
    let mut c1 = redis(&store, "c1").await;
    let extra = 3;
    let mut left = MAX_COMMANDS + extra;
    while left > 0 {
        let n = left.min(10_000);
        let mut pipe = redis::pipe();
        for _ in 0..n {
            pipe.cmd("WRITE").arg("c1").arg("lock").ignore();
        }
        // The refusals past the share are error replies: the pipeline errs.
        let _ = pipe.query_async::<()>(&mut c1).await;
        left -= n;
    }
    // c2 is not c1: its share is its own.
    let mut c2 = redis(&store, "c2").await;
    assert_eq!(call(&mut c2, &["WRITE", "c2", "lock"]).await.unwrap(), "OK");
    let seen = seen.lock().unwrap();
    let applied = seen
        .iter()
        .filter(|e| matches!(e, StoreEvent::Write { client, .. } if client == "c1"))
        .count() as u64;
    assert_eq!(applied, MAX_COMMANDS, "the share is applied, no more");
    let floods: Vec<&StoreEvent> = seen
        .iter()
        .filter(|e| matches!(e, StoreEvent::Bad { error, .. } if error.contains("flood")))
        .collect();
    assert_eq!(floods.len(), 1, "reported once: {floods:?}");
}
