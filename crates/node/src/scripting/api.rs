//! The Rust half of the `redis.*` API (the Lua half, argument checks and
//! wrappers, is in `prelude.lua`): `redis.call`/`redis.pcall`'s command
//! call, `redis.sha1hex`, and Redis's rand48 generator behind `math.random`.
//!
//! `redis.call(...)` turns its arguments into a command as Redis 7.0 does
//! (strings as they are, numbers printed with `%.17g`, anything else an
//! error), refuses unknown commands, wrong arities and commands scripts may
//! not call with Redis's words, and runs the command through the node's
//! dispatcher on the script's keyspace at the script's frozen `now`: its
//! effects are the script's effects.

use super::convert::{error_table, fmt_g, fmt_g17, reply_to_lua_as};
use crate::command;
use crate::keyspace::Keyspace;
use bytes::Bytes;
use mlua::{Lua, MultiValue, Table, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The registry name of the table the prelude calls `ctx`.
pub(crate) const CTX: &str = "redlock_sim_ctx";

/// Fills the `api` table the prelude receives with the Rust functions.
pub(crate) fn register(lua: &Lua, api: &Table, rand: Arc<AtomicU64>) -> mlua::Result<()> {
    let ctx = lua.create_table()?;
    lua.set_named_registry_value(CTX, &ctx)?;
    api.raw_set("ctx", ctx)?;
    api.raw_set("sha1hex", lua.create_function(sha1hex)?)?;
    api.raw_set("error_reply", lua.create_function(error_reply)?)?;
    api.raw_set("status_reply", lua.create_function(status_reply)?)?;
    api.raw_set("log", lua.create_function(log)?)?;
    api.raw_set("setresp", lua.create_function(setresp)?)?;
    api.raw_set("set_repl", lua.create_function(set_repl)?)?;
    let r = rand.clone();
    api.raw_set(
        "random",
        lua.create_function(move |lua, args: MultiValue| random(lua, &r, args))?,
    )?;
    api.raw_set(
        "randomseed",
        lua.create_function(move |lua, args: MultiValue| {
            let seed = check_int(lua, &args, 1)?;
            srand48(&rand, seed);
            Ok(())
        })?,
    )?;
    Ok(())
}

/// Raises `v` as the Lua error of the running API function: mlua raises its
/// own error value, and the prelude's handlers swap in `v` (`ctx.pending`).
pub(crate) fn raise<T>(lua: &Lua, v: Value) -> mlua::Result<T> {
    let ctx: Table = lua.named_registry_value(CTX)?;
    ctx.raw_set("pending", v)?;
    Err(mlua::Error::runtime("redis lua error"))
}

/// Raises `{err = "ERR <msg>"}`, as Redis's `luaPushError` + `luaError`.
fn raise_err<T>(lua: &Lua, msg: &str) -> mlua::Result<T> {
    let t = lua.create_table()?;
    t.raw_set("err", format!("ERR {msg}"))?;
    raise(lua, Value::Table(t))
}

/// Raises a message located at the caller, as `luaL_error` does.
fn raise_at<T>(lua: &Lua, msg: &str) -> mlua::Result<T> {
    let at = lua
        .inspect_stack(1, |d| match d.current_line() {
            Some(line) if line > 0 => {
                format!("{}:{line}: ", d.source().short_src.unwrap_or_default())
            }
            _ => String::new(),
        })
        .unwrap_or_default();
    let s = lua.create_string(format!("{at}{msg}"))?;
    raise(lua, Value::String(s))
}

fn sha1hex(lua: &Lua, args: MultiValue) -> mlua::Result<String> {
    if args.len() != 1 {
        return raise_err(lua, "wrong number of arguments");
    }
    let text = match &args[0] {
        Value::String(s) => s.as_bytes().to_vec(),
        Value::Number(n) => fmt_g(*n, 14).into_bytes(),
        Value::Integer(n) => n.to_string().into_bytes(),
        _ => Vec::new(),
    };
    Ok(redlock_proto::sha1::sha1_hex(&text))
}

fn one_string(args: &MultiValue) -> Option<String> {
    match (args.len(), args.front()) {
        (1, Some(Value::String(s))) => Some(String::from_utf8_lossy(&s.as_bytes()).into_owned()),
        _ => None,
    }
}

fn wrong_args_table(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("err", "ERR wrong number or type of arguments")?;
    Ok(t)
}

fn error_reply(lua: &Lua, args: MultiValue) -> mlua::Result<Table> {
    let Some(e) = one_string(&args) else {
        return wrong_args_table(lua);
    };
    let e = if e.starts_with('-') {
        e
    } else {
        format!("-{e}")
    };
    error_table(lua, &e)
}

fn status_reply(lua: &Lua, args: MultiValue) -> mlua::Result<Table> {
    let Some(s) = one_string(&args) else {
        return wrong_args_table(lua);
    };
    let t = lua.create_table()?;
    t.raw_set("ok", s)?;
    Ok(t)
}

/// Lua 5.1's `lua_tonumber`: numbers, and strings that read as numbers.
fn to_number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => Some(*n),
        Value::Integer(n) => Some(*n as f64),
        Value::String(s) => {
            let t = s.to_str().ok()?.trim().to_string();
            if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                return u64::from_str_radix(h, 16).ok().map(|n| n as f64);
            }
            t.parse::<f64>()
                .ok()
                .filter(|_| !t.is_empty() && !t.contains(['i', 'I', 'n', 'N']))
        }
        _ => None,
    }
}

/// `redis.log`: checks its arguments as Redis does and logs nothing.
fn log(lua: &Lua, args: MultiValue) -> mlua::Result<()> {
    if args.len() < 2 {
        return raise_err(lua, "redis.log() requires two arguments or more.");
    }
    let Some(level) = to_number(&args[0]) else {
        return raise_err(lua, "First argument must be a number (log level).");
    };
    if !(level > -1.0 && level < 4.0) {
        return raise_err(lua, "Invalid debug level.");
    }
    Ok(())
}

fn setresp(lua: &Lua, args: MultiValue) -> mlua::Result<()> {
    if args.len() != 1 {
        return raise_err(lua, "redis.setresp() requires one argument.");
    }
    let v = to_number(&args[0]).unwrap_or(0.0);
    if !(2.0..4.0).contains(&v) {
        return raise_err(lua, "RESP version must be 2 or 3.");
    }
    let ctx: Table = lua.named_registry_value(CTX)?;
    ctx.raw_set("resp", v as i64)
}

fn set_repl(lua: &Lua, args: MultiValue) -> mlua::Result<()> {
    if args.len() != 1 {
        return raise_err(lua, "redis.set_repl() requires two arguments.");
    }
    let flags = to_number(&args[0]).unwrap_or(0.0) as i64;
    if flags & !3 != 0 {
        return raise_err(
            lua,
            "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.",
        );
    }
    Ok(())
}

/// `luaL_argerror`: `bad argument #i to 'name' (msg)`, located.
fn arg_error<T>(lua: &Lua, i: usize, msg: &str) -> mlua::Result<T> {
    let name = lua
        .inspect_stack(0, |d| d.names().name.map(|n| n.to_string()))
        .flatten()
        .unwrap_or_else(|| "?".into());
    raise_at(lua, &format!("bad argument #{i} to '{name}' ({msg})"))
}

/// `luaL_checkint` of argument `i` (from 1).
fn check_int(lua: &Lua, args: &MultiValue, i: usize) -> mlua::Result<i32> {
    let Some(v) = args.get(i - 1) else {
        return arg_error(lua, i, "number expected, got no value");
    };
    match to_number(v) {
        Some(d) => Ok(lua_int(d)),
        None => {
            let t = match v {
                Value::LightUserData(_) => "userdata",
                other => other.type_name(),
            };
            arg_error(lua, i, &format!("number expected, got {t}"))
        }
    }
}

/// Redis's `redis_math_random`: Lua 5.1's `math.random` over rand48.
fn random(lua: &Lua, state: &AtomicU64, args: MultiValue) -> mlua::Result<f64> {
    let r = (lrand48(state) % i32::MAX) as f64 / i32::MAX as f64;
    match args.len() {
        0 => Ok(r),
        1 => {
            let u = check_int(lua, &args, 1)?;
            if u < 1 {
                return arg_error(lua, 1, "interval is empty");
            }
            Ok((r * u as f64).floor() + 1.0)
        }
        2 => {
            let l = check_int(lua, &args, 1)?;
            let u = check_int(lua, &args, 2)?;
            if l > u {
                return arg_error(lua, 2, "interval is empty");
            }
            Ok((r * (u as f64 - l as f64 + 1.0)).floor() + l as f64)
        }
        _ => raise_at(lua, "wrong number of arguments"),
    }
}

/// Redis's rand48 (`rand.c`): the 48-bit generator of `lrand48`, seeded as
/// `srand48` seeds it. Its state outlives `SCRIPT FLUSH`, as in Redis.
pub(crate) const RAND48_INIT: u64 = 0x1234_ABCD_330E;

fn lrand48(state: &AtomicU64) -> i32 {
    let x = state.load(Ordering::Relaxed);
    let next = (x.wrapping_mul(0x5_DEEC_E66D).wrapping_add(0xB)) & 0xFFFF_FFFF_FFFF;
    state.store(next, Ordering::Relaxed);
    (next >> 17) as i32
}

fn srand48(state: &AtomicU64, seed: i32) {
    state.store(((seed as u32 as u64) << 16) | 0x330E, Ordering::Relaxed);
}

/// Lua 5.1's `lua_number2int` on x86-64: round to nearest (ties to even)
/// by adding 1.5·2^52 and reading the low 32 bits.
fn lua_int(d: f64) -> i32 {
    (d + 6_755_399_441_055_744.0).to_bits() as u32 as i32
}

/// One `redis.call`/`redis.pcall`: the reply as a Lua value, an error reply
/// as an `{err=...}` table (which `redis.call` raises: see [`raises`]).
pub(crate) fn call(
    lua: &Lua,
    ks: &mut Keyspace,
    now: i64,
    resp3: bool,
    args: MultiValue,
) -> mlua::Result<Value> {
    if args.is_empty() {
        return err(
            lua,
            "Please specify at least one argument for this redis lib call",
        );
    }
    let mut argv = Vec::with_capacity(args.len());
    for a in args.iter() {
        match a {
            Value::String(s) => argv.push(Bytes::copy_from_slice(&s.as_bytes())),
            Value::Number(n) => argv.push(Bytes::from(fmt_g17(*n))),
            Value::Integer(n) => argv.push(Bytes::from(n.to_string())),
            _ => {
                return err(
                    lua,
                    "Lua redis lib command arguments must be strings or integers",
                )
            }
        }
    }
    if let Err(e) = command::script_check(&argv) {
        return err(lua, e);
    }
    let reply = command::dispatch(ks, &argv, now);
    reply_to_lua_as(lua, &reply, resp3)
}

fn err(lua: &Lua, msg: &str) -> mlua::Result<Value> {
    let t = lua.create_table()?;
    t.raw_set("err", format!("ERR {msg}"))?;
    Ok(Value::Table(t))
}

/// Is this `redis.call` result an error to raise (an `{err=...}` table)?
pub(crate) fn raises(v: &Value) -> bool {
    matches!(v, Value::Table(t) if matches!(t.raw_get::<Value>("err"), Ok(Value::String(_))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g17_as_c_prints() {
        assert_eq!(fmt_g17(1.0), "1");
        assert_eq!(fmt_g17(-3.5), "-3.5");
        assert_eq!(fmt_g17(0.1), "0.10000000000000001");
        assert_eq!(fmt_g17(1e20), "1e+20");
        assert_eq!(fmt_g17(123456789.0), "123456789");
        assert_eq!(fmt_g17(1.5e-7), "1.4999999999999999e-07");
    }

    #[test]
    fn rand48_is_redis_rand48() {
        // The first lrand48() of an unseeded generator (glibc's too);
        // tests/redis/differential_scripts.rs compares math.random with Redis.
        let s = AtomicU64::new(RAND48_INIT);
        let first = lrand48(&s);
        assert_eq!(first, 851401618);
        assert_eq!(lua_int(2.5), 2);
        assert_eq!(lua_int(3.5), 4);
        assert_eq!(lua_int(-1.2), -1);
    }
}
