//! `CLUSTER`, `READONLY`, `READWRITE`, `ASKING` as a Redis 7.0 without
//! cluster support answers them: `ERR This instance has cluster support
//! disabled` for every subcommand it knows (an unknown one `unknown
//! subcommand`, a wrong count the subcommand's arity error). rueidis sends
//! `CLUSTER SLOTS` at connect and takes the error for a single node.

use super::errors::{arity_ok, wrong_arity};
use super::keyspace::Keyspace;
use bytes::Bytes;
use redlock_proto::resp::Frame;

/// Redis 7.0's `CLUSTER` subcommands, with their arities.
const SUBCOMMANDS: &[(&str, i32)] = &[
    ("addslots", -3),
    ("addslotsrange", -4),
    ("bumpepoch", 2),
    ("count-failure-reports", 3),
    ("countkeysinslot", 3),
    ("delslots", -3),
    ("delslotsrange", -4),
    ("failover", -2),
    ("flushslots", 2),
    ("forget", 3),
    ("getkeysinslot", 4),
    ("help", 2),
    ("info", 2),
    ("keyslot", 3),
    ("links", 2),
    ("meet", -4),
    ("myid", 2),
    ("nodes", 2),
    ("replicas", 3),
    ("replicate", 3),
    ("reset", -2),
    ("saveconfig", 2),
    ("set-config-epoch", 3),
    ("setslot", -4),
    ("shards", 2),
    ("slaves", 3),
    ("slots", 2),
];

fn disabled() -> Frame {
    Frame::err("ERR This instance has cluster support disabled")
}

/// `CLUSTER <subcommand> ...`.
pub(crate) fn cluster(_ks: &mut Keyspace, args: &[Bytes], _now: i64) -> Frame {
    let sub = String::from_utf8_lossy(&args[1]).to_ascii_lowercase();
    match SUBCOMMANDS.iter().find(|(n, _)| *n == sub) {
        None => Frame::err(format!(
            "ERR unknown subcommand '{}'. Try CLUSTER HELP.",
            String::from_utf8_lossy(&args[1])
                .chars()
                .take(128)
                .collect::<String>()
        )),
        Some((_, arity)) if !arity_ok(*arity, args.len()) => wrong_arity(&format!("cluster|{sub}")),
        Some(_) => disabled(),
    }
}

/// `READONLY`, `READWRITE`, `ASKING`: cluster commands.
pub(crate) fn cluster_only(_ks: &mut Keyspace, _args: &[Bytes], _now: i64) -> Frame {
    disabled()
}
