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

/// The extension of [`super::Variant::ExtendResurrects`]: like RedLock.net's
/// extend script, it re-creates the key with our token when the key is
/// missing (1), extends it when it holds our token (1), and answers -1 when
/// it holds someone else's. Never used by the correct client.
pub const EXTEND_RESURRECT: &str = "local current = redis.call(\"get\",KEYS[1])\nif current == false then\n    return redis.call(\"set\",KEYS[1],ARGV[1],\"px\",ARGV[2]) and 1 or 0\nelseif current == ARGV[1] then\n    return redis.call(\"pexpire\",KEYS[1],ARGV[2])\nelse\n    return -1\nend";

pub use redlock_proto::sha1::sha1_hex;

// Redisson's reentrant lock (`RedissonLock`, org.redisson.RedissonLock in
// github.com/redisson/redisson: `tryLockInnerAsync`, `unlockInnerAsync`,
// `renewExpirationAsync` of RedissonBaseLock). The lock is a hash
// `{owner: count}`; the owner is Redisson's `UUID:threadId`, here the lock
// call's token. The texts are the strings Redisson sends: Java concatenations
// of these pieces, on one line.

/// Take or re-enter (`tryLockInnerAsync`, the form with `hset` for a new
/// lock). `KEYS[1]` the lock, `ARGV[1]` the lease in ms, `ARGV[2]` the owner.
/// Replies nil when the lock is ours (taken, or re-entered: count + 1, lease
/// renewed), else the lock's remaining `pttl`.
pub const REENTRANT_TAKE: &str = concat!(
    "if (redis.call('exists', KEYS[1]) == 0) then ",
    "redis.call('hset', KEYS[1], ARGV[2], 1); ",
    "redis.call('pexpire', KEYS[1], ARGV[1]); ",
    "return nil; ",
    "end; ",
    "if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then ",
    "redis.call('hincrby', KEYS[1], ARGV[2], 1); ",
    "redis.call('pexpire', KEYS[1], ARGV[1]); ",
    "return nil; ",
    "end; ",
    "return redis.call('pttl', KEYS[1]);"
);

/// Release by count (`unlockInnerAsync`), without its
/// `redis.call('publish', KEYS[2], ARGV[1])` after the `del`: Redisson
/// publishes to a channel its waiters subscribe to, our clients retry after
/// `retry_delay` instead, so there is no channel (and no `KEYS[2]`). The
/// arguments keep Redisson's places: `ARGV[1]` the unlock message (unused
/// without the publish; the client sends "0" as Redisson does), `ARGV[2]` the
/// lease in ms, `ARGV[3]` the owner. Replies nil when the owner holds no count
/// here, 0 when the count went down but is still above zero (lease renewed),
/// 1 when it reached zero and the key was deleted.
pub const REENTRANT_RELEASE: &str = concat!(
    "if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then ",
    "return nil;",
    "end; ",
    "local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); ",
    "if (counter > 0) then ",
    "redis.call('pexpire', KEYS[1], ARGV[2]); ",
    "return 0; ",
    "else ",
    "redis.call('del', KEYS[1]); ",
    "return 1; ",
    "end; ",
    "return nil;"
);

/// Renew, the watchdog's extension (`renewExpirationAsync`): `KEYS[1]` the
/// lock, `ARGV[1]` the lease in ms, `ARGV[2]` the owner. 1 when the owner still
/// holds the lock (lease renewed), else 0; never re-creates the key.
pub const REENTRANT_RENEW: &str = concat!(
    "if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then ",
    "redis.call('pexpire', KEYS[1], ARGV[1]); ",
    "return 1; ",
    "end; ",
    "return 0;"
);

/// The SHA1s of the three reentrant-lock scripts, computed once per client.
#[derive(Clone, Debug)]
pub(super) struct ReentrantShas {
    pub(super) take: String,
    pub(super) release: String,
    pub(super) renew: String,
}

impl ReentrantShas {
    pub(super) fn new() -> Self {
        ReentrantShas {
            take: sha1_hex(REENTRANT_TAKE.as_bytes()),
            release: sha1_hex(REENTRANT_RELEASE.as_bytes()),
            renew: sha1_hex(REENTRANT_RENEW.as_bytes()),
        }
    }
}
