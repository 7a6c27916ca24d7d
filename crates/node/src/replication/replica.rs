//! The replica's side of replication: [`replica_task`] follows the node's
//! master for the node's whole life (see the module above).

use super::{
    apply_effect, command_frame, frame_args, is_getack, MAX_BACKOFF, MIN_BACKOFF, REPL_TIMEOUT,
    ROLE_CHECK,
};
use crate::errors::is;
use crate::keyspace::{Keyspace, Role};
use crate::Node;
use bytes::Bytes;
use redlock_proto::resp::{ConnError, Connection, Frame};
use redlock_proto::transport::Connector;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// The master this node follows, if it is a replica.
fn master_of(node: &Node) -> Option<String> {
    match &node.keyspace().role {
        Role::Replica { master, .. } => Some(master.clone()),
        Role::Master => None,
    }
}

/// Still a replica of `master`, with the link state we last set?
fn following(ks: &Keyspace, master: &str, link_up: bool) -> bool {
    matches!(&ks.role, Role::Replica { master: m, link_up: l } if m == master && *l == link_up)
}

/// Why the link ended (the reasons are kept for debugging).
#[allow(dead_code)]
#[derive(Debug)]
enum LinkEnd {
    /// The role changed: follow the new master (or stop) at once.
    RoleChanged,
    /// The link failed after a successful sync: retry soon.
    FailedSynced(String),
    /// It failed before the sync completed: back off.
    Failed(String),
}

/// Follows the node's master for the node's whole life: see the module docs.
pub async fn replica_task(node: Node, connector: Arc<dyn Connector>) {
    let clock = node.clock().clone();
    let mut backoff = MIN_BACKOFF;
    // After a failure: no new attempt at `master` before this time.
    let mut retry: Option<(String, Duration)> = None;
    loop {
        let Some(master) = master_of(&node) else {
            retry = None;
            clock.sleep(ROLE_CHECK).await;
            continue;
        };
        if let Some((m, at)) = &retry {
            if *m == master && clock.now() < *at {
                clock.sleep(ROLE_CHECK.min(*at - clock.now())).await;
                continue;
            }
        }
        let end = follow(&node, &*connector, &master).await;
        node.with_keyspace(|ks| {
            if following(ks, &master, true) {
                ks.role = Role::Replica {
                    master: master.clone(),
                    link_up: false,
                };
            }
        });
        match end {
            LinkEnd::RoleChanged => {
                retry = None;
                backoff = MIN_BACKOFF;
            }
            LinkEnd::FailedSynced(_) => {
                backoff = MIN_BACKOFF;
                retry = Some((master, clock.now() + backoff));
            }
            LinkEnd::Failed(_) => {
                retry = Some((master, clock.now() + backoff));
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}

/// Runs `fut` unless `REPL_TIMEOUT` passes first or the node stops following
/// `master` (checked every [`ROLE_CHECK`]).
async fn bounded<T>(node: &Node, master: &str, fut: impl Future<Output = T>) -> Result<T, LinkEnd> {
    let clock = node.clock().clone();
    let deadline = clock.now() + REPL_TIMEOUT;
    tokio::pin!(fut);
    loop {
        tokio::select! {
            biased;
            r = &mut fut => return Ok(r),
            _ = clock.sleep(ROLE_CHECK) => {
                if master_of(node).as_deref() != Some(master) {
                    return Err(LinkEnd::RoleChanged);
                }
                if clock.now() >= deadline {
                    return Err(LinkEnd::Failed("timed out".into()));
                }
            }
        }
    }
}

async fn follow(node: &Node, connector: &dyn Connector, master: &str) -> LinkEnd {
    let clock = node.clock().clone();
    let stream = match bounded(node, master, connector.connect(master)).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return LinkEnd::Failed(format!("connect to {master}: {e}")),
        Err(end) => return end,
    };
    let mut conn = Connection::new(stream);
    let sync = command_frame(&[Bytes::from_static(b"SYNC")]);
    let sent = bounded(node, master, conn.write_frame(&sync)).await;
    match sent {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return LinkEnd::Failed(e.to_string()),
        Err(end) => return end,
    }
    // The master pings while it holds the snapshot back (see [`serve_sync`]).
    let first = loop {
        let f = match bounded(node, master, conn.read_frame()).await {
            Ok(Ok(f)) => f,
            Ok(Err(e)) => return LinkEnd::Failed(e.to_string()),
            Err(end) => return end,
        };
        if !is_ping(&f) {
            break f;
        }
    };
    let Some((base, snap)) = parse_fullresync(first) else {
        return LinkEnd::Failed("bad SYNC reply".into());
    };
    let loaded = node.with_keyspace(|ks| {
        // The link may be up already: a replica attached at the start.
        if !(following(ks, master, false) || following(ks, master, true)) {
            return Ok(false);
        }
        // The snapshot starts with FLUSHALL.
        for cmd in &snap {
            apply_effect(ks, cmd)?;
        }
        ks.offset = base;
        ks.role = Role::Replica {
            master: master.to_string(),
            link_up: true,
        };
        Ok(true)
    });
    match loaded {
        Ok(true) => {}
        Ok(false) => return LinkEnd::RoleChanged,
        Err(e) => return LinkEnd::Failed(e),
    }
    let mut applied: u64 = 0;
    let mut last_rx = clock.now();
    loop {
        let frame = tokio::select! {
            biased;
            f = conn.read_frame() => f,
            _ = clock.sleep(ROLE_CHECK) => {
                if !following(&node.keyspace(), master, true) {
                    return LinkEnd::RoleChanged;
                }
                if clock.now() >= last_rx + REPL_TIMEOUT {
                    return LinkEnd::FailedSynced("master timed out".into());
                }
                continue;
            }
        };
        let frame = match frame {
            Ok(f) => f,
            Err(ConnError::Closed) => return LinkEnd::FailedSynced("master closed".into()),
            Err(e) => return LinkEnd::FailedSynced(e.to_string()),
        };
        last_rx = clock.now();
        let Some(cmd) = frame_args(frame) else {
            return LinkEnd::FailedSynced("bad stream entry".into());
        };
        if cmd.len() == 1 && is(&cmd[0], "ping") {
            continue;
        }
        if is_getack(&cmd) {
            let offset = node.keyspace().offset.to_string();
            let ack = command_frame(&[
                Bytes::from_static(b"REPLCONF"),
                Bytes::from_static(b"ACK"),
                Bytes::from(offset),
            ]);
            match bounded(node, master, conn.write_frame(&ack)).await {
                Ok(Ok(())) => continue,
                Ok(Err(e)) => return LinkEnd::FailedSynced(e.to_string()),
                Err(end) => return end,
            }
        }
        let done = node.with_keyspace(|ks| {
            if !following(ks, master, true) {
                return Ok(false);
            }
            apply_effect(ks, &cmd)?;
            applied += 1;
            ks.offset = base + applied;
            Ok(true)
        });
        match done {
            Ok(true) => {}
            Ok(false) => return LinkEnd::RoleChanged,
            Err(e) => return LinkEnd::FailedSynced(e),
        }
    }
}

fn is_ping(f: &Frame) -> bool {
    matches!(f, Frame::Array(items) if items.len() == 1
        && matches!(&items[0], Frame::Bulk(b) if is(b, "ping")))
}

fn parse_fullresync(f: Frame) -> Option<(u64, Vec<Vec<Bytes>>)> {
    let Frame::Array(mut items) = f else {
        return None;
    };
    if items.len() != 3 || items[0] != Frame::Simple("FULLRESYNC".into()) {
        return None;
    }
    let Frame::Array(cmds) = items.pop()? else {
        return None;
    };
    let Frame::Integer(off) = items.pop()? else {
        return None;
    };
    let cmds: Option<Vec<Vec<Bytes>>> = cmds.into_iter().map(frame_args).collect();
    Some((u64::try_from(off).ok()?, cmds?))
}
