//! The protected resource: a host that applies writes in arrival order and
//! records each one; a `pause` of the store holds them until it ends. With
//! fencing, the fencing rule (`redlock_engine::fencing`, the lab's store
//! applies the same) refuses a write whose token is lower than the highest
//! the store has accepted for that resource.
//!
//! Protocol (RESP): `WRITE client acq seq fence|- resource`, answered `+OK`
//! or `-REJECTED ...`.

use super::context::Context;
use redlock_engine::fencing::{refusal, Fencing};
use redlock_history::EventKind;
use redlock_proto::resp::{Connection, Frame};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

pub(crate) const PORT: u16 = 7000;

/// The store host's program.
pub(crate) async fn store_main(ctx: Arc<Context>) -> turmoil::Result {
    let listener = super::sockets::bind(PORT).await?;
    let fencing: Arc<Mutex<Fencing>> = Arc::default();
    let latest: Arc<Mutex<Latest>> = Arc::default();
    let clock = ctx.clock("store");
    loop {
        // A paused store (a slow database) neither reads nor answers: the
        // writes sent to it wait in its sockets and are applied, in
        // order, when it runs again.
        let (stream, _) = listener.accept().await?;
        let stream = super::pause::paused(stream, clock.clone());
        let (ctx, fencing, latest) = (ctx.clone(), fencing.clone(), latest.clone());
        tokio::spawn(async move {
            let mut conn = Connection::new(stream);
            while let Ok(Some(args)) = conn.read_request().await {
                let reply = apply(&ctx, &fencing, &latest, &args);
                if conn.write_frame(&reply).await.is_err() {
                    return;
                }
            }
        });
    }
}

/// Per client, the latest acquisition the store has had a write of, and
/// that write's fencing token.
type Latest = BTreeMap<String, (u64, Option<u64>)>;

/// The fencing service grants a token per acquisition, in the order of
/// the acquisitions, and a client acquires one lock at a time: each of its
/// writes carries its acquisition's token, and a later acquisition's is
/// higher.
fn check_tokens(latest: &Mutex<Latest>, client: &str, acq: u64, fence: Option<u64>) {
    let mut latest = latest.lock().unwrap_or_else(|e| e.into_inner());
    let seen = latest.get(client).copied();
    if let Some((before, token)) = seen.filter(|(before, _)| *before <= acq) {
        let fits = match (token, fence) {
            (Some(t), Some(f)) if before == acq => t == f,
            (Some(t), Some(f)) => t < f,
            (t, f) => t.is_some() == f.is_some(),
        };
        assert!(
            fits,
            "sim: {client}'s write of acquisition {acq} with token {fence:?}, \
             after acquisition {before}'s with {token:?}"
        );
    }
    if seen.is_none_or(|(before, _)| before < acq) {
        latest.insert(client.to_string(), (acq, fence));
    }
}

fn apply(
    ctx: &Context,
    fencing: &Mutex<Fencing>,
    latest: &Mutex<Latest>,
    args: &[bytes::Bytes],
) -> Frame {
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
    check_tokens(latest, client, acq, fence);
    let admitted = fencing
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .admit(resource, fence);
    if !admitted.applied {
        let f = fence.expect("the fencing rule rejects only a write with a token");
        ctx.record(
            "store",
            EventKind::WriteRejected {
                client: client.clone(),
                acq,
                seq,
                fence: f,
                highest: admitted.highest,
                resource: resource.clone(),
            },
        );
        return Frame::err(refusal(f, admitted.highest));
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
