//! The append-only file, on a disk that outlives the node's host.
//!
//! A [`Disk`] is held outside the simulated host (the driver keeps a
//! [`SharedDisk`] across crashes and restarts). [`attach`] makes a node log
//! every write's effects to it (absolute-time commands, see
//! [`super::keyspace`]), as Redis's `appendfsync` modes do:
//! - [`Mode::Always`]: each effect is synced before the command's reply is
//!   written (effects sinks run inside [`Node::execute`]);
//! - [`Mode::Everysec`]: effects are written to the OS (`pending`) and synced
//!   by a task once per second of the node's monotonic clock;
//! - [`Mode::None`]: nothing is logged.
//!
//! [`Disk::crash`] is the power loss: what was not synced is gone. A mere
//! process restart (turmoil `bounce` without [`Disk::crash`]) keeps what the
//! OS had. [`Disk::load`] rebuilds the keyspace; expiry times are absolute on
//! the node's wall clock, so time passes while the node is down. The log is
//! rewritten as a snapshot once it has doubled since the last rewrite (and
//! holds more than [`COMPACT_MIN`] entries), so memory stays flat.

use super::keyspace::Keyspace;
use super::replication::{apply_effect, snapshot};
use super::Node;
use bytes::Bytes;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// The scenario's `persistence`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    None,
    Everysec,
    Always,
}

/// How often [`Mode::Everysec`] syncs.
pub(crate) const FSYNC_PERIOD: Duration = Duration::from_secs(1);
/// The log is never rewritten below this many entries.
pub(crate) const COMPACT_MIN: usize = 10_000;

/// One node's disk: the synced log and what the OS holds but has not synced.
#[derive(Debug, Default)]
pub struct Disk {
    synced: Vec<Vec<Bytes>>,
    pending: Vec<Vec<Bytes>>,
    /// Size of the log after the last rewrite.
    compacted_len: usize,
    /// Effects ever synced (kept across rewrites): the offset after a load.
    total: u64,
}

pub type SharedDisk = Arc<Mutex<Disk>>;

fn lock(d: &SharedDisk) -> MutexGuard<'_, Disk> {
    d.lock().unwrap_or_else(|e| e.into_inner())
}

impl Disk {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub fn shared() -> SharedDisk {
        Arc::new(Mutex::new(Disk::new()))
    }

    /// Power loss: what was not synced is lost.
    pub fn crash(&mut self) {
        self.pending.clear();
    }

    /// Moves what the OS holds to the synced log.
    pub(crate) fn fsync(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        self.append_synced(pending);
    }

    fn append_synced(&mut self, effects: Vec<Vec<Bytes>>) {
        self.total += effects.len() as u64;
        self.synced.extend(effects);
        if self.synced.len() > COMPACT_MIN.max(2 * self.compacted_len) {
            self.compact();
        }
    }

    /// Rewrites the log as a snapshot of the data it describes.
    pub(crate) fn compact(&mut self) {
        let ks = self.replay(self.synced.iter());
        self.synced = snapshot(&ks, None);
        self.compacted_len = self.synced.len();
    }

    fn replay<'a>(&self, log: impl Iterator<Item = &'a Vec<Bytes>>) -> Keyspace {
        let mut ks = Keyspace::default();
        for cmd in log {
            // Only effects are ever logged, so replay cannot fail.
            let _ = apply_effect(&mut ks, cmd);
        }
        ks
    }

    /// The keyspace the log describes (synced entries, then anything the OS
    /// still holds: empty after [`Disk::crash`]), as a master at wall time
    /// `now_wall_ms`: keys expired by then are dropped, the others keep their
    /// absolute expiry. The offset is the number of effects ever synced.
    pub fn load(&self, now_wall_ms: i64) -> Keyspace {
        let mut ks = self.replay(self.synced.iter().chain(self.pending.iter()));
        let dead: Vec<Bytes> = ks
            .entries()
            .filter(|(_, e)| matches!(e.expires_at, Some(t) if now_wall_ms > t))
            .map(|(k, _)| k.clone())
            .collect();
        for k in &dead {
            ks.remove(k);
        }
        ks.take_effects();
        ks.offset = self.total + self.pending.len() as u64;
        ks
    }

    /// Entries in the synced log.
    pub fn synced_len(&self) -> usize {
        self.synced.len()
    }
}

/// Makes `node` log its writes to `disk` in `mode`. Returns the fsync task
/// for [`Mode::Everysec`] (spawn it on the node's host; it syncs every
/// [`FSYNC_PERIOD`] of the node's clock), `None` otherwise. Anything left
/// unsynced by a previous run of the host (a restart without power loss) is
/// synced first.
pub fn attach(node: &Node, disk: SharedDisk, mode: Mode) -> Option<impl Future<Output = ()>> {
    lock(&disk).fsync();
    match mode {
        Mode::None => return None,
        Mode::Always => {
            let disk = disk.clone();
            node.add_effects_sink(Arc::new(move |effects: &[Vec<Bytes>]| {
                lock(&disk).append_synced(effects.to_vec());
            }));
            return None;
        }
        Mode::Everysec => {
            let disk = disk.clone();
            node.add_effects_sink(Arc::new(move |effects: &[Vec<Bytes>]| {
                lock(&disk).pending.extend(effects.iter().cloned());
            }));
        }
    }
    let clock = node.clock().clone();
    Some(async move {
        loop {
            clock.sleep(FSYNC_PERIOD).await;
            lock(&disk).fsync();
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use redlock_proto::clock::{ClockModel, SimClock};
    use redlock_proto::resp::Frame;

    const EPOCH_MS: i64 = 1_700_000_000_000;

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    fn cmd(s: &str) -> Vec<Bytes> {
        s.split(' ').map(b).collect()
    }

    /// Runs `f` as a turmoil client (for the simulated clock).
    fn in_sim<F: std::future::Future<Output = ()> + 'static>(f: F) {
        let mut sim = turmoil::Builder::new()
            .epoch(std::time::UNIX_EPOCH + Duration::from_millis(EPOCH_MS as u64))
            .tick_duration(Duration::from_millis(1))
            .simulation_duration(Duration::from_secs(60))
            .build();
        sim.client("t", async move {
            f.await;
            Ok(())
        });
        sim.run().unwrap();
    }

    fn node() -> Node {
        Node::new(Arc::new(SimClock::new(ClockModel::new(EPOCH_MS, 0.0, 1.0))))
    }

    fn get(node: &Node, key: &str) -> Frame {
        node.execute(&cmd(&format!("GET {key}")))
    }

    #[test]
    fn always_survives_a_crash() {
        in_sim(async {
            let disk = Disk::shared();
            let n = node();
            assert!(attach(&n, disk.clone(), Mode::Always).is_none());
            n.execute(&cmd("SET k v"));
            n.execute(&cmd("SET j w"));
            n.execute(&cmd("DEL j"));
            lock(&disk).crash();
            let back = Node::from_keyspace(n.clock().clone(), lock(&disk).load(0));
            assert_eq!(get(&back, "k"), Frame::bulk("v"));
            assert_eq!(get(&back, "j"), Frame::Null);
            assert_eq!(back.keyspace().offset, 3);
            assert_eq!(lock(&disk).synced_len(), 3);
        });
    }

    #[test]
    fn everysec_loses_the_last_second() {
        in_sim(async {
            let disk = Disk::shared();
            let n = node();
            let fsync = attach(&n, disk.clone(), Mode::Everysec).expect("fsync task");
            let task = tokio::spawn(fsync);
            let clock = n.clock().clone();
            clock.sleep(Duration::from_millis(100)).await;
            n.execute(&cmd("SET early 1"));
            clock.sleep(Duration::from_millis(1500)).await; // synced at 1 s
            n.execute(&cmd("SET late 1")); // at 1.6 s; next sync at 2 s
            clock.sleep(Duration::from_millis(300)).await;
            task.abort();
            lock(&disk).crash();
            let back = Node::from_keyspace(clock.clone(), lock(&disk).load(0));
            assert_eq!(get(&back, "early"), Frame::bulk("1"));
            assert_eq!(get(&back, "late"), Frame::Null);
        });
    }

    #[test]
    fn none_loses_everything() {
        in_sim(async {
            let disk = Disk::shared();
            let n = node();
            assert!(attach(&n, disk.clone(), Mode::None).is_none());
            n.execute(&cmd("SET k v"));
            lock(&disk).crash();
            let ks = lock(&disk).load(0);
            assert_eq!(ks.counts(), (0, 0));
        });
    }

    #[test]
    fn expiry_survives_as_absolute_wall_time() {
        in_sim(async {
            let disk = Disk::shared();
            let n = node();
            attach(&n, disk.clone(), Mode::Always);
            let now = n.clock().wall_ms();
            n.execute(&cmd("SET short v PX 1000"));
            n.execute(&cmd("SET long v PX 5000"));
            n.execute(&cmd("SET pexp v"));
            n.execute(&cmd("PEXPIRE pexp 3000"));
            lock(&disk).crash();
            // Loaded 2 s later: `short` is gone, the others keep their times.
            let mut ks = lock(&disk).load(now + 2000);
            assert!(ks.get(b"short", now + 2000).is_none());
            assert_eq!(
                ks.get(b"long", now + 2000).unwrap().expires_at,
                Some(now + 5000)
            );
            assert_eq!(
                ks.get(b"pexp", now + 2000).unwrap().expires_at,
                Some(now + 3000)
            );
            assert!(ks.take_effects().is_empty());
        });
    }

    #[test]
    fn hashes_survive_a_crash_and_a_rewrite() {
        in_sim(async {
            let disk = Disk::shared();
            let n = node();
            attach(&n, disk.clone(), Mode::Always);
            let now = n.clock().wall_ms();
            for c in [
                "HSET h z 1 y 2",
                "HINCRBY h z 41",
                "HSET h x 3",
                "HDEL h y",
                "PEXPIRE h 5000",
                "HSET e f v",
                "HDEL e f",
                "HINCRBY n f -1",
            ] {
                assert!(!matches!(n.execute(&cmd(c)), Frame::Error(_)), "{c}");
            }
            let all = |node: &Node, k: &str| node.execute(&cmd(&format!("HGETALL {k}")));
            let want = all(&n, "h");
            assert_eq!(
                want.to_bytes(),
                b"*4\r\n$1\r\nz\r\n$2\r\n42\r\n$1\r\nx\r\n$1\r\n3\r\n"
            );
            lock(&disk).crash();
            let back = Node::from_keyspace(n.clock().clone(), lock(&disk).load(now));
            assert_eq!(all(&back, "h"), want);
            assert_eq!(all(&back, "n"), all(&n, "n"));
            assert_eq!(back.execute(&cmd("EXISTS e")), Frame::Integer(0));
            assert_eq!(
                back.keyspace().get(b"h", now).unwrap().expires_at,
                Some(now + 5000)
            );
            // Rewritten as a snapshot: the same data, field order included.
            lock(&disk).compact();
            let again = Node::from_keyspace(n.clock().clone(), lock(&disk).load(now));
            assert_eq!(all(&again, "h"), want);
            assert_eq!(
                again.keyspace().get(b"h", now).unwrap().expires_at,
                Some(now + 5000)
            );
            // Loaded after the expiry: gone.
            assert!(lock(&disk).load(now + 5001).get(b"h", now + 5001).is_none());
        });
    }

    #[test]
    fn the_log_is_compacted() {
        let mut disk = Disk::new();
        for i in 0..3 * COMPACT_MIN {
            let mut ks = Keyspace::default();
            ks.set(b(&format!("k{}", i % 10)), b(&i.to_string()), None, false);
            disk.append_synced(ks.take_effects());
        }
        assert!(disk.synced_len() <= COMPACT_MIN + 11);
        let mut ks = disk.load(0);
        assert_eq!(ks.counts(), (10, 0));
        let last = 3 * COMPACT_MIN - 1;
        let key = format!("k{}", last % 10);
        assert_eq!(
            ks.get(key.as_bytes(), 0).unwrap().value,
            crate::keyspace::Value::Str(b(&last.to_string()))
        );
        assert_eq!(ks.offset, 3 * COMPACT_MIN as u64);
    }
}
