//! The protected resource: a host that applies writes in arrival order and
//! records each one; a `pause` of the store holds them until it ends. With fencing, a write whose token is lower than the
//! highest the store has accepted for that resource is refused.
//!
//! Protocol (RESP): `WRITE client acq seq fence|- resource`, answered `+OK`
//! or `-REJECTED ...`.

use super::context::Context;
use crate::history::EventKind;
use redlock_proto::resp::{Connection, Frame};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

pub(crate) const PORT: u16 = 7000;

/// The store host's program.
pub(crate) async fn store_main(ctx: Arc<Context>) -> turmoil::Result {
    let listener = super::sockets::bind(PORT).await?;
    let highest: Arc<Mutex<BTreeMap<String, u64>>> = Arc::default();
    let clock = ctx.clock("store");
    loop {
        // A paused store (a slow database) neither reads nor answers: the
        // writes sent to it wait in its sockets and are applied, in
        // order, when it runs again.
        let (stream, _) = listener.accept().await?;
        let stream = super::pause::Paused::new(stream, clock.clone());
        let (ctx, highest) = (ctx.clone(), highest.clone());
        tokio::spawn(async move {
            let mut conn = Connection::new(stream);
            while let Ok(Some(args)) = conn.read_request().await {
                let reply = apply(&ctx, &highest, &args);
                if conn.write_frame(&reply).await.is_err() {
                    return;
                }
            }
        });
    }
}

fn apply(ctx: &Context, highest: &Mutex<BTreeMap<String, u64>>, args: &[bytes::Bytes]) -> Frame {
    let text: Vec<String> = args
        .iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let [cmd, client, acq, seq, fence, resource] = text.as_slice() else {
        return Frame::err("ERR usage: WRITE client acq seq fence resource");
    };
    let (Ok(acq), Ok(seq)) = (acq.parse::<u64>(), seq.parse::<u32>()) else {
        return Frame::err("ERR bad acq or seq");
    };
    if !cmd.eq_ignore_ascii_case("WRITE") {
        return Frame::err("ERR unknown command");
    }
    let fence = fence.parse::<u64>().ok();
    let mut highest = highest.lock().unwrap_or_else(|e| e.into_inner());
    let top = highest.entry(resource.clone()).or_insert(0);
    if let Some(f) = fence {
        if f < *top {
            ctx.record(
                "store",
                EventKind::WriteRejected {
                    client: client.clone(),
                    acq,
                    seq,
                    fence: f,
                    highest: *top,
                    resource: resource.clone(),
                },
            );
            return Frame::err(format!("REJECTED fencing token {f} is lower than {top}"));
        }
        *top = f;
    }
    ctx.record(
        "store",
        EventKind::WriteApplied {
            client: client.clone(),
            acq,
            seq,
            fence,
            resource: resource.clone(),
        },
    );
    Frame::ok()
}
