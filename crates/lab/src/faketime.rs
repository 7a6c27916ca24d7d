//! A client's clock, through libfaketime (Debian's `faketime` package): the
//! scenario's drawn offset and rate of each client (`clocks.drift`,
//! `clocks.offset`, `[hosts.cN] clock_rate`, `clock_offset`) from its
//! start, and the `clock-jump` and `clock-rate` faults on it during the run.
//! libfaketime moves the wall clock by an offset and runs the wall and
//! monotonic clocks at a rate (sleeps and timers too), for every runtime
//! that reads time through libc (Python, Node, Rust, the JVM...; not Go,
//! which reads the clock itself).
//!
//! How, exactly, with no drift between the lab's idea and the client's:
//! - `LD_PRELOAD` of `libfaketimeMT`, and the clock's spec,
//!   `+<offset s> x<rate>`, in a file (`FAKETIME_TIMESTAMP_FILE`) that the
//!   library reads again at every clock read (`FAKETIME_NO_CACHE=1`); the
//!   lab rewrites it (a rename, so no read sees half of it) at each fault.
//! - libfaketime's time is `S + offset + (t − S) × rate`, where `S` is the
//!   start time kept in its shared memory (`FAKETIME_SHARED`: a semaphore
//!   and a segment, shared by every process of the client). The lab makes
//!   both itself and writes `S`, so it knows `S`: a rate change from `r` to
//!   `r'` at `T` rewrites the offset by `(T − S)(r − r')`, and both clocks
//!   stay continuous, as a simulated host's do. Owning them, the lab also
//!   unlinks them at the end (libfaketime leaves them behind when its first
//!   process is killed); the reaper does it if the lab is killed.
//! - A `clock-jump` of a client is refused ([`super::refuse`]): a jump moves
//!   the wall clock alone, and libfaketime moves the monotonic clock with
//!   the wall clock's offset. Its `FAKETIME_DONT_FAKE_MONOTONIC` would leave
//!   the monotonic clock alone, but in 0.9.10 (Debian's) its
//!   `clock_nanosleep` still converts a monotonic deadline as if faked, and
//!   Python's `time.sleep` fails with EINVAL (fixed upstream after 0.9.10).

use redlock_scenario::{FaultAction, Scenario, Target};
use std::ffi::CString;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::FromRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Where distributions put the multi-threaded libfaketime.
const PLACES: [&str; 4] = [
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
    "/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1",
    "/usr/lib/faketime/libfaketimeMT.so.1",
    "/usr/local/lib/faketime/libfaketimeMT.so.1",
];

/// libfaketime's variables a client must not inherit from the lab's own
/// environment: each would override or disturb the clock the lab sets.
pub(crate) const CLEARED: [&str; 7] = [
    "FAKETIME",
    "FAKETIME_XRESET",
    "FAKETIME_DONT_RESET",
    "FAKETIME_START_AFTER_SECONDS",
    "FAKETIME_CACHE_DURATION",
    "FAKETIME_DONT_FAKE_MONOTONIC",
    "DONT_FAKE_MONOTONIC",
];

/// The library, if installed.
pub fn library() -> Option<PathBuf> {
    PLACES
        .iter()
        .map(Path::new)
        .find(|p| p.exists())
        .map(Path::to_path_buf)
}

/// One client's clock as libfaketime runs it; dropping it unlinks the
/// shared memory and semaphore.
pub(crate) struct FakeClock {
    lib: PathBuf,
    file: PathBuf,
    /// The names of the semaphore and the segment, as `sem_open` and
    /// `shm_open` take them.
    sem: String,
    shm: String,
    /// `S` on the monotonic clock.
    start_mon: libc::timespec,
    offset_ms: f64,
    rate: f64,
    /// The same, for the lab to read the clock ([`FakeView`]).
    view: FakeView,
}

/// What a libfaketime clock reads now, as the lab computes it on the wall
/// clock: `S + offset + (t − S) × rate`. Clones share it; the clock
/// updates it at each change.
#[derive(Clone, Debug)]
pub(crate) struct FakeView {
    /// `S` on the wall clock, in ms since the epoch.
    start_real_ms: f64,
    start_mon: libc::timespec,
    /// Offset (ms) and rate now.
    now: std::sync::Arc<std::sync::Mutex<(f64, f64)>>,
}

impl FakeView {
    /// The clock's wall time now, in ms since the epoch.
    pub(crate) fn wall_ms(&self) -> f64 {
        let (offset, rate) = *self.now.lock().unwrap_or_else(|e| e.into_inner());
        let elapsed = ms_between(&self.start_mon, &now(libc::CLOCK_MONOTONIC));
        self.start_real_ms + offset + elapsed * rate
    }

    /// Its rate now.
    pub(crate) fn rate(&self) -> f64 {
        self.now.lock().unwrap_or_else(|e| e.into_inner()).1
    }
}

/// libfaketime's `struct ft_shared_s` (`faketime_common.h`, the same from
/// 0.9.8 to 0.9.10 and after): two counters and the start time on each
/// clock.
#[repr(C)]
struct Shared {
    ticks: u64,
    file_idx: u64,
    real: libc::timespec,
    mon: libc::timespec,
    mon_raw: libc::timespec,
    boot: libc::timespec,
}

/// Tells names apart between the runs of one lab process (`--jobs`).
static RUNS: AtomicU64 = AtomicU64::new(0);

impl FakeClock {
    /// A clock of `offset_ms` and `rate` from now, its spec in `file`.
    pub(crate) fn start(
        lib: &Path,
        file: &Path,
        client: &str,
        offset_ms: f64,
        rate: f64,
    ) -> io::Result<FakeClock> {
        assert!(rate > 0.0, "faketime: a clock rate must be positive");
        assert!(
            offset_ms.is_finite(),
            "faketime: {client}'s offset {offset_ms} ms"
        );
        // The shared memory's name is one path segment after its `/`.
        assert!(
            !client.is_empty() && !client.contains('/'),
            "faketime: a clock named {client:?}"
        );
        let run = RUNS.fetch_add(1, Ordering::Relaxed);
        let name = format!("/redlock-sim-{}-{run}-{client}", std::process::id());
        let start_mon = now(libc::CLOCK_MONOTONIC);
        let real = now(libc::CLOCK_REALTIME);
        let view = FakeView {
            start_real_ms: real.tv_sec as f64 * 1e3 + real.tv_nsec as f64 / 1e6,
            start_mon,
            now: std::sync::Arc::new(std::sync::Mutex::new((offset_ms, rate))),
        };
        let clock = FakeClock {
            lib: lib.to_path_buf(),
            file: file.to_path_buf(),
            sem: format!("{name}-sem"),
            shm: name,
            start_mon,
            offset_ms,
            rate,
            view,
        };
        clock.write()?;
        clock.share(real)?;
        Ok(clock)
    }

    /// The environment that gives a client this clock.
    pub(crate) fn env(&self) -> Vec<(String, String)> {
        let preload = match std::env::var("LD_PRELOAD") {
            Ok(p) if !p.is_empty() => format!("{}:{p}", self.lib.display()),
            _ => self.lib.display().to_string(),
        };
        vec![
            ("LD_PRELOAD".to_string(), preload),
            (
                "FAKETIME_TIMESTAMP_FILE".to_string(),
                self.file.display().to_string(),
            ),
            ("FAKETIME_NO_CACHE".to_string(), "1".to_string()),
            (
                "FAKETIME_SHARED".to_string(),
                format!("{} {}", self.sem, self.shm),
            ),
        ]
    }

    /// The files the reaper removes if the lab dies before it does.
    pub(crate) fn leftovers(&self) -> [String; 2] {
        [
            format!("/dev/shm{}", self.shm),
            format!("/dev/shm/sem.{}", &self.sem[1..]),
        ]
    }

    pub(crate) fn rate(&self) -> f64 {
        self.rate
    }

    /// Runs at `rate` from now on; both clocks stay continuous.
    pub(crate) fn set_rate(&mut self, rate: f64) -> io::Result<()> {
        assert!(rate > 0.0, "faketime: a clock rate must be positive");
        let elapsed_ms = ms_between(&self.start_mon, &now(libc::CLOCK_MONOTONIC));
        // The monotonic clock never goes back: S is behind it.
        assert!(
            elapsed_ms >= 0.0,
            "faketime: {elapsed_ms} ms since the clock's start"
        );
        self.offset_ms += elapsed_ms * (self.rate - rate);
        self.rate = rate;
        self.write()
    }

    /// Moves the clock by `by_ms` (a node's: see [`crate::redis`]).
    pub(crate) fn jump(&mut self, by_ms: f64) -> io::Result<()> {
        assert!(by_ms.is_finite(), "faketime: a clock jumped by {by_ms} ms");
        self.offset_ms += by_ms;
        self.write()
    }

    /// What the lab reads of this clock.
    pub(crate) fn view(&self) -> FakeView {
        self.view.clone()
    }

    /// The spec, `+<offset s> x<rate>`, into the file, through a rename
    /// (and the view told).
    fn write(&self) -> io::Result<()> {
        *self.view.now.lock().unwrap_or_else(|e| e.into_inner()) = (self.offset_ms, self.rate);
        let sign = if self.offset_ms < 0.0 { "-" } else { "+" };
        let spec = format!(
            "{sign}{:.9} x{:.12}\n",
            self.offset_ms.abs() / 1e3,
            self.rate
        );
        let tmp = self.file.with_extension("faketime.tmp");
        std::fs::write(&tmp, spec)?;
        std::fs::rename(&tmp, &self.file)
    }

    /// The semaphore (value 1) and the segment holding `S`, the start
    /// time on every clock (`real` on the wall clock), read now.
    fn share(&self, real: libc::timespec) -> io::Result<()> {
        let sem = CString::new(self.sem.as_str()).map_err(io::Error::other)?;
        let shm = CString::new(self.shm.as_str()).map_err(io::Error::other)?;
        let excl = libc::O_CREAT | libc::O_EXCL;
        // SAFETY: a NUL-terminated name; the handle is closed at once (the
        // clients open it by name).
        unsafe {
            let s = libc::sem_open(sem.as_ptr(), excl, 0o600 as libc::c_uint, 1 as libc::c_uint);
            if s == libc::SEM_FAILED {
                return Err(io::Error::last_os_error());
            }
            libc::sem_close(s);
        }
        // SAFETY: a NUL-terminated name; the descriptor is owned by the File.
        let mut f = unsafe {
            let fd = libc::shm_open(shm.as_ptr(), excl | libc::O_RDWR, 0o600);
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            File::from_raw_fd(fd)
        };
        let start = Shared {
            ticks: 0,
            file_idx: 0,
            real,
            mon: self.start_mon,
            mon_raw: now(libc::CLOCK_MONOTONIC_RAW),
            boot: now(libc::CLOCK_BOOTTIME),
        };
        // SAFETY: a plain #[repr(C)] struct of integers, read as its bytes.
        let bytes = unsafe {
            std::slice::from_raw_parts(
                (&start as *const Shared).cast::<u8>(),
                std::mem::size_of::<Shared>(),
            )
        };
        f.write_all(bytes)
    }
}

impl Drop for FakeClock {
    fn drop(&mut self) {
        // The names were made from our pid and a client's name: no NUL.
        let (Ok(sem), Ok(shm)) = (
            CString::new(self.sem.as_str()),
            CString::new(self.shm.as_str()),
        ) else {
            return;
        };
        // SAFETY: NUL-terminated names; unlinking what may be gone.
        unsafe {
            libc::sem_unlink(sem.as_ptr());
            libc::shm_unlink(shm.as_ptr());
        }
    }
}

/// The time on `clock` now.
fn now(clock: libc::clockid_t) -> libc::timespec {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a timespec to fill.
    let r = unsafe { libc::clock_gettime(clock, &mut t) };
    assert_eq!(r, 0, "clock_gettime failed");
    t
}

/// Milliseconds from `a` to `b`.
fn ms_between(a: &libc::timespec, b: &libc::timespec) -> f64 {
    (b.tv_sec - a.tv_sec) as f64 * 1e3 + (b.tv_nsec - a.tv_nsec) as f64 / 1e6
}

/// Whether a `clock-rate` fault names `client`.
fn rate_changes(s: &Scenario, client: &str) -> bool {
    s.faults.iter().any(
        |f| matches!(&f.action, FaultAction::ClockRate { host: Target::Host(h), .. } if h == client),
    )
}

/// Whether `client` needs libfaketime in run `seed` of `s`: a clock of its
/// own from the start, or one a `clock-rate` fault changes.
pub(crate) fn needed(s: &Scenario, seed: u64, client: &str) -> bool {
    let (offset, rate) = redlock_engine::setup::clock_draws(s, seed)
        .get(client)
        .copied()
        .unwrap_or((0.0, 1.0));
    offset != 0.0 || rate != 1.0 || rate_changes(s, client)
}
