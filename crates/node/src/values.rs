//! The value types a key holds: Redis's string, hash, list and sorted set,
//! as [`Value`], and the ordering rules each keeps.

use bytes::Bytes;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// A hash: fields and values in insertion order, the order Redis keeps for a
/// small hash (a listpack) and replies with. A new field goes last; setting
/// an existing one keeps its place. (Redis converts a hash of more than 128
/// fields or with a value over 64 bytes to a hash table, whose order is its
/// own; lock clients' hashes are small.)
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hash {
    pairs: Vec<(Bytes, Bytes)>,
}

impl Hash {
    pub(crate) fn get(&self, field: &[u8]) -> Option<&Bytes> {
        self.pairs
            .iter()
            .find(|(f, _)| f.as_ref() == field)
            .map(|(_, v)| v)
    }

    /// Sets `field`; true if it is new.
    pub(crate) fn set(&mut self, field: Bytes, value: Bytes) -> bool {
        match self.pairs.iter_mut().find(|(f, _)| *f == field) {
            Some((_, v)) => {
                *v = value;
                false
            }
            None => {
                self.pairs.push((field, value));
                true
            }
        }
    }

    /// Removes `field`; true if it was there.
    pub(crate) fn remove(&mut self, field: &[u8]) -> bool {
        let before = self.pairs.len();
        self.pairs.retain(|(f, _)| f.as_ref() != field);
        self.pairs.len() != before
    }

    pub(crate) fn len(&self) -> usize {
        self.pairs.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Fields and values in Redis's order.
    pub fn iter(&self) -> impl Iterator<Item = &(Bytes, Bytes)> {
        self.pairs.iter()
    }
}

/// A stored value: Redis's string, hash, list or sorted set type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Str(Bytes),
    Hash(Hash),
    List(VecDeque<Bytes>),
    ZSet(ZSet),
}

impl Value {
    /// The name `TYPE` replies with.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "string",
            Value::Hash(_) => "hash",
            Value::List(_) => "list",
            Value::ZSet(_) => "zset",
        }
    }

    /// The string, if this is one.
    pub(crate) fn as_str(&self) -> Option<&Bytes> {
        match self {
            Value::Str(b) => Some(b),
            _ => None,
        }
    }

    pub(crate) fn as_hash(&self) -> Option<&Hash> {
        match self {
            Value::Hash(h) => Some(h),
            _ => None,
        }
    }

    pub(crate) fn as_hash_mut(&mut self) -> Option<&mut Hash> {
        match self {
            Value::Hash(h) => Some(h),
            _ => None,
        }
    }

    pub(crate) fn as_list(&self) -> Option<&VecDeque<Bytes>> {
        match self {
            Value::List(l) => Some(l),
            _ => None,
        }
    }

    pub(crate) fn as_list_mut(&mut self) -> Option<&mut VecDeque<Bytes>> {
        match self {
            Value::List(l) => Some(l),
            _ => None,
        }
    }

    pub(crate) fn as_zset(&self) -> Option<&ZSet> {
        match self {
            Value::ZSet(z) => Some(z),
            _ => None,
        }
    }

    pub(crate) fn as_zset_mut(&mut self) -> Option<&mut ZSet> {
        match self {
            Value::ZSet(z) => Some(z),
            _ => None,
        }
    }
}

/// A score, ordered as C compares doubles (`-0` equals `0`). A sorted set
/// never holds a NaN.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Score(pub f64);

impl PartialEq for Score {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Score {}

impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Score {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0
            .partial_cmp(&other.0)
            .expect("a sorted set holds no NaN")
    }
}

/// A sorted set: members with scores, in Redis's order (score, then member
/// bytes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ZSet {
    scores: BTreeMap<Bytes, Score>,
    order: BTreeSet<(Score, Bytes)>,
}

impl ZSet {
    pub(crate) fn score(&self, member: &[u8]) -> Option<f64> {
        self.scores.get(member).map(|s| s.0)
    }

    /// Sets `member`'s score; true if it is new. A score of -0 is kept as
    /// 0, as `redis-server` 7.0 answers it.
    pub(crate) fn insert(&mut self, member: Bytes, score: f64) -> bool {
        assert!(!score.is_nan(), "a sorted set holds no NaN");
        let score = if score == 0.0 { 0.0 } else { score };
        let old = self.scores.insert(member.clone(), Score(score));
        if let Some(o) = old {
            self.order.remove(&(o, member.clone()));
        }
        self.order.insert((Score(score), member));
        old.is_none()
    }

    /// Removes `member`; true if it was there.
    pub(crate) fn remove(&mut self, member: &[u8]) -> bool {
        match self.scores.remove_entry(member) {
            Some((m, s)) => {
                self.order.remove(&(s, m));
                true
            }
            None => false,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.scores.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.scores.is_empty()
    }

    /// Members and scores, lowest score first.
    pub(crate) fn iter(&self) -> impl DoubleEndedIterator<Item = (&Bytes, f64)> {
        self.order.iter().map(|(s, m)| (m, s.0))
    }

    /// `member`'s 0-based position, lowest score first.
    pub(crate) fn rank(&self, member: &[u8]) -> Option<usize> {
        let s = *self.scores.get(member)?;
        Some(
            self.order
                .range(..(s, Bytes::copy_from_slice(member)))
                .count(),
        )
    }
}
