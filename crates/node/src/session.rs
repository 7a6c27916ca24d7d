//! One client connection's state (protocol, client id, name) and the
//! commands that read or change it: `HELLO`, `CLIENT ID|GETNAME|SETNAME|
//! SETINFO|TRACKING|CACHING|GETREDIR|TRACKINGINFO|NO-EVICT`, `AUTH`,
//! `QUIT`, `RESET`, and the subscriptions (`(P)SUBSCRIBE`,
//! `(P)UNSUBSCRIBE`, [`super::pubsub`]). [`super::handle_connection`] keeps
//! a [`Session`] per connection and hands every request to [`answer`]:
//! these commands are answered here, everything else goes to the node's
//! dispatcher as this client's command (the path the simulation and
//! scripts use, which knows nothing of connections; like Redis, a script
//! cannot call these commands). An unknown `CLIENT` subcommand is answered
//! `unknown subcommand`, as Redis does.
//!
//! A RESP2 connection subscribed to anything is in Redis's subscribed
//! mode: only `(P)SUBSCRIBE`, `(P)UNSUBSCRIBE`, `PING` (answered `pong`
//! and its argument, as an array), `QUIT` and `RESET` run; any other known
//! command is refused with Redis's `Can't execute` error ([`refusal`]).
//! `RESET` turns tracking off, drops every subscription, and goes back to
//! RESP2 without a name, answering `+RESET`.
//!
//! Replies are worded as Redis 7.0.15 words them, with two choices:
//! - `HELLO` reports `server: redis`, `version: 7.0.15` (the `redis-server`
//!   the differential tests compare against, and what `INFO` says),
//!   `mode: standalone`, `role: master|replica`, no modules.
//! - `CLIENT SETINFO LIB-NAME|LIB-VER value` answers `+OK` as Redis 7.2 does
//!   (7.0.15 does not know it and answers `unknown subcommand`): client
//!   libraries (redis-py, node-redis, ...) send it at connect.
//!
//! The node has no password: `AUTH password` answers as such a Redis does;
//! `AUTH default anything` and `HELLO ... AUTH default anything` succeed
//! (the default user takes any password), any other user is `WRONGPASS`.

use super::errors::{is, syntax_error, wrong_arity};
use super::keyspace::{parse_i64, Role};
use super::server::REDIS_VERSION;
use super::{command, pubsub, tracking, Node};
use bytes::Bytes;
use redlock_proto::resp::{Frame, Protocol};

/// The state of one client connection.
#[derive(Clone, Debug)]
pub struct Session {
    pub protocol: Protocol,
    /// Unique per node, from 1, in order of connection.
    pub(crate) id: u64,
    pub(crate) name: Option<Bytes>,
    /// `CLIENT SETINFO` values.
    pub(crate) lib_name: Option<Bytes>,
    pub(crate) lib_ver: Option<Bytes>,
    /// The master's offset after this connection's last write (`WAIT`).
    pub(crate) woff: u64,
    /// The transaction under way, after `MULTI` ([`super::multi`]).
    pub(crate) multi: Option<Queued>,
}

/// A connection's transaction under way.
#[derive(Clone, Debug, Default)]
pub(crate) struct Queued {
    pub(crate) commands: Vec<Vec<Bytes>>,
    /// A command was refused while queueing.
    pub(crate) aborted: bool,
}

impl Session {
    pub fn new(id: u64) -> Self {
        Session {
            protocol: Protocol::Resp2,
            id,
            name: None,
            lib_name: None,
            lib_ver: None,
            woff: 0,
            multi: None,
        }
    }
}

/// Answers one request on the connection of `session`: its replies, in
/// order (a subscription answers a frame per channel).
pub(crate) fn answer(node: &Node, s: &mut Session, args: &[Bytes]) -> Vec<Frame> {
    let replies = answer_one(node, s, args);
    after_command(node, s, args);
    replies
}

/// `CLIENT CACHING` holds for the command after it (or the transaction
/// after it), as in Redis.
pub(crate) fn after_command(node: &Node, s: &Session, args: &[Bytes]) {
    if s.multi.is_none() && !args.first().is_some_and(|a| is(a, "client")) {
        node.keyspace().tracking.command_done(s.id);
    }
}

fn answer_one(node: &Node, s: &mut Session, args: &[Bytes]) -> Vec<Frame> {
    if let Some(refused) = refusal(node, s, args) {
        return vec![refused];
    }
    let name = String::from_utf8_lossy(&args[0]).to_ascii_lowercase();
    match name.as_str() {
        "subscribe" | "psubscribe" | "unsubscribe" | "punsubscribe" => {
            let mut ks = node.keyspace();
            if let Some(e) = command::refuse(&ks, args) {
                return vec![e];
            }
            let pattern = name.starts_with('p');
            if name.ends_with("unsubscribe") {
                pubsub::unsubscribe(&mut ks, s.id, args, pattern)
            } else {
                pubsub::subscribe(&mut ks, s.id, args, pattern)
            }
        }
        "reset" if args.len() == 1 => vec![reset(node, s)],
        "ping" if subscribed_resp2(node, s) => vec![match args.len() {
            1 | 2 => Frame::Array(vec![
                Frame::bulk("pong"),
                args.get(1)
                    .map_or(Frame::bulk(""), |a| Frame::Bulk(a.clone())),
            ]),
            _ => wrong_arity("ping"),
        }],
        _ => vec![execute(node, s, args)],
    }
}

fn subscribed_resp2(node: &Node, s: &Session) -> bool {
    s.protocol == Protocol::Resp2 && node.keyspace().pubsub.subscribed(s.id)
}

/// What a RESP2 connection in subscribed mode may not run, refused as
/// Redis refuses it (an unknown command, a wrong arity, an unknown
/// subcommand first).
pub(crate) fn refusal(node: &Node, s: &Session, args: &[Bytes]) -> Option<Frame> {
    if !subscribed_resp2(node, s) {
        return None;
    }
    if let Some(e) = command::refuse(&node.keyspace(), args) {
        return Some(e);
    }
    const ALLOWED: &[&str] = &[
        "subscribe",
        "psubscribe",
        "unsubscribe",
        "punsubscribe",
        "ping",
        "quit",
        "reset",
    ];
    if ALLOWED.iter().any(|a| is(&args[0], a)) {
        return None;
    }
    let mut full = String::from_utf8_lossy(&args[0]).to_ascii_lowercase();
    if full == "client" {
        match client_subcommand(args) {
            Ok(sub) => full = format!("client|{sub}"),
            Err(e) => return Some(e),
        }
    }
    Some(Frame::err(format!(
        "ERR Can't execute '{full}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
    )))
}

/// `RESET`: tracking off, no subscription, RESP2, no name.
fn reset(node: &Node, s: &mut Session) -> Frame {
    let mut ks = node.keyspace();
    ks.tracking.forget(s.id);
    ks.pubsub.forget(s.id);
    ks.clients.set_resp3(s.id, false);
    s.protocol = Protocol::Resp2;
    s.name = None;
    s.multi = None;
    Frame::Simple("RESET".into())
}

/// Answers one request on the connection of `session` that has a single
/// reply (the sentinel's handshake uses it too).
pub fn execute(node: &Node, session: &mut Session, args: &[Bytes]) -> Frame {
    let Some(name) = args.first() else {
        return node.execute(args);
    };
    if is(name, "hello") {
        hello(node, session, args)
    } else if is(name, "client") {
        client(node, session, args)
    } else if is(name, "auth") {
        auth(args)
    } else {
        let (reply, wrote) = node.execute_noting_writes(args, Some(session.id));
        if let Some(offset) = wrote {
            session.woff = offset;
        }
        reply
    }
}

/// `QUIT` (any arguments, as Redis 7.0 takes them): answered `+OK` by
/// [`super::handle_connection`], which then closes the connection.
pub fn is_quit(args: &[Bytes]) -> bool {
    args.first().is_some_and(|a| is(a, "quit"))
}

const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";

/// Would the default user (no password) log in as `user`?
fn authenticates(user: &[u8]) -> bool {
    user == b"default"
}

fn auth(args: &[Bytes]) -> Frame {
    match args.len() {
        1 => wrong_arity("auth"),
        2 => Frame::err(
            "ERR AUTH <password> called without any password configured for the default user. \
             Are you sure your configuration is correct?",
        ),
        3 if authenticates(&args[1]) => Frame::ok(),
        3 => Frame::err(WRONGPASS),
        _ => syntax_error(),
    }
}

/// Redis's `clientSetNameOrReply` check: printable ASCII, no spaces.
fn printable(b: &[u8]) -> bool {
    b.iter().all(|c| (b'!'..=b'~').contains(c))
}

const BAD_NAME: &str = "ERR Client names cannot contain spaces, newlines or special characters.";

/// `HELLO [protover [AUTH user pass] [SETNAME name]]`, as Redis 7.0's
/// `helloCommand`: the version, then the options, then the login, the name,
/// the switch; the reply is in the new protocol.
fn hello(node: &Node, s: &mut Session, args: &[Bytes]) -> Frame {
    let mut proto = None;
    if let Some(v) = args.get(1) {
        match parse_i64(v) {
            None => return Frame::err("ERR Protocol version is not an integer or out of range"),
            Some(2) => proto = Some(Protocol::Resp2),
            Some(3) => proto = Some(Protocol::Resp3),
            Some(_) => return Frame::err("NOPROTO unsupported protocol version"),
        }
    }
    let (mut user, mut setname) = (None, None);
    let mut j = 2;
    while j < args.len() {
        let more = args.len() - 1 - j;
        if is(&args[j], "auth") && more >= 2 {
            user = Some(&args[j + 1]);
            j += 3;
        } else if is(&args[j], "setname") && more >= 1 {
            setname = Some(&args[j + 1]);
            j += 2;
        } else {
            return Frame::err(format!(
                "ERR Syntax error in HELLO option '{}'",
                String::from_utf8_lossy(&args[j])
            ));
        }
    }
    if user.is_some_and(|u| !authenticates(u)) {
        return Frame::err(WRONGPASS);
    }
    if let Some(n) = setname {
        if !printable(n) {
            return Frame::err(BAD_NAME);
        }
        s.name = (!n.is_empty()).then(|| n.clone());
    }
    if let Some(p) = proto {
        s.protocol = p;
        let resp3 = p == Protocol::Resp3;
        node.keyspace().clients.set_resp3(s.id, resp3);
    }
    let role = match node.keyspace().role {
        Role::Master => "master",
        Role::Replica { .. } => "replica",
    };
    let proto_no = match s.protocol {
        Protocol::Resp2 => 2,
        Protocol::Resp3 => 3,
    };
    Frame::Map(vec![
        (Frame::bulk("server"), Frame::bulk("redis")),
        (Frame::bulk("version"), Frame::bulk(REDIS_VERSION)),
        (Frame::bulk("proto"), Frame::Integer(proto_no)),
        (Frame::bulk("id"), Frame::Integer(s.id as i64)),
        (Frame::bulk("mode"), Frame::bulk("standalone")),
        (Frame::bulk("role"), Frame::bulk(role)),
        (Frame::bulk("modules"), Frame::Array(vec![])),
    ])
}

/// The `CLIENT` subcommands the node answers, with Redis 7.0's arities
/// (negative: at least).
const CLIENT_SUBCOMMANDS: &[(&str, i32)] = &[
    ("id", 2),
    ("getname", 2),
    ("setname", 3),
    ("setinfo", 4),
    ("tracking", -3),
    ("caching", 3),
    ("getredir", 2),
    ("trackinginfo", 2),
    ("no-evict", 3),
    ("kill", -3),
];

/// The subcommand of a `CLIENT` request, lowercase, once its name and
/// arity are checked as Redis checks them.
pub(crate) fn client_subcommand(args: &[Bytes]) -> Result<String, Frame> {
    let Some(sub) = args.get(1) else {
        return Err(wrong_arity("client"));
    };
    let lsub = String::from_utf8_lossy(sub).to_ascii_lowercase();
    let Some((_, arity)) = CLIENT_SUBCOMMANDS.iter().find(|(n, _)| *n == lsub) else {
        let shown: String = String::from_utf8_lossy(sub).chars().take(128).collect();
        return Err(Frame::err(format!(
            "ERR unknown subcommand '{shown}'. Try CLIENT HELP."
        )));
    };
    if !command::arity_ok(*arity, args.len()) {
        return Err(wrong_arity(&format!("client|{lsub}")));
    }
    Ok(lsub)
}

/// `CLIENT <subcommand>`, of [`CLIENT_SUBCOMMANDS`].
fn client(node: &Node, s: &mut Session, args: &[Bytes]) -> Frame {
    let sub = match client_subcommand(args) {
        Ok(sub) => sub,
        Err(e) => return e,
    };
    match sub.as_str() {
        "id" => Frame::Integer(s.id as i64),
        "getname" => s.name.clone().map_or(Frame::Null, Frame::Bulk),
        "setname" => {
            if !printable(&args[2]) {
                return Frame::err(BAD_NAME);
            }
            s.name = (!args[2].is_empty()).then(|| args[2].clone());
            Frame::ok()
        }
        "setinfo" => setinfo(s, args),
        "tracking" => {
            let ks = &mut *node.keyspace();
            tracking::client_tracking(&mut ks.tracking, &ks.clients, s.id, args)
        }
        "caching" => tracking::client_caching(&mut node.keyspace().tracking, s.id, args),
        "getredir" => tracking::client_getredir(&node.keyspace().tracking, s.id),
        "trackinginfo" => tracking::client_trackinginfo(&node.keyspace().tracking, s.id),
        "kill" => kill(node, s, args),
        _ if is(&args[2], "on") || is(&args[2], "off") => Frame::ok(),
        _ => syntax_error(),
    }
}

/// `CLIENT KILL` with filters (`TYPE normal|pubsub|master|replica|slave`,
/// `ID n`, `SKIPME yes|no`: the caller is spared by default), as Redis
/// Sentinel sends it with each `SLAVEOF`; the count of connections closed.
/// The node's clients are all `normal` or `pubsub` (a replica's stream is
/// not a client once it syncs). The old form `CLIENT KILL ip:port` finds
/// none: the node does not know its clients' addresses.
fn kill(node: &Node, s: &Session, args: &[Bytes]) -> Frame {
    if args.len() == 3 {
        return Frame::err("ERR No such client");
    }
    if !args.len().is_multiple_of(2) {
        return syntax_error();
    }
    let (mut kind, mut only, mut skipme) = (None::<String>, None::<u64>, true);
    for pair in args[2..].chunks(2) {
        let value = String::from_utf8_lossy(&pair[1]).to_ascii_lowercase();
        if is(&pair[0], "type") {
            match value.as_str() {
                "normal" | "pubsub" | "master" | "replica" | "slave" => kind = Some(value),
                _ => {
                    return Frame::err(format!(
                        "ERR Unknown client type '{}'",
                        String::from_utf8_lossy(&pair[1])
                    ))
                }
            }
        } else if is(&pair[0], "id") {
            match value.parse::<u64>() {
                Ok(id) if id > 0 => only = Some(id),
                _ => return Frame::err("ERR client-id should be greater than 0"),
            }
        } else if is(&pair[0], "skipme") {
            match value.as_str() {
                "yes" => skipme = true,
                "no" => skipme = false,
                _ => return syntax_error(),
            }
        } else {
            return syntax_error();
        }
    }
    let ks = node.keyspace();
    let killed = ks.clients.kill(|id| {
        let subscribed = ks.pubsub.subscribed(id);
        let type_ok = match kind.as_deref() {
            None => true,
            Some("normal") => !subscribed,
            Some("pubsub") => subscribed,
            Some(_) => false,
        };
        type_ok && only.is_none_or(|o| o == id) && !(skipme && id == s.id)
    });
    Frame::Integer(killed)
}

/// `CLIENT SETINFO LIB-NAME|LIB-VER value`.
fn setinfo(s: &mut Session, args: &[Bytes]) -> Frame {
    let attr = &args[2];
    let slot = if is(attr, "lib-name") {
        &mut s.lib_name
    } else if is(attr, "lib-ver") {
        &mut s.lib_ver
    } else {
        return Frame::err(format!(
            "ERR Unrecognized option '{}'",
            String::from_utf8_lossy(attr)
        ));
    };
    if !printable(&args[3]) {
        return Frame::err(format!(
            "ERR {} cannot contain spaces, newlines or special characters.",
            String::from_utf8_lossy(attr)
        ));
    }
    *slot = (!args[3].is_empty()).then(|| args[3].clone());
    Frame::ok()
}
