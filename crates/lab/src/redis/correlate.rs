//! Who made each change a real server made: its effects, as its
//! replication stream carries them, matched with the commands its
//! `MONITOR` shows, each with the address of the connection that sent it.
//!
//! Both streams are in the order the server ran things, but they arrive on
//! two sockets, and `MONITOR` shows every command (those that changed
//! nothing too) where the stream carries only effects. The lab cuts both
//! into segments with markers of its own: it publishes
//! `PUBLISH __redlock_lab__ <node>:<n>`, which `MONITOR` shows and a master
//! propagates to its replicas, the lab's observer among them. The effects
//! between the stream's markers `n-1` and `n` come from commands between
//! the same markers in `MONITOR`; inside a segment, effects are matched to
//! the commands that could have made them, in order (the longest such
//! matching). An effect no command explains is the server's own doing (an
//! expiry's `DEL`) and has no client.
//!
//! A replica propagates its master's stream, not its own markers: effects
//! that arrive behind another node's marker, or that no marker of its own
//! closes within [`UNCLOSED`], are its master's, with no client.

use bytes::Bytes;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Duration;

/// The marker's channel.
pub(crate) const CHANNEL: &str = "__redlock_lab__";

/// How long effects may wait for a marker of the node's own.
pub(crate) const UNCLOSED: Duration = Duration::from_millis(500);

/// One command `MONITOR` showed that could change a key.
#[derive(Clone, Debug, PartialEq)]
struct Line {
    /// The node's own markers `MONITOR` had shown before it.
    mark: u64,
    client: Option<String>,
    cmd: Vec<Bytes>,
}

/// One effect from the stream, with when it arrived and the node's own
/// markers the stream had carried before it.
#[derive(Clone, Debug, PartialEq)]
struct Effect {
    at: Duration,
    mark: u64,
    cmd: Vec<Bytes>,
}

/// Changes attributed, ready for the history: when, by whom, the effects
/// in the node code's form (`SET k v [PXAT t]`, `HSET k f v`, `HDEL k f`,
/// `ZADD k s m`, `ZREM k m`, `PEXPIREAT k t`, `PERSIST k`, `DEL k`,
/// `FLUSHALL`).
pub(crate) type Attributed = (Duration, Option<String>, Vec<Bytes>);

/// One node's two streams, matched.
#[derive(Default)]
pub(crate) struct Correlator {
    node: String,
    lines: VecDeque<Line>,
    mon_mark: u64,
    effects: VecDeque<Effect>,
    stream_mark: u64,
    /// The client of the last command that was not a script's.
    last_client: Option<String>,
    /// Each hash's fields, as the stream built them (an `HDEL` that
    /// empties a hash removes the key).
    hashes: BTreeMap<Bytes, BTreeSet<Bytes>>,
    /// Each sorted set's members and scores, as the stream built them (a
    /// range removal removes the members in it).
    zsets: BTreeMap<Bytes, BTreeMap<Bytes, f64>>,
}

fn upper(b: &Bytes) -> String {
    String::from_utf8_lossy(b).to_ascii_uppercase()
}

/// Commands that may change a key (those `MONITOR` shows are kept only
/// if they are one of these, or run by a script).
const WRITES: [&str; 29] = [
    "SET",
    "SETNX",
    "SETEX",
    "PSETEX",
    "GETSET",
    "GETDEL",
    "GETEX",
    "DEL",
    "UNLINK",
    "HSET",
    "HSETNX",
    "HMSET",
    "HINCRBY",
    "HINCRBYFLOAT",
    "HDEL",
    "PEXPIRE",
    "EXPIRE",
    "PEXPIREAT",
    "EXPIREAT",
    "PERSIST",
    "ZADD",
    "ZINCRBY",
    "ZREM",
    "ZREMRANGEBYSCORE",
    "ZREMRANGEBYRANK",
    "ZPOPMIN",
    "ZPOPMAX",
    "FLUSHALL",
    "FLUSHDB",
];

impl Correlator {
    pub(crate) fn new(node: &str) -> Correlator {
        Correlator {
            node: node.to_string(),
            ..Default::default()
        }
    }

    /// The marker `n` of this node, as published.
    pub(crate) fn marker(&self, n: u64) -> String {
        format!("{}:{n}", self.node)
    }

    /// A marker's node and number, if `cmd` publishes one.
    fn marker_of(cmd: &[Bytes]) -> Option<(String, u64)> {
        if cmd.len() != 3 || upper(&cmd[0]) != "PUBLISH" || cmd[1] != CHANNEL.as_bytes() {
            return None;
        }
        let text = String::from_utf8_lossy(&cmd[2]);
        let (node, n) = text.rsplit_once(':')?;
        Some((node.to_string(), n.parse().ok()?))
    }

    /// A command `MONITOR` showed, from `client` (None: the lab's own
    /// connections, another node, the sentinel), or from a script (`lua`:
    /// the client whose `EVAL` it runs in, which `MONITOR` shows first).
    pub(crate) fn monitor(&mut self, from_script: bool, client: Option<String>, cmd: Vec<Bytes>) {
        if let Some((node, n)) = Self::marker_of(&cmd) {
            if node == self.node {
                self.mon_mark = self.mon_mark.max(n);
            }
            return;
        }
        let client = if from_script {
            self.last_client.clone()
        } else {
            self.last_client = client.clone();
            client
        };
        let name = cmd.first().map(upper).unwrap_or_default();
        if WRITES.contains(&name.as_str()) {
            // Segments in order: the marks never go back.
            assert!(
                self.lines.back().is_none_or(|l| l.mark <= self.mon_mark),
                "{}: a command of segment {} after one of a later segment",
                self.node,
                self.mon_mark
            );
            self.lines.push_back(Line {
                mark: self.mon_mark,
                client,
                cmd,
            });
        }
    }

    /// An effect from the stream, arrived at `at`.
    pub(crate) fn stream(&mut self, at: Duration, cmd: Vec<Bytes>) -> Vec<Attributed> {
        assert!(!cmd.is_empty(), "{}: an empty effect", self.node);
        if let Some((node, n)) = Self::marker_of(&cmd) {
            if node == self.node {
                self.stream_mark = self.stream_mark.max(n);
                return Vec::new();
            }
            // A replica: what came so far is its master's.
            return self.unattributed(u64::MAX);
        }
        let name = cmd.first().map(upper).unwrap_or_default();
        if matches!(
            name.as_str(),
            "MULTI" | "EXEC" | "SELECT" | "PING" | "REPLCONF" | "PUBLISH"
        ) {
            return Vec::new();
        }
        assert!(
            self.effects
                .back()
                .is_none_or(|e| e.mark <= self.stream_mark),
            "{}: an effect of segment {} after one of a later segment",
            self.node,
            self.stream_mark
        );
        self.effects.push_back(Effect {
            at,
            mark: self.stream_mark,
            cmd,
        });
        Vec::new()
    }

    /// What can be attributed now, at `now`: every segment both streams
    /// have closed; effects left waiting past [`UNCLOSED`], without a client.
    pub(crate) fn ready(&mut self, now: Duration) -> Vec<Attributed> {
        let mut out = Vec::new();
        while let Some(first) = self.effects.front() {
            let seg = first.mark;
            let closed = self.stream_mark > seg && self.mon_mark > seg;
            let waiting = self.effects.len();
            if closed {
                out.extend(self.segment(seg));
            } else if now.saturating_sub(first.at) >= UNCLOSED {
                out.extend(self.unattributed(seg + 1));
            } else {
                break;
            }
            // The first segment is done with, whichever way.
            assert!(
                self.effects.front().is_none_or(|e| e.mark > seg) && self.effects.len() < waiting,
                "{}: segment {seg}'s effects left waiting",
                self.node
            );
        }
        // Commands of segments the stream has closed explain nothing more.
        let done = self.stream_mark.min(self.mon_mark);
        while self.lines.front().is_some_and(|l| l.mark < done) {
            self.lines.pop_front();
        }
        out
    }

    /// Effects of segments below `upto`, with no client.
    fn unattributed(&mut self, upto: u64) -> Vec<Attributed> {
        let mut out = Vec::new();
        while self.effects.front().is_some_and(|e| e.mark < upto) {
            let e = self.effects.pop_front().expect("checked");
            let seg = e.mark;
            out.extend(self.normalize(e.at, None, &e.cmd));
            while self.lines.front().is_some_and(|l| l.mark <= seg) {
                self.lines.pop_front();
            }
        }
        out
    }

    /// Segment `seg`'s effects, matched with its commands.
    fn segment(&mut self, seg: u64) -> Vec<Attributed> {
        let mut effects = Vec::new();
        while self.effects.front().is_some_and(|e| e.mark == seg) {
            effects.push(self.effects.pop_front().expect("checked"));
        }
        while self.lines.front().is_some_and(|l| l.mark < seg) {
            self.lines.pop_front();
        }
        let mut lines = Vec::new();
        while self.lines.front().is_some_and(|l| l.mark == seg) {
            lines.push(self.lines.pop_front().expect("checked"));
        }
        let owners = align(&effects, &lines);
        assert_eq!(
            owners.len(),
            effects.len(),
            "{}: an owner per effect",
            self.node
        );
        let mut out = Vec::new();
        for (e, owner) in effects.iter().zip(owners) {
            let client = owner.and_then(|i| lines[i].client.clone());
            out.extend(self.normalize(e.at, client, &e.cmd));
        }
        out
    }

    /// An effect in the node code's form (none if it touches no key the
    /// history follows the way the node code writes it).
    fn normalize(&mut self, at: Duration, by: Option<String>, cmd: &[Bytes]) -> Vec<Attributed> {
        let name = cmd.first().map(upper).unwrap_or_default();
        let b = |s: &str| Bytes::from(s.to_string());
        let arg = |i: usize| cmd.get(i).cloned().unwrap_or_default();
        let mut out: Vec<Vec<Bytes>> = Vec::new();
        match name.as_str() {
            "SET" | "SETNX" | "GETSET" => {
                self.hashes.remove(&arg(1));
                let mut set = vec![b("SET"), arg(1), arg(2)];
                let at = cmd.iter().position(|a| upper(a) == "PXAT");
                if let Some(i) = at.filter(|_| name == "SET") {
                    set.extend([b("PXAT"), arg(i + 1)]);
                }
                out.push(set);
            }
            "HSET" | "HSETNX" | "HMSET" | "HINCRBY" | "HINCRBYFLOAT" => {
                let fields = self.hashes.entry(arg(1)).or_default();
                fields.insert(arg(2));
                out.push(vec![b("HSET"), arg(1), arg(2), arg(3)]);
            }
            "HDEL" => {
                let key = arg(1);
                if let Some(f) = self.hashes.get_mut(&key) {
                    for field in &cmd[2..] {
                        f.remove(field);
                    }
                    if f.is_empty() {
                        self.hashes.remove(&key);
                    }
                }
                let mut hdel = vec![b("HDEL"), key];
                hdel.extend(cmd[2..].iter().cloned());
                out.push(hdel);
            }
            "ZADD" | "ZINCRBY" => out.extend(self.zadd(cmd)),
            "ZREM" | "ZREMRANGEBYSCORE" | "ZREMRANGEBYRANK" | "ZPOPMIN" | "ZPOPMAX" => {
                out.extend(self.zrem(&name, cmd))
            }
            "PEXPIREAT" => out.push(vec![b("PEXPIREAT"), arg(1), arg(2)]),
            "PERSIST" => out.push(vec![b("PERSIST"), arg(1)]),
            "DEL" | "UNLINK" => {
                for key in &cmd[1..] {
                    self.hashes.remove(key);
                    self.zsets.remove(key);
                    out.push(vec![b("DEL"), key.clone()]);
                }
            }
            "FLUSHALL" | "FLUSHDB" => {
                self.hashes.clear();
                self.zsets.clear();
                out.push(vec![b("FLUSHALL")]);
            }
            _ => {}
        }
        out.into_iter().map(|c| (at, by.clone(), c)).collect()
    }

    /// `ZADD k [options] s m...` (or `ZINCRBY k by m`) as the node code's
    /// `ZADD k s m...` with the final scores.
    fn zadd(&mut self, cmd: &[Bytes]) -> Vec<Vec<Bytes>> {
        let key = cmd.get(1).cloned().unwrap_or_default();
        let set = self.zsets.entry(key.clone()).or_default();
        let incr_cmd = upper(&cmd[0]) == "ZINCRBY";
        // Options come first: the pairs are the even tail after them.
        let first = cmd[2..]
            .iter()
            .position(|a| !matches!(upper(a).as_str(), "NX" | "XX" | "GT" | "LT" | "CH" | "INCR"))
            .map_or(cmd.len(), |i| i + 2);
        let incr = incr_cmd || cmd[2..first].iter().any(|a| upper(a) == "INCR");
        let mut out = vec![Bytes::from_static(b"ZADD"), key];
        for pair in cmd[first..].chunks(2) {
            let [s, m] = pair else { continue };
            let Some(v) = std::str::from_utf8(s)
                .ok()
                .and_then(|t| t.parse::<f64>().ok())
            else {
                continue;
            };
            let score = if incr {
                set.get(m).copied().unwrap_or(0.0) + v
            } else {
                v
            };
            set.insert(m.clone(), score);
            out.push(Bytes::from(score.to_string()));
            out.push(m.clone());
        }
        if out.len() > 2 {
            vec![out]
        } else {
            Vec::new()
        }
    }

    /// A removal of members (`ZREM`, or a range, as the stream carries it
    /// from a script) as the node code's `ZREM k m...`.
    fn zrem(&mut self, name: &str, cmd: &[Bytes]) -> Vec<Vec<Bytes>> {
        let key = cmd.get(1).cloned().unwrap_or_default();
        let Some(set) = self.zsets.get_mut(&key) else {
            return Vec::new();
        };
        let gone: Vec<Bytes> = match name {
            "ZREM" => cmd[2..].to_vec(),
            "ZREMRANGEBYSCORE" => {
                let bound = |i: usize| score_bound(cmd.get(i).map_or(&[][..], |b| b));
                let (lo, hi) = (bound(2), bound(3));
                set.iter()
                    .filter(|(_, s)| {
                        lo.is_some_and(|l| l.admits_above(**s))
                            && hi.is_some_and(|h| h.admits_below(**s))
                    })
                    .map(|(m, _)| m.clone())
                    .collect()
            }
            // By rank or a pop: every member of the order's end the stream
            // names is gone; Redis propagates these from a script as they
            // were called, and no lock library here sends them.
            _ => Vec::new(),
        };
        for m in &gone {
            set.remove(m);
        }
        if set.is_empty() {
            self.zsets.remove(&key);
        }
        if gone.is_empty() {
            return Vec::new();
        }
        let mut out = vec![Bytes::from_static(b"ZREM"), key];
        out.extend(gone);
        vec![out]
    }

    /// Forgets what the stream built (a full resync starts it again).
    pub(crate) fn resynced(&mut self) {
        self.hashes.clear();
        self.zsets.clear();
    }
}

/// One end of a `ZREMRANGEBYSCORE` range: `-inf`, `+inf`, `(5`, `5`.
#[derive(Clone, Copy, Debug)]
struct Bound {
    at: f64,
    open: bool,
}

impl Bound {
    fn admits_above(self, s: f64) -> bool {
        if self.open {
            s > self.at
        } else {
            s >= self.at
        }
    }

    fn admits_below(self, s: f64) -> bool {
        if self.open {
            s < self.at
        } else {
            s <= self.at
        }
    }
}

fn score_bound(b: &[u8]) -> Option<Bound> {
    let t = std::str::from_utf8(b).ok()?;
    let (open, t) = match t.strip_prefix('(') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let at = match t.to_ascii_lowercase().as_str() {
        "-inf" => f64::NEG_INFINITY,
        "+inf" | "inf" => f64::INFINITY,
        n => n.parse().ok()?,
    };
    Some(Bound { at, open })
}

/// Whether the command `line` could have made the effect `e` (its key, and
/// for a new value, that value).
fn could_make(line: &[Bytes], e: &[Bytes]) -> bool {
    let (l, name) = (upper(&line[0]), upper(&e[0]));
    let key = |c: &[Bytes]| c.get(1).cloned();
    // A DEL or UNLINK of several keys makes the removal of any of them; an
    // effect without a key (FLUSHALL, FLUSHDB) is made by no DEL.
    let deletes = |k: &Bytes| matches!(l.as_str(), "DEL" | "UNLINK") && line[1..].contains(k);
    if key(line) != key(e) && !e.get(1).is_some_and(deletes) {
        return false;
    }
    let value = |c: &[Bytes]| c.get(2).cloned();
    match name.as_str() {
        "SET" => {
            matches!(
                l.as_str(),
                "SET" | "SETNX" | "GETSET" | "SETEX" | "PSETEX" | "GETEX"
            ) && (value(line) == value(e) || matches!(l.as_str(), "SETEX" | "PSETEX"))
        }
        "SETNX" | "GETSET" => l == name && value(line) == value(e),
        "HSET" | "HSETNX" | "HMSET" | "HINCRBY" | "HINCRBYFLOAT" => {
            l.starts_with('H') && l != "HDEL" && value(line) == value(e)
        }
        "HDEL" => l == "HDEL",
        "ZADD" | "ZINCRBY" => matches!(l.as_str(), "ZADD" | "ZINCRBY"),
        "ZREM" | "ZREMRANGEBYSCORE" | "ZREMRANGEBYRANK" | "ZPOPMIN" | "ZPOPMAX" => {
            l.starts_with("ZREM") || l.starts_with("ZPOP")
        }
        "PEXPIREAT" => matches!(
            l.as_str(),
            "PEXPIRE" | "EXPIRE" | "PEXPIREAT" | "EXPIREAT" | "GETEX"
        ),
        "PERSIST" => l == "PERSIST",
        "DEL" | "UNLINK" => matches!(l.as_str(), "DEL" | "UNLINK" | "GETDEL"),
        _ => l == name,
    }
}

/// For each effect, the line that made it (the longest matching that
/// keeps both orders), or none.
fn align(effects: &[Effect], lines: &[Line]) -> Vec<Option<usize>> {
    let (k, m) = (effects.len(), lines.len());
    // best[i][j]: the most matches of effects[i..] with lines[j..].
    let mut best = vec![vec![0u32; m + 1]; k + 1];
    for i in (0..k).rev() {
        for j in (0..m).rev() {
            let skip = best[i + 1][j].max(best[i][j + 1]);
            let take = if could_make(&lines[j].cmd, &effects[i].cmd) {
                best[i + 1][j + 1] + 1
            } else {
                0
            };
            best[i][j] = skip.max(take);
        }
    }
    let mut owners = vec![None; k];
    let (mut i, mut j) = (0, 0);
    while i < k && j < m {
        if could_make(&lines[j].cmd, &effects[i].cmd) && best[i][j] == best[i + 1][j + 1] + 1 {
            owners[i] = Some(j);
            i += 1;
            j += 1;
        } else if best[i][j] == best[i + 1][j] {
            i += 1;
        } else {
            j += 1;
        }
    }
    // The walk back takes the longest matching, keeping both orders.
    let taken: Vec<usize> = owners.iter().flatten().copied().collect();
    assert!(
        taken.windows(2).all(|w| w[0] < w[1]),
        "effects matched out of the commands' order: {taken:?}"
    );
    assert_eq!(
        taken.len(),
        best.first()
            .and_then(|r| r.first())
            .map_or(0, |b| *b as usize),
        "a matching shorter than the longest"
    );
    owners
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(s: &str) -> Vec<Bytes> {
        s.split(' ').map(|p| Bytes::from(p.to_string())).collect()
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn mark(c: &mut Correlator, n: u64) -> Vec<Attributed> {
        let m = cmd(&format!("PUBLISH {CHANNEL} n1:{n}"));
        c.monitor(false, None, m.clone());
        c.stream(ms(0), m)
    }

    fn shown(out: &[Attributed]) -> Vec<String> {
        out.iter()
            .map(|(_, by, c)| {
                let c: Vec<String> = c
                    .iter()
                    .map(|b| String::from_utf8_lossy(b).into())
                    .collect();
                format!("{} by {}", c.join(" "), by.as_deref().unwrap_or("-"))
            })
            .collect()
    }

    #[test]
    fn an_expiry_between_a_failed_take_and_a_delete_is_nobodys() {
        let mut c = Correlator::new("n1");
        mark(&mut c, 1);
        // c2's take finds the key expired (the server deletes it, then
        // sets c2's); c1 then deletes c2's key with a plain DEL.
        c.monitor(false, Some("c2".into()), cmd("set lock t2 NX PX 1000"));
        c.monitor(false, Some("c1".into()), cmd("del lock"));
        c.stream(ms(5), cmd("DEL lock"));
        c.stream(ms(5), cmd("SET lock t2 PXAT 99"));
        c.stream(ms(6), cmd("DEL lock"));
        mark(&mut c, 2);
        let out = c.ready(ms(7));
        assert_eq!(
            shown(&out),
            [
                "DEL lock by -",
                "SET lock t2 PXAT 99 by c2",
                "DEL lock by c1"
            ]
        );
    }

    #[test]
    fn a_scripts_calls_belong_to_the_client_that_ran_it() {
        let mut c = Correlator::new("n1");
        mark(&mut c, 1);
        c.monitor(false, Some("c1".into()), cmd("evalsha abc 1 lock f1 30000"));
        c.monitor(true, None, cmd("hincrby lock f1 1"));
        c.monitor(true, None, cmd("pexpire lock 30000"));
        c.stream(ms(3), cmd("MULTI"));
        c.stream(ms(3), cmd("hincrby lock f1 1"));
        c.stream(ms(3), cmd("PEXPIREAT lock 123"));
        c.stream(ms(3), cmd("EXEC"));
        // Not yet: MONITOR has not closed the segment.
        c.stream(ms(4), cmd(&format!("PUBLISH {CHANNEL} n1:2")));
        assert!(c.ready(ms(4)).is_empty());
        c.monitor(false, None, cmd(&format!("PUBLISH {CHANNEL} n1:2")));
        let out = c.ready(ms(5));
        assert_eq!(
            shown(&out),
            ["HSET lock f1 1 by c1", "PEXPIREAT lock 123 by c1"]
        );
        // An HDEL, in the node code's form (the history removes the field,
        // and the key with its last one).
        mark(&mut c, 3);
        c.monitor(false, Some("c1".into()), cmd("hdel lock f1"));
        c.stream(ms(9), cmd("hdel lock f1"));
        mark(&mut c, 4);
        assert_eq!(shown(&c.ready(ms(10))), ["HDEL lock f1 by c1"]);
    }

    #[test]
    fn a_replicas_effects_are_its_masters() {
        let mut c = Correlator::new("n2");
        c.stream(ms(1), cmd("SET lock t1 PXAT 5"));
        let out = c.stream(ms(2), cmd(&format!("PUBLISH {CHANNEL} n1:7")));
        assert_eq!(shown(&out), ["SET lock t1 PXAT 5 by -"]);
        // With no marker at all, after UNCLOSED.
        c.stream(ms(3), cmd("DEL lock"));
        assert!(c.ready(ms(4)).is_empty());
        assert_eq!(shown(&c.ready(ms(3) + UNCLOSED)), ["DEL lock by -"]);
    }
    #[test]
    fn a_sorted_set_lock_is_followed_member_by_member() {
        // Symfony's save, as Redis 7.0 runs it: its script's calls in
        // MONITOR, their effects verbatim in the stream.
        let mut c = Correlator::new("n1");
        mark(&mut c, 1);
        c.monitor(
            false,
            Some("c1".into()),
            cmd("evalsha 9f 1 lock 1.5 tok1 1000"),
        );
        for call in [
            "TIME",
            "ZREMRANGEBYSCORE lock -inf 5000",
            "ZADD lock 6000 tok1",
            "ZADD lock 6000 __write__",
            "PEXPIREAT lock 6000",
        ] {
            c.monitor(true, None, cmd(call));
        }
        for effect in [
            "ZREMRANGEBYSCORE lock -inf 5000",
            "ZADD lock 6000 tok1",
            "ZADD lock 6000 __write__",
            "PEXPIREAT lock 6000",
        ] {
            c.stream(ms(2), cmd(effect));
        }
        mark(&mut c, 2);
        assert_eq!(
            shown(&c.ready(ms(3))),
            [
                "ZADD lock 6000 tok1 by c1",
                "ZADD lock 6000 __write__ by c1",
                "PEXPIREAT lock 6000 by c1"
            ],
            "a range removal that removed nothing is no effect"
        );
        // c2's save after they ran out: its range removal removes both
        // members (the history calls that their expiry, by their scores).
        c.monitor(
            false,
            Some("c2".into()),
            cmd("evalsha 9f 1 lock 7.0 tok2 1000"),
        );
        c.monitor(true, None, cmd("ZREMRANGEBYSCORE lock -inf 7000"));
        c.monitor(true, None, cmd("ZADD lock 8000 tok2"));
        c.stream(ms(4), cmd("ZREMRANGEBYSCORE lock -inf 7000"));
        c.stream(ms(4), cmd("ZADD lock 8000 tok2"));
        mark(&mut c, 3);
        assert_eq!(
            shown(&c.ready(ms(5))),
            [
                "ZREM lock __write__ tok1 by c2",
                "ZADD lock 8000 tok2 by c2"
            ]
        );
        // Its release: ZREM of its own member.
        c.monitor(false, Some("c2".into()), cmd("evalsha 1a 1 lock tok2"));
        c.monitor(true, None, cmd("ZREM lock tok2"));
        c.stream(ms(6), cmd("ZREM lock tok2"));
        mark(&mut c, 4);
        assert_eq!(shown(&c.ready(ms(7))), ["ZREM lock tok2 by c2"]);
    }

    #[test]
    fn zadd_options_and_increments_give_the_final_scores() {
        let mut c = Correlator::new("n1");
        mark(&mut c, 1);
        c.monitor(false, Some("c1".into()), cmd("zadd lock NX CH 10 m"));
        c.monitor(false, Some("c1".into()), cmd("zincrby lock 5 m"));
        c.stream(ms(1), cmd("zadd lock NX CH 10 m"));
        c.stream(ms(1), cmd("zincrby lock 5 m"));
        mark(&mut c, 2);
        assert_eq!(
            shown(&c.ready(ms(2))),
            ["ZADD lock 10 m by c1", "ZADD lock 15 m by c1"]
        );
    }

    #[test]
    fn a_string_locks_companion_keys_and_an_expiry_are_told_apart() {
        // rueidislock: three keys, each SET by its script; one expires.
        let mut c = Correlator::new("n1");
        mark(&mut c, 1);
        c.monitor(false, Some("c1".into()), cmd("evalsha ab 1 k:0 t1 9000"));
        c.monitor(true, None, cmd("SET k:0 t1 NX PXAT 9000"));
        c.monitor(false, Some("c1".into()), cmd("evalsha ab 1 k:1 t1 9000"));
        c.monitor(true, None, cmd("SET k:1 t1 NX PXAT 9000"));
        c.monitor(false, Some("c2".into()), cmd("evalsha ab 1 k:2 t2 9100"));
        c.monitor(true, None, cmd("GET k:2"));
        c.stream(ms(1), cmd("SET k:0 t1 PXAT 9000"));
        c.stream(ms(1), cmd("SET k:1 t1 PXAT 9000"));
        // The GET found k:2 expired: the server's own DEL, before c2's SET.
        c.stream(ms(2), cmd("DEL k:2"));
        mark(&mut c, 2);
        assert_eq!(
            shown(&c.ready(ms(3))),
            [
                "SET k:0 t1 PXAT 9000 by c1",
                "SET k:1 t1 PXAT 9000 by c1",
                "DEL k:2 by -"
            ]
        );
    }

    #[test]
    fn a_flush_beside_a_delete_of_another_key_is_each_its_own() {
        // A DEL and a FLUSHALL between the same two marks: the FLUSHALL,
        // an effect of one word, is no DEL's (this indexed past its end
        // and killed the node's history reader).
        let mut c = Correlator::new("n1");
        mark(&mut c, 1);
        c.monitor(false, Some("c1".into()), cmd("del other"));
        c.monitor(false, Some("c2".into()), cmd("flushall"));
        c.stream(ms(1), cmd("DEL other"));
        c.stream(ms(1), cmd("FLUSHALL"));
        mark(&mut c, 2);
        let out = c.ready(ms(2));
        assert_eq!(shown(&out), ["DEL other by c1", "FLUSHALL by c2"]);
    }
}
