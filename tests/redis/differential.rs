//! Differential test: the same seeded sequence of random commands against the
//! project's node and against a real `redis-server` (7.0) must give the same
//! replies.
//!
//! The whole command list is generated from the seed before anything runs, so
//! it never depends on a reply. Each command goes to Redis, then at once to the
//! node; a sleep step sleeps once and so covers both. Replies are compared
//! exactly (errors included: the node copies Redis's wording), except `PTTL`
//! (within [`PTTL_TOLERANCE_MS`]), `TTL` (within one second), and `INFO`,
//! `ROLE`, `COMMAND`, whose contents legitimately differ (only their shape is
//! compared: a bulk string, an array starting with "master", an array).
//!
//! Commands are single random commands over six keys (GET, SET with random
//! options, SETNX, GETSET, INCR, DEL, EXISTS, EXPIRE, EXPIREAT, PEXPIRE,
//! PEXPIREAT, PTTL, TTL,
//! FLUSHALL, PING, SELECT, the lock scripts by EVAL and EVALSHA, SCRIPT
//! LOAD|EXISTS|FLUSH, wrong arity, unknown commands, random letter case), and
//! a few fixed shapes with random parts: a lock cycle (SET NX PX, extend,
//! release), INCR up to overflow, an absolute expiry asked for again with
//! GT/LT/NX/XX (a tie), and a short-lived key touched after it died.
//!
//! Expiry stays deterministic although the two servers run a few
//! microseconds apart:
//! - keys that must live get TTLs of days, and every long TTL is unique: a
//!   relative one is `bucket + c` seconds, with buckets 100 000 s apart and
//!   `c` counting the times generated (so within a bucket a later one is
//!   always larger); absolute ones (from the wall clock at generation time)
//!   sit halfway between buckets. A `GT`/`LT` comparison then never falls on a
//!   tie that depends on when each server ran the command; ties come only from
//!   equal absolute times, which are deterministic.
//! - keys that must die get times in the past (`PXAT`/`EXAT`/`PEXPIREAT`/
//!   `EXPIREAT` before the generation time, `PEXPIRE`/`EXPIRE` 0 or
//!   negative);
//! - short-lived keys (`PX`/`PEXPIRE`/extend script of 30..80 ms) are only
//!   touched again after a 150 ms sleep.
//!
//! Excluded on purpose (intentional differences, not bugs):
//! - scripts other than the lock scripts: `tests/differential_scripts.rs`
//!   compares random scripts and every conversion (this test keeps to the
//!   lock scripts and one other valid script loaded with `SCRIPT LOAD`).
//!   Hashes, `TYPE`, `WRONGTYPE` and RESP3 are `tests/differential_resp3.rs`'s.
//! - `SCRIPT HELP|KILL|DEBUG`: subcommands Redis has and the node does not.
//! - `SELECT 1..15`: the node has a single database.
//! - `COMMAND` subcommands: the node answers every `COMMAND` with an empty
//!   list (enough for `redis-cli`).
//! - commands the node does not implement at all (`APPEND`, ...):
//!   the unknown command names used here are unknown to Redis too.
//!
//! `DIFFERENTIAL_SEEDS=10,11 cargo test --release --test redis
//! differential_env_seeds -- --ignored` runs more seeds; `DIFFERENTIAL_TALLY=1` (with `--nocapture`) prints how often
//! each command got each kind of reply.

use crate::common;

use common::{start_redis, start_sim_node, Client};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redlock_client::scripts::{sha1_hex, EXTEND, RELEASE};
use redlock_proto::resp::Frame;
use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

/// Commands per seed.
const COMMANDS: usize = 2000;
/// Largest accepted difference between the two servers' `PTTL` replies.
const PTTL_TOLERANCE_MS: i64 = 250;
/// A short-lived key gets a TTL in this range...
const SHORT_TTL_MS: std::ops::RangeInclusive<i64> = 30..=80;
/// ...and is touched again only after this long.
const SHORT_SLEEP_MS: u64 = 150;

const KEYS: &[&str] = &["a", "b", "c", "lock", "k:1", "{x}"];
const TOKENS: &[&str] = &["tokA", "tokB"];
const VALUES: &[&str] = &[
    "0",
    "1",
    "-1",
    "42",
    "01",
    "-0",
    "+1",
    " 7",
    "1.5",
    "9223372036854775807",
    "9223372036854775806",
    "-9223372036854775808",
    "18446744073709551616",
    "abc",
    "",
    "tokA",
    "tokB",
];
/// 40 hex characters that are the SHA1 of no script generated here.
const UNKNOWN_SHA: &str = "0123456789abcdef0123456789abcdef01234567";
/// A valid Lua script, loaded with `SCRIPT LOAD` but never run here.
const OTHER_SCRIPT: &str = "return 1";

const MS_BUCKET: i64 = 100_000_000; // 100 000 s
const S_BUCKET: i64 = MS_BUCKET / 1000;

#[derive(Clone, Debug)]
enum Step {
    Cmd(Vec<Vec<u8>>),
    Sleep(u64),
}

fn wall_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

struct Gen {
    rng: ChaCha8Rng,
    /// Wall clock (ms) when generation started.
    now: i64,
    /// Counts long times generated; keeps every long TTL unique and
    /// increasing within its bucket.
    counter: i64,
    steps: Vec<Step>,
    commands: usize,
}

fn b(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

impl Gen {
    fn new(seed: u64, now: i64) -> Gen {
        Gen {
            rng: ChaCha8Rng::seed_from_u64(seed),
            now,
            counter: 0,
            steps: Vec::new(),
            commands: 0,
        }
    }

    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.rng.random_range(0..xs.len())]
    }

    fn chance(&mut self, p: f64) -> bool {
        self.rng.random_bool(p)
    }

    /// A command name or option word in upper, lower or mixed case.
    fn word(&mut self, w: &str) -> Vec<u8> {
        match self.rng.random_range(0..10) {
            0..=4 => w.to_ascii_uppercase().into_bytes(),
            5..=7 => w.to_ascii_lowercase().into_bytes(),
            _ => w
                .bytes()
                .map(|c| {
                    if self.rng.random_bool(0.5) {
                        c.to_ascii_uppercase()
                    } else {
                        c.to_ascii_lowercase()
                    }
                })
                .collect(),
        }
    }

    fn key(&mut self) -> Vec<u8> {
        b(self.pick(KEYS))
    }

    fn value(&mut self) -> Vec<u8> {
        if self.chance(0.4) {
            b(self.pick(TOKENS))
        } else {
            b(self.pick(VALUES))
        }
    }

    /// The key a lock command uses: mostly "lock", so that tokens match.
    fn lock_key(&mut self) -> Vec<u8> {
        if self.chance(0.5) {
            b("lock")
        } else {
            self.key()
        }
    }

    fn token(&mut self) -> Vec<u8> {
        if self.chance(0.85) {
            b(self.pick(TOKENS))
        } else {
            b(self.pick(VALUES))
        }
    }

    fn push(&mut self, args: Vec<Vec<u8>>) {
        self.commands += 1;
        self.steps.push(Step::Cmd(args));
    }

    fn next_counter(&mut self) -> i64 {
        self.counter += 1;
        self.counter
    }

    /// A long relative time in ms: days, unique, increasing per bucket.
    fn long_rel_ms(&mut self) -> i64 {
        let bucket = self.rng.random_range(1..=5);
        bucket * MS_BUCKET + self.next_counter() * 1000
    }

    fn long_rel_s(&mut self) -> i64 {
        let bucket = self.rng.random_range(1..=5);
        bucket * S_BUCKET + self.next_counter()
    }

    /// A far-future absolute time in ms, halfway between relative buckets.
    fn long_abs_ms(&mut self) -> i64 {
        let bucket = self.rng.random_range(1..=5);
        self.now + bucket * MS_BUCKET + MS_BUCKET / 2 + self.next_counter() * 1000
    }

    fn long_abs_s(&mut self) -> i64 {
        let bucket = self.rng.random_range(1..=5);
        self.now / 1000 + bucket * S_BUCKET + S_BUCKET / 2 + self.next_counter()
    }

    fn past_abs_ms(&mut self) -> i64 {
        match self.rng.random_range(0..4) {
            0 => 1,
            _ => self.now - self.rng.random_range(1000..1_000_000_000),
        }
    }

    fn past_abs_s(&mut self) -> i64 {
        match self.rng.random_range(0..4) {
            0 => 1,
            _ => self.now / 1000 - self.rng.random_range(1..1_000_000),
        }
    }

    /// Values that are not valid expiry times for `SET`, or overflow.
    fn bad_time(&mut self) -> Vec<u8> {
        if self.chance(0.5) {
            // Integers, but not valid times.
            return b(self.pick(&["0", "-1", "-5000", "-9223372036854775808"]));
        }
        b(self.pick(&[
            "abc",
            "",
            "1.5",
            "01",
            "-0",
            "9223372036854775807",
            "9223372036854775808",
            "9223372036854775",
            "9223372036854776",
        ]))
    }

    /// The expiry option of `SET` with its value (or without, rarely).
    fn set_expiry(&mut self) -> Vec<Vec<u8>> {
        let unit = self.pick(&["EX", "PX", "EXAT", "PXAT"]);
        let mut out = vec![self.word(unit)];
        if self.chance(0.04) {
            return out; // missing value: takes the next option, or ends
        }
        let r = self.rng.random_range(0..100);
        let v = if r < 70 {
            match unit {
                "EX" => self.long_rel_s().to_string().into_bytes(),
                "PX" => self.long_rel_ms().to_string().into_bytes(),
                "EXAT" => self.long_abs_s().to_string().into_bytes(),
                _ => self.long_abs_ms().to_string().into_bytes(),
            }
        } else if r < 85 && unit == "EXAT" {
            self.past_abs_s().to_string().into_bytes()
        } else if r < 85 && unit == "PXAT" {
            self.past_abs_ms().to_string().into_bytes()
        } else {
            self.bad_time()
        };
        out.push(v);
        out
    }

    fn set(&mut self) {
        if self.chance(0.15) {
            // What a lock client sends: SET key token NX PX ttl.
            let mut args = vec![
                self.word("SET"),
                self.lock_key(),
                self.token(),
                self.word("NX"),
            ];
            let ms = self.long_rel_ms().to_string().into_bytes();
            args.push(self.word("PX"));
            args.push(ms);
            self.push(args);
            return;
        }
        let mut args = vec![self.word("SET"), self.key(), self.value()];
        if self.chance(0.6) {
            let n = *[1, 1, 1, 2, 2, 3, 4]
                .get(self.rng.random_range(0..7))
                .unwrap();
            for _ in 0..n {
                match self.rng.random_range(0..100) {
                    0..=12 => args.push(self.word("NX")),
                    13..=25 => args.push(self.word("XX")),
                    26..=40 => args.push(self.word("GET")),
                    41..=49 => args.push(self.word("KEEPTTL")),
                    50..=96 => args.extend(self.set_expiry()),
                    _ => {
                        let w = self.pick(&["FOO", "PERSIST", "EXX", "N"]);
                        args.push(self.word(w))
                    }
                }
            }
        }
        self.push(args);
    }

    /// A time argument for `PEXPIRE` (also the script's `ARGV[2]`).
    fn pexpire_time(&mut self) -> Vec<u8> {
        match self.rng.random_range(0..100) {
            0..=64 => self.long_rel_ms().to_string().into_bytes(),
            65..=74 => b("0"),
            75..=84 => format!("-{}", self.rng.random_range(1..1_000_000)).into_bytes(),
            _ => b(self.pick(&[
                "abc",
                "",
                "1.5",
                "01",
                "-0",
                "9223372036854775807",
                "-9223372036854775808",
                "9223372036854775808",
            ])),
        }
    }

    fn pexpireat_time(&mut self) -> Vec<u8> {
        match self.rng.random_range(0..100) {
            0..=59 => self.long_abs_ms().to_string().into_bytes(),
            60..=79 => self.past_abs_ms().to_string().into_bytes(),
            80..=84 => b("0"),
            85..=89 => format!("-{}", self.rng.random_range(1..1_000_000)).into_bytes(),
            _ => b(self.pick(&[
                "abc",
                "9223372036854775807",
                "-9223372036854775808",
                "9223372036854775808",
                "1.5",
            ])),
        }
    }

    fn expire_options(&mut self, args: &mut Vec<Vec<u8>>) {
        if self.chance(0.5) {
            let n = self.rng.random_range(1..=2);
            for _ in 0..n {
                let w = if self.chance(0.05) {
                    self.pick(&["EX", "FOO", "KEEPTTL"])
                } else {
                    self.pick(&["NX", "XX", "GT", "LT"])
                };
                args.push(self.word(w));
            }
        }
    }

    /// A time argument for `EXPIRE`, in seconds: overflows in milliseconds
    /// among the bad ones.
    fn expire_time(&mut self) -> Vec<u8> {
        match self.rng.random_range(0..100) {
            0..=64 => self.long_rel_s().to_string().into_bytes(),
            65..=74 => b("0"),
            75..=84 => format!("-{}", self.rng.random_range(1..1_000_000)).into_bytes(),
            _ => b(self.pick(&[
                "abc",
                "1.5",
                "9223372036854775",
                "9223372036854776",
                "-9223372036854775",
                "-9223372036854776",
                "9223372036854775807",
            ])),
        }
    }

    fn expireat_time(&mut self) -> Vec<u8> {
        match self.rng.random_range(0..100) {
            0..=59 => self.long_abs_s().to_string().into_bytes(),
            60..=79 => self.past_abs_s().to_string().into_bytes(),
            80..=84 => b("0"),
            85..=89 => format!("-{}", self.rng.random_range(1..1_000_000)).into_bytes(),
            _ => b(self.pick(&[
                "abc",
                "9223372036854775",
                "9223372036854776",
                "-9223372036854776",
                "1.5",
            ])),
        }
    }

    fn expire(&mut self) {
        let mut args = vec![self.word("EXPIRE"), self.key(), self.expire_time()];
        self.expire_options(&mut args);
        self.push(args);
    }

    fn expireat(&mut self) {
        let mut args = vec![self.word("EXPIREAT"), self.key(), self.expireat_time()];
        self.expire_options(&mut args);
        self.push(args);
    }

    fn pexpire(&mut self) {
        let mut args = vec![self.word("PEXPIRE"), self.key(), self.pexpire_time()];
        self.expire_options(&mut args);
        self.push(args);
    }

    fn pexpireat(&mut self) {
        let mut args = vec![self.word("PEXPIREAT"), self.key(), self.pexpireat_time()];
        self.expire_options(&mut args);
        self.push(args);
    }

    fn some_keys(&mut self, max: usize) -> Vec<Vec<u8>> {
        let n = self.rng.random_range(1..=max);
        (0..n).map(|_| self.key()).collect()
    }

    /// Keys and args for a lock script: usually `1 key token [ms]`, sometimes
    /// with missing, extra or invalid parts.
    fn script_args(&mut self, extend: bool) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        match self.rng.random_range(0..100) {
            0..=69 => {
                out.push(b("1"));
                out.push(self.lock_key());
                out.push(self.token());
                if extend && self.chance(0.93) {
                    out.push(self.pexpire_time());
                }
            }
            70..=74 => {
                // No ARGV at all.
                out.push(b("1"));
                out.push(self.lock_key());
            }
            75..=79 => {
                // Two keys: the script uses only the first.
                out.push(b("2"));
                out.push(self.lock_key());
                out.push(self.lock_key());
                out.push(self.token());
                out.push(self.pexpire_time());
            }
            80..=84 => {
                // No KEYS[1].
                out.push(b("0"));
                if self.chance(0.5) {
                    out.push(self.token());
                }
            }
            _ => {
                let nk = self.pick(&["-1", "abc", "3", "01", "9223372036854775807", "1.0"]);
                out.push(b(nk));
                let extra = self.rng.random_range(0..=2);
                for _ in 0..extra {
                    out.push(self.lock_key());
                }
            }
        }
        out
    }

    fn eval(&mut self) {
        let extend = self.chance(0.5);
        let body = if extend { EXTEND } else { RELEASE };
        let mut args = vec![self.word("EVAL"), b(body)];
        args.extend(self.script_args(extend));
        self.push(args);
    }

    fn evalsha(&mut self) {
        let extend = self.chance(0.5);
        let sha = match self.rng.random_range(0..100) {
            0..=69 => {
                let s = sha1_hex(if extend { EXTEND } else { RELEASE }.as_bytes());
                if self.chance(0.2) {
                    s.to_ascii_uppercase()
                } else {
                    s
                }
            }
            70..=84 => UNKNOWN_SHA.to_string(),
            _ => self
                .pick(&[
                    "abc",
                    "",
                    "0123456789abcdef0123456789abcdef0123456",
                    "0123456789abcdef0123456789abcdef012345678",
                ])
                .to_string(),
        };
        let mut args = vec![self.word("EVALSHA"), sha.into_bytes()];
        args.extend(self.script_args(extend));
        self.push(args);
    }

    fn sha_arg(&mut self) -> Vec<u8> {
        match self.rng.random_range(0..6) {
            0 => sha1_hex(RELEASE.as_bytes()).into_bytes(),
            1 => sha1_hex(EXTEND.as_bytes()).into_bytes(),
            2 => sha1_hex(EXTEND.as_bytes())
                .to_ascii_uppercase()
                .into_bytes(),
            3 => sha1_hex(OTHER_SCRIPT.as_bytes()).into_bytes(),
            4 => b(UNKNOWN_SHA),
            _ => b("abc"),
        }
    }

    fn script(&mut self) {
        let mut args = vec![self.word("SCRIPT")];
        match self.rng.random_range(0..100) {
            0..=34 => {
                args.push(self.word("LOAD"));
                let body = match self.rng.random_range(0..5) {
                    0 | 1 => RELEASE,
                    2 | 3 => EXTEND,
                    _ => OTHER_SCRIPT,
                };
                args.push(b(body));
            }
            35..=79 => {
                args.push(self.word("EXISTS"));
                let n = self.rng.random_range(1..=4);
                for _ in 0..n {
                    let s = self.sha_arg();
                    args.push(s);
                }
            }
            80..=87 => {
                args.push(self.word("FLUSH"));
                match self.rng.random_range(0..6) {
                    0 | 1 => {}
                    2 => args.push(self.word("SYNC")),
                    3 => args.push(self.word("ASYNC")),
                    4 => args.push(b("bogus")),
                    _ => {
                        args.push(self.word("SYNC"));
                        args.push(self.word("ASYNC"));
                    }
                }
            }
            88..=91 => {
                let w = self.pick(&["BOGUS", "LOADX", "EXIST"]);
                args.push(self.word(w));
                if self.chance(0.5) {
                    args.push(self.value());
                }
            }
            92..=95 => {
                // SCRIPT LOAD with a wrong number of arguments.
                args.push(self.word("LOAD"));
                if self.chance(0.5) {
                    args.push(b(RELEASE));
                    args.push(b(RELEASE));
                }
            }
            _ => {
                if self.chance(0.5) {
                    args.push(self.word("EXISTS"));
                }
            }
        }
        self.push(args);
    }

    /// A key with a TTL of 30..80 ms (from `SET PX`, `PEXPIRE` or the extend
    /// script), a sleep that outlives it, then a few accesses.
    fn short_lived(&mut self) {
        let key = self.key();
        let ms = self.rng.random_range(SHORT_TTL_MS).to_string().into_bytes();
        match self.rng.random_range(0..3) {
            0 => {
                let mut args = vec![
                    self.word("SET"),
                    key.clone(),
                    self.value(),
                    self.word("PX"),
                    ms,
                ];
                if self.chance(0.3) {
                    let w = self.pick(&["NX", "XX", "GET"]);
                    args.push(self.word(w));
                }
                self.push(args);
            }
            1 => {
                let args = vec![self.word("PEXPIRE"), key.clone(), ms];
                self.push(args);
            }
            _ => {
                let args = vec![
                    self.word("EVAL"),
                    b(EXTEND),
                    b("1"),
                    key.clone(),
                    self.token(),
                    ms,
                ];
                self.push(args);
            }
        }
        self.steps.push(Step::Sleep(SHORT_SLEEP_MS));
        let n = self.rng.random_range(1..=3);
        for _ in 0..n {
            let w = self.pick(&["GET", "PTTL", "TTL", "EXISTS", "INCR", "SETNX"]);
            let mut args = vec![self.word(w), key.clone()];
            if w == "SETNX" {
                args.push(self.value());
            }
            self.push(args);
        }
    }

    /// INCR up to and past the largest integer, on a key with or without a
    /// TTL (which INCR keeps).
    fn incr_to_overflow(&mut self) {
        let key = self.key();
        let mut args = vec![self.word("SET"), key.clone(), b("9223372036854775806")];
        if self.chance(0.5) {
            let ms = self.long_rel_ms().to_string().into_bytes();
            args.push(self.word("PX"));
            args.push(ms);
        }
        self.push(args);
        for _ in 0..2 {
            let args = vec![self.word("INCR"), key.clone()];
            self.push(args);
        }
        let args = vec![self.word("PTTL"), key];
        self.push(args);
    }

    /// An absolute expiry set, then asked for again with `GT`/`LT`/`NX`/`XX`:
    /// equal times, which only absolute times make deterministic.
    fn expiry_tie(&mut self) {
        let key = self.key();
        let at_s = self.long_abs_s();
        let at_ms = at_s * 1000;
        let args = match self.rng.random_range(0..3) {
            0 => vec![
                self.word("SET"),
                key.clone(),
                self.value(),
                self.word("EXAT"),
                at_s.to_string().into_bytes(),
            ],
            1 => vec![
                self.word("SET"),
                key.clone(),
                self.value(),
                self.word("PXAT"),
                at_ms.to_string().into_bytes(),
            ],
            _ => vec![
                self.word("PEXPIREAT"),
                key.clone(),
                at_ms.to_string().into_bytes(),
            ],
        };
        self.push(args);
        let n = self.rng.random_range(1..=2);
        for _ in 0..n {
            let opt = self.pick(&["GT", "LT", "NX", "XX"]);
            let args = vec![
                self.word("PEXPIREAT"),
                key.clone(),
                at_ms.to_string().into_bytes(),
                self.word(opt),
            ];
            self.push(args);
        }
        let args = vec![self.word("PTTL"), key];
        self.push(args);
    }

    /// What the lock client does: acquire with `SET NX PX`, extend, release,
    /// by `EVAL` or `EVALSHA`, with our token or another one.
    fn lock_cycle(&mut self) {
        let key = self.lock_key();
        let token = b(self.pick(TOKENS));
        let ms = self.long_rel_ms().to_string().into_bytes();
        let args = vec![
            self.word("SET"),
            key.clone(),
            token.clone(),
            self.word("NX"),
            self.word("PX"),
            ms,
        ];
        self.push(args);
        let extends = self.rng.random_range(0..=2);
        for i in 0..=extends {
            let release = i == extends;
            let body = if release { RELEASE } else { EXTEND };
            let script = if self.chance(0.5) {
                vec![self.word("EVAL"), b(body)]
            } else {
                vec![self.word("EVALSHA"), sha1_hex(body.as_bytes()).into_bytes()]
            };
            let tok = if self.chance(0.8) {
                token.clone()
            } else {
                self.token()
            };
            let mut args = script;
            args.extend([b("1"), key.clone(), tok]);
            if !release {
                args.push(self.pexpire_time());
            }
            self.push(args);
        }
    }

    fn wrong_arity(&mut self) {
        let k = self.key();
        let v = self.value();
        let (name, rest): (&str, Vec<Vec<u8>>) = match self.rng.random_range(0..22) {
            0 => ("GET", vec![]),
            1 => ("GET", vec![k.clone(), k]),
            2 => ("SET", vec![k]),
            3 => ("SET", vec![]),
            4 => ("SETNX", vec![k]),
            5 => ("SETNX", vec![k, v.clone(), v]),
            6 => ("GETSET", vec![k]),
            7 => ("INCR", vec![]),
            8 => ("INCR", vec![k.clone(), k]),
            9 => ("DEL", vec![]),
            10 => ("EXISTS", vec![]),
            11 => ("PEXPIRE", vec![k]),
            12 => ("PEXPIREAT", vec![]),
            13 => ("PTTL", vec![]),
            14 => ("PTTL", vec![k.clone(), k]),
            15 => ("TTL", vec![k.clone(), k]),
            16 => ("EVAL", vec![b(RELEASE)]),
            17 => ("EVALSHA", vec![sha1_hex(RELEASE.as_bytes()).into_bytes()]),
            18 => ("PING", vec![v.clone(), v]),
            19 => ("ROLE", vec![v]),
            20 => ("SELECT", vec![]),
            _ => ("GETSET", vec![k, v.clone(), v]),
        };
        let mut args = vec![self.word(name)];
        args.extend(rest);
        self.push(args);
    }

    fn unknown(&mut self) {
        // Names unknown to Redis 7.0 too; an empty one; one longer than the
        // 128 characters the error message keeps.
        let long = "Z".repeat(140);
        let name = self.pick(&[
            "FOO",
            "setx",
            "Gett",
            "LOCKIT",
            "nosuchcommand",
            "EVALX",
            "",
            &long,
        ]);
        let mut args = vec![b(name)];
        let n = self.rng.random_range(0..=3);
        for _ in 0..n {
            if self.chance(0.1) {
                args.push("y".repeat(150).into_bytes());
            } else {
                args.push(self.value());
            }
        }
        self.push(args);
    }

    fn one(&mut self) {
        let r = self.rng.random_range(0..1000);
        match r {
            0..=99 => {
                let args = vec![self.word("GET"), self.key()];
                self.push(args)
            }
            100..=279 => self.set(),
            280..=314 => {
                let args = vec![self.word("SETNX"), self.key(), self.value()];
                self.push(args)
            }
            315..=349 => {
                let args = vec![self.word("GETSET"), self.key(), self.value()];
                self.push(args)
            }
            350..=399 => {
                let args = vec![self.word("INCR"), self.key()];
                self.push(args)
            }
            400..=404 => self.incr_to_overflow(),
            405..=409 => self.expiry_tie(),
            410..=444 => {
                let mut args = vec![self.word("DEL")];
                args.extend(self.some_keys(4));
                self.push(args)
            }
            445..=484 => {
                let mut args = vec![self.word("EXISTS")];
                args.extend(self.some_keys(5));
                self.push(args)
            }
            485..=529 => self.pexpire(),
            530..=554 => self.expire(),
            555..=584 => self.pexpireat(),
            585..=604 => self.expireat(),
            605..=674 => {
                let args = vec![self.word("PTTL"), self.key()];
                self.push(args)
            }
            675..=714 => {
                let args = vec![self.word("TTL"), self.key()];
                self.push(args)
            }
            715..=749 => self.eval(),
            750..=774 => self.lock_cycle(),
            775..=819 => self.evalsha(),
            820..=854 => self.script(),
            855..=874 => {
                let mut args = vec![self.word("PING")];
                if self.chance(0.5) {
                    args.push(self.value());
                }
                self.push(args)
            }
            875..=904 => self.wrong_arity(),
            905..=924 => self.unknown(),
            925..=954 => self.short_lived(),
            955..=957 => {
                let mut args = vec![self.word("FLUSHALL")];
                match self.rng.random_range(0..6) {
                    0 | 1 => {}
                    2 => args.push(self.word("SYNC")),
                    3 => args.push(self.word("ASYNC")),
                    4 => args.push(b("now")),
                    _ => {
                        args.push(self.word("ASYNC"));
                        args.push(self.word("SYNC"));
                    }
                }
                self.push(args)
            }
            958..=974 => {
                // SELECT 1..15 is excluded: the node has one database.
                let db = self.pick(&[
                    "0",
                    "abc",
                    "16",
                    "-1",
                    "00",
                    "2147483648",
                    "-2147483649",
                    "99999999999",
                    "9223372036854775808",
                ]);
                let args = vec![self.word("SELECT"), b(db)];
                self.push(args)
            }
            975..=984 => {
                let mut args = vec![self.word("INFO")];
                if self.chance(0.5) {
                    let s = self.pick(&["keyspace", "replication", "server"]);
                    args.push(self.word(s));
                }
                self.push(args)
            }
            985..=994 => {
                let args = vec![self.word("ROLE")];
                self.push(args)
            }
            _ => {
                let args = vec![self.word("COMMAND")];
                self.push(args)
            }
        }
    }
}

/// The whole list of steps for `seed`, with `commands` commands.
fn generate(seed: u64, commands: usize, now: i64) -> Vec<Step> {
    let mut g = Gen::new(seed, now);
    while g.commands < commands {
        g.one();
    }
    // A block of several commands may have gone past the count: cut it.
    let mut seen = 0;
    let keep = g
        .steps
        .iter()
        .position(|s| {
            seen += matches!(s, Step::Cmd(_)) as usize;
            seen > commands
        })
        .unwrap_or(g.steps.len());
    g.steps.truncate(keep);
    g.steps
}

/// A command for a failure message: script bodies abbreviated, odd bytes
/// quoted.
fn show(args: &[Vec<u8>]) -> String {
    args.iter()
        .map(|a| {
            if a == RELEASE.as_bytes() {
                "<RELEASE script>".to_string()
            } else if a == EXTEND.as_bytes() {
                "<EXTEND script>".to_string()
            } else {
                let s = String::from_utf8_lossy(a);
                if s.is_empty()
                    || s.chars()
                        .any(|c| c.is_whitespace() || c.is_control() || c == '"')
                {
                    format!("{s:?}")
                } else {
                    s.into_owned()
                }
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Do the replies agree? `Err` says how they differ.
fn agree(args: &[Vec<u8>], redis: &Frame, node: &Frame) -> Result<(), String> {
    let name = String::from_utf8_lossy(&args[0]).to_ascii_lowercase();
    match (name.as_str(), redis, node) {
        ("pttl", Frame::Integer(a), Frame::Integer(b)) => {
            if *a < 0 || *b < 0 {
                if a == b {
                    return Ok(());
                }
            } else if (a - b).abs() <= PTTL_TOLERANCE_MS {
                return Ok(());
            }
            Err(format!("PTTL differs beyond {PTTL_TOLERANCE_MS} ms"))
        }
        ("ttl", Frame::Integer(a), Frame::Integer(b)) => {
            if *a < 0 || *b < 0 {
                if a == b {
                    return Ok(());
                }
            } else if (a - b).abs() <= 1 {
                return Ok(());
            }
            Err("TTL differs by more than 1 s".into())
        }
        // Contents differ by design (versions, offsets, command table).
        ("info", Frame::Bulk(_), Frame::Bulk(_)) => Ok(()),
        ("role", Frame::Array(a), Frame::Array(b))
            if a.first() == Some(&Frame::bulk("master")) && a.first() == b.first() =>
        {
            Ok(())
        }
        ("command", Frame::Array(_), Frame::Array(_)) => Ok(()),
        _ if redis == node => Ok(()),
        _ => Err("replies differ".into()),
    }
}

/// A reply's class, for the tally of outcomes: small integers by value,
/// errors by message.
fn outcome(args: &[Vec<u8>], reply: &Frame) -> (String, String) {
    let name = String::from_utf8_lossy(&args[0]).to_ascii_lowercase();
    let class = match reply {
        Frame::Integer(x) if (-2..=2).contains(x) => format!("{x}"),
        Frame::Integer(x) if *x > 0 => "positive".into(),
        Frame::Integer(_) => "negative".into(),
        Frame::Error(e) => format!("error {e}"),
        Frame::Bulk(_) => "bulk".into(),
        Frame::Null => "null".into(),
        Frame::Simple(s) => s.clone(),
        Frame::Array(_) => "array".into(),
        other => format!("{other:?}"),
    };
    (name, class)
}

/// Outcomes every seed must reach, so that the generator cannot quietly stop
/// exercising what matters (lock scripts succeeding and failing, expiry).
const MUST_SEE: &[(&str, &str)] = &[
    ("eval", "1"),
    ("eval", "0"),
    ("evalsha", "1"),
    (
        "evalsha",
        "error NOSCRIPT No matching script. Please use EVAL.",
    ),
    ("set", "OK"),
    ("set", "null"),
    ("set", "bulk"),
    ("set", "error ERR syntax error"),
    ("set", "error ERR invalid expire time in 'set' command"),
    ("pexpire", "1"),
    ("pexpire", "0"),
    ("pexpireat", "1"),
    ("pexpireat", "0"),
    ("pttl", "positive"),
    ("pttl", "-1"),
    ("pttl", "-2"),
    ("ttl", "positive"),
    ("incr", "error ERR increment or decrement would overflow"),
    ("incr", "error ERR value is not an integer or out of range"),
];

async fn run_seed(seed: u64, commands: usize) {
    let servers = start_redis(1);
    let node_addr = start_sim_node().await;
    let mut redis = Client::connect(&servers[0].addr()).await;
    let mut node = Client::connect(&node_addr).await;

    let steps = generate(seed, commands, wall_ms());
    let started = std::time::Instant::now();
    let mut recent: VecDeque<String> = VecDeque::new();
    let mut tally: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (i, step) in steps.iter().enumerate() {
        let args = match step {
            Step::Sleep(ms) => {
                tokio::time::sleep(Duration::from_millis(*ms)).await;
                recent.push_back(format!("#{i}: (sleep {ms} ms)"));
                continue;
            }
            Step::Cmd(args) => args,
        };
        let r = redis.call(args).await;
        let n = node.call(args).await;
        if let Err(why) = agree(args, &r, &n) {
            let context: Vec<String> = recent.iter().cloned().collect();
            panic!(
                "differential mismatch ({why})\n  seed: {seed}\n  step: {i} of {}\n  command: {}\n  redis-server: {r:?}\n  node:         {n:?}\n  previous steps:\n    {}",
                steps.len(),
                show(args),
                context.join("\n    ")
            );
        }
        *tally.entry(outcome(args, &r)).or_insert(0) += 1;
        recent.push_back(format!("#{i}: {}  ->  {r:?}", show(args)));
        if recent.len() > 10 {
            recent.pop_front();
        }
    }
    if std::env::var_os("DIFFERENTIAL_TALLY").is_some() {
        for ((name, class), k) in &tally {
            eprintln!("{k:6} {name:10} {class}");
        }
    }
    let errors: usize = tally
        .iter()
        .filter(|((_, c), _)| c.starts_with("error"))
        .map(|(_, k)| k)
        .sum();
    eprintln!(
        "differential seed {seed}: {commands} commands ({} steps, {errors} error replies) agree, {:.1?}",
        steps.len(),
        started.elapsed()
    );
    for (name, class) in MUST_SEE {
        assert!(
            tally.contains_key(&(name.to_string(), class.to_string())),
            "seed {seed}: the generated commands never got {name} -> {class}; the generator lost coverage"
        );
    }
}

#[test]
fn generation_is_deterministic() {
    let now = 1_700_000_000_000;
    let a = generate(7, 500, now);
    let b = generate(7, 500, now);
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    let cmds = a.iter().filter(|s| matches!(s, Step::Cmd(_))).count();
    assert_eq!(cmds, 500);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn differential_seed_1() {
    common::require_redis("differential_seed_1");
    run_seed(0x5eed_0001, COMMANDS).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn differential_seed_2() {
    common::require_redis("differential_seed_2");
    run_seed(0x5eed_0002, COMMANDS).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn differential_seed_3() {
    common::require_redis("differential_seed_3");
    run_seed(0x5eed_0003, COMMANDS).await;
}

/// Extra seeds from the environment, for exploring (ignored otherwise, so it
/// is never counted as a pass without running):
/// `DIFFERENTIAL_SEEDS=10,11,12 cargo test --release --test redis differential_env_seeds -- --ignored`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "exploring: set DIFFERENTIAL_SEEDS=10,11,12 and run with --ignored"]
async fn differential_env_seeds() {
    let list = std::env::var("DIFFERENTIAL_SEEDS").expect("DIFFERENTIAL_SEEDS=10,11,12");
    common::require_redis("differential_env_seeds");
    for s in list.split(',').filter(|s| !s.trim().is_empty()) {
        let seed: u64 = s
            .trim()
            .parse()
            .expect("DIFFERENTIAL_SEEDS: comma-separated u64s");
        run_seed(seed, COMMANDS).await;
    }
}

/// Both servers on one call; the replies must agree.
async fn both(redis: &mut Client, node: &mut Client, args: &[&[u8]]) -> Frame {
    let owned: Vec<Vec<u8>> = args.iter().map(|a| a.to_vec()).collect();
    let r = redis.call(&owned).await;
    let n = node.call(&owned).await;
    if let Err(why) = agree(&owned, &r, &n) {
        panic!(
            "{why}\n  command: {}\n  redis-server: {r:?}\n  node:         {n:?}",
            show(&owned)
        );
    }
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lock_scripts_after_script_flush() {
    common::require_redis("lock_scripts_after_script_flush");
    let servers = start_redis(1);
    let node_addr = start_sim_node().await;
    let mut r = Client::connect(&servers[0].addr()).await;
    let mut n = Client::connect(&node_addr).await;
    let (r, n) = (&mut r, &mut n);
    let rel_sha = sha1_hex(RELEASE.as_bytes());
    let ext_sha = sha1_hex(EXTEND.as_bytes());
    let (rel, ext) = (rel_sha.as_bytes(), ext_sha.as_bytes());
    let noscript = Frame::err("NOSCRIPT No matching script. Please use EVAL.");

    // Cached, then flushed: EVALSHA no longer finds either script.
    assert_eq!(
        both(r, n, &[b"SCRIPT", b"LOAD", RELEASE.as_bytes()]).await,
        Frame::bulk(rel)
    );
    assert_eq!(
        both(r, n, &[b"SCRIPT", b"LOAD", EXTEND.as_bytes()]).await,
        Frame::bulk(ext)
    );
    assert_eq!(
        both(r, n, &[b"SET", b"lock", b"tok", b"PX", b"100000"]).await,
        Frame::ok()
    );
    assert_eq!(both(r, n, &[b"SCRIPT", b"FLUSH"]).await, Frame::ok());
    let none = Frame::Array(vec![Frame::Integer(0), Frame::Integer(0)]);
    assert_eq!(both(r, n, &[b"SCRIPT", b"EXISTS", rel, ext]).await, none);
    assert_eq!(
        both(r, n, &[b"EVALSHA", rel, b"1", b"lock", b"tok"]).await,
        noscript
    );
    assert_eq!(
        both(r, n, &[b"EVALSHA", ext, b"1", b"lock", b"tok", b"200000"]).await,
        noscript
    );
    // The failed EVALSHA changed nothing.
    assert_eq!(both(r, n, &[b"GET", b"lock"]).await, Frame::bulk("tok"));

    // EVAL runs the extend script and caches it; EVALSHA then finds it.
    assert_eq!(
        both(
            r,
            n,
            &[b"EVAL", EXTEND.as_bytes(), b"1", b"lock", b"tok", b"200000"]
        )
        .await,
        Frame::Integer(1)
    );
    let some = Frame::Array(vec![Frame::Integer(0), Frame::Integer(1)]);
    assert_eq!(both(r, n, &[b"SCRIPT", b"EXISTS", rel, ext]).await, some);
    match both(r, n, &[b"PTTL", b"lock"]).await {
        Frame::Integer(ms) => assert!(ms > 100_000 && ms <= 200_000, "PTTL {ms}"),
        other => panic!("PTTL: {other:?}"),
    }
    assert_eq!(
        both(r, n, &[b"EVALSHA", ext, b"1", b"lock", b"other", b"300000"]).await,
        Frame::Integer(0)
    );
    assert_eq!(
        both(r, n, &[b"EVALSHA", rel, b"1", b"lock", b"tok"]).await,
        noscript
    );

    // Same for the release script.
    assert_eq!(
        both(
            r,
            n,
            &[b"EVAL", RELEASE.as_bytes(), b"1", b"lock", b"other"]
        )
        .await,
        Frame::Integer(0)
    );
    let all = Frame::Array(vec![Frame::Integer(1), Frame::Integer(1)]);
    assert_eq!(both(r, n, &[b"SCRIPT", b"EXISTS", rel, ext]).await, all);
    assert_eq!(
        both(r, n, &[b"EVALSHA", rel, b"1", b"lock", b"tok"]).await,
        Frame::Integer(1)
    );
    assert_eq!(both(r, n, &[b"GET", b"lock"]).await, Frame::Null);
    assert_eq!(
        both(r, n, &[b"EVALSHA", rel, b"1", b"lock", b"tok"]).await,
        Frame::Integer(0)
    );
}
