//! The sentinel shows each kind of client the master at the address that
//! client reaches it through (the lab gives every client links of its own).

use redlock_node::sentinel::answer::Translate;
use redlock_node::sentinel::{run_with_listeners, SentinelConfig};
use redlock_proto::clock::SystemClock;
use redlock_proto::resp::{Connection, Frame};
use redlock_proto::transport::TcpConnector;
use std::sync::Arc;

async fn ask(addr: std::net::SocketAddr) -> Frame {
    let s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut c = Connection::new(s);
    let q = Frame::command(["SENTINEL", "get-master-addr-by-name", "mymaster"]);
    c.write_frame(&q).await.unwrap();
    c.read_frame().await.unwrap()
}

#[tokio::test]
async fn each_listener_shows_the_master_through_its_own_translation() {
    let (l1, l2) = (
        tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap(),
        tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap(),
    );
    let (a1, a2) = (l1.local_addr().unwrap(), l2.local_addr().unwrap());
    let via = |port: u16| -> Translate {
        Arc::new(move |node: &str| {
            assert_eq!(node, "127.0.0.1:1", "the monitor's own address of n1");
            format!("127.0.0.1:{port}")
        })
    };
    let cfg = SentinelConfig {
        nodes: vec!["127.0.0.1:1".into(), "127.0.0.1:2".into()],
        master: "127.0.0.1:1".into(),
        failover_after: None,
        clock: Arc::new(SystemClock::new()),
        connector: Arc::new(TcpConnector),
        on_failover: Arc::new(|_: &str, _: &str| {}),
        seed: 1,
        on_event: None,
    };
    tokio::spawn(run_with_listeners(
        cfg,
        vec![(l1, via(1001)), (l2, via(2002))],
    ));
    let shown = |port: &str| Frame::Array(vec![Frame::bulk("127.0.0.1"), Frame::bulk(port)]);
    assert_eq!(ask(a1).await, shown("1001"));
    assert_eq!(ask(a2).await, shown("2002"));
    assert_eq!(ask(a1).await, shown("1001"));
}
