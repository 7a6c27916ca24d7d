//! Test support: real `redis-server` processes on free loopback ports,
//! the project's own node served in-process, and a mutator of scenario text
//! for the fuzz passes.
//!
//! When `redis-server` is missing, the tests that need it fail, naming the
//! README's test command, which installs it (`require_redis`).
#![allow(dead_code)]

use rand::Rng;
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The example `name` that `scripts/test.sh` built before the tests
/// started, when it named their directory in `REDLOCK_SIM_EXAMPLES` (a
/// cargo run from a test would wait for the build directory's lock while
/// the suite builds the other tests); `None` when the variable is unset, and
/// the test builds the example itself.
pub fn prebuilt_example(name: &str) -> Option<std::path::PathBuf> {
    let dir = std::env::var_os("REDLOCK_SIM_EXAMPLES")?;
    let exe = std::path::Path::new(&dir).join(name);
    assert!(
        exe.is_file(),
        "{} is missing: REDLOCK_SIM_EXAMPLES names a directory where `cargo build --release --examples` put the examples (scripts/test.sh sets it)",
        exe.display()
    );
    Some(exe)
}

/// A scratch path of one test under the system's temporary directory:
/// `redlock-<name>-<pid>`, nothing there when made, removed with all it
/// holds when dropped, so that a passing suite leaves nothing in `/tmp`.
/// A failing test's scratch is left, for a look, and its path printed.
pub struct Scratch(std::path::PathBuf);

impl Scratch {
    /// The path, fresh (whatever an earlier run left there is removed), not
    /// created: for a program that must create it.
    pub fn fresh(name: &str) -> Scratch {
        let path = std::env::temp_dir().join(format!("redlock-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        let _ = std::fs::remove_file(&path);
        Scratch(path)
    }

    /// The path, fresh and created as an empty directory.
    pub fn dir(name: &str) -> Scratch {
        let s = Scratch::fresh(name);
        std::fs::create_dir_all(&s.0).unwrap();
        s
    }
}

impl std::ops::Deref for Scratch {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl AsRef<std::path::Path> for Scratch {
    fn as_ref(&self) -> &std::path::Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("left for a look: {}", self.0.display());
            return;
        }
        let _ = std::fs::remove_dir_all(&self.0);
        let _ = std::fs::remove_file(&self.0);
    }
}

/// One `redis-server` child process, killed when dropped.
pub struct RedisServer {
    pub port: u16,
    child: Option<Child>,
    /// Its working directory, its own: a replica writes the snapshot it
    /// syncs from (`dump.rdb`) there, and a server started elsewhere must
    /// never load it.
    dir: std::path::PathBuf,
}

impl RedisServer {
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Kills the server with SIGKILL (no shutdown, no save).
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The README's test command: it installs what the tests need, then runs them.
pub const INSTALL: &str = "bash scripts/test.sh";

/// A shell client's first line under `redlock-sim lab`: it says `READY`
/// to the store, as a driver does, and waits for the run's clock (a
/// client that never says it and never uses the lock makes the lab wait
/// 30 s for it).
pub const SAY_READY: &str = r#"redis-cli -h "${REDLOCK_STORE%:*}" -p "${REDLOCK_STORE##*:}" READY "$REDLOCK_CLIENT" >/dev/null;"#;

/// `program` on the PATH.
pub fn which(program: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// Fails the calling test unless `redis-server` is on the PATH, naming the
/// command that installs it: a test that needs the server never passes
/// without it.
pub fn require_redis(test: &str) {
    let found = Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "{test}: redis-server is not installed; `{INSTALL}` (the README's test \
         command) installs it and runs the suite (or: apt-get install redis-server)"
    );
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `n` redis-servers without persistence and waits until each answers.
pub fn start_redis(n: usize) -> Vec<RedisServer> {
    (0..n).map(|_| start_one()).collect()
}

fn start_one() -> RedisServer {
    for _ in 0..5 {
        let port = free_port();
        let dir =
            std::env::temp_dir().join(format!("redlock-test-redis-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory for redis-server");
        let child = Command::new("redis-server")
            .args([
                "--dir",
                &dir.display().to_string(),
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn redis-server");
        let mut server = RedisServer {
            port,
            child: Some(child),
            dir,
        };
        let pid = server.child.as_ref().map(|c| c.id());
        // Answering is not enough: another test's server may have taken the
        // port first (ours then fails to bind), and two tests would share it.
        if wait_ready(port, Duration::from_secs(5)) && pid.is_some() && serving_pid(port) == pid {
            return server;
        }
        server.kill();
    }
    panic!("redis-server did not start on a free port after 5 tries");
}

/// The `process_id` of the server on `port`, as its `INFO server` says.
fn serving_pid(port: u16) -> Option<u32> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    s.write_all(b"INFO server\r\n").ok()?;
    let mut text = String::new();
    let mut buf = [0u8; 8192];
    while !text.contains("process_id:") || !text[text.find("process_id:")?..].contains("\r\n") {
        let n = s.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        text.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    let rest = &text[text.find("process_id:")? + "process_id:".len()..];
    rest.split("\r\n").next()?.trim().parse().ok()
}

/// Waits until something on `port` answers PING.
pub fn wait_ready(port: u16, limit: Duration) -> bool {
    use std::io::{Read, Write};
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) {
            let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
            let mut buf = [0u8; 7];
            if s.write_all(b"PING\r\n").is_ok()
                && s.read_exact(&mut buf).is_ok()
                && &buf == b"+PONG\r\n"
            {
                return true;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Serves a fresh redlock-sim node on a free loopback port, on the current
/// tokio runtime, with the system clock. Returns its address.
pub async fn start_sim_node() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let node = redlock_node::Node::new(Arc::new(redlock_proto::clock::SystemClock::new()));
    tokio::spawn(redlock_node::serve(node, listener));
    addr
}

/// A `redlock-sim node` process (the binary, on a real port), killed when
/// dropped.
pub struct SimNodeProcess {
    pub port: u16,
    child: Child,
}

impl Drop for SimNodeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `redlock-sim node --port P` on a free port and waits until it
/// answers PING.
pub fn start_sim_node_process() -> SimNodeProcess {
    for _ in 0..5 {
        let port = free_port();
        let child = Command::new(env!("CARGO_BIN_EXE_redlock-sim"))
            .args(["node", "--port", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn redlock-sim node");
        let node = SimNodeProcess { port, child };
        if wait_ready(port, Duration::from_secs(5)) {
            return node;
        }
    }
    panic!("redlock-sim node did not start on a free port after 5 tries");
}

/// A minimal blocking RESP client for tests: sends a command, reads a reply.
pub struct Client {
    conn: redlock_proto::resp::Connection<tokio::net::TcpStream>,
}

impl Client {
    pub async fn connect(addr: &str) -> Client {
        let s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.set_nodelay(true).unwrap();
        Client {
            conn: redlock_proto::resp::Connection::new(s),
        }
    }

    pub async fn call<A: AsRef<[u8]>>(&mut self, args: &[A]) -> redlock_proto::resp::Frame {
        let cmd = redlock_proto::resp::Frame::command(args);
        self.conn.write_frame(&cmd).await.unwrap();
        self.conn.read_frame().await.unwrap()
    }
}

/// Mutates scenario text: deletes, duplicates or swaps lines, replaces
/// characters, inserts tokens.
pub fn mutate(text: &str, rng: &mut rand_chacha::ChaCha8Rng) -> String {
    const TOKENS: &[&str] = &[
        "=",
        "[",
        "]",
        "[[",
        "]]",
        "\"",
        "..",
        "..=",
        "0",
        "-1",
        "1e309",
        "99999999999999999999",
        "3",
        "0.5ttl",
        "ttl",
        "ms",
        "s",
        "\n",
        ",",
        "{",
        "}",
        "#",
        "'",
        "n1",
        "c1",
        "master",
        "sentinel",
        "nan",
        "inf",
        "-",
        "true",
        "\"\"",
        "é",
        "\u{0}",
        "faults",
        "hosts.c9",
        ".",
        "\"1ms..0ms\"",
        "[[faults]]\ndo = \"heal\"\n",
    ];
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for _ in 0..rng.random_range(1..=4) {
        if lines.is_empty() {
            lines.push(String::new());
        }
        let i = rng.random_range(0..lines.len());
        match rng.random_range(0..6) {
            0 => {
                lines.remove(i);
            }
            1 => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            2 => {
                let j = rng.random_range(0..lines.len());
                lines.swap(i, j);
            }
            3 => {
                let mut chars: Vec<char> = lines[i].chars().collect();
                if !chars.is_empty() {
                    let k = rng.random_range(0..chars.len());
                    let pool = b"=[]\".,0123456789-ms{}#x";
                    chars[k] = pool[rng.random_range(0..pool.len())] as char;
                }
                lines[i] = chars.into_iter().collect();
            }
            _ => {
                let mut chars: Vec<char> = lines[i].chars().collect();
                let k = rng.random_range(0..=chars.len());
                let tok = TOKENS[rng.random_range(0..TOKENS.len())];
                chars.splice(k..k, tok.chars());
                lines[i] = chars.into_iter().collect();
            }
        }
    }
    lines.join("\n")
}

/// The shipped scenario files (`scenarios/*.toml`, not `scenarios/variants/`),
/// sorted.
pub fn shipped_scenarios() -> Vec<std::path::PathBuf> {
    toml_files("scenarios")
}

/// The `.toml` files directly in `dir`, sorted.
pub fn toml_files(dir: &str) -> Vec<std::path::PathBuf> {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

/// A sweep's `runs.csv` in `dir` without its `wall_ms` column (the one
/// that depends on the machine), lines joined by newlines.
pub fn runs_without_wall(dir: &std::path::Path) -> String {
    let text = std::fs::read_to_string(dir.join("runs.csv")).unwrap();
    without_wall(&text).join("\n")
}

/// The lines of a `runs.csv` text without its `wall_ms` column.
pub fn without_wall(text: &str) -> Vec<String> {
    let header = text.lines().next().unwrap_or("");
    let col = header
        .split(',')
        .position(|c| c == "wall_ms")
        .unwrap_or_else(|| panic!("no wall_ms column in {header:?}"));
    text.lines()
        .map(|l| {
            let mut f: Vec<&str> = l.split(',').collect();
            f.remove(col);
            f.join(",")
        })
        .collect()
}

/// `f` of every item of `items`, on two threads (each with a 16 MiB stack,
/// as a simulation's may need), keyed by item.
pub fn on_two_threads<K, T>(
    items: &[K],
    f: impl Fn(K) -> T + Sync,
) -> std::collections::BTreeMap<K, T>
where
    K: Copy + Ord + Send + Sync,
    T: Send,
{
    let f = &f;
    std::thread::scope(|sc| {
        let workers: Vec<_> = (0..2)
            .map(|k| {
                std::thread::Builder::new()
                    .stack_size(16 << 20)
                    .spawn_scoped(sc, move || {
                        items
                            .iter()
                            .skip(k)
                            .step_by(2)
                            .map(|&s| (s, f(s)))
                            .collect::<Vec<_>>()
                    })
                    .unwrap()
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    })
}

/// A raw RESP connection for the differential tests: sends commands, reads
/// replies (and pushed messages) as the bytes the server wrote.
pub struct Raw {
    s: tokio::net::TcpStream,
    buf: Vec<u8>,
}

impl Raw {
    pub async fn connect(addr: &str) -> Raw {
        let s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.set_nodelay(true).unwrap();
        Raw { s, buf: Vec::new() }
    }

    pub async fn send<A: AsRef<[u8]>>(&mut self, args: &[A]) {
        assert!(
            self.try_send(args).await,
            "the server closed the connection"
        );
    }

    /// Sends `args`; false if the server closed the connection (its
    /// writes fail, as a closed socket's do).
    pub async fn try_send<A: AsRef<[u8]>>(&mut self, args: &[A]) -> bool {
        use tokio::io::AsyncWriteExt;
        let bytes = redlock_proto::resp::Frame::command(args).to_bytes();
        self.s.write_all(&bytes).await.is_ok()
    }

    /// The next frame's raw bytes, or `None` if none comes within `wait`
    /// (or the server closed the connection: then `closed` says so).
    pub async fn reply(&mut self, wait: Duration) -> Option<Vec<u8>> {
        use tokio::io::AsyncReadExt;
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some((_, used)) = redlock_proto::resp::parse(&self.buf).expect("well-formed") {
                return Some(self.buf.drain(..used).collect());
            }
            let mut chunk = [0u8; 4096];
            let read = tokio::time::timeout_at(deadline, self.s.read(&mut chunk)).await;
            let n = read.ok()?.ok()?;
            if n == 0 {
                return None;
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// Sends `args` and reads one frame (5 s at most).
    pub async fn call<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Vec<u8> {
        self.send(args).await;
        self.reply(Duration::from_secs(5))
            .await
            .expect("a reply within 5 s")
    }

    /// Every frame that arrives within `wait` of each other, as text.
    pub async fn drain(&mut self, wait: Duration) -> Vec<String> {
        let mut out = Vec::new();
        while let Some(f) = self.reply(wait).await {
            out.push(String::from_utf8_lossy(&f).into_owned());
        }
        out
    }
}

/// A command's words, split on spaces.
pub fn words(s: &str) -> Vec<Vec<u8>> {
    s.split(' ').map(|w| w.as_bytes().to_vec()).collect()
}
