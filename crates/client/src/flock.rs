//! `redlock-sim lock`: a distributed `flock(1)` over real Redis servers.
//!
//! Takes the lock with the same client code the simulation runs, runs the
//! command while a watchdog extends the lock every ttl/3, sends the command
//! SIGTERM if the lock is lost, releases the lock at the end, and returns the
//! command's exit code (128 + signal if a signal ended it). The command runs
//! in its own process group; lock loss, SIGTERM and SIGINT reach all of it.

use crate::{Config, Lock, LockError, Redlock};
use std::sync::Arc;
use std::time::Duration;
use tokio::signal::unix::{signal, SignalKind};

/// Exit code when the lock could not be acquired within `--wait`.
pub(crate) const EXIT_NOT_ACQUIRED: i32 = 75;
/// Exit code when the command could not be started (as a shell says).
pub(crate) const EXIT_NOT_STARTED: i32 = 127;

/// What `redlock-sim lock` was asked to do.
#[derive(Clone, Debug)]
pub struct Options {
    pub nodes: Vec<String>,
    pub resource: String,
    pub ttl: Duration,
    pub wait: Duration,
    pub config: Config,
    pub command: Vec<String>,
}

/// Runs the command under the lock; returns the process exit code. Progress
/// and problems are reported on stderr.
pub async fn run(opts: Options) -> i32 {
    let client = Arc::new(Redlock::connect_tcp(
        opts.nodes.clone(),
        opts.config.clone(),
    ));
    let lock = match acquire(&client, &opts).await {
        Ok(lock) => lock,
        Err(e) => {
            eprintln!(
                "redlock-sim lock: could not acquire {} within {}: {e}",
                opts.resource,
                redlock_proto::duration::format(opts.wait)
            );
            return EXIT_NOT_ACQUIRED;
        }
    };
    let (program, args) = opts.command.split_first().expect("clap requires a command");
    // Its own process group, as timeout(1) does, so that SIGTERM reaches every
    // process the command started, not just the first.
    let mut child = match tokio::process::Command::new(program)
        .args(args)
        .process_group(0)
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("redlock-sim lock: cannot run {program}: {e}");
            client.unlock(&lock).await;
            return EXIT_NOT_STARTED;
        }
    };
    let pid = child.id().map(|p| p as i32);
    let mut watchdog = client.watchdog(lock);
    let (mut sigterm, mut sigint) = match (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) {
        (Ok(t), Ok(i)) => (t, i),
        _ => {
            eprintln!("redlock-sim lock: cannot install signal handlers");
            let _ = child.start_kill();
            return EXIT_NOT_STARTED;
        }
    };
    let status = loop {
        tokio::select! {
            biased;
            status = child.wait() => break status,
            e = watchdog.lost() => {
                eprintln!("redlock-sim lock: {e}; sending SIGTERM to {program}");
                send(pid, libc::SIGTERM);
                break child.wait().await;
            }
            _ = sigterm.recv() => send(pid, libc::SIGTERM),
            _ = sigint.recv() => send(pid, libc::SIGINT),
        }
    };
    watchdog.release().await;
    match status {
        Ok(s) => exit_code(s),
        Err(e) => {
            eprintln!("redlock-sim lock: waiting for {program}: {e}");
            1
        }
    }
}

async fn acquire(client: &Redlock, opts: &Options) -> Result<Lock, LockError> {
    let clock = client.clock().clone();
    let deadline = clock.now() + opts.wait;
    loop {
        match client.lock(&opts.resource, opts.ttl).await {
            Ok(lock) => return Ok(lock),
            Err(e) if clock.now() >= deadline => return Err(e),
            Err(_) => {
                let d = opts
                    .config
                    .retry_delay
                    .min(deadline.saturating_sub(clock.now()));
                clock.sleep(d).await;
            }
        }
    }
}

/// Sends `sig` to the command's whole process group.
fn send(pid: Option<i32>, sig: i32) {
    if let Some(pid) = pid {
        // SAFETY: kill(2) on our own child's process group; no memory is involved.
        unsafe {
            libc::kill(-pid, sig);
        }
    }
}

fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}
