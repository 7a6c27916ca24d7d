//! Server commands: `PING`, `ECHO`, `INFO` (server, replication, keyspace), `ROLE`,
//! `TIME`, and the connection chores real clients send (`COMMAND`, `SELECT 0`).
//!
//! `TIME` answers `[unix seconds, microseconds]` as two bulk strings from
//! the node's clock (the simulated one in the simulation), read once per
//! command: a script that calls it sees the instant of its `EVAL`, and may
//! write afterwards, as Redis 7.0 lets it (scripts replicate their effects).

use super::errors::{is, not_an_integer, wrong_arity};
use super::keyspace::{parse_i64, Keyspace, Role};
use bytes::Bytes;
use redlock_proto::resp::Frame;

/// What Redis reports as its version, in `INFO` (and `HELLO`).
pub(crate) const REDIS_VERSION: &str = "7.0.15";

pub(crate) fn ping(_ks: &mut Keyspace, args: &[Bytes], _now: i64) -> Frame {
    match args.len() {
        1 => Frame::Simple("PONG".into()),
        2 => Frame::Bulk(args[1].clone()),
        _ => wrong_arity("ping"),
    }
}

/// The `INFO` text for the sections asked for (all three by default).
pub(crate) fn info(ks: &mut Keyspace, args: &[Bytes], _now: i64) -> Frame {
    let all = args.len() == 1
        || args[1..]
            .iter()
            .any(|a| is(a, "all") || is(a, "default") || is(a, "everything"));
    let wants = |s: &str| all || args[1..].iter().any(|a| is(a, s));
    let mut sections = Vec::new();
    if wants("server") {
        sections.push(format!(
            "# Server\r\nredis_version:{}\r\nredlock_sim_version:{}\r\nredis_mode:standalone\r\n",
            REDIS_VERSION,
            env!("CARGO_PKG_VERSION")
        ));
    }
    if wants("replication") {
        let body = match &ks.role {
            Role::Master => {
                let mut m = format!("role:master\r\nconnected_slaves:{}\r\n", ks.streaming.len());
                // The node does not know where its replicas listen.
                for (i, acked) in ks.streaming.values().enumerate() {
                    m.push_str(&format!(
                        "slave{i}:ip=?,port=0,state=online,offset={acked},lag=0\r\n"
                    ));
                }
                m
            }
            // The fields Redis Sentinel reads of a replica: its master's
            // host and port apart, the link, its offset and priority.
            Role::Replica { master, link_up } => {
                let (host, port) = master.rsplit_once(':').unwrap_or((master, "6379"));
                format!(
                    "role:slave\r\nmaster_host:{host}\r\nmaster_port:{port}\r\nmaster_link_status:{}\r\n\
                     slave_repl_offset:{}\r\nslave_priority:100\r\nslave_read_only:1\r\n",
                    if *link_up { "up" } else { "down" },
                    ks.offset
                )
            }
        };
        sections.push(format!(
            "# Replication\r\n{body}master_repl_offset:{}\r\n",
            ks.offset
        ));
    }
    if wants("keyspace") {
        let (keys, expires) = ks.counts();
        let line = if keys > 0 {
            format!("db0:keys={keys},expires={expires},avg_ttl=0\r\n")
        } else {
            String::new()
        };
        sections.push(format!("# Keyspace\r\n{line}"));
    }
    // A verbatim string (RESP3 `=`), a bulk string under RESP2.
    Frame::Verbatim(Bytes::from(sections.join("\r\n")))
}

/// `CONFIG REWRITE`, which Redis Sentinel sends with each `SLAVEOF`: `+OK`,
/// as a server started from a configuration file answers it. The node has
/// no configuration file: a node that restarts takes the role its scenario
/// gives it. It has no other `CONFIG` subcommand.
pub(crate) fn config(_ks: &mut Keyspace, args: &[Bytes], _now: i64) -> Frame {
    if is(&args[1], "rewrite") && args.len() == 2 {
        return Frame::ok();
    }
    if is(&args[1], "rewrite") {
        return Frame::err("ERR wrong number of arguments for 'config|rewrite' command");
    }
    let shown: String = String::from_utf8_lossy(&args[1])
        .chars()
        .take(128)
        .collect();
    Frame::err(format!(
        "ERR unknown subcommand '{shown}'. Try CONFIG HELP."
    ))
}

/// `TIME`: the node's wall clock, seconds and the microseconds past them.
pub(crate) fn time(ks: &mut Keyspace, _args: &[Bytes], now: i64) -> Frame {
    let us = if ks.now_us.div_euclid(1000) == now {
        ks.now_us
    } else {
        now * 1000
    };
    Frame::Array(vec![
        Frame::bulk(us.div_euclid(1_000_000).to_string()),
        Frame::bulk(us.rem_euclid(1_000_000).to_string()),
    ])
}

/// `ECHO message`.
pub(crate) fn echo(_ks: &mut Keyspace, args: &[Bytes], _now: i64) -> Frame {
    Frame::Bulk(args[1].clone())
}

pub(crate) fn role(ks: &mut Keyspace, _args: &[Bytes], _now: i64) -> Frame {
    match &ks.role {
        Role::Master => Frame::Array(vec![
            Frame::bulk("master"),
            Frame::Integer(ks.offset as i64),
            Frame::Array(vec![]),
        ]),
        Role::Replica { master, link_up } => Frame::Array(vec![
            Frame::bulk("slave"),
            Frame::bulk(master),
            Frame::Integer(6379),
            Frame::bulk(if *link_up { "connected" } else { "connect" }),
            Frame::Integer(ks.offset as i64),
        ]),
    }
}

/// `COMMAND ...`: an empty list, enough for `redis-cli` to start.
pub(crate) fn command(_ks: &mut Keyspace, _args: &[Bytes], _now: i64) -> Frame {
    Frame::Array(vec![])
}

/// `SELECT 0` is accepted; the node has one database.
pub(crate) fn select(_ks: &mut Keyspace, args: &[Bytes], _now: i64) -> Frame {
    match parse_i64(&args[1]) {
        None => not_an_integer(),
        Some(0) => Frame::ok(),
        // Redis reads the index with `getIntFromObjectOrReply`.
        Some(n) if i32::try_from(n).is_err() => {
            Frame::err("ERR value is out of range, value must between -2147483648 and 2147483647")
        }
        Some(_) => Frame::err("ERR DB index is out of range"),
    }
}
