//! Transcripts of several connections to one server, for the differential
//! tests of what a server sends unasked (pub/sub messages, invalidations):
//! a script of steps runs against `redis-server` and against the node, and
//! every frame each connection received, in order, must read the same.
//!
//! After each step every open connection is sent `PING` (the one that sent
//! the step first), and what arrived before its `PONG` is that
//! connection's part of the step: a server writes
//! what it pushes to a client before the reply of that client's next
//! command. `$ID<i>` in a command is connection `i`'s client id on the
//! server at hand; in a frame that names a redirect, an id is shown so.

use crate::common::{words, Raw};
use std::time::Duration;

/// One step of a script.
pub(crate) enum Step {
    /// Commands sent at once (pipelined) on connection `i`.
    Send(usize, Vec<Vec<Vec<u8>>>),
    /// Waits, for what the clock brings (expiry).
    Sleep(u64),
    /// Closes connection `i`.
    Close(usize),
}

/// A step of one command, split on spaces.
pub(crate) fn on(i: usize, cmd: &str) -> Step {
    Step::Send(i, vec![words(cmd)])
}

/// A step of several commands, pipelined.
pub(crate) fn on_all(i: usize, cmds: &[&str]) -> Step {
    Step::Send(i, cmds.iter().map(|c| words(c)).collect())
}

/// `EVAL script numkeys keys... args...` as one command.
pub(crate) fn eval(script: &str, keys: &[&str], args: &[&str]) -> Vec<Vec<u8>> {
    let mut v = vec![
        b"EVAL".to_vec(),
        script.as_bytes().to_vec(),
        keys.len().to_string().into_bytes(),
    ];
    v.extend(keys.iter().chain(args).map(|a| a.as_bytes().to_vec()));
    v
}

fn is_pong(frame: &[u8]) -> bool {
    frame == b"+PONG\r\n" || frame == b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"
}

/// Runs `steps` on `n` connections to `addr` (each first sent `hello`, if
/// any, whose reply is left out); the transcript, a line per frame.
pub(crate) async fn run(addr: &str, n: usize, hello: Option<&str>, steps: &[Step]) -> Vec<String> {
    let mut conns: Vec<Option<Raw>> = Vec::new();
    let mut ids = Vec::new();
    for _ in 0..n {
        let mut c = Raw::connect(addr).await;
        let id = String::from_utf8_lossy(&c.call(&words("CLIENT ID")).await).into_owned();
        ids.push(id.trim_start_matches(':').trim_end().to_string());
        if let Some(h) = hello {
            c.call(&words(h)).await;
        }
        conns.push(Some(c));
    }
    let mut out = Vec::new();
    for (k, step) in steps.iter().enumerate() {
        let mut first = None;
        match step {
            Step::Send(i, cmds) => {
                first = Some(*i);
                let c = conns[*i].as_mut().expect("an open connection");
                for cmd in cmds {
                    c.send(&with_ids(cmd, &ids)).await;
                }
            }
            Step::Sleep(ms) => tokio::time::sleep(Duration::from_millis(*ms)).await,
            Step::Close(i) => conns[*i] = None,
        }
        // The connection that sent first (its reply means its command ran),
        // then the others in order.
        let order = first
            .into_iter()
            .chain((0..n).filter(|i| Some(*i) != first));
        for i in order {
            let slot = &mut conns[i];
            let Some(c) = slot else { continue };
            // The stepping connection's first frame before its marker: a
            // marker sent with the step would run in the same batch, and
            // Redis sends `BCAST` messages after a batch.
            let mut early = None;
            if Some(i) == first {
                early = Some(c.reply(Duration::from_secs(5)).await);
            }
            // A connection the server closed (`CLIENT KILL`) may refuse
            // the marker, or take it and then read as closed.
            if !c.try_send(&words("PING")).await && early.is_none() {
                out.push(format!("step {k}, conn {i}: (closed)"));
                *slot = None;
                continue;
            }
            loop {
                let next = match early.take() {
                    Some(f) => f,
                    None => c.reply(Duration::from_secs(5)).await,
                };
                let Some(f) = next else {
                    out.push(format!("step {k}, conn {i}: (closed)"));
                    *slot = None;
                    break;
                };
                if is_pong(&f) {
                    break;
                }
                out.push(format!("step {k}, conn {i}: {}", shown(&f, &ids)));
            }
        }
    }
    out
}

/// A frame as a line; in a frame that names a redirect, the client ids as
/// `$ID<i>`.
fn shown(f: &[u8], ids: &[String]) -> String {
    let shown = String::from_utf8_lossy(f).replace("\r\n", " ");
    if !shown.contains("redir") {
        return shown;
    }
    ids.iter().enumerate().fold(shown, |s, (j, id)| {
        s.replace(&format!(":{id} "), &format!(":$ID{j} "))
    })
}

fn with_ids(cmd: &[Vec<u8>], ids: &[String]) -> Vec<Vec<u8>> {
    cmd.iter()
        .map(|a| {
            let t = String::from_utf8_lossy(a);
            match t.strip_prefix("$ID").and_then(|i| i.parse::<usize>().ok()) {
                Some(i) => ids[i].clone().into_bytes(),
                None => a.clone(),
            }
        })
        .collect()
}

/// Panics at the first line where the two transcripts differ.
pub(crate) fn same(redis: &[String], node: &[String], what: &str) {
    for (r, n) in redis.iter().zip(node) {
        assert_eq!(
            r, n,
            "{what}: redis-server (left) and the node (right) differ"
        );
    }
    assert_eq!(
        redis.len(),
        node.len(),
        "{what}: transcript lengths\n{redis:#?}\n{node:#?}"
    );
}
