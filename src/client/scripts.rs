//! The Lua scripts the lock client sends, and their SHA1s.
//!
//! The texts are the ones the Redis distributed-locks page gives. They run
//! as Lua scripts everywhere: in the node's Lua 5.1 interpreter
//! (`node::scripting`) in the simulation, and in `redis-server` for real.

/// Compare-and-delete: release the lock only if it still holds our token.
pub const RELEASE: &str = "if redis.call(\"get\",KEYS[1]) == ARGV[1] then\n    return redis.call(\"del\",KEYS[1])\nelse\n    return 0\nend";

/// Compare-and-pexpire: extend the lock only if it still holds our token.
/// Never re-creates a key that has expired.
pub const EXTEND: &str = "if redis.call(\"get\",KEYS[1]) == ARGV[1] then\n    return redis.call(\"pexpire\",KEYS[1],ARGV[2])\nelse\n    return 0\nend";

/// The extension of [`super::Flaw::ExtendResurrects`]: like RedLock.net's
/// extend script, it re-creates the key with our token when the key is
/// missing (1), extends it when it holds our token (1), and answers -1 when
/// it holds someone else's. Never used by the correct client.
pub const EXTEND_RESURRECT: &str = "local current = redis.call(\"get\",KEYS[1])\nif current == false then\n    return redis.call(\"set\",KEYS[1],ARGV[1],\"px\",ARGV[2]) and 1 or 0\nelseif current == ARGV[1] then\n    return redis.call(\"pexpire\",KEYS[1],ARGV[2])\nelse\n    return -1\nend";

/// Lowercase hex SHA1 of a script, as `SCRIPT LOAD` returns it.
pub fn sha1_hex(script: &[u8]) -> String {
    sha1_smol::Sha1::from(script).digest().to_string()
}
