//! The SHA1 of a Lua script, as `SCRIPT LOAD` returns it and `EVALSHA`
//! takes it: computed by the node for the scripts it caches and by the
//! client for the scripts it sends, so it lives below both.

/// Lowercase hex SHA1 of a script, as `SCRIPT LOAD` returns it.
pub fn sha1_hex(script: &[u8]) -> String {
    sha1_smol::Sha1::from(script).digest().to_string()
}
