//! A template driver for `redlock-sim lab`: copy it to judge YOUR lock library.
//!
//!     cargo build --release --example lab_driver
//!     redlock-sim lab scenarios/gc_pause.toml -- target/release/examples/lab_driver
//!
//! It speaks the driver protocol (docs/lab.md): the environment, LOCKKEY,
//! READY, the loop, FENCE, HELD (after the lock and after every renewal),
//! WRITE with a check before each write after the first, RELEASED the moment
//! the lock is lost. Its lock is a placeholder: the simplest correct lock on
//! one Redis, with the `redis` crate's blocking connection (`SET key token NX
//! PX ttl`, a compare-and-delete script), on the first node of
//! REDLOCK_NODES, or in `single` on the master the sentinel names. Replace the
//! methods of `Library` marked `YOUR LIBRARY`; the rest needs no change.
//! (To run a lock of your own in the simulation instead: docs/own-lock.md.)

use redis::{Connection, RedisResult, Script, Value};
use std::collections::HashMap;
use std::time::{Duration, Instant};

fn env(name: &str) -> String {
    std::env::var(name)
        .unwrap_or_else(|_| panic!("{name} is not set: run this under `redlock-sim lab`"))
}

fn ms(name: &str) -> u64 {
    env(name)
        .parse()
        .unwrap_or_else(|_| panic!("{name} is not a number of milliseconds"))
}

/// A draw from REDLOCK_X_MS = "A..B" (or "A").
fn draw(name: &str) -> Duration {
    let v = env(name);
    let (lo, hi) = v.split_once("..").unwrap_or((&v, &v));
    Duration::from_millis(rand::random_range(
        lo.parse().unwrap_or(0)..=hi.parse().unwrap_or(0),
    ))
}

/// A connection with `timeout` for the connect and each reply (None: none).
fn connect_to(addr: &str, timeout: Option<Duration>) -> RedisResult<Connection> {
    let client = redis::Client::open(format!("redis://{addr}/"))?;
    let conn = match timeout {
        Some(t) => client.get_connection_with_timeout(t)?,
        None => client.get_connection()?,
    };
    conn.set_read_timeout(timeout)?;
    conn.set_write_timeout(timeout)?;
    Ok(conn)
}

// ---- YOUR LIBRARY: connect, lock, check, extend, unlock (errors: Err) ----
/// Your library's client. The placeholder's: the lock's key, its TTL, and a
/// connection per server.
struct Library {
    key: String,
    ttl_ms: u64,
    servers: Servers,
}

/// What your library's lock call returns: here the server and the token.
struct Handle {
    addr: String,
    token: String,
}

const EXTEND: &str = "if redis.call('get', KEYS[1]) == ARGV[1] then \
    return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0";
const UNLOCK: &str = "if redis.call('get', KEYS[1]) == ARGV[1] then \
    return redis.call('del', KEYS[1]) end return 0";

impl Library {
    /// YOUR LIBRARY: connect. `key`: the key it keeps the lock under (LOCKKEY).
    fn connect(resource: &str) -> Library {
        let timeout = Duration::from_millis(ms("REDLOCK_REQUEST_TIMEOUT_MS"));
        let servers = Servers(HashMap::new(), timeout);
        Library {
            key: resource.to_string(),
            ttl_ms: ms("REDLOCK_TTL_MS"),
            servers,
        }
    }

    /// YOUR LIBRARY: lock (one try): a handle, or None when taken.
    fn lock(&mut self) -> RedisResult<Option<Handle>> {
        let (addr, token) = (
            self.servers.master()?,
            format!("{:032x}", rand::random::<u128>()),
        );
        let set: Value = self.servers.on(&addr, |c| {
            let args = (&self.key, &token, "NX", "PX", self.ttl_ms);
            redis::cmd("SET").arg(args).query(c)
        })?;
        Ok((set == Value::Okay).then_some(Handle { addr, token }))
    }

    /// YOUR LIBRARY: check: does it still hold the lock?
    fn check(&mut self, h: &Handle) -> RedisResult<bool> {
        let get = |c: &mut Connection| redis::cmd("GET").arg(&self.key).query(c);
        let value: Option<String> = self.servers.on(&h.addr, get)?;
        Ok(value.as_ref() == Some(&h.token))
    }

    /// YOUR LIBRARY: extend by a TTL (REDLOCK_RENEW=1): false when lost.
    fn extend(&mut self, h: &Handle) -> RedisResult<bool> {
        let script = Script::new(EXTEND);
        let extend =
            |c: &mut Connection| script.key(&self.key).arg((&h.token, self.ttl_ms)).invoke(c);
        let extended: i64 = self.servers.on(&h.addr, extend)?;
        Ok(extended == 1)
    }

    /// YOUR LIBRARY: unlock.
    fn unlock(&mut self, h: &Handle) -> RedisResult<()> {
        let script = Script::new(UNLOCK);
        self.servers
            .on(&h.addr, |c| script.key(&self.key).arg(&h.token).invoke(c))
    }
}

/// A connection per server (`host:port`), with the request timeout.
struct Servers(HashMap<String, Connection>, Duration);

impl Servers {
    /// A command on the server at `addr`, on a connection made again after an error.
    fn on<T>(
        &mut self,
        addr: &str,
        f: impl FnOnce(&mut Connection) -> RedisResult<T>,
    ) -> RedisResult<T> {
        if !self.0.contains_key(addr) {
            self.0
                .insert(addr.to_string(), connect_to(addr, Some(self.1))?);
        }
        let result = f(self.0.get_mut(addr).expect("connected"));
        if result.is_err() {
            self.0.remove(addr);
        }
        result
    }

    /// The master: the first node, or the one the sentinel names in `single`.
    fn master(&mut self) -> RedisResult<String> {
        let Ok(sentinel) = std::env::var("REDLOCK_SENTINEL") else {
            return Ok(env("REDLOCK_NODES")
                .split(',')
                .next()
                .unwrap_or_default()
                .to_string());
        };
        let mut ask = redis::cmd("SENTINEL");
        ask.arg(("get-master-addr-by-name", env("REDLOCK_MASTER_NAME")));
        let (host, port): (String, String) = self.on(&sentinel, |c| ask.query(c))?;
        Ok(format!("{host}:{port}"))
    }
}

// ---- The protocol: nothing to change below. ----
/// The store, with what every command to it names (this client, the
/// resource), and the lock's TTL and renewal.
struct Lab {
    store: Connection,
    me: String,
    resource: String,
    ttl: u64,
    renew: bool,
}

impl Lab {
    /// `CMD <client> <resource> [n]`: FENCE, HELD, WRITE, RELEASED.
    fn say<T: redis::FromRedisValue>(&mut self, cmd: &str, n: Option<u64>) -> RedisResult<T> {
        let args = (&self.me, &self.resource, n);
        redis::cmd(cmd).arg(args).query(&mut self.store)
    }

    /// What is left for sure: the TTL counted from the call, less 1% + 2 ms.
    fn validity(&self, called_at: Instant) -> u64 {
        let left = self.ttl - self.ttl / 100 - 2;
        left.saturating_sub(called_at.elapsed().as_millis() as u64)
    }

    /// Sleeps until `until`, renewing every ttl/3 with REDLOCK_RENEW=1 (HELD
    /// after each; `called_at`: the renewal's call); false when one failed (lost).
    fn holding(
        &mut self,
        lib: &mut Library,
        h: &Handle,
        called_at: &mut Instant,
        until: Instant,
    ) -> RedisResult<bool> {
        while Instant::now() < until {
            let due = if self.renew {
                *called_at + Duration::from_millis(self.ttl / 3)
            } else {
                until
            };
            if due <= Instant::now() {
                *called_at = Instant::now();
                if !lib.extend(h).unwrap_or(false) {
                    return Ok(false);
                }
                self.say::<()>("HELD", Some(self.validity(*called_at)))?;
            }
            std::thread::sleep(due.min(until).saturating_duration_since(Instant::now()));
        }
        Ok(true)
    }
}

fn main() -> RedisResult<()> {
    let mut lab = Lab {
        store: connect_to(&env("REDLOCK_STORE"), None)?, // no timeout: READY waits for every client
        me: env("REDLOCK_CLIENT"),
        resource: env("REDLOCK_RESOURCE"),
        ttl: ms("REDLOCK_TTL_MS"),
        renew: env("REDLOCK_RENEW") == "1",
    };
    let mut lib = Library::connect(&lab.resource);
    let lock_key = (&lab.resource, &lib.key);
    redis::cmd("LOCKKEY")
        .arg(lock_key)
        .query::<()>(&mut lab.store)?;
    let ready = redis::cmd("READY").arg(&lab.me).query::<()>(&mut lab.store);
    drop(ready); // an error: a lab older than READY
    let start = Instant::now(); // the run's clock starts at READY's reply
    std::thread::sleep(Duration::from_millis(ms("REDLOCK_START_MS")));
    while start.elapsed() < Duration::from_millis(ms("REDLOCK_DURATION_MS")) {
        std::thread::sleep(draw("REDLOCK_THINK_MS"));
        let (mut handle, mut called_at) = (None, Instant::now());
        for attempt in 0..ms("REDLOCK_RETRY_COUNT").max(1) {
            if attempt > 0 {
                std::thread::sleep(Duration::from_millis(ms("REDLOCK_RETRY_DELAY_MS")));
            }
            called_at = Instant::now(); // the key's TTL counts from no earlier
            handle = lib.lock().unwrap_or(None); // an error (the server is gone): a failed try
            if handle.is_some() {
                break;
            }
        }
        let Some(h) = handle else { continue };
        let held_at = Instant::now();
        let fencing = env("REDLOCK_FENCING") == "1";
        let fence: Option<u64> = fencing.then(|| lab.say("FENCE", None)).transpose()?;
        let valid = lab.validity(called_at);
        lab.say::<()>("HELD", Some(valid))?;
        let hold = match env("REDLOCK_HOLD_MS").as_str() {
            "validity" => Duration::from_millis(valid),
            _ => draw("REDLOCK_HOLD_MS"),
        };
        let mut lost = false;
        let writes = ms("REDLOCK_WRITES") as u32;
        for k in 0..writes {
            let at = hold * k / (writes - 1).max(1);
            // A failed renewal, or the check says it is gone (or fails): lost.
            lost = !lab.holding(&mut lib, &h, &mut called_at, held_at + at)?
                || (k > 0 && !lib.check(&h).unwrap_or(false));
            if lost {
                break;
            }
            let _ = lab.say::<()>("WRITE", fence); // an error: REJECTED, a later holder's fence came first
        }
        if !lost {
            lab.holding(&mut lib, &h, &mut called_at, held_at + hold)?;
        }
        lab.say::<()>("RELEASED", None)?; // at once when lost
        let _ = lib.unlock(&h); // an error: expired, or the server is gone
    }
    Ok(())
}
