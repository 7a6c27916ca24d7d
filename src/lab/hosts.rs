//! The hosts of one running lab run, as the faults act on them: the
//! scenario, the history, the links, the nodes, the store, the clients'
//! processes, the master's name, and the plan of faults.

use super::faketime::FakeClock;
use super::net::LabNet;
use super::node::NodeHost;
use super::plan::Plan;
use super::process::ClientProcess;
use super::record::LabRecorder;
use super::store::Store;
use crate::scenario::Scenario;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

pub struct Hosts {
    pub s: Scenario,
    pub rec: LabRecorder,
    pub net: LabNet,
    pub nodes: BTreeMap<String, NodeHost>,
    pub store: Store,
    pub clients: BTreeMap<String, ClientProcess>,
    /// The clocks libfaketime gives clients, for those that have one.
    pub clocks: BTreeMap<String, FakeClock>,
    /// The master's name (the `single` topology; `n1` for `redlock`).
    pub master: Arc<Mutex<String>>,
    pub faults: Plan,
}
