//! The watchdog: keeps a lock alive by extending it every ttl/3 while its
//! holder works, and says when the lock is lost (as Redisson's watchdog and
//! `redlock-sim lock` need).
//!
//! An extension that fails for want of answers is retried after the retry
//! delay for as long as the current validity lasts; once a majority refuses
//! (the key is gone or someone else's) or the validity runs out, the lock is
//! lost, the watchdog stops and [`Watchdog::lost`] completes.
//!
//! With [`Variant::ExtendResurrects`] a failed extension is retried whether or
//! not the validity has run out, as a timer that just keeps extending does:
//! only a majority refusing ends it.

use super::flaw::Variant;
use super::redlock::{Lock, LockError, Redlock};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// What the watchdog knows of its lock: the lock as last extended, and why
/// it was lost, once it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    pub lock: Lock,
    pub lost: Option<LockError>,
}

/// A running watchdog. Dropping it stops the extensions (the key then expires
/// by its TTL); [`Watchdog::release`] stops them and releases the lock.
pub struct Watchdog {
    status: watch::Receiver<Status>,
    task: JoinHandle<()>,
    client: Arc<Redlock>,
}

impl Redlock {
    /// Starts extending `lock` every ttl/3 on a task of its own.
    pub fn watchdog(self: &Arc<Self>, lock: Lock) -> Watchdog {
        let (tx, rx) = watch::channel(Status {
            lock: lock.clone(),
            lost: None,
        });
        let task = tokio::spawn(run(self.clone(), lock, tx));
        Watchdog {
            status: rx,
            task,
            client: self.clone(),
        }
    }
}

async fn run(client: Arc<Redlock>, mut lock: Lock, tx: watch::Sender<Status>) {
    let clock = client.clock().clone();
    let period = lock.ttl / 3;
    // Variant::ExtendResurrects: keep trying after the validity is over.
    let past_validity = client.config().variant == Variant::ExtendResurrects;
    let mut next = lock.acquired_at + period;
    loop {
        clock.sleep(next.saturating_sub(clock.now())).await;
        match client.extend(&lock, lock.ttl).await {
            Ok(extended) => {
                lock = extended;
                next = lock.acquired_at + period;
                let _ = tx.send(Status {
                    lock: lock.clone(),
                    lost: None,
                });
            }
            Err(e @ LockError::Lost { .. }) => {
                let _ = tx.send(Status {
                    lock,
                    lost: Some(e),
                });
                return;
            }
            Err(_) if clock.now() < lock.valid_until => {
                next = clock.now()
                    + client
                        .config()
                        .retry_delay
                        .min(lock.valid_until - clock.now());
            }
            Err(_) if past_validity => {
                next = clock.now() + client.config().retry_delay.max(Duration::from_millis(1));
            }
            Err(_) => {
                let lost = Some(LockError::Lost {
                    resource: lock.resource.clone(),
                });
                let _ = tx.send(Status { lock, lost });
                return;
            }
        }
    }
}

impl Watchdog {
    pub fn status(&self) -> Status {
        self.status.borrow().clone()
    }

    /// A receiver that sees every change of status (each extension, the loss).
    pub fn subscribe(&self) -> watch::Receiver<Status> {
        self.status.clone()
    }

    /// The lock as last extended.
    pub fn lock(&self) -> Lock {
        self.status.borrow().lock.clone()
    }

    /// Completes when the lock is lost, with the reason.
    pub async fn lost(&mut self) -> LockError {
        loop {
            if let Some(e) = &self.status.borrow_and_update().lost {
                return e.clone();
            }
            if self.status.changed().await.is_err() {
                // The task ended without saying lost: it was stopped.
                return LockError::Lost {
                    resource: String::new(),
                };
            }
        }
    }

    /// Stops extending and releases the lock; returns on how many nodes the
    /// key was still ours.
    pub async fn release(self) -> usize {
        self.task.abort();
        let lock = self.lock();
        self.client.unlock(&lock).await
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.task.abort();
    }
}
