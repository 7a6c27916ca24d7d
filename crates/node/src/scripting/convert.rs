//! Conversions between replies and Lua values, by Redis 7.0's rules
//! (`script_lua.c`, RESP2):
//!
//! - reply → Lua: integer → number; bulk → string; null bulk (and null
//!   array) → `false`; array → table; status → `{ok=...}`; error →
//!   `{err=...}` (which `redis.call` raises and `redis.pcall` returns).
//! - Lua → reply: number → integer, truncated toward zero; string → bulk;
//!   `true` → 1; `false` → null bulk; a table with a string `err` → error;
//!   with a string `ok` → status (CR and LF turned into spaces); with a
//!   number `double` → double; with a table `map` → map (in `next` order);
//!   any other table → array, up to its first nil; any other type → null
//!   bulk.
//! - after `redis.setresp(3)` (RESP3, `script_lua.c`'s RESP3 callbacks):
//!   replies reach the script as RESP3: null → nil, boolean → boolean, map →
//!   `{map={k=v}}`, double → `{double=n}`, verbatim → `{verbatim_string=
//!   {format=, string=}}`; and a returned boolean is a RESP3 boolean (`#t`,
//!   `#f`; `:1`, `:0` to a RESP2 client).
//!
//! Not converted (no such frame in the node): `{set=...}`,
//! `{big_number=...}` and `{verbatim_string=...}` returned by a script read
//! as arrays.

use mlua::{Lua, Table, Value};
use redlock_proto::resp::Frame;

/// A reply of a command, as `redis.call` hands it to the script.
pub(crate) fn reply_to_lua(lua: &Lua, f: &Frame) -> mlua::Result<Value> {
    reply_to_lua_as(lua, f, false)
}

/// A reply as `redis.call` hands it to the script, under RESP3 when `resp3`
/// (the script called `redis.setresp(3)`).
pub(crate) fn reply_to_lua_as(lua: &Lua, f: &Frame, resp3: bool) -> mlua::Result<Value> {
    if resp3 {
        match f {
            Frame::Null | Frame::NullArray => return Ok(Value::Nil),
            Frame::Pairs(pairs) => {
                let items = pairs
                    .iter()
                    .map(|(a, b)| Frame::Array(vec![a.clone(), b.clone()]))
                    .collect();
                return reply_to_lua_as(lua, &Frame::Array(items), true);
            }
            Frame::Boolean(b) => return Ok(Value::Boolean(*b)),
            Frame::Double(d) => {
                let t = lua.create_table()?;
                t.raw_set("double", d.parse::<f64>().unwrap_or(0.0))?;
                return Ok(Value::Table(t));
            }
            Frame::Map(pairs) => {
                let m = lua.create_table()?;
                for (k, v) in pairs {
                    m.raw_set(
                        reply_to_lua_as(lua, k, true)?,
                        reply_to_lua_as(lua, v, true)?,
                    )?;
                }
                let t = lua.create_table()?;
                t.raw_set("map", m)?;
                return Ok(Value::Table(t));
            }
            Frame::Verbatim(b) => {
                let v = lua.create_table()?;
                v.raw_set("format", "txt")?;
                v.raw_set("string", lua.create_string(b)?)?;
                let t = lua.create_table()?;
                t.raw_set("verbatim_string", v)?;
                return Ok(Value::Table(t));
            }
            Frame::Array(items) => {
                let t = lua.create_table_with_capacity(items.len(), 0)?;
                for (i, item) in items.iter().enumerate() {
                    t.raw_set(i + 1, reply_to_lua_as(lua, item, true)?)?;
                }
                return Ok(Value::Table(t));
            }
            _ => {}
        }
    }
    Ok(match f {
        Frame::Integer(n) => Value::Number(*n as f64),
        Frame::Bulk(b) => Value::String(lua.create_string(b)?),
        Frame::Null | Frame::NullArray => Value::Boolean(false),
        Frame::Simple(s) => {
            let t = lua.create_table()?;
            t.raw_set("ok", lua.create_string(s)?)?;
            Value::Table(t)
        }
        Frame::Error(e) => Value::Table(error_table(lua, e)?),
        Frame::Array(items) => {
            let t = lua.create_table_with_capacity(items.len(), 0)?;
            for (i, item) in items.iter().enumerate() {
                t.raw_set(i + 1, reply_to_lua(lua, item)?)?;
            }
            Value::Table(t)
        }
        // The RESP3 kinds reach a script as their RESP2 forms (a script
        // speaks RESP2 to the commands it calls, as in Redis by default).
        Frame::Map(_)
        | Frame::Pairs(_)
        | Frame::Boolean(_)
        | Frame::Double(_)
        | Frame::Verbatim(_)
        | Frame::Set(_)
        | Frame::Push(_) => {
            return reply_to_lua(lua, &f.clone().into_resp2());
        }
    })
}

/// `{err = "CODE message"}` as Redis's `luaPushErrorBuff` builds it from a
/// reply's error text: an error with no space gets the code `ERR`; trailing
/// CR/LF are trimmed.
pub(crate) fn error_table(lua: &Lua, e: &str) -> mlua::Result<Table> {
    let e = e.strip_prefix('-').unwrap_or(e);
    let text = match e.split_once(' ') {
        Some((code, msg)) => format!("{code} {}", msg.trim_matches(['\r', '\n'])),
        None => format!("ERR {}", e.trim_matches(['\r', '\n'])),
    };
    let t = lua.create_table()?;
    t.raw_set("err", text)?;
    Ok(t)
}

/// The value a script returns, as the reply EVAL sends; `resp3` when the
/// script called `redis.setresp(3)` (booleans are then RESP3 booleans).
pub(crate) fn lua_to_reply_as(v: &Value, resp3: bool) -> Frame {
    match v {
        Value::String(s) => Frame::Bulk(bytes::Bytes::copy_from_slice(&s.as_bytes())),
        Value::Boolean(b) if resp3 => Frame::Boolean(*b),
        Value::Boolean(true) => Frame::Integer(1),
        Value::Boolean(false) => Frame::Null,
        Value::Integer(n) => Frame::Integer(*n),
        Value::Number(n) => Frame::Integer(truncate(*n)),
        Value::Table(t) => table_to_reply(t, resp3),
        _ => Frame::Null,
    }
}

/// C's `(long long)` cast of a double, made total: NaN → 0, out of range →
/// the nearest bound (x86-64 gives i64::MIN for both; such replies are
/// outside what the differential test compares).
fn truncate(n: f64) -> i64 {
    n as i64
}

/// An error text as Redis's `addReplyErrorFormat` sends it: CR/LF trimmed
/// at both ends, and any inside turned into spaces.
pub(crate) fn one_line(s: &str) -> String {
    s.trim_matches(['\r', '\n']).replace(['\r', '\n'], " ")
}

fn table_to_reply(t: &Table, resp3: bool) -> Frame {
    if let Ok(Value::String(e)) = t.raw_get::<Value>("err") {
        return Frame::Error(one_line(&String::from_utf8_lossy(&e.as_bytes())));
    }
    if let Ok(Value::String(ok)) = t.raw_get::<Value>("ok") {
        let s = String::from_utf8_lossy(&ok.as_bytes()).replace(['\r', '\n'], " ");
        return Frame::Simple(s);
    }
    if let Ok(Value::Number(d)) = t.raw_get::<Value>("double") {
        return Frame::Double(fmt_g17(d));
    }
    if let Ok(Value::Integer(d)) = t.raw_get::<Value>("double") {
        return Frame::Double(fmt_g17(d as f64));
    }
    if let Ok(Value::Table(m)) = t.raw_get::<Value>("map") {
        // Lua's `next` order, as Redis iterates the table with `lua_next`.
        let pairs = m
            .pairs::<Value, Value>()
            .filter_map(Result::ok)
            .map(|(k, v)| (lua_to_reply_as(&k, resp3), lua_to_reply_as(&v, resp3)))
            .collect();
        return Frame::Map(pairs);
    }
    let mut items = Vec::new();
    let mut i = 1usize;
    loop {
        match t.raw_get::<Value>(i) {
            Ok(Value::Nil) | Err(_) => break,
            Ok(v) => items.push(lua_to_reply_as(&v, resp3)),
        }
        i += 1;
    }
    Frame::Array(items)
}

pub(crate) use crate::format::{fmt_g, fmt_g17};
