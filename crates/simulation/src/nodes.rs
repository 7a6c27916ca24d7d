//! A simulated node host: the real node code on turmoil's network, with the
//! host's simulated clock, and the lock key's changes recorded in the
//! history (from the node's effects: `SET`, `HSET`, `PEXPIREAT`, `DEL`,
//! `FLUSHALL`).

use super::context::Context;
use bytes::Bytes;
use redlock_engine::setup::NODE_PORT;
use redlock_history::{keys, EventKind};
use redlock_node::Node;
use redlock_proto::clock::Clock;
use std::sync::{Arc, Mutex};

/// Records changes of the lock keys in the history, the node holding
/// `held` at its start and reading its clock from `ctx`.
pub(crate) fn history_sink(
    ctx: Arc<Context>,
    host: String,
    held: keys::NodeKeys,
) -> redlock_node::EffectsSink {
    let held = Mutex::new(held);
    Arc::new(move |effects: &[Vec<Bytes>]| {
        let mut held = held.lock().unwrap_or_else(|e| e.into_inner());
        let now = ctx.clock(&host).wall_ms();
        for cmd in effects {
            for kind in keys::key_events(&ctx.resources, &mut held, cmd, None, now) {
                ctx.record(&host, kind);
            }
        }
    })
}

/// Serves `node` on the node port of this host, after recording that it is up.
pub(crate) async fn serve(ctx: Arc<Context>, host: &str, node: Node) -> turmoil::Result {
    let now = ctx.clock(host).wall_ms();
    let snapshot = keys::snapshot_of(&node, &ctx.resources);
    let (held, _) = keys::rebuilt(&ctx.resources, &snapshot, now);
    node.add_effects_sink(history_sink(ctx.clone(), host.to_string(), held));
    let keys = node.keyspace().counts().0;
    ctx.record(host, EventKind::NodeUp { keys });
    let listener = super::pause::PausingListener {
        inner: super::sockets::bind(NODE_PORT).await?,
        clock: ctx.clock(host),
    };
    redlock_node::serve(node, listener).await?;
    Ok(())
}
