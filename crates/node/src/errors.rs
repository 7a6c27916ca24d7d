//! The error replies several command families share, worded as Redis 7 words
//! them, and the argument helpers they use. The families import from here,
//! never from the dispatcher.

use redlock_proto::resp::Frame;

/// The reply Redis gives for an argument that is not an integer.
pub(crate) fn not_an_integer() -> Frame {
    Frame::err("ERR value is not an integer or out of range")
}

pub(crate) fn syntax_error() -> Frame {
    Frame::err("ERR syntax error")
}

/// A command (or `command|subcommand`) called with the wrong number of
/// arguments.
pub(crate) fn wrong_arity(fullname: &str) -> Frame {
    Frame::err(format!(
        "ERR wrong number of arguments for '{fullname}' command"
    ))
}

/// An operation against a key holding the wrong kind of value.
pub(crate) const WRONGTYPE: &str =
    "WRONGTYPE Operation against a key holding the wrong kind of value";

pub(crate) fn wrong_type() -> Frame {
    Frame::err(WRONGTYPE)
}

/// A write sent to a replica.
pub(crate) fn read_only() -> Frame {
    Frame::err("READONLY You can't write against a read only replica.")
}

/// Case-insensitive comparison of an argument with an ASCII word.
pub(crate) fn is(arg: &[u8], word: &str) -> bool {
    arg.eq_ignore_ascii_case(word.as_bytes())
}

/// Parses an integer as Redis's `string2ll` does: no sign but a leading
/// `-`, no leading zeros, no spaces, at most 20 characters.
pub(crate) fn parse_i64(b: &[u8]) -> Option<i64> {
    if b.is_empty() || b.len() > 20 {
        return None;
    }
    if b == b"0" {
        return Some(0);
    }
    let digits = b.strip_prefix(b"-").unwrap_or(b);
    match digits.first() {
        Some(b'1'..=b'9') if digits.iter().all(u8::is_ascii_digit) => {}
        _ => return None,
    }
    std::str::from_utf8(b).ok()?.parse().ok()
}

/// Whether `argc` arguments (the name included) fit an arity (positive:
/// exactly; negative: at least).
pub(crate) fn arity_ok(arity: i32, argc: usize) -> bool {
    let argc = argc as i64;
    let arity = arity as i64;
    if arity > 0 {
        argc == arity
    } else {
        argc >= -arity
    }
}
