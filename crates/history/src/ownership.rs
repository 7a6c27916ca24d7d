//! Who owns each lock, as the nodes show it. A client owns a resource while
//! its lock key carries the client's *mark* ([`super::keys`]: a string's
//! value, a hash's field, a sorted set's member whose score has not
//! passed) on a majority of the nodes (`redlock`), or on the node that is
//! master (`single`: `n1`, then each failover's new master). A mark is the
//! client's when its command made it (`by=`), or, when it came by
//! replication or a restart, when the client made that token before; a
//! token several clients made (Symfony's `__write__` member) is nobody's.
//! Two clients' marks at once (a lock granted twice): the later grant owns.
//!
//! A resource's lock keys are those its drivers named (`LOCKKEY`), or,
//! until one is named, the resource's name; a lock kept under several keys
//! (rueidislock's three, of which it needs two) is held on a node by the
//! client whose marks are on a majority of them. A `key_expired` ends a mark at the
//! instant it ran out; a crash empties a node until it is up again with
//! what its disk kept. The lab follows its runs with it, and its checker
//! (`redlock_check::outside`) replays histories with it.

use super::keys::Shape;
use super::{Event, EventKind, FaultEvent};
use redlock_scenario::Topology;
use std::collections::{BTreeMap, BTreeSet};

/// One mark on one node: whose it is, and when it was made (the order of
/// the events that made the marks).
#[derive(Clone, Debug)]
struct Mark {
    client: Option<String>,
    order: u64,
}

/// Who owns each resource, from the nodes' key events as they come: the
/// checker replays a history with it, and the lab follows its run with it
/// (`after = "c1:acquired"` counts from the first time it sees c1 own).
pub struct Ownership {
    topology: Topology,
    nodes: usize,
    /// Node → key → mark → whose.
    on: BTreeMap<String, BTreeMap<String, BTreeMap<String, Mark>>>,
    /// Token → the client that made it (`None`: several did).
    made_by: BTreeMap<String, Option<String>>,
    /// Resource → its lock keys, in the order named.
    keys_of: BTreeMap<String, Vec<String>>,
    /// Resources whose keys a driver named (the resource's own name is no
    /// longer one of them, unless named).
    named: BTreeSet<String>,
    /// The keys whose library sets a token of its own on each master
    /// (`lock_key ... owner=by_client`): owned by the client, not the token.
    by_client: BTreeSet<String>,
    master: String,
    /// Resource → its owner now.
    now: BTreeMap<String, Option<String>>,
    /// Events fed so far: the order of marks.
    fed: u64,
}

impl Ownership {
    pub fn new(topology: Topology, nodes: usize) -> Ownership {
        assert!(nodes >= 1, "ownership: a cluster without nodes");
        Ownership {
            topology,
            nodes,
            on: BTreeMap::new(),
            made_by: BTreeMap::new(),
            keys_of: BTreeMap::new(),
            named: BTreeSet::new(),
            by_client: BTreeSet::new(),
            master: "n1".to_string(),
            now: BTreeMap::new(),
            fed: 0,
        }
    }

    /// The same, with each of `resources` its own lock key until a
    /// `lock_key` names another.
    pub fn with_resources(mut self, resources: &[String]) -> Ownership {
        for r in resources {
            self.keys_of.insert(r.clone(), vec![r.clone()]);
        }
        self
    }

    /// Every lock key known now, sorted.
    pub fn lock_keys(&self) -> Vec<String> {
        let keys: BTreeSet<&String> = self.keys_of.values().flatten().collect();
        keys.into_iter().cloned().collect()
    }

    /// The resource `key` locks, if it is a lock key.
    fn resource_of(&self, key: &str) -> Option<&String> {
        self.keys_of
            .iter()
            .find(|(_, keys)| keys.iter().any(|k| k == key))
            .map(|(r, _)| r)
    }

    /// Takes the next event; returns the resources whose owner it changed,
    /// with their new owner.
    pub fn feed(&mut self, e: &Event) -> Vec<(String, Option<String>)> {
        self.fed += 1;
        let touched: Vec<String> = match &e.kind {
            EventKind::KeySet {
                key,
                shape,
                token,
                by,
                ..
            } => {
                self.adopt(key);
                self.made(token, by.as_deref());
                let client = by
                    .clone()
                    .or_else(|| self.made_by.get(token).cloned().flatten());
                let marks = self.marks_on(&e.host, key);
                if *shape == Shape::String {
                    marks.clear();
                }
                let mark = Mark {
                    client,
                    order: self.fed,
                };
                self.marks_on(&e.host, key).insert(token.clone(), mark);
                vec![key.clone()]
            }
            EventKind::KeyRemoved { key, mark, .. } | EventKind::KeyExpired { key, mark, .. } => {
                self.unmark(&e.host, key, mark.as_ref().map(|(_, m)| m.as_str()));
                vec![key.clone()]
            }
            EventKind::Fault(FaultEvent::Crash { host, .. }) => {
                let gone = self.on.remove(host).unwrap_or_default();
                gone.into_keys().collect()
            }
            EventKind::Failover { new_master, .. } => {
                self.master = new_master.clone();
                self.lock_keys()
            }
            EventKind::LockKey {
                resource,
                key,
                by_client,
            } => {
                self.name_key(resource, key);
                if *by_client {
                    self.by_client.insert(key.clone());
                }
                self.lock_keys()
            }
            _ => return vec![],
        };
        self.changes(touched)
    }

    /// A key no resource lists is a resource of its own (a history
    /// replayed without the scenario's resources), unless a driver named
    /// another key for the resource of its name.
    fn adopt(&mut self, key: &str) {
        if self.resource_of(key).is_none() && !self.named.contains(key) {
            self.keys_of.insert(key.to_string(), vec![key.to_string()]);
        }
    }

    /// `token` made by `by` (a client, or unknown).
    fn made(&mut self, token: &str, by: Option<&str>) {
        let Some(c) = by else { return };
        match self.made_by.get(token) {
            None => {
                self.made_by.insert(token.to_string(), Some(c.to_string()));
            }
            Some(Some(other)) if other != c => {
                self.made_by.insert(token.to_string(), None);
            }
            Some(_) => {}
        }
    }

    fn marks_on(&mut self, node: &str, key: &str) -> &mut BTreeMap<String, Mark> {
        let keys = self.on.entry(node.to_string()).or_default();
        keys.entry(key.to_string()).or_default()
    }

    /// Removes one mark of `key` on `node` (`None`: the whole key).
    fn unmark(&mut self, node: &str, key: &str, mark: Option<&str>) {
        let Some(keys) = self.on.get_mut(node) else {
            return;
        };
        match mark {
            None => {
                keys.remove(key);
            }
            Some(m) => {
                if let Some(marks) = keys.get_mut(key) {
                    marks.remove(m);
                    if marks.is_empty() {
                        keys.remove(key);
                    }
                }
            }
        }
    }

    /// A driver named `key` as `resource`'s: the resource's own name stops
    /// being one of its keys, unless named too.
    fn name_key(&mut self, resource: &str, key: &str) {
        let keys = self.keys_of.entry(resource.to_string()).or_default();
        if self.named.insert(resource.to_string()) {
            keys.clear();
        }
        if !keys.iter().any(|k| k == key) {
            keys.push(key.to_string());
        }
    }

    /// The resources of `touched` keys whose owner changed.
    fn changes(&mut self, touched: Vec<String>) -> Vec<(String, Option<String>)> {
        let mut resources: Vec<String> = touched
            .iter()
            .filter_map(|k| self.resource_of(k).cloned())
            .collect();
        resources.sort();
        resources.dedup();
        let mut changes = Vec::new();
        for resource in resources {
            let owner = self.owner_of(&resource);
            // An owner holds the lock with a token of its own on some node.
            if let Some(c) = &owner {
                assert!(
                    self.token_of(c, &resource).is_some(),
                    "ownership: {c} owns {resource} with no token of its own"
                );
            }
            let before = self.now.insert(resource.clone(), owner.clone());
            if before.flatten() != owner {
                changes.push((resource, owner));
            }
        }
        changes
    }

    /// The node that is master now (`single`; `n1` until a failover).
    pub fn master(&self) -> &str {
        &self.master
    }

    /// The token `client` holds `resource` with now, on the nodes: of its
    /// marks, one no other client made (not Symfony's shared `__write__`
    /// beside its token) before one that another did, then the one on the
    /// most nodes.
    pub fn token_of(&self, client: &str, resource: &str) -> Option<String> {
        let keys = self.keys_of.get(resource)?;
        let mut count: BTreeMap<&String, usize> = BTreeMap::new();
        for marks in self
            .on
            .values()
            .flat_map(|k| keys.iter().filter_map(|key| k.get(key)))
        {
            for (token, m) in marks {
                if m.client.as_deref() == Some(client) {
                    *count.entry(token).or_default() += 1;
                }
            }
        }
        let alone = |t: &str| {
            self.made_by
                .get(t)
                .is_some_and(|by| by.as_deref() == Some(client))
        };
        let best = count
            .into_iter()
            .max_by_key(|(t, n)| (alone(t), *n, std::cmp::Reverse(*t)));
        best.map(|(t, _)| t.clone())
    }

    /// The owner of `resource` now: the client holding it on the master
    /// (`single`) or on a majority of the nodes (`redlock`), where a client
    /// holds it on a node when its marks are on a majority of the
    /// resource's keys there (one key: that key). Counted by token, or by
    /// client for a library whose token differs per master (`BYCLIENT`).
    /// Several at once: the latest grant.
    pub(crate) fn owner_of(&self, resource: &str) -> Option<String> {
        let keys = self.keys_of.get(resource)?;
        let by_client = keys.iter().any(|k| self.by_client.contains(k));
        match self.topology {
            Topology::Single => {
                let held = self.held_on(&self.master, keys, false);
                let latest = held.into_iter().max_by_key(|(_, o)| *o);
                latest.map(|((_, client), _)| client)
            }
            Topology::Redlock => {
                // Candidate → (nodes, latest order).
                let mut count: BTreeMap<(String, String), (usize, u64)> = BTreeMap::new();
                for node in self.on.keys() {
                    for (who, order) in self.held_on(node, keys, by_client) {
                        let e = count.entry(who).or_insert((0, 0));
                        e.0 += 1;
                        e.1 = e.1.max(order);
                    }
                }
                let on_majority = count.into_iter().filter(|(_, (n, _))| *n > self.nodes / 2);
                on_majority
                    .max_by_key(|(_, (_, o))| *o)
                    .map(|((_, client), _)| client)
            }
        }
    }

    /// Who holds `keys` on `node`: each (token, client) (or with
    /// `by_client`, each ("", client)) whose marks are on a majority of
    /// `keys` there, with its latest mark's order. A token counts as one
    /// candidate only with the client that made it: a token several
    /// clients set (Symfony's `__write__`) is one candidate per client.
    fn held_on(
        &self,
        node: &str,
        keys: &[String],
        by_client: bool,
    ) -> BTreeMap<(String, String), u64> {
        let mut seen: BTreeMap<(String, String), (usize, u64)> = BTreeMap::new();
        let Some(on) = self.on.get(node) else {
            return BTreeMap::new();
        };
        for marks in keys.iter().filter_map(|k| on.get(k)) {
            // Each candidate once per key.
            let mut here: BTreeMap<(String, String), u64> = BTreeMap::new();
            for (token, m) in marks {
                let Some(c) = &m.client else { continue };
                let token = if by_client {
                    String::new()
                } else {
                    token.clone()
                };
                let e = here.entry((token, c.clone())).or_insert(0);
                *e = (*e).max(m.order);
            }
            for (who, order) in here {
                let e = seen.entry(who).or_insert((0, 0));
                e.0 += 1;
                e.1 = e.1.max(order);
            }
        }
        seen.into_iter()
            .filter(|(_, (n, _))| *n > keys.len() / 2)
            .map(|(who, (_, o))| (who, o))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn ev(host: &str, kind: EventKind) -> Event {
        Event {
            time: Duration::ZERO,
            host: host.into(),
            kind,
        }
    }

    fn set(shape: Shape, key: &str, token: &str, by: Option<&str>) -> EventKind {
        EventKind::KeySet {
            key: key.into(),
            shape,
            token: token.into(),
            expires_at: None,
            by: by.map(str::to_string),
        }
    }

    fn resources() -> Vec<String> {
        vec!["lock".to_string()]
    }

    #[test]
    fn a_string_hash_field_and_sorted_set_member_are_each_a_mark() {
        for shape in [Shape::String, Shape::Hash, Shape::ZSet] {
            let mut o = Ownership::new(Topology::Single, 1).with_resources(&resources());
            let got = o.feed(&ev("n1", set(shape, "lock", "t1", Some("c1"))));
            assert_eq!(got, vec![("lock".into(), Some("c1".into()))], "{shape:?}");
            let expired = EventKind::KeyExpired {
                key: "lock".into(),
                mark: (shape != Shape::String).then(|| (shape, "t1".to_string())),
                expires_at: Some(5),
            };
            assert_eq!(o.feed(&ev("n1", expired)), vec![("lock".into(), None)]);
        }
    }

    #[test]
    fn a_token_several_clients_made_is_nobodys_and_the_later_grant_owns() {
        let mut o = Ownership::new(Topology::Redlock, 3).with_resources(&resources());
        // Symfony on three masters: c1's token and the shared `__write__`.
        for n in ["n1", "n2"] {
            o.feed(&ev(n, set(Shape::ZSet, "lock", "tok1", Some("c1"))));
            o.feed(&ev(n, set(Shape::ZSet, "lock", "__write__", Some("c1"))));
        }
        assert_eq!(o.owner_of("lock"), Some("c1".into()));
        // n3 restarts empty and c2 takes n3 and, after an expiry, n2.
        o.feed(&ev("n3", set(Shape::ZSet, "lock", "tok2", Some("c2"))));
        o.feed(&ev("n3", set(Shape::ZSet, "lock", "__write__", Some("c2"))));
        // Its token, not the shared member beside it on as many nodes.
        assert_eq!(o.token_of("c2", "lock").as_deref(), Some("tok2"));
        assert_eq!(o.token_of("c1", "lock").as_deref(), Some("tok1"));
        let gone = EventKind::KeyExpired {
            key: "lock".into(),
            mark: None,
            expires_at: Some(1),
        };
        o.feed(&ev("n2", gone));
        assert_eq!(o.owner_of("lock"), None, "c1 on n1 only, c2 on n3 only");
        o.feed(&ev("n2", set(Shape::ZSet, "lock", "tok2", Some("c2"))));
        assert_eq!(o.owner_of("lock"), Some("c2".into()));
        assert_eq!(o.made_by.get("__write__"), Some(&None), "shared");
    }

    #[test]
    fn a_named_key_replaces_the_resources_name_and_several_keys_need_a_majority() {
        let mut o = Ownership::new(Topology::Single, 1).with_resources(&resources());
        o.feed(&ev("n1", set(Shape::String, "lock", "t0", Some("c2"))));
        assert_eq!(o.owner_of("lock"), Some("c2".into()));
        let named = |key: &str| EventKind::LockKey {
            resource: "lock".into(),
            key: key.into(),
            by_client: false,
        };
        assert_eq!(o.feed(&ev("c1", named("k:0"))), vec![("lock".into(), None)]);
        o.feed(&ev("c1", named("k:1")));
        o.feed(&ev("c1", named("k:2")));
        assert_eq!(o.lock_keys(), vec!["k:0", "k:1", "k:2"]);
        // rueidislock: the same token on 2 of the 3 keys holds the lock.
        o.feed(&ev("n1", set(Shape::String, "k:0", "t1", Some("c1"))));
        assert_eq!(o.owner_of("lock"), None, "one key of three");
        o.feed(&ev("n1", set(Shape::String, "k:1", "t1", Some("c1"))));
        assert_eq!(o.owner_of("lock"), Some("c1".into()));
        // A waiter setting the spare key owns nothing.
        o.feed(&ev("n1", set(Shape::String, "k:2", "t2", Some("c2"))));
        assert_eq!(o.owner_of("lock"), Some("c1".into()));
        let gone = EventKind::KeyExpired {
            key: "k:0".into(),
            mark: None,
            expires_at: Some(9),
        };
        assert_eq!(o.feed(&ev("n1", gone)), vec![("lock".into(), None)]);
    }

    #[test]
    fn a_replicated_mark_is_its_makers_and_a_failover_moves_ownership() {
        let mut o = Ownership::new(Topology::Single, 2).with_resources(&resources());
        o.feed(&ev("n1", set(Shape::Hash, "lock", "uuid:1", Some("c1"))));
        o.feed(&ev("n2", set(Shape::Hash, "lock", "uuid:1", None)));
        let crash = EventKind::Fault(FaultEvent::Crash {
            host: "n1".into(),
            restart: redlock_scenario::Restart::Never,
            kill: false,
        });
        assert_eq!(o.feed(&ev("lab", crash)), vec![("lock".into(), None)]);
        let failover = EventKind::Failover {
            old_master: "n1".into(),
            new_master: "n2".into(),
        };
        assert_eq!(
            o.feed(&ev("sentinel", failover)),
            vec![("lock".into(), Some("c1".into()))]
        );
        assert_eq!(o.token_of("c1", "lock"), Some("uuid:1".into()));
    }
}
