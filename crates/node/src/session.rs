//! One client connection's state (protocol, client id, name) and the
//! commands that read or change it: `HELLO`, `CLIENT ID|GETNAME|SETNAME|
//! SETINFO`, `AUTH`, `QUIT`. [`super::handle_connection`] keeps a [`Session`] per
//! connection and hands every request to [`execute`]: these commands are
//! answered here, everything else goes to [`Node::execute`] unchanged (the
//! path the simulation and scripts use, which knows nothing of
//! connections; like Redis, a script cannot call these commands).
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
use super::Node;
use bytes::Bytes;
use redlock_proto::resp::{Frame, Protocol};

/// What Redis reports as its version, in `HELLO` (and `INFO`).
pub(crate) const REDIS_VERSION: &str = "7.0.15";

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
        }
    }
}

/// Answers one request on the connection of `session`.
pub fn execute(node: &Node, session: &mut Session, args: &[Bytes]) -> Frame {
    let Some(name) = args.first() else {
        return node.execute(args);
    };
    if is(name, "hello") {
        hello(node, session, args)
    } else if is(name, "client") {
        client(session, args)
    } else if is(name, "auth") {
        auth(args)
    } else {
        let (reply, wrote) = node.execute_noting_writes(args);
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

/// `CLIENT ID|GETNAME|SETNAME|SETINFO`; other subcommands are unknown here.
fn client(s: &mut Session, args: &[Bytes]) -> Frame {
    let Some(sub) = args.get(1) else {
        return wrong_arity("client");
    };
    let lsub = String::from_utf8_lossy(sub).to_ascii_lowercase();
    let arity = match lsub.as_str() {
        "id" | "getname" => 2,
        "setname" => 3,
        "setinfo" => 4,
        _ => {
            let shown: String = String::from_utf8_lossy(sub).chars().take(128).collect();
            return Frame::err(format!(
                "ERR unknown subcommand '{shown}'. Try CLIENT HELP."
            ));
        }
    };
    if args.len() != arity {
        return wrong_arity(&format!("client|{lsub}"));
    }
    match lsub.as_str() {
        "id" => Frame::Integer(s.id as i64),
        "getname" => s.name.clone().map_or(Frame::Null, Frame::Bulk),
        "setname" => {
            if !printable(&args[2]) {
                return Frame::err(BAD_NAME);
            }
            s.name = (!args[2].is_empty()).then(|| args[2].clone());
            Frame::ok()
        }
        _ => {
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
    }
}
