//! The node's Lua 5.1 state (mlua, vendored Lua 5.1 built from source): the
//! sandbox Redis 7.0 gives scripts, the cache of compiled scripts (one
//! function per SHA1, as Redis keeps `f_<sha>`), and running one script
//! against the keyspace with its limits.
//!
//! Sandbox: the base library (without `dofile`, `loadfile`, `print`),
//! `table`, `string`, `math`; no `os`, `io`, `package`/`require`, `debug`.
//! Redis's `cjson`, `bit`, `struct` and `cmsgpack` libraries are not
//! provided. Globals cannot be created or changed ("Attempt to modify a
//! readonly table"), reading a missing one is an error ("Script attempted to
//! access nonexistent global variable"), as in Redis 7.0 (see
//! `prelude.lua`). Nothing reachable from a script reads time or entropy:
//! `math.random` is Redis's seeded rand48.
//!
//! Limits (redlock-sim's, documented in docs/cli-and-outputs.md): a script
//! is stopped after [`INSTRUCTION_LIMIT`] Lua VM instructions, counted by a
//! hook (deterministic), and the state may not grow past [`MEMORY_LIMIT`].

use super::api;
use super::convert::{fmt_g, lua_to_reply_as, one_line};
use crate::keyspace::Keyspace;
use bytes::Bytes;
use mlua::chunk::ChunkMode;
use mlua::{Function, HookTriggers, Lua, LuaOptions, StdLib, Table, Value, VmState};
use redlock_proto::resp::Frame;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Lua VM instructions one script may execute before it is stopped.
pub(crate) const INSTRUCTION_LIMIT: u64 = 20_000_000;
/// How often (in instructions) the hook counts.
const HOOK_EVERY: u32 = 10_000;
/// Bytes the Lua state may use.
pub(crate) const MEMORY_LIMIT: usize = 32 << 20;

const PRELUDE: &str = include_str!("prelude.lua");

pub(crate) struct Interp {
    lua: Lua,
    /// Where `KEYS` and `ARGV` are set for each call.
    view: Table,
    /// `xpcall(f, __redis__err__handler)`.
    runner: Function,
    ctx: Table,
    /// The real `redis` table (scripts see it through a read-only view).
    redis: Table,
    funcs: BTreeMap<String, Function>,
    killed: Arc<AtomicBool>,
    executed: Arc<AtomicU64>,
    /// The line the script was at when it was stopped (0: unknown).
    killed_at: Arc<AtomicU64>,
}

impl Interp {
    /// A fresh state; `rand` is the node's rand48 state.
    pub(crate) fn new(rand: Arc<AtomicU64>) -> Result<Interp, String> {
        Self::build(rand).map_err(|e| format!("ERR Lua state could not be created: {e}"))
    }

    fn build(rand: Arc<AtomicU64>) -> mlua::Result<Interp> {
        let libs = StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::DEBUG;
        // SAFETY: the debug library is loaded only for the prelude's error
        // handler, which keeps it in a local and removes the global.
        let lua = unsafe { Lua::unsafe_new_with(libs, LuaOptions::default()) };
        let api_t = lua.create_table()?;
        api::register(&lua, &api_t, rand)?;
        let (env, view, runner, redis): (Table, Table, Function, Table) =
            lua.load(PRELUDE).set_name("=redis").call(api_t.clone())?;
        lua.set_globals(env)?;
        lua.set_memory_limit(MEMORY_LIMIT)?;
        let ctx: Table = api_t.raw_get("ctx")?;
        Ok(Interp {
            lua,
            view,
            runner,
            ctx,
            redis,
            funcs: BTreeMap::new(),
            killed: Arc::new(AtomicBool::new(false)),
            executed: Arc::new(AtomicU64::new(0)),
            killed_at: Arc::new(AtomicU64::new(0)),
        })
    }

    /// Compiles `body` as the function of `sha`; the error reply Redis
    /// gives for a script that does not compile.
    pub(crate) fn compile(&mut self, sha: &str, body: &[u8]) -> Result<(), Frame> {
        if self.funcs.contains_key(sha) {
            return Ok(());
        }
        let loaded = self
            .lua
            .load(body)
            .set_name("@user_script")
            .set_mode(ChunkMode::Text)
            .into_function();
        match loaded {
            Ok(f) => {
                self.funcs.insert(sha.to_string(), f);
                Ok(())
            }
            Err(e) => {
                let msg = match e {
                    mlua::Error::SyntaxError { message, .. } => message,
                    other => other.to_string(),
                };
                Err(Frame::Error(one_line(&format!(
                    "ERR Error compiling script (new function): {msg}"
                ))))
            }
        }
    }

    /// Runs the compiled script `sha` with `KEYS`/`ARGV`, every command at
    /// `now`.
    pub(crate) fn run(
        &mut self,
        ks: &mut Keyspace,
        sha: &str,
        keys: &[Bytes],
        argv: &[Bytes],
        now: i64,
    ) -> Frame {
        let Some(f) = self.funcs.get(sha).cloned() else {
            return Frame::err("NOSCRIPT No matching script. Please use EVAL.");
        };
        let reply = match self.run_inner(ks, sha, f, keys, argv, now) {
            Ok(reply) => reply,
            Err(e) => running_error(sha, &e.to_string()),
        };
        self.finish(sha, reply)
    }

    fn run_inner(
        &mut self,
        ks: &mut Keyspace,
        sha: &str,
        f: Function,
        keys: &[Bytes],
        argv: &[Bytes],
        now: i64,
    ) -> mlua::Result<Frame> {
        let lua = &self.lua;
        self.view.raw_set("KEYS", array(lua, keys)?)?;
        self.view.raw_set("ARGV", array(lua, argv)?)?;
        self.ctx.raw_set("resp", 2)?;
        self.ctx.raw_set("pending", Value::Nil)?;
        self.killed.store(false, Ordering::Relaxed);
        self.killed_at.store(0, Ordering::Relaxed);
        self.executed.store(0, Ordering::Relaxed);
        self.set_count_hook()?;
        let ctx = self.ctx.clone();
        let runner = self.runner.clone();
        let ks = std::cell::RefCell::new(ks);
        let command = |lua: &Lua, args: mlua::MultiValue| {
            let resp3 = ctx.raw_get::<i64>("resp").unwrap_or(2) == 3;
            let mut ks = ks
                .try_borrow_mut()
                .map_err(|_| mlua::Error::runtime("recursive call"))?;
            api::call(lua, &mut ks, now, resp3, args)
        };
        let command = &command;
        let result = lua.scope(|scope| {
            let call = scope.create_function(move |lua, args: mlua::MultiValue| {
                let v = command(lua, args)?;
                if api::raises(&v) {
                    return api::raise(lua, v);
                }
                Ok(v)
            })?;
            let pcall =
                scope.create_function(move |lua, args: mlua::MultiValue| command(lua, args))?;
            self.redis.raw_set("call", call)?;
            self.redis.raw_set("pcall", pcall)?;
            let (ok, v): (bool, Value) = runner.call(f)?;
            Ok(if ok {
                lua_to_reply_as(&v, ctx_resp3(&self.ctx))
            } else {
                error_reply(&v, sha)
            })
        });
        self.lua.remove_global_hook();
        let _ = self.redis.raw_set("call", Value::Nil);
        let _ = self.redis.raw_set("pcall", Value::Nil);
        result
    }

    fn set_count_hook(&self) -> mlua::Result<()> {
        let killed = self.killed.clone();
        let executed = self.executed.clone();
        let killed_at = self.killed_at.clone();
        self.lua.set_global_hook(
            HookTriggers::new().every_nth_instruction(HOOK_EVERY),
            move |lua, debug| {
                if killed.load(Ordering::Relaxed) {
                    return Err(mlua::Error::runtime("script killed"));
                }
                let n =
                    executed.fetch_add(HOOK_EVERY as u64, Ordering::Relaxed) + HOOK_EVERY as u64;
                if n < INSTRUCTION_LIMIT {
                    return Ok(VmState::Continue);
                }
                killed.store(true, Ordering::Relaxed);
                let line = debug.current_line().unwrap_or(0) as u64;
                killed_at.store(line, Ordering::Relaxed);
                // From now on every instruction raises, so that no pcall in
                // the script can catch the stop and go on.
                let k = killed.clone();
                lua.set_global_hook(HookTriggers::new().every_nth_instruction(1), move |_, _| {
                    if k.load(Ordering::Relaxed) {
                        Err(mlua::Error::runtime("script killed"))
                    } else {
                        Ok(VmState::Continue)
                    }
                })?;
                Err(mlua::Error::runtime("script killed"))
            },
        )
    }

    /// The reply of a script stopped by a limit, and the state's upkeep.
    fn finish(&mut self, sha: &str, reply: Frame) -> Frame {
        if self.killed.load(Ordering::Relaxed) {
            let line = match self.killed_at.load(Ordering::Relaxed) {
                0 => "?".to_string(),
                n => n.to_string(),
            };
            return Frame::Error(format!(
                "ERR Script killed by redlock-sim after {INSTRUCTION_LIMIT} Lua instructions \
                 (a script that never returns would keep Redis BUSY) script: {sha}, on @user_script:{line}."
            ));
        }
        if matches!(&reply, Frame::Error(e) if e.contains("not enough memory")) {
            let _ = self.lua.gc_collect();
        }
        reply
    }
}

fn array(lua: &Lua, items: &[Bytes]) -> mlua::Result<Table> {
    let t = lua.create_table_with_capacity(items.len(), 0)?;
    for (i, b) in items.iter().enumerate() {
        t.raw_set(i + 1, lua.create_string(b)?)?;
    }
    Ok(t)
}

/// The reply for an error the script raised, as Redis 7.0's
/// `luaCallFunction` words it: the error table's text, then where it was
/// raised; an error that is not a table (out of memory) is "Error running
/// script".
fn error_reply(v: &Value, sha: &str) -> Frame {
    let Value::Table(t) = v else {
        let msg = match v {
            Value::String(s) => String::from_utf8_lossy(&s.as_bytes()).into_owned(),
            _ => "execution failure".into(),
        };
        return running_error(sha, &msg);
    };
    let text = |k: &str| -> Option<String> {
        match t.get::<Value>(k).ok()? {
            Value::String(s) => Some(String::from_utf8_lossy(&s.as_bytes()).into_owned()),
            Value::Number(n) => Some(fmt_g(n, 14)),
            Value::Integer(n) => Some(n.to_string()),
            _ => None,
        }
    };
    let msg = text("err").unwrap_or_default();
    let mut out = msg;
    if let (Some(source), Some(line)) = (text("source"), text("line")) {
        out.push_str(&format!(" script: {sha}, on {source}:{line}."));
    }
    Frame::Error(out.replace(['\r', '\n'], " "))
}

/// Redis's reply for an error that is not an error table:
/// `Error running script <sha>, <message, at most 100 bytes>`.
fn running_error(sha: &str, msg: &str) -> Frame {
    let cut: String = msg.chars().take(100).collect();
    Frame::Error(one_line(&format!("ERR Error running script {sha}, {cut}")))
}

/// Whether the running script called `redis.setresp(3)`.
fn ctx_resp3(ctx: &mlua::Table) -> bool {
    ctx.raw_get::<i64>("resp").unwrap_or(2) == 3
}
