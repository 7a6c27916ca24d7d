//! The project's own client as a lab client (`redlock-sim lab-client`, the
//! command given to `redlock-sim lab`): the built-in Redlock client on real
//! TCP, run as any driver runs its library, from the lab's environment, so
//! that the lab's verdicts can be checked against the simulation's.
//!
//! It does what the simulation's client loop does: says `READY` and waits
//! for the run's clock, waits `REDLOCK_START_MS`, then until
//! `REDLOCK_DURATION_MS` has passed: takes the lock (`single`: on the master
//! the sentinel names, asked again after a failed call), says `HELD` with
//! its validity, makes `REDLOCK_WRITES` writes at fixed offsets over the
//! hold, checking its validity before each one after the first, says
//! `RELEASED`, releases and thinks. With `REDLOCK_RENEW=1` a watchdog extends
//! the lock every ttl/3 and each extension is a new `HELD`. When its check
//! finds the validity over, or its watchdog loses the lock, it says
//! `RELEASED` at once and writes no more.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use redlock_client::{Config, Lock, Redlock};
use redlock_engine::setup::WRITE_TIMEOUT;
use redlock_proto::clock::{Clock, SystemClock};
use redlock_proto::connection::{NodeConn, RequestError, TcpConnector};
use redlock_proto::resp::Frame;
use std::sync::Arc;
use std::time::Duration;

/// How long `READY` may wait: the lab answers within its own 30 s.
const READY_WAIT: Duration = Duration::from_secs(60);
/// How long `FENCE`, `HELD` and `RELEASED` wait for the store's answer.
const CONTROL_WAIT: Duration = Duration::from_secs(5);
/// How often a command retries while its reconnect backs off.
const BACKOFF_STEP: Duration = Duration::from_millis(10);

/// The lab's environment, read.
#[derive(Clone, Debug)]
pub struct Env {
    pub(crate) client: String,
    pub(crate) nodes: Vec<String>,
    pub(crate) sentinel: Option<(String, String)>,
    pub(crate) store: String,
    pub resource: String,
    pub(crate) ttl: Duration,
    /// `None`: hold until the validity runs out.
    pub(crate) hold: Option<(u64, u64)>,
    pub(crate) writes: u32,
    pub think: (u64, u64),
    pub(crate) start: Duration,
    pub(crate) duration: Duration,
    pub(crate) renew: bool,
    /// Take a fencing token from the store for each acquisition.
    pub(crate) fencing: bool,
    pub config: Config,
}

fn var(k: &str) -> Result<String, String> {
    std::env::var(k).map_err(|_| format!("{k} is not set (run me under redlock-sim lab)"))
}

fn num(k: &str) -> Result<u64, String> {
    let v = var(k)?;
    v.parse().map_err(|_| format!("{k}={v} is not a number"))
}

fn range(k: &str) -> Result<(u64, u64), String> {
    let v = var(k)?;
    let (a, b) = v.split_once("..").unwrap_or((&v, &v));
    match (a.parse(), b.parse()) {
        (Ok(a), Ok(b)) => Ok((a, b)),
        _ => Err(format!("{k}={v} is not A..B")),
    }
}

impl Env {
    pub fn read() -> Result<Env, String> {
        let env_duration = |k: &str| num(k).map(Duration::from_millis);
        let hold = match var("REDLOCK_HOLD_MS")?.as_str() {
            "validity" => None,
            _ => Some(range("REDLOCK_HOLD_MS")?),
        };
        let sentinel = match std::env::var("REDLOCK_SENTINEL") {
            Ok(s) => Some((s, var("REDLOCK_MASTER_NAME")?)),
            Err(_) => None,
        };
        let config = Config {
            retry_count: num("REDLOCK_RETRY_COUNT")? as u32,
            retry_delay: env_duration("REDLOCK_RETRY_DELAY_MS")?,
            request_timeout: env_duration("REDLOCK_REQUEST_TIMEOUT_MS")?,
            ..Config::default()
        };
        Ok(Env {
            client: var("REDLOCK_CLIENT")?,
            nodes: var("REDLOCK_NODES")?
                .split(',')
                .map(str::to_string)
                .collect(),
            sentinel,
            store: var("REDLOCK_STORE")?,
            resource: var("REDLOCK_RESOURCE")?,
            ttl: env_duration("REDLOCK_TTL_MS")?,
            hold,
            writes: num("REDLOCK_WRITES")? as u32,
            think: range("REDLOCK_THINK_MS")?,
            start: env_duration("REDLOCK_START_MS")?,
            duration: env_duration("REDLOCK_DURATION_MS")?,
            renew: var("REDLOCK_RENEW")? == "1",
            fencing: std::env::var("REDLOCK_FENCING").is_ok_and(|v| v == "1"),
            config,
        })
    }
}

/// One client's run; what went wrong, if it could not go on.
pub async fn run(env: Env) -> Result<(), String> {
    let store = Store {
        conn: NodeConn::new(env.store.clone()),
        env: env.clone(),
    };
    store.ready().await;
    // The run's clock starts at READY's reply.
    let clock = SystemClock::new();
    let mut rng = ChaCha20Rng::from_os_rng();
    clock.sleep(env.start).await;
    let mut client = None;
    // As the simulation's client: the lock call, then the think.
    while clock.now() < env.duration {
        let c = match client.take() {
            Some(c) => c,
            None => Arc::new(connect(&env).await),
        };
        match c.lock(&env.resource, env.ttl).await {
            Ok(lock) => {
                hold(&env, &c, &store, lock, &mut rng).await?;
                client = Some(c);
            }
            // Single: ask the sentinel again.
            Err(_) if env.sentinel.is_some() => {}
            Err(_) => client = Some(c),
        }
        let think = rng.random_range(env.think.0..=env.think.1.max(env.think.0));
        clock.sleep(Duration::from_millis(think.max(1))).await;
    }
    Ok(())
}

/// The client: every node, or the master the sentinel names.
async fn connect(env: &Env) -> Redlock {
    let nodes = match &env.sentinel {
        None => env.nodes.clone(),
        Some((addr, name)) => {
            let conn = NodeConn::new(addr.clone());
            let cmd = Frame::command(["SENTINEL", "get-master-addr-by-name", name.as_str()]);
            let timeout = env.config.request_timeout * 4;
            let reply = conn
                .request(&TcpConnector, &SystemClock::new(), &cmd, timeout)
                .await;
            match reply {
                Ok(Frame::Array(items)) if items.len() == 2 => {
                    let s = |f: &Frame| match f {
                        Frame::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
                        _ => String::new(),
                    };
                    vec![format!("{}:{}", s(&items[0]), s(&items[1]))]
                }
                _ => vec![env.nodes[0].clone()],
            }
        }
    };
    Redlock::connect_tcp(nodes, env.config.clone())
}

/// Whether the writes of a hold carry a fencing token.
enum Fence {
    Off,
    Token(String),
}

/// The store, over RESP.
struct Store {
    conn: NodeConn,
    env: Env,
}

impl Store {
    /// Sends `args` and waits for the answer at most `wait`. `None`: no
    /// answer came (a timeout, a broken connection): the connection is
    /// closed after what it carried, as the simulation's client closes its
    /// store link, and the next command opens a new one.
    async fn send(&self, args: &[&str], wait: Duration) -> Option<Frame> {
        let cmd = Frame::command(args.iter().copied());
        let clock = SystemClock::new();
        let end = clock.now() + wait;
        loop {
            let left = end.saturating_sub(clock.now());
            let reply = self.conn.request(&TcpConnector, &clock, &cmd, left).await;
            match reply {
                Ok(frame) => return Some(frame),
                // Reconnecting after a closed connection: it waits its turn.
                Err(RequestError::Backoff) if left > BACKOFF_STEP => {
                    clock.sleep(BACKOFF_STEP).await;
                }
                Err(_) => return None,
            }
        }
    }

    /// A fencing token for the acquisition, when fencing is on; `Ok(None)`
    /// when the store did not answer in time.
    async fn fence(&self) -> Result<Option<Fence>, String> {
        if !self.env.fencing {
            return Ok(Some(Fence::Off));
        }
        let e = &self.env;
        match self
            .send(&["FENCE", &e.client, &e.resource], CONTROL_WAIT)
            .await
        {
            Some(Frame::Integer(n)) => Ok(Some(Fence::Token(n.to_string()))),
            None => Ok(None),
            Some(other) => Err(format!("the store's FENCE answered {other:?}")),
        }
    }

    /// `READY`: waits until every client is ready (an error is an older
    /// lab's, which knows no `READY`: go on).
    async fn ready(&self) {
        let cmd = Frame::command(["READY", self.env.client.as_str()]);
        let clock = SystemClock::new();
        let _ = self
            .conn
            .request(&TcpConnector, &clock, &cmd, READY_WAIT)
            .await;
    }

    /// `HELD`; unanswered, it was still sent (the lab reads its send time
    /// on the link).
    async fn held(&self, valid: Duration) {
        let valid_ms = valid.as_millis().to_string();
        let e = &self.env;
        let held = ["HELD", &e.client, &e.resource, &valid_ms];
        self.send(&held, CONTROL_WAIT).await;
    }
}

/// Waits for `due`; false if the watchdog (when there is one) lost the
/// lock first.
async fn until_or_lost(
    due: redlock_proto::clock::Sleep,
    dog: Option<&mut redlock_client::Watchdog>,
) -> bool {
    let Some(dog) = dog else {
        due.await;
        return true;
    };
    tokio::select! {
        biased;
        _ = dog.lost() => false,
        _ = due => true,
    }
}

/// Holds `lock`: `HELD`, the writes, `RELEASED`, the release.
async fn hold(
    env: &Env,
    client: &Arc<Redlock>,
    store: &Store,
    lock: Lock,
    rng: &mut ChaCha20Rng,
) -> Result<(), String> {
    let clock = client.clock().clone();
    let Some(fence) = store.fence().await? else {
        // No token, no write: the lock goes back unused.
        client.unlock(&lock).await;
        return Ok(());
    };
    store.held(lock.validity).await;
    let length = match env.hold {
        Some((lo, hi)) => Duration::from_millis(rng.random_range(lo..=hi.max(lo))),
        // With a watchdog: while it keeps the lock, until the run's end.
        None if env.renew => env.duration.saturating_sub(lock.acquired_at),
        None => lock.valid_until.saturating_sub(clock.now()),
    };
    let start = lock.acquired_at;
    let mut dog = env.renew.then(|| client.watchdog(lock.clone()));
    let mut last_valid = lock.valid_until;
    let mut lost = false;
    for k in 0..env.writes {
        let at = match env.writes {
            1 => Duration::ZERO,
            w => length * k / (w - 1),
        };
        let due = clock.sleep((start + at).saturating_sub(clock.now()));
        if !until_or_lost(due, dog.as_mut()).await {
            lost = true;
            break;
        }
        let valid_until = dog
            .as_ref()
            .map_or(lock.valid_until, |d| d.lock().valid_until);
        if valid_until != last_valid {
            last_valid = valid_until;
            store.held(valid_until.saturating_sub(clock.now())).await;
        }
        if k > 0 && clock.now() >= valid_until {
            lost = true;
            break;
        }
        // As the simulation's client: the answer is awaited while the lock
        // is valid, at least WRITE_TIMEOUT; a write fencing refuses is
        // answered with an error, no failure of the client's.
        let wait = valid_until.saturating_sub(clock.now()).max(WRITE_TIMEOUT);
        let e = &env;
        let write = match &fence {
            Fence::Token(f) => vec!["WRITE", &e.client, &e.resource, f],
            Fence::Off => vec!["WRITE", &e.client, &e.resource],
        };
        store.send(&write, wait).await;
    }
    if !lost {
        let end = clock.sleep((start + length).saturating_sub(clock.now()));
        until_or_lost(end, dog.as_mut()).await;
    }
    // At the end of the hold, or the moment the client found the lock gone.
    let released = ["RELEASED", &env.client, &env.resource];
    store.send(&released, CONTROL_WAIT).await;
    let current = dog.as_ref().map_or(lock.clone(), |d| d.lock());
    drop(dog);
    client.unlock(&current).await;
    Ok(())
}
