//! The subscriptions of a node's clients to channels and patterns, and a
//! message's delivery to them (the commands are [`super::pubsub`]'s): to
//! each subscriber of the channel `message channel message`, then to each
//! subscriber of each pattern that matches it (patterns in order)
//! `pmessage pattern channel message`; a client subscribed twice gets it
//! twice.

use super::clients::Clients;
use super::glob::glob_match;
use bytes::Bytes;
use redlock_proto::resp::Frame;
use std::collections::{BTreeMap, BTreeSet};

/// The subscriptions of one node's clients.
#[derive(Debug, Default)]
pub(crate) struct PubSub {
    channels: BTreeMap<Bytes, BTreeSet<u64>>,
    patterns: BTreeMap<Bytes, BTreeSet<u64>>,
    /// Each subscribed client's channels and patterns.
    of_client: BTreeMap<u64, (BTreeSet<Bytes>, BTreeSet<Bytes>)>,
}

impl PubSub {
    /// How many channels and patterns client `id` is subscribed to.
    pub(crate) fn count(&self, id: u64) -> usize {
        self.of_client
            .get(&id)
            .map_or(0, |(c, p)| c.len() + p.len())
    }

    fn table(&mut self, pattern: bool) -> &mut BTreeMap<Bytes, BTreeSet<u64>> {
        if pattern {
            &mut self.patterns
        } else {
            &mut self.channels
        }
    }

    pub(crate) fn subscribe(&mut self, id: u64, name: &Bytes, pattern: bool) {
        self.table(pattern)
            .entry(name.clone())
            .or_default()
            .insert(id);
        let (c, p) = self.of_client.entry(id).or_default();
        if pattern { p } else { c }.insert(name.clone());
    }

    pub(crate) fn unsubscribe(&mut self, id: u64, name: &Bytes, pattern: bool) {
        let table = self.table(pattern);
        if let Some(ids) = table.get_mut(name) {
            ids.remove(&id);
            if ids.is_empty() {
                table.remove(name);
            }
        }
        if let Some((c, p)) = self.of_client.get_mut(&id) {
            if pattern { &mut *p } else { &mut *c }.remove(name);
            if c.is_empty() && p.is_empty() {
                self.of_client.remove(&id);
            }
        }
    }

    /// The channels (patterns) client `id` has, in order.
    pub(crate) fn names(&self, id: u64, pattern: bool) -> Vec<Bytes> {
        let Some((c, p)) = self.of_client.get(&id) else {
            return Vec::new();
        };
        if pattern { p } else { c }.iter().cloned().collect()
    }

    /// Drops every subscription of client `id` (it left, or `RESET`).
    pub(crate) fn forget(&mut self, id: u64) {
        for pattern in [false, true] {
            for name in self.names(id, pattern) {
                self.unsubscribe(id, &name, pattern);
            }
        }
    }

    /// Whether client `id` is subscribed to anything.
    pub(crate) fn subscribed(&self, id: u64) -> bool {
        self.of_client.contains_key(&id)
    }

    /// The channels someone is subscribed to, in order.
    pub(crate) fn channels(&self) -> impl Iterator<Item = &Bytes> {
        self.channels.keys()
    }

    /// How many clients are subscribed to `channel`.
    pub(crate) fn subscribers(&self, channel: &[u8]) -> usize {
        self.channels.get(channel).map_or(0, |ids| ids.len())
    }

    /// How many patterns someone is subscribed to.
    pub(crate) fn patterns(&self) -> usize {
        self.patterns.len()
    }

    /// Sends the message to every subscriber; how many got it.
    pub(crate) fn publish(&self, clients: &Clients, channel: &Bytes, message: &Bytes) -> usize {
        let mut sent = 0;
        for id in self.channels.get(channel).into_iter().flatten() {
            let frame = push(&["message"], &[channel, message]);
            clients.push(*id, frame, false);
            sent += 1;
        }
        for (pattern, ids) in &self.patterns {
            if !glob_match(pattern, channel) {
                continue;
            }
            for id in ids {
                let frame = push(&["pmessage"], &[pattern, channel, message]);
                clients.push(*id, frame, false);
                sent += 1;
            }
        }
        sent
    }
}

/// A push frame: `words`, then `args`, as bulk strings.
pub(crate) fn push(words: &[&str], args: &[&Bytes]) -> Frame {
    let mut items: Vec<Frame> = words.iter().map(Frame::bulk).collect();
    items.extend(args.iter().map(|a| Frame::Bulk((*a).clone())));
    Frame::Push(items)
}
