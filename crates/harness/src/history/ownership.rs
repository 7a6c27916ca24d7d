//! Who owns each lock, as the nodes show it: a client owns a resource
//! while the key it created (a `key_set` by it; the same token brought back
//! by replication or a restart is still its) is present on a majority of
//! the nodes (`redlock`), or on the node that is master (`single`: `n1`,
//! then each failover's new master). A crash empties a node until it is up
//! again with what its disk kept. The lab follows its runs with it and its
//! checker ([`crate::check::outside`]) replays histories with it.

use super::{Event, EventKind, FaultEvent};
use crate::scenario::Topology;
use std::collections::BTreeMap;

/// Who owns each resource, from the nodes' key events as they come: the
/// checker replays a history with it, and the lab follows its run with it
/// (`after = "c1:acquired"` counts from the first time it sees c1 own).
pub(crate) struct Ownership {
    topology: Topology,
    nodes: usize,
    /// Node → key → token.
    on: BTreeMap<String, BTreeMap<String, String>>,
    /// Token → the client that created it.
    made_by: BTreeMap<String, String>,
    /// Key → resource (`lock_key`; a key nobody named is its own resource).
    resource_of: BTreeMap<String, String>,
    /// The keys whose library sets a token of its own on each master
    /// (`lock_key ... owner=by_client`): owned by the client, not the token.
    by_client: std::collections::BTreeSet<String>,
    master: String,
    /// Resource → its owner now.
    now: BTreeMap<String, Option<String>>,
}

impl Ownership {
    pub(crate) fn new(topology: Topology, nodes: usize) -> Ownership {
        assert!(nodes >= 1, "ownership: a cluster without nodes");
        Ownership {
            topology,
            nodes,
            on: BTreeMap::new(),
            made_by: BTreeMap::new(),
            resource_of: BTreeMap::new(),
            by_client: Default::default(),
            master: "n1".to_string(),
            now: BTreeMap::new(),
        }
    }

    /// The same, with each of `resources` its own lock key until a
    /// `lock_key` names another.
    pub(crate) fn with_resources(mut self, resources: &[String]) -> Ownership {
        for r in resources {
            self.resource_of.insert(r.clone(), r.clone());
        }
        self
    }

    /// Every lock key known now.
    pub(crate) fn lock_keys(&self) -> Vec<String> {
        self.resource_of.keys().cloned().collect()
    }

    /// The lock keys `node` holds now, with their token, to follow its
    /// writes ([`super::keys::key_events`]); what that changes, [`Self::feed`]
    /// finds already done.
    pub(crate) fn keys_on(&mut self, node: &str) -> &mut BTreeMap<String, String> {
        self.on.entry(node.to_string()).or_default()
    }

    /// Takes the next event; returns the resources whose owner it changed,
    /// with their new owner.
    pub(crate) fn feed(&mut self, e: &Event) -> Vec<(String, Option<String>)> {
        let touched: Vec<String> = match &e.kind {
            EventKind::KeySet { key, token, by, .. } => {
                if let Some(c) = by {
                    self.made_by.insert(token.clone(), c.clone());
                }
                let on = self.on.entry(e.host.clone()).or_default();
                on.insert(key.clone(), token.clone());
                vec![key.clone()]
            }
            EventKind::KeyRemoved { key, .. } => {
                if let Some(on) = self.on.get_mut(&e.host) {
                    on.remove(key);
                }
                vec![key.clone()]
            }
            EventKind::Fault(FaultEvent::Crash { host, .. }) => {
                let gone = self.on.remove(host).unwrap_or_default();
                gone.into_keys().collect()
            }
            EventKind::Failover { new_master, .. } => {
                self.master = new_master.clone();
                self.on.values().flat_map(|k| k.keys().cloned()).collect()
            }
            EventKind::LockKey {
                resource,
                key,
                by_client,
            } => {
                self.resource_of.insert(key.clone(), resource.clone());
                if *by_client {
                    self.by_client.insert(key.clone());
                }
                vec![key.clone()]
            }
            _ => return vec![],
        };
        let mut changes = Vec::new();
        for key in touched {
            let owner = self.owner(&key);
            let resource = self.resource_of.get(&key).cloned().unwrap_or(key);
            let before = self.now.insert(resource.clone(), owner.clone());
            if before.flatten() != owner {
                changes.push((resource, owner));
            }
        }
        changes
    }

    /// The node that is master now (`single`; `n1` until a failover).
    pub(crate) fn master(&self) -> &str {
        &self.master
    }

    /// The token `client` holds `resource` with now, on the nodes (its
    /// key's value, or a hash's owner field): the one on the most nodes.
    pub(crate) fn token_of(&self, client: &str, resource: &str) -> Option<String> {
        let mut count: BTreeMap<&String, usize> = BTreeMap::new();
        for keys in self.on.values() {
            for (key, token) in keys {
                let r = self
                    .resource_of
                    .get(key)
                    .map_or(key.as_str(), |r| r.as_str());
                if r == resource && self.made_by.get(token).is_some_and(|c| c == client) {
                    *count.entry(token).or_default() += 1;
                }
            }
        }
        let best = count
            .into_iter()
            .max_by_key(|(t, n)| (*n, std::cmp::Reverse(*t)));
        best.map(|(t, _)| t.clone())
    }

    /// The owner of `key` now.
    fn owner(&self, key: &str) -> Option<String> {
        let token_on = |n: &str| self.on.get(n).and_then(|k| k.get(key));
        let token = match self.topology {
            Topology::Single => token_on(&self.master).cloned(),
            // A library whose token differs from master to master: the
            // client that set keys on a majority.
            Topology::Redlock if self.by_client.contains(key) => {
                let mut count: BTreeMap<&String, usize> = BTreeMap::new();
                for keys in self.on.values() {
                    if let Some(c) = keys.get(key).and_then(|t| self.made_by.get(t)) {
                        *count.entry(c).or_default() += 1;
                    }
                }
                let owner = count.into_iter().find(|(_, n)| *n > self.nodes / 2);
                return owner.map(|(c, _)| c.clone());
            }
            Topology::Redlock => {
                let mut count: BTreeMap<&String, usize> = BTreeMap::new();
                for keys in self.on.values() {
                    if let Some(t) = keys.get(key) {
                        *count.entry(t).or_default() += 1;
                    }
                }
                count
                    .into_iter()
                    .find(|(_, n)| *n > self.nodes / 2)
                    .map(|(t, _)| t.clone())
            }
        }?;
        self.made_by.get(&token).cloned()
    }
}
