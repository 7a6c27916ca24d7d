//! The tests against what is outside this repository: `redis-server` (the
//! judge of the node's answers, and the real servers the client and `lock`
//! run on), `redis-cli`, and the lock libraries of other languages from
//! PyPI and npm. One test crate, linked once.
//!
//! A missing server or library fails the test that needs it, naming the
//! command that installs it (`bash scripts/test.sh`, the README's test
//! command); it never passes unseen. `cargo test --release --test sim` runs
//! the rest without them.

#[path = "../support/mod.rs"]
mod common;

mod cli_lock;
mod differential;
mod differential_cluster;
mod differential_multi;
mod differential_pubsub;
mod differential_reentrant;
mod differential_resp3;
mod differential_scripts;
mod differential_time;
mod differential_tracking;
mod differential_types;
mod differential_wait;
mod lock_libraries;
mod own_lock;
mod real_redis;
mod real_redis_reentrant;
mod redis_cli;
mod sentinel;
mod transcript;
mod variant_scripts;
