//! The sentinel host of the simulation: the shared [`redlock_node::sentinel`] on
//! turmoil's network.

pub use redlock_node::sentinel::*;

/// Runs the sentinel on this turmoil host: the monitor, and the RESP server
/// on `0.0.0.0:26379`.
pub async fn run(cfg: SentinelConfig) -> turmoil::Result {
    let listener = super::sockets::bind(SENTINEL_PORT).await?;
    run_with_listener(cfg, listener).await?;
    Ok(())
}
