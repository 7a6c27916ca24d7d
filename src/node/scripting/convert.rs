//! Conversions between replies and Lua values, by Redis 7.0's rules
//! (`script_lua.c`, RESP2):
//!
//! - reply → Lua: integer → number; bulk → string; null bulk (and null
//!   array) → `false`; array → table; status → `{ok=...}`; error →
//!   `{err=...}` (which `redis.call` raises and `redis.pcall` returns).
//! - Lua → reply: number → integer, truncated toward zero; string → bulk;
//!   `true` → 1; `false` → null bulk; a table with a string `err` → error;
//!   with a string `ok` → status (CR and LF turned into spaces); any other
//!   table → array, up to its first nil; any other type → null bulk.

use crate::resp::Frame;
use mlua::{Lua, Table, Value};

/// A reply of a command, as `redis.call` hands it to the script.
pub fn reply_to_lua(lua: &Lua, f: &Frame) -> mlua::Result<Value> {
    Ok(match f {
        Frame::Integer(n) => Value::Number(*n as f64),
        Frame::Bulk(b) => Value::String(lua.create_string(b)?),
        Frame::Null => Value::Boolean(false),
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
        Frame::Map(_) | Frame::Boolean(_) | Frame::Double(_) | Frame::Verbatim(_) => {
            return reply_to_lua(lua, &f.clone().into_resp2());
        }
    })
}

/// `{err = "CODE message"}` as Redis's `luaPushErrorBuff` builds it from a
/// reply's error text: an error with no space gets the code `ERR`; trailing
/// CR/LF are trimmed.
pub fn error_table(lua: &Lua, e: &str) -> mlua::Result<Table> {
    let e = e.strip_prefix('-').unwrap_or(e);
    let text = match e.split_once(' ') {
        Some((code, msg)) => format!("{code} {}", msg.trim_matches(['\r', '\n'])),
        None => format!("ERR {}", e.trim_matches(['\r', '\n'])),
    };
    let t = lua.create_table()?;
    t.raw_set("err", text)?;
    Ok(t)
}

/// The value a script returns, as the reply EVAL sends.
pub fn lua_to_reply(v: &Value) -> Frame {
    match v {
        Value::String(s) => Frame::Bulk(bytes::Bytes::copy_from_slice(&s.as_bytes())),
        Value::Boolean(true) => Frame::Integer(1),
        Value::Boolean(false) => Frame::Null,
        Value::Integer(n) => Frame::Integer(*n),
        Value::Number(n) => Frame::Integer(truncate(*n)),
        Value::Table(t) => table_to_reply(t),
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
pub fn one_line(s: &str) -> String {
    s.trim_matches(['\r', '\n']).replace(['\r', '\n'], " ")
}

fn table_to_reply(t: &Table) -> Frame {
    if let Ok(Value::String(e)) = t.raw_get::<Value>("err") {
        return Frame::Error(one_line(&String::from_utf8_lossy(&e.as_bytes())));
    }
    if let Ok(Value::String(ok)) = t.raw_get::<Value>("ok") {
        let s = String::from_utf8_lossy(&ok.as_bytes()).replace(['\r', '\n'], " ");
        return Frame::Simple(s);
    }
    let mut items = Vec::new();
    let mut i = 1usize;
    loop {
        match t.raw_get::<Value>(i) {
            Ok(Value::Nil) | Err(_) => break,
            Ok(v) => items.push(lua_to_reply(&v)),
        }
        i += 1;
    }
    Frame::Array(items)
}
