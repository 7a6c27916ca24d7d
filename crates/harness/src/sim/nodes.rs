//! A simulated node host: the real node code on turmoil's network, with the
//! host's simulated clock, and the lock key's changes recorded in the
//! history (from the node's effects: `SET`, `HSET`, `PEXPIREAT`, `DEL`,
//! `FLUSHALL`).

use super::context::Context;
use crate::engine::setup::NODE_PORT;
use crate::history::{keys, EventKind};
use bytes::Bytes;
use redlock_node::Node;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Records changes of the lock keys in the history.
pub(crate) fn history_sink(
    ctx: Arc<Context>,
    host: String,
    held: BTreeMap<String, String>,
) -> redlock_node::EffectsSink {
    let owners = Mutex::new(held);
    Arc::new(move |effects: &[Vec<Bytes>]| {
        let mut owners = owners.lock().unwrap_or_else(|e| e.into_inner());
        for cmd in effects {
            for kind in keys::key_events(&ctx.resources, &mut owners, cmd, None) {
                ctx.record(&host, kind);
            }
        }
    })
}

/// Serves `node` on the node port of this host, after recording that it is up.
pub(crate) async fn serve(ctx: Arc<Context>, host: &str, node: Node) -> turmoil::Result {
    let held = keys::lock_keys(&node, &ctx.resources);
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
