//! A lab node that is a real `redis-server` process (`--servers redis`):
//! started on 127.0.0.1 with a configuration file in a data directory of
//! its own, in a process group of its own in the reaper's care.
//! - `crash`: SIGKILL; what the kernel had of its files stays (a process
//!   that dies is not a machine that loses power, see [`super`]);
//! - `restart`: `redis-server` again on the same directory and
//!   configuration file (which Sentinel may have rewritten meanwhile), on
//!   a port the system picks anew, the lab's links following it;
//! - `pause`: SIGSTOP, then SIGCONT;
//! - its clock, when the scenario moves it, through libfaketime
//!   ([`crate::faketime`]): Redis reads time through libc.

use crate::faketime::{self, FakeClock};
use crate::process::{self, ClientProcess, Reaper};
use redlock_proto::resp::Frame;
use redlock_scenario::Persistence;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// How one node's server is configured.
#[derive(Clone, Debug)]
pub(crate) struct ServerConfig {
    pub(crate) persistence: Persistence,
}

/// One node's server, up or down.
pub(crate) struct RedisHost {
    pub(crate) name: String,
    dir: PathBuf,
    logs: PathBuf,
    process: Option<ClientProcess>,
    addr: Option<SocketAddr>,
    pub(crate) clock: Option<FakeClock>,
    reaper: Arc<Reaper>,
    boots: u32,
}

/// How long a server has to answer `PING` after it was started.
const READY: Duration = Duration::from_secs(10);

impl RedisHost {
    /// Writes `name`'s configuration into `dir` (created) and starts it.
    pub(crate) async fn start(
        name: &str,
        dir: &Path,
        logs: &Path,
        config: &ServerConfig,
        clock: Option<FakeClock>,
        reaper: &Arc<Reaper>,
    ) -> io::Result<RedisHost> {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join("redis.conf"), config_text(dir, config))?;
        let mut host = RedisHost {
            name: name.to_string(),
            dir: dir.to_path_buf(),
            logs: logs.to_path_buf(),
            process: None,
            addr: None,
            clock,
            reaper: reaper.clone(),
            boots: 0,
        };
        host.boot().await?;
        Ok(host)
    }

    /// Where the server listens now (the lab's links and observer).
    pub(crate) fn addr(&self) -> Option<SocketAddr> {
        self.addr
    }

    /// SIGKILL, and the process reaped; false if it was down.
    pub(crate) async fn crash(&mut self) -> bool {
        let Some(mut p) = self.process.take() else {
            return false;
        };
        assert!(self.addr.is_some(), "{}: up, with no address", self.name);
        self.addr = None;
        p.kill();
        // Reaps it (the group is dead: nothing else reaches it).
        let _ = p.stop(Duration::ZERO).await;
        true
    }

    /// `redis-server` again on its directory; false if it was up.
    pub(crate) async fn restart(&mut self) -> io::Result<bool> {
        if self.process.is_some() {
            return Ok(false);
        }
        self.boot().await?;
        Ok(true)
    }

    pub(crate) fn set_paused(&self, paused: bool) {
        if let Some(p) = &self.process {
            if paused {
                p.pause();
            } else {
                p.resume();
            }
        }
    }

    /// Ends the server (the run's end), SIGTERM first so that it closes
    /// its files.
    pub(crate) async fn stop(&mut self) {
        if let Some(mut p) = self.process.take() {
            let _ = p.stop(Duration::from_secs(2)).await;
        }
    }

    /// Starts the process on a free port, trying again (another port) if
    /// it could not bind the one picked or did not answer.
    async fn boot(&mut self) -> io::Result<()> {
        // One process a boot: a server is started only while down.
        assert!(self.process.is_none(), "{}: started while up", self.name);
        let conf = self.dir.join("redis.conf");
        let env = self
            .clock
            .as_ref()
            .map(server_clock_env)
            .unwrap_or_default();
        let cleared: &[&str] = if self.clock.is_some() {
            &faketime::CLEARED
        } else {
            &[]
        };
        let first = self.boots + 1;
        let log = |attempt: u32| {
            self.logs
                .join(format!("{}.{}.log", self.name, first + attempt - 1))
        };
        let launch = Launch {
            program: "redis-server",
            conf: &conf,
            env: &env,
            cleared,
            reaper: &self.reaper,
        };
        let (p, addr, attempts) = launch.start(log).await.map_err(|e| {
            io::Error::other(format!("redis-server for {} did not start: {e}", self.name))
        })?;
        assert!(
            (1..=5).contains(&attempts),
            "{}: up after {attempts} attempts",
            self.name
        );
        self.boots += attempts;
        self.process = Some(p);
        self.addr = Some(addr);
        Ok(())
    }
}

/// How to start a Redis program (`redis-server` or `redis-sentinel`) on
/// its configuration file.
pub(crate) struct Launch<'a> {
    pub(crate) program: &'a str,
    pub(crate) conf: &'a Path,
    pub(crate) env: &'a [(String, String)],
    pub(crate) cleared: &'a [&'a str],
    pub(crate) reaper: &'a Arc<Reaper>,
}

impl Launch<'_> {
    /// Started on a port the system had free and answering `PING`, its
    /// output in `log(attempt)`; tried on another port up to five times
    /// (the port may be taken meanwhile). The process, where it listens,
    /// and the attempts it took.
    pub(crate) async fn start(
        &self,
        log: impl Fn(u32) -> std::path::PathBuf,
    ) -> io::Result<(ClientProcess, SocketAddr, u32)> {
        let mut last = io::Error::other("never tried");
        for attempt in 1..=5 {
            let port = free_port()?;
            let argv = vec![
                self.program.to_string(),
                self.conf.display().to_string(),
                "--port".to_string(),
                port.to_string(),
            ];
            let mut p = process::spawn(&argv, self.env, self.cleared, &log(attempt), self.reaper)?;
            let addr = SocketAddr::from(([127, 0, 0, 1], port));
            match ready(addr, &mut p).await {
                Ok(()) => return Ok((p, addr, attempt)),
                Err(e) => {
                    p.kill();
                    let _ = p.stop(Duration::ZERO).await;
                    last = e;
                }
            }
        }
        Err(last)
    }
}

/// Where glibc's `libc_malloc_debug` is (2.34 and later).
const MALLOC_DEBUG: [&str; 3] = [
    "/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0",
    "/usr/lib/aarch64-linux-gnu/libc_malloc_debug.so.0",
    "/usr/lib/libc_malloc_debug.so.0",
];

/// The environment that gives a server `clock`. Under libfaketime 0.9.10
/// (Debian's) alone, `redis-server` hangs before it serves: libfaketime
/// allocates while it initializes, the allocation initializes jemalloc
/// (Debian's `redis-server` links it, and it is then the process's
/// `malloc`), and jemalloc reads the monotonic clock, which enters
/// libfaketime again before it is ready ("Unexpected recursive calls to
/// clock_gettime()"). Preloaded first, glibc's `libc_malloc_debug` makes
/// glibc's allocator the process's `malloc` (it only debugs when asked to
/// by its own variables), so jemalloc is not initialized from inside
/// libfaketime; Redis's own allocations still go to jemalloc (`je_malloc`).
fn server_clock_env(clock: &FakeClock) -> Vec<(String, String)> {
    let mut env = clock.env();
    let debug = MALLOC_DEBUG.iter().find(|p| Path::new(p).exists());
    if let (Some(debug), Some((_, preload))) =
        (debug, env.iter_mut().find(|(k, _)| k == "LD_PRELOAD"))
    {
        *preload = format!("{debug}:{preload}");
    }
    env
}

/// A port the system has free now (bound, read, released).
fn free_port() -> io::Result<u16> {
    let l = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    Ok(l.local_addr()?.port())
}

/// Waits until the server at `addr` answers `PING` (a loading server
/// answers `-LOADING`: not yet), or its process exits.
async fn ready(addr: SocketAddr, p: &mut ClientProcess) -> io::Result<()> {
    let deadline = tokio::time::Instant::now() + READY;
    while tokio::time::Instant::now() < deadline {
        if let Some(status) = p.exited() {
            return Err(io::Error::other(format!("it exited: {status}")));
        }
        if ping(addr).await {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Err(io::Error::other("no answer to PING in 10 s"))
}

async fn ping(addr: SocketAddr) -> bool {
    matches!(super::observe::query(addr, &["PING"]).await, Ok(Frame::Simple(p)) if p == "PONG")
}

/// The configuration file: the scenario's persistence; replication
/// without delay of its own (the link carries the scenario's); nothing
/// else than Redis 7's defaults.
fn config_text(dir: &Path, c: &ServerConfig) -> String {
    let mut lines = vec![
        "bind 127.0.0.1".to_string(),
        "protected-mode no".to_string(),
        format!("dir \"{}\"", dir.display()),
        "save \"\"".to_string(),
        "daemonize no".to_string(),
        "logfile \"\"".to_string(),
        "repl-diskless-sync yes".to_string(),
        "repl-diskless-sync-delay 0".to_string(),
    ];
    match c.persistence {
        Persistence::None => lines.push("appendonly no".into()),
        Persistence::Everysec => {
            lines.extend(["appendonly yes".into(), "appendfsync everysec".into()])
        }
        Persistence::Always => lines.extend(["appendonly yes".into(), "appendfsync always".into()]),
    }
    lines.push(String::new());
    lines.join("\n")
}
