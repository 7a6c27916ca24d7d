//! The keyspace: string and hash values with absolute expiry times on the
//! node's wall clock, expired lazily on access and by an active sweep, as
//! Redis does.
//!
//! Every write is also recorded as an *effect*: the command in the absolute
//! form Redis propagates (`SET k v PXAT t`, `PEXPIREAT k t`, `DEL k`,
//! `HSET k f v...`, `HDEL k f...`), for the append-only file and for replicas
//! to apply. `HINCRBY` is recorded as the `HSET` of its result, and an `HDEL`
//! that empties a hash as `DEL k`: the same data, and an effect never depends
//! on the state it is applied to. Lists are the exception, as in Redis: a pop,
//! `LREM` and `LTRIM` are recorded as themselves (`LPOP k n`, ...), which
//! the same list, in the same order of effects, turns into the same data.

use super::errors::wrong_type;
use bytes::Bytes;
use redlock_proto::resp::Frame;
use std::collections::BTreeMap;

pub use super::values::{Hash, Value, ZSet};

/// One stored value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub value: Value,
    /// Wall-clock milliseconds after which the key is gone; `None`: no TTL.
    pub(crate) expires_at: Option<i64>,
}

/// What this node is in a replication setup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    Master,
    /// A replica of `master`; replicas never delete expired keys themselves
    /// (they hide them and wait for the master's `DEL`), as Redis does.
    Replica {
        master: String,
        link_up: bool,
    },
}

/// The data of one node.
#[derive(Debug)]
pub struct Keyspace {
    /// Every key (the list and sorted-set commands reach in: [`super::lists`],
    /// [`super::zsets`]).
    pub(super) entries: BTreeMap<Bytes, Entry>,
    /// Script cache and Lua state (not part of snapshots or the AOF).
    pub(crate) scripts: super::scripting::Scripts,
    pub(crate) role: Role,
    /// Writes applied so far, counted as the replication offset.
    pub(crate) offset: u64,
    /// A master's streaming replicas (by the stream serving each) and the
    /// offset each acknowledged (`WAIT`, `INFO`'s `connected_slaves`).
    pub(crate) streaming: std::collections::BTreeMap<u64, u64>,
    /// The wall clock in microseconds at the command being run (`TIME`),
    /// read with its millisecond `now` (see [`super::Node::execute`]).
    pub(crate) now_us: i64,
    /// The connected clients, their subscriptions and their tracking
    /// ([`super::clients`], [`super::pubsub`], [`super::tracking`]): not
    /// data, never in a snapshot.
    pub(crate) clients: super::clients::Clients,
    pub(crate) pubsub: super::channels::PubSub,
    pub(crate) tracking: super::tracking::Tracking,
    effects: Vec<Vec<Bytes>>,
}

impl Default for Keyspace {
    fn default() -> Self {
        Keyspace {
            entries: BTreeMap::new(),
            scripts: Default::default(),
            role: Role::Master,
            offset: 0,
            streaming: std::collections::BTreeMap::new(),
            now_us: 0,
            clients: Default::default(),
            pubsub: Default::default(),
            tracking: Default::default(),
            effects: Vec::new(),
        }
    }
}

/// `now > when`: a key is still there at exactly its expiry millisecond.
fn expired(e: &Entry, now: i64) -> bool {
    matches!(e.expires_at, Some(t) if now > t)
}

impl Keyspace {
    fn is_master(&self) -> bool {
        self.role == Role::Master
    }

    /// Looks a key up, expiring it first if its time has passed.
    pub(crate) fn get(&mut self, key: &[u8], now: i64) -> Option<&Entry> {
        let gone = self.entries.get(key).is_some_and(|e| expired(e, now));
        if gone {
            if !self.is_master() {
                return None;
            }
            self.entries.remove(key);
            self.effect(vec![
                Bytes::from_static(b"DEL"),
                Bytes::copy_from_slice(key),
            ]);
        }
        self.entries.get(key)
    }

    pub(crate) fn exists(&mut self, key: &[u8], now: i64) -> bool {
        self.get(key, now).is_some()
    }

    /// The value at `key` as `pick` reads it; `WRONGTYPE` for a key of
    /// another type.
    pub(crate) fn get_as<T>(
        &mut self,
        key: &[u8],
        now: i64,
        pick: fn(&Value) -> Option<&T>,
    ) -> Result<Option<&T>, Frame> {
        match self.get(key, now) {
            None => Ok(None),
            Some(e) => pick(&e.value).map(Some).ok_or_else(wrong_type),
        }
    }

    /// A string key's value; `WRONGTYPE` for a key of another type.
    pub(crate) fn get_str(&mut self, key: &[u8], now: i64) -> Result<Option<&Bytes>, Frame> {
        self.get_as(key, now, Value::as_str)
    }

    /// A hash key's value; `WRONGTYPE` for a key of another type.
    pub(crate) fn get_hash(&mut self, key: &[u8], now: i64) -> Result<Option<&Hash>, Frame> {
        self.get_as(key, now, Value::as_hash)
    }

    /// The value at `key` as `pick` reads it, made `empty()` (without
    /// expiry) when missing or of another type (callers check the type
    /// first: an effect replayed never meets another type).
    pub(super) fn value_or_new<T>(
        &mut self,
        key: &Bytes,
        empty: fn() -> Value,
        pick: fn(&mut Value) -> Option<&mut T>,
    ) -> &mut T {
        let entry = self.entries.entry(key.clone()).or_insert_with(|| Entry {
            value: empty(),
            expires_at: None,
        });
        if pick(&mut entry.value).is_none() {
            entry.value = empty();
        }
        pick(&mut entry.value).expect("made of its type above")
    }

    /// The value already at `key` as `pick` reads it (no expiry check: the
    /// callers looked the key up, or replay an effect).
    pub(super) fn existing_mut<T>(
        &mut self,
        key: &[u8],
        pick: fn(&mut Value) -> Option<&mut T>,
    ) -> Option<&mut T> {
        self.entries.get_mut(key).and_then(|e| pick(&mut e.value))
    }

    /// Stores `value`. With `keep_ttl` an existing expiry stays; otherwise the
    /// key gets `expires_at`.
    pub(crate) fn set(
        &mut self,
        key: Bytes,
        value: Bytes,
        expires_at: Option<i64>,
        keep_ttl: bool,
    ) {
        let expires_at = if keep_ttl {
            self.entries.get(&key).and_then(|e| e.expires_at)
        } else {
            expires_at
        };
        let mut eff = vec![Bytes::from_static(b"SET"), key.clone(), value.clone()];
        if let Some(t) = expires_at {
            eff.push(Bytes::from_static(b"PXAT"));
            eff.push(Bytes::from(t.to_string()));
        }
        self.effect(eff);
        self.entries.insert(
            key,
            Entry {
                value: Value::Str(value),
                expires_at,
            },
        );
    }

    /// Sets fields of the hash at `key`, creating it (without expiry) if it
    /// is missing; returns how many fields are new. A string at `key` is
    /// replaced (commands check the type first; an effect replayed onto a
    /// string cannot happen). Callers expire the key first (with
    /// [`Keyspace::get_hash`]).
    pub(crate) fn hset(&mut self, key: &Bytes, pairs: &[(Bytes, Bytes)]) -> usize {
        let h = self.value_or_new(key, || Value::Hash(Hash::default()), Value::as_hash_mut);
        let mut added = 0;
        let mut eff = vec![Bytes::from_static(b"HSET"), key.clone()];
        for (f, v) in pairs {
            added += h.set(f.clone(), v.clone()) as usize;
            eff.push(f.clone());
            eff.push(v.clone());
        }
        if pairs.is_empty() && h.is_empty() {
            self.entries.remove(key);
            return 0;
        }
        self.effect(eff);
        added
    }

    /// Removes fields of the hash at `key`, and the key with the last one;
    /// returns how many were there. No hash at `key`: 0.
    pub(crate) fn hdel(&mut self, key: &[u8], fields: &[Bytes]) -> usize {
        let Some(h) = self.existing_mut(key, Value::as_hash_mut) else {
            return 0;
        };
        let removed = fields.iter().filter(|f| h.remove(f)).count();
        if h.is_empty() {
            self.remove(key);
        } else if removed > 0 {
            let mut eff = vec![Bytes::from_static(b"HDEL"), Bytes::copy_from_slice(key)];
            eff.extend(fields.iter().cloned());
            self.effect(eff);
        }
        removed
    }

    /// Sets the expiry of an existing key; true if the key was there.
    pub(crate) fn set_expiry(&mut self, key: &[u8], at: i64) -> bool {
        let Some(e) = self.entries.get_mut(key) else {
            return false;
        };
        e.expires_at = Some(at);
        self.effect(vec![
            Bytes::from_static(b"PEXPIREAT"),
            Bytes::copy_from_slice(key),
            Bytes::from(at.to_string()),
        ]);
        true
    }

    pub(crate) fn remove(&mut self, key: &[u8]) -> bool {
        let found = self.entries.remove(key).is_some();
        if found {
            self.effect(vec![
                Bytes::from_static(b"DEL"),
                Bytes::copy_from_slice(key),
            ]);
        }
        found
    }

    pub(crate) fn flush(&mut self) {
        self.entries.clear();
        self.effect(vec![Bytes::from_static(b"FLUSHALL")]);
    }

    /// The active sweep: deletes every expired key (a master only). Redis
    /// samples 20 keys ten times a second; deleting all of them differs only
    /// in memory use, which no command here observes.
    pub(crate) fn expire_active(&mut self, now: i64) -> usize {
        if !self.is_master() {
            return 0;
        }
        let dead: Vec<Bytes> = self
            .entries
            .iter()
            .filter(|(_, e)| expired(e, now))
            .map(|(k, _)| k.clone())
            .collect();
        for k in &dead {
            self.remove(k);
        }
        dead.len()
    }

    /// Number of keys, and of keys with an expiry (expired ones included
    /// until they are swept, as in Redis's `INFO keyspace`).
    pub fn counts(&self) -> (usize, usize) {
        let expires = self
            .entries
            .values()
            .filter(|e| e.expires_at.is_some())
            .count();
        (self.entries.len(), expires)
    }

    /// Every key with its entry, in key order (for snapshots and tests).
    pub fn entries(&self) -> impl Iterator<Item = (&Bytes, &Entry)> {
        self.entries.iter()
    }

    /// Records a write; the clients tracking its key are told at once
    /// ([`super::tracking`]): a later read in the same command tracks the
    /// key anew.
    pub(super) fn effect(&mut self, cmd: Vec<Bytes>) {
        let (clients, pubsub) = (&self.clients, &self.pubsub);
        match cmd.get(1) {
            _ if cmd[0].as_ref() == b"FLUSHALL" => self.tracking.invalidate_all(clients, pubsub),
            Some(key) => self.tracking.invalidate(clients, pubsub, key),
            None => {}
        }
        self.offset += 1;
        self.effects.push(cmd);
    }

    /// The effects recorded since the last [`Keyspace::take_effects`].
    pub(crate) fn pending_effects(&self) -> &[Vec<Bytes>] {
        &self.effects
    }

    /// Takes the effects recorded since the last call.
    pub(crate) fn take_effects(&mut self) -> Vec<Vec<Bytes>> {
        std::mem::take(&mut self.effects)
    }
}

pub(crate) use super::errors::parse_i64;

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    #[test]
    fn expiry_is_strictly_after_the_deadline() {
        let mut ks = Keyspace::default();
        ks.set(b("k"), b("v"), Some(1000), false);
        assert!(ks.exists(b"k", 1000));
        assert!(!ks.exists(b"k", 1001));
        let effects = ks.take_effects();
        assert_eq!(effects.last().unwrap(), &vec![b("DEL"), b("k")]);
    }

    #[test]
    fn replicas_hide_expired_keys_but_keep_them() {
        let mut ks = Keyspace {
            role: Role::Replica {
                master: "n1".into(),
                link_up: true,
            },
            ..Default::default()
        };
        ks.set(b("k"), b("v"), Some(10), false);
        assert!(!ks.exists(b"k", 11));
        assert_eq!(ks.expire_active(11), 0);
        assert_eq!(ks.counts(), (1, 1));
        ks.role = Role::Master;
        assert_eq!(ks.expire_active(11), 1);
        assert_eq!(ks.counts(), (0, 0));
    }

    #[test]
    fn keep_ttl_and_effects_use_absolute_time() {
        let mut ks = Keyspace::default();
        ks.set(b("k"), b("v"), Some(500), false);
        ks.set(b("k"), b("w"), None, true);
        assert_eq!(ks.get(b"k", 0).unwrap().expires_at, Some(500));
        let eff = ks.take_effects();
        assert_eq!(eff[1], vec![b("SET"), b("k"), b("w"), b("PXAT"), b("500")]);
    }

    #[test]
    fn integers_as_redis_reads_them() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-12"), Some(-12));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        for bad in [
            &b"01"[..],
            b"-0",
            b"+1",
            b" 1",
            b"1 ",
            b"",
            b"-",
            b"9223372036854775808",
            b"1.0",
        ] {
            assert_eq!(parse_i64(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
