//! The lab: a scenario run in real time against real client processes of
//! any language, its faults on the wall clock, judged from outside
//! (`redlock-sim lab`). The fault engine ([`redlock_engine`]) is the
//! simulation's; what differs is the world it acts on:
//! - [`run`]: one run (start, drive, stop); [`world`]: what a fault does
//!   to the lab's hosts; [`net`]: the links' fault state;
//! - [`link`]: the forwarder between one client and one server, where
//!   partitions and latencies act with TCP's behaviour;
//! - the sentinel is the shared [`redlock_node::sentinel`], served with one
//!   listener per client ([`redlock_node::sentinel::run_with_listeners`]);
//! - [`node`]: a node with its faults (crash with its persistence,
//!   restart, pause, clock), one port per peer so that it knows who wrote;
//! - [`store`]: the protected resource, and where drivers say what their
//!   library told them (`LOCKKEY`, `WRITE`, `HELD`, `RELEASED`);
//! - [`process`]: a client, the user's command in its own process group,
//!   paused, crashed and ended by signals, dying with the lab;
//! - [`clock`]: a node's clock, the simulation's clock model on real time;
//!   [`faketime`]: a client's, through libfaketime, and [`reach`]: whether
//!   libfaketime can reach the client's program at all;
//! - [`gate`]: the pause of an in-process host;
//! - [`sent`]: when a client sent each write, read by its link to the store;
//!   [`replies`]: the servers' replies to a client that say they could not
//!   run its command;
//! - [`redis`]: the nodes as real `redis-server` processes and the sentinel
//!   a real `redis-sentinel` (`--servers redis`), the history read from
//!   them; [`rewrite`]: the ports the links around a real sentinel rewrite;
//! - [`error`]: why a run could not be made or judged.

// What other crates use is `pub`; everything else is `pub(crate)` or less.
#![warn(unreachable_pub)]
// The docs are the developers'; `cargo doc --document-private-items`
// renders the private items they link to.
#![allow(rustdoc::private_intra_doc_links)]

pub(crate) mod clock;
pub mod driver;
pub(crate) mod error;
pub mod faketime;
pub(crate) mod gate;
pub mod link;
pub(crate) mod net;
pub(crate) mod node;
pub(crate) mod phases;
pub mod process;
pub mod reach;
pub(crate) mod record;
pub mod redis;
pub mod refuse;
pub(crate) mod replies;
pub(crate) mod rewrite;
pub mod run;
pub(crate) mod sent;
pub(crate) mod store;
pub(crate) mod world;

use std::future::Future;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

/// Accepts for as long as the caller's task lives, serving each connection
/// with `serve` in a task that ends with this one. A failed accept (out of
/// descriptors, say) is tried again shortly.
async fn accept_each<F>(listener: TcpListener, mut serve: impl FnMut(TcpStream) -> F)
where
    F: Future<Output = ()> + Send + 'static,
{
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            biased;
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else {
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    continue;
                };
                let _ = stream.set_nodelay(true);
                conns.spawn(serve(stream));
            }
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
}
