-- The sandbox of redlock-sim's Lua state, run once when the state is made
-- (src/node/scripting/interp.rs). It reproduces what Redis 7.0 sets up in
-- eval.c and script_lua.c: the redis table, pcall that hands back an error
-- table's text, __redis__err__handler locating errors in user_script, and
-- globals that refuse to be created, changed, or read when missing. Chunk
-- name "=redis": the error handler skips frames of this file, so an error
-- raised here is located where the user's script called in.
local api = ...
local dbg = debug
debug = nil

local G = _G
local error, type, tostring, rawget, rawset, select, setmetatable, xpcall, pcall =
    error, type, tostring, rawget, rawset, select, setmetatable, xpcall, pcall

for _, name in ipairs({"dofile", "loadfile", "print", "require", "module", "package", "os", "io"}) do
  G[name] = nil
end

local function readonly()
  error("Attempt to modify a readonly table", 2)
end

-- Tables scripts must not change: the global table and the libraries.
local protected = setmetatable({}, {__mode = "k"})
local function protect(t)
  local p = setmetatable({}, {__index = t, __newindex = readonly, __metatable = false})
  protected[p] = true
  return p
end

-- The redis table. redis.call and redis.pcall are set for each run (they
-- reach the keyspace); the others are Rust functions (api.rs). Every API
-- function is a C function, as in Redis, so that error locations and
-- names in messages come out the same (a tail call to a Lua function
-- would lose the caller's frame).
local ctx = api.ctx
local redis = {}
for _, name in ipairs({"sha1hex", "error_reply", "status_reply", "log", "setresp", "set_repl"}) do
  redis[name] = api[name]
end
redis.replicate_commands = function() return true end
redis.breakpoint = function() return false end
redis.debug = function() end
redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING = 0, 1, 2, 3
redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL = 0, 1, 2, 2, 3
redis.REDIS_VERSION_NUM = 0x0007000f
redis.REDIS_VERSION = "7.0.15"

-- math.random and math.randomseed: Redis's rand48 (api.rs).
math.random = api.random
math.randomseed = api.randomseed

-- An error raised by a Rust function arrives as mlua's error userdata; the
-- value it stands for (an error table or a located message) is in
-- ctx.pending.
local function unwrap(e)
  if type(e) == "userdata" then
    local p = rawget(ctx, "pending")
    if p ~= nil then
      rawset(ctx, "pending", nil)
      return p
    end
  end
  return e
end

-- pcall as Redis 7 replaces it: a caught error table gives its err text.
local function pcall_result(ok, ...)
  if ok then
    return true, ...
  end
  local e = unwrap((...))
  if type(e) == "table" then
    local text = e.err
    if type(text) == "string" or type(text) == "number" then
      return false, text
    end
  end
  return false, e
end
local redis_pcall = function(f, ...)
  return pcall_result(pcall(f, ...))
end

-- Redis's error handler, plus skipping this file's frames.
local function err_handler(err)
  err = unwrap(err)
  local level = 2
  local i = dbg.getinfo(level, "nSl")
  if i and i.what == "C" then
    level = level + 1
    i = dbg.getinfo(level, "nSl")
  end
  while i and i.source == "=redis" do
    level = level + 1
    i = dbg.getinfo(level, "nSl")
  end
  if type(err) ~= "table" then
    err = {err = "ERR " .. tostring(err)}
  end
  if i then
    rawset(err, "source", i.source)
    rawset(err, "line", i.currentline)
  end
  return err
end
G.__redis__err__handler = err_handler

-- What scripts see as globals: every base function, the libraries behind
-- read-only views, KEYS and ARGV (set per call in `view`), and an error for
-- any other name.
local env = {}
local view = {}
-- The base functions Redis 7.0.15 leaves to scripts (no getfenv, setfenv,
-- newproxy, dofile, loadfile, print).
for _, k in ipairs({"assert", "collectgarbage", "error", "gcinfo", "getmetatable", "ipairs",
    "load", "loadstring", "next", "pairs", "rawequal", "rawget", "select", "setmetatable",
    "tonumber", "tostring", "type", "unpack", "xpcall", "_VERSION"}) do
  view[k] = G[k]
end
view.__redis__err__handler = err_handler
view.pcall = redis_pcall
view.rawset = function(t, k, v)
  if protected[t] then
    error("Attempt to modify a readonly table", 0)
  end
  return rawset(t, k, v)
end
view.string = protect(string)
view.math = protect(math)
view.table = protect(table)
view.coroutine = protect(coroutine)
view.redis = protect(redis)
view._G = env
setmetatable(view, {
  __index = function(_, k)
    error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
  end,
})
setmetatable(env, {__index = view, __newindex = readonly, __metatable = false})
protected[env] = true

-- The runner: calls a script's function with Redis's error handler.
local function run(f)
  return xpcall(f, err_handler)
end

return env, view, run, redis
