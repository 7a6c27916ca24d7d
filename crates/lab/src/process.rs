//! A lab client: one copy of the user's command, a real process in a process
//! group of its own, so that a pause (SIGSTOP), a crash (SIGKILL) and the
//! end of the run (SIGTERM, then SIGKILL) reach everything it started.
//!
//! It dies with the lab, all of its group:
//! - a [`Reaper`], a small `sh` process in a group of its own that ignores
//!   the terminal's signals, holds a pipe from the lab and the list of the
//!   groups started (each client writes its own, between fork and exec, so
//!   a lab killed right after starting it leaves none unknown); when the
//!   pipe closes (the lab ended or was killed) it kills every group that
//!   was not reported ended;
//! - the kernel also sends the client itself SIGKILL when the thread that
//!   started it ends (Linux's parent-death signal, set between fork and
//!   exec): start clients from a thread that lives as long as the run;
//! - dropping a [`ClientProcess`] kills its group.
//!
//! A group's id is signalled only while its leader has not been reaped (it
//! is alive, or a zombie, and the id cannot be reused): an exit is seen
//! without reaping (`waitid` with `WNOWAIT`), the group killed, then the
//! leader reaped. Its standard output and error go to one log file.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::process::{Child, Command};

/// One running client and its process group.
pub struct ClientProcess {
    child: Child,
    /// The group's id: the client's pid.
    pgid: libc::pid_t,
    exited: Option<ExitStatus>,
    /// The lab owns it: a client does not keep it alive.
    reaper: Weak<Reaper>,
}

/// Starts `argv` with `env` added to the lab's environment and `cleared`
/// taken from it, its output to `log`, its group in `reaper`'s care. An
/// error when it cannot be started (the lab's exit 2).
pub fn spawn(
    argv: &[String],
    env: &[(String, String)],
    cleared: &[&str],
    log: &Path,
    reaper: &Arc<Reaper>,
) -> io::Result<ClientProcess> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no command given"))?;
    let out = File::create(log)?;
    let err = out.try_clone()?;
    let lab = std::process::id() as libc::pid_t;
    let mut cmd = Command::new(program);
    for k in cleared {
        cmd.env_remove(k);
    }
    cmd.args(args)
        .envs(env.iter().cloned())
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .kill_on_drop(true);
    let note_fd = reaper.fd();
    // SAFETY: between fork and exec only async-signal-safe calls: prctl,
    // getppid, getpid, write, _exit; no allocation.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(io::Error::last_os_error());
            }
            // The lab died before the prctl: no signal will come.
            if libc::getppid() != lab {
                libc::_exit(1);
            }
            // The child notes its own group before it runs anything: a
            // lab killed right after the fork, before it could note it,
            // leaves nothing the reaper does not know of.
            if let Some(fd) = note_fd {
                let mut buf = [0u8; 24];
                let line = group_line(libc::getpid(), &mut buf);
                libc::write(fd, line.as_ptr().cast(), line.len());
            }
            Ok(())
        });
    }
    let child = cmd.spawn()?;
    let pgid = child.id().map_or(0, |p| p as libc::pid_t);
    assert!(pgid > 0, "a spawned child has a pid");
    Ok(ClientProcess {
        child,
        pgid,
        exited: None,
        reaper: Arc::downgrade(reaper),
    })
}

/// `+<pid>\n`, the reaper's line for a group, written into `buf`
/// without allocating (the child writes it between fork and exec).
fn group_line(pid: libc::pid_t, buf: &mut [u8; 24]) -> &[u8] {
    let mut digits = [0u8; 20];
    let (mut n, mut len) = (pid.unsigned_abs(), 0);
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf[0] = b'+';
    for i in 0..len {
        buf[1 + i] = digits[len - 1 - i];
    }
    buf[1 + len] = b'\n';
    &buf[..len + 2]
}

impl ClientProcess {
    pub fn pid(&self) -> u32 {
        self.pgid as u32
    }

    /// Stops the whole group (a GC pause, SIGSTOP).
    pub fn pause(&self) {
        self.signal(libc::SIGSTOP);
    }

    /// Lets the group run again.
    pub fn resume(&self) {
        self.signal(libc::SIGCONT);
    }

    /// A crash: SIGKILL to the group.
    pub(crate) fn kill(&self) {
        self.signal(libc::SIGKILL);
    }

    /// Its exit status, if it has exited (without waiting); what it
    /// started goes with it.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        if self.exited.is_none() && self.leader_exited() {
            self.end_group();
        }
        self.exited
    }

    /// The end of the run: SIGTERM to the group (resumed first, should it
    /// be stopped), SIGKILL after `grace`; waits for the client to exit
    /// and returns its status.
    pub async fn stop(&mut self, grace: Duration) -> io::Result<ExitStatus> {
        if let Some(status) = self.exited {
            return Ok(status);
        }
        self.signal(libc::SIGTERM);
        self.signal(libc::SIGCONT);
        let deadline = tokio::time::Instant::now() + grace;
        while !self.leader_exited() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        self.signal(libc::SIGKILL);
        let status = self.child.wait().await?;
        self.reaped(status);
        Ok(status)
    }

    /// Whether the leader has exited, without reaping it.
    fn leader_exited(&self) -> bool {
        // SAFETY: waitid writes a siginfo_t we own; WNOWAIT leaves the
        // child to be reaped by tokio.
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
            let r = libc::waitid(libc::P_PID, self.pgid as libc::id_t, &mut info, flags);
            r == 0 && info.si_pid() != 0
        }
    }

    /// The leader has exited and is not yet reaped: kill what is left of
    /// its group, then reap it.
    fn end_group(&mut self) {
        self.signal(libc::SIGKILL);
        if let Ok(Some(status)) = self.child.try_wait() {
            self.reaped(status);
        }
    }

    /// The leader was reaped with `status`: the group is over, and the
    /// reaper told so, once.
    fn reaped(&mut self, status: ExitStatus) {
        assert!(
            self.exited.is_none(),
            "process group {} reaped twice",
            self.pgid
        );
        self.exited = Some(status);
        if let Some(w) = self.reaper.upgrade() {
            w.note(&format!("-{}", self.pgid));
        }
    }

    fn signal(&self, sig: libc::c_int) {
        if self.exited.is_some() {
            return;
        }
        // Never 0 or below: killpg would signal the lab's own group.
        assert!(self.pgid > 0, "signal {sig} to process group {}", self.pgid);
        // SAFETY: killpg has no memory effects; the leader is not reaped
        // (exited is None), so the id is still this group's.
        unsafe {
            libc::killpg(self.pgid, sig);
        }
    }
}

impl Drop for ClientProcess {
    fn drop(&mut self) {
        // Reaped or not, the group goes (tokio reaps the leader after the
        // drop); signal() skips a group whose leader was reaped.
        self.kill();
    }
}

/// Kills, when the lab's end of its pipe closes, every group noted `+pgid`
/// and not noted `-pgid` since, and then removes every file noted `f<path>`
/// (libfaketime's shared memory: the lab removes it itself when it can)
/// and every directory noted `d<path>` (real servers' data, named
/// `redlock-sim-*`). The groups go first, and the files once the groups
/// are gone (waiting up to a second): a client process that starts while
/// the lab goes (libfaketime's constructor opens its segment with
/// `O_CREAT`) or a server that writes its data would make again what was
/// removed before it was killed (seen on a loaded machine: the segment
/// left, its semaphore gone).
pub struct Reaper {
    pipe: std::sync::Mutex<Option<std::process::ChildStdin>>,
    child: std::sync::Mutex<std::process::Child>,
}

const REAPER: &str = r#"trap '' INT TERM HUP
gs=""
while read -r l; do gs="$gs $l"; done
ks=""
for g in $gs; do
  case $g in
    +*) p=${g#+}; case " $gs " in *" -$p "*) ;; *) kill -9 "-$p" 2>/dev/null; ks="$ks $p";; esac;;
  esac
done
n=0
for p in $ks; do
  while [ "$n" -lt 100 ] && kill -0 "-$p" 2>/dev/null; do sleep 0.01; n=$((n+1)); done
done
for g in $gs; do
  case $g in
    f/dev/shm/*) rm -f "${g#f}";;
    d*/redlock-sim-*) rm -rf "${g#d}";;
  esac
done"#;

impl Reaper {
    pub fn start() -> io::Result<Arc<Reaper>> {
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new("sh")
            .args(["-c", REAPER])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()?;
        let pipe = child.stdin.take();
        Ok(Arc::new(Reaper {
            pipe: std::sync::Mutex::new(pipe),
            child: std::sync::Mutex::new(child),
        }))
    }

    /// The pipe's file descriptor, while it is open: a child about to
    /// exec notes its group on it itself ([`spawn`]). Writes of a line are
    /// atomic (under `PIPE_BUF`), whoever makes them.
    fn fd(&self) -> Option<std::os::fd::RawFd> {
        use std::os::fd::AsRawFd;
        let pipe = self.pipe.lock().unwrap_or_else(|e| e.into_inner());
        pipe.as_ref().map(|p| p.as_raw_fd())
    }

    pub(super) fn note(&self, line: &str) {
        let mut pipe = self.pipe.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = pipe.as_mut() {
            // One write of the whole line: a child's line cannot land
            // inside it.
            let _ = p.write_all(format!("{line}\n").as_bytes());
        }
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        // Closing the pipe is its signal; then reap it.
        drop(self.pipe.lock().unwrap_or_else(|e| e.into_inner()).take());
        let _ = self.child.lock().unwrap_or_else(|e| e.into_inner()).wait();
    }
}

#[cfg(test)]
mod tests;
