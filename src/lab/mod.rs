//! The lab: a scenario run in real time against real client processes of
//! any language, its faults on the wall clock, judged from outside
//! (`redlock-sim lab`, issue 22). Built piece by piece; so far:
//! - [`link`]: the forwarder between one client and one server, where
//!   partitions and latencies act with TCP's behaviour.

pub mod link;
