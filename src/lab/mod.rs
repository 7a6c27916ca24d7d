//! The lab: a scenario run in real time against real client processes of
//! any language, its faults on the wall clock, judged from outside
//! (`redlock-sim lab`, issue 22). Built piece by piece; so far:
//! - [`link`]: the forwarder between one client and one server, where
//!   partitions and latencies act with TCP's behaviour;
//! - the sentinel is the shared [`crate::sentinel`], served with one
//!   listener per client ([`crate::sentinel::run_with_listeners`]);
//! - [`node`]: a node with its faults (crash with its persistence,
//!   restart, pause, clock), one port per peer so that it knows who wrote;
//! - [`store`]: the protected resource, and where drivers say what their
//!   library told them (`LOCKKEY`, `WRITE`, `HELD`, `RELEASED`);
//! - [`process`]: a client, the user's command in its own process group,
//!   paused, crashed and ended by signals, dying with the lab;
//! - [`clock`]: a node's clock, the simulation's clock model on real time;
//! - [`gate`]: the pause of an in-process host.

pub mod clock;
pub mod gate;
pub mod link;
pub mod node;
pub mod process;
pub mod store;
