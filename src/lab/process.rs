//! A lab client: one copy of the user's command, a real process in a process
//! group of its own, so that a pause (SIGSTOP), a crash (SIGKILL) and the
//! end of the run (SIGTERM, then SIGKILL) reach everything it started.
//!
//! It dies with the lab: the kernel sends it SIGKILL when the lab's process
//! goes (Linux's parent-death signal, set between fork and exec), and
//! dropping a [`ClientProcess`] kills its group. Its standard output and
//! error go to one log file.

use std::fs::File;
use std::io;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use tokio::process::{Child, Command};

/// One running client and its process group.
pub struct ClientProcess {
    child: Child,
    /// The group's id: the client's pid.
    pgid: libc::pid_t,
    exited: Option<ExitStatus>,
}

/// Starts `argv` with `env` added to the lab's environment, its output to
/// `log`. An error when it cannot be started (the lab's exit 2).
pub fn spawn(argv: &[String], env: &[(String, String)], log: &Path) -> io::Result<ClientProcess> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no command given"))?;
    let out = File::create(log)?;
    let err = out.try_clone()?;
    let lab = std::process::id() as libc::pid_t;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .envs(env.iter().cloned())
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .kill_on_drop(true);
    // SAFETY: between fork and exec only async-signal-safe calls: prctl,
    // getppid, _exit.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(io::Error::last_os_error());
            }
            // The lab died before the prctl: no signal will come.
            if libc::getppid() != lab {
                libc::_exit(1);
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
    })
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
    pub fn kill(&self) {
        self.signal(libc::SIGKILL);
    }

    /// Its exit status, if it has exited (without waiting); what it
    /// started goes with it.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        if self.exited.is_none() {
            self.exited = self.child.try_wait().ok().flatten();
            if self.exited.is_some() {
                self.kill();
            }
        }
        self.exited
    }

    /// The end of the run: SIGTERM to the group (resumed first, should it
    /// be stopped), SIGKILL after `grace`; waits for the client to exit
    /// and returns its status.
    pub async fn stop(&mut self, grace: Duration) -> io::Result<ExitStatus> {
        self.signal(libc::SIGTERM);
        self.signal(libc::SIGCONT);
        let status = match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(status) => status?,
            Err(_) => {
                self.kill();
                self.child.wait().await?
            }
        };
        // What it started and left behind goes too.
        self.kill();
        self.exited = Some(status);
        Ok(status)
    }

    fn signal(&self, sig: libc::c_int) {
        // SAFETY: killpg has no memory effects; a group that is gone gives
        // ESRCH, which is fine.
        unsafe {
            libc::killpg(self.pgid, sig);
        }
    }
}

impl Drop for ClientProcess {
    fn drop(&mut self) {
        // Once it has exited and its group was killed, the group's id may
        // be given to another process: signal only a live client's.
        if self.exited().is_none() {
            self.kill();
        }
    }
}
