//! What the servers answered each client: a link from a client to a node
//! or to the sentinel reads the commands the client sends and the replies
//! that come back (RESP2 and RESP3), pairs them in order, and tells the
//! lab each reply that says the server could not run the command as sent
//! ([`could_not_run`]): an unknown command or subcommand, wrong arguments,
//! a script that would not compile or failed in Lua. The lab counts those
//! to a *lock command* (a script, or a command naming a lock key) as a
//! cause of an inconclusive run: a library whose script the server cannot
//! run never locks. Others are a library's probes that Redis refuses too
//! (redis-py 8's `CLIENT MAINT_NOTIFICATIONS`, Redisson's `WAITAOF` on
//! Redis 7.0), which it takes in its stride. Errors that are a server's
//! answer in a working run (`NOSCRIPT`, which makes a library send its
//! script; `READONLY` and `LOADING` around a failover or a restart; a
//! script's own `redis.error_reply`; a type error from the data) are not
//! told.
//!
//! A RESP3 push (`>`: pub/sub messages, tracking invalidations) is no
//! reply. After a RESP2 `SUBSCRIBE` (or `MONITOR`) replies no longer pair
//! with commands: an error then names its command as `?`.

use bytes::{Buf, BytesMut};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// Told each error reply that says the server could not run a command:
/// the command's first words ([`MAX_WORDS`], each cut at [`MAX_WORD`]
/// bytes; empty when replies no longer pair with commands), and the reply.
pub(crate) type ReplyTap = Arc<dyn Fn(&[String], &str) + Send + Sync>;

/// Words of a command kept to be told: enough for a script's keys.
const MAX_WORDS: usize = 8;
/// Bytes of a word kept (a script's text is cut).
const MAX_WORD: usize = 200;

/// Whether an error reply says the server could not run the command as
/// it was sent (Redis 7.0's words).
pub(crate) fn could_not_run(error: &str) -> bool {
    const WORDS: [&str; 9] = [
        "unknown command",
        "unknown subcommand",
        "Unknown Redis command called from script",
        "not allowed from script",
        "Wrong number of args calling Redis command from script",
        "wrong number of arguments",
        "syntax error",
        "Error compiling script",
        "ERR user_script:",
    ];
    WORDS.iter().any(|w| error.contains(w))
}

/// One connection's commands and replies, paired.
pub(crate) struct Pairing {
    tap: ReplyTap,
    up: BytesMut,
    down: BytesMut,
    /// The commands sent and not yet answered, in order.
    pending: VecDeque<Vec<String>>,
    /// Replies no longer pair with commands (RESP2 subscribed mode).
    unpaired: bool,
    /// What the stream sent could not be read as RESP: the tap stops.
    lost: bool,
}

impl Pairing {
    pub(crate) fn new(tap: ReplyTap) -> Arc<Mutex<Pairing>> {
        Arc::new(Mutex::new(Pairing {
            tap,
            up: BytesMut::new(),
            down: BytesMut::new(),
            pending: VecDeque::new(),
            unpaired: false,
            lost: false,
        }))
    }

    /// Bytes the client sent.
    pub(crate) fn sent(&mut self, bytes: &[u8]) {
        if self.lost {
            return;
        }
        self.up.extend_from_slice(bytes);
        loop {
            match request_words(&self.up) {
                Ok(Some((words, used))) => {
                    // A request takes bytes, and no more than were sent.
                    assert!(
                        used > 0 && used <= self.up.len(),
                        "a request of {used} bytes in {}",
                        self.up.len()
                    );
                    self.up.advance(used);
                    let upper = words.first().map(|w| w.to_ascii_uppercase());
                    if matches!(
                        upper.as_deref(),
                        Some("SUBSCRIBE" | "PSUBSCRIBE" | "SSUBSCRIBE" | "MONITOR")
                    ) {
                        self.unpaired = true;
                    }
                    self.pending.push_back(words);
                }
                Ok(None) => return,
                Err(()) => return self.lose(),
            }
        }
    }

    /// Bytes the server answered.
    pub(crate) fn answered(&mut self, bytes: &[u8]) {
        if self.lost {
            return;
        }
        self.down.extend_from_slice(bytes);
        loop {
            let Ok(scanned) = scan(&self.down, 0, 0) else {
                return self.lose();
            };
            let Some(end) = scanned else { return };
            assert!(
                end > 0 && end <= self.down.len(),
                "a reply of {end} bytes in {}",
                self.down.len()
            );
            let frame = self.down.split_to(end);
            if frame[0] == b'>' {
                continue;
            }
            let command = match self.unpaired {
                false => self.pending.pop_front(),
                true => None,
            };
            if let Some(error) = error_text(&frame) {
                if could_not_run(&error) {
                    (self.tap)(command.as_deref().unwrap_or(&[]), &error);
                }
            }
        }
    }

    fn lose(&mut self) {
        self.lost = true;
        self.up.clear();
        self.down.clear();
    }
}

/// The text of an error reply (`-ERR ...`, or RESP3's `!len` blob), on one
/// line.
fn error_text(frame: &[u8]) -> Option<String> {
    let body = match frame[0] {
        b'-' => &frame[1..frame.len().saturating_sub(2)],
        b'!' => {
            let nl = frame.iter().position(|&c| c == b'\n')?;
            &frame[nl + 1..frame.len().saturating_sub(2)]
        }
        _ => return None,
    };
    let text = String::from_utf8_lossy(body);
    Some(
        text.chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect(),
    )
}

/// The first words of the first request in `buf` (an array of bulk
/// strings, or an inline line), and the bytes it takes; `None` if it is
/// not all there yet.
fn request_words(buf: &[u8]) -> Result<Option<(Vec<String>, usize)>, ()> {
    if buf.is_empty() {
        return Ok(None);
    }
    let cut = |w: &str| w.chars().take(MAX_WORD).collect::<String>();
    if buf[0] != b'*' {
        // An inline command: a line of words.
        let Some(nl) = buf.iter().position(|&c| c == b'\n') else {
            return Ok(None);
        };
        let line = String::from_utf8_lossy(&buf[..nl]);
        let words = line.split_whitespace().take(MAX_WORDS).map(cut).collect();
        return Ok(Some((words, nl + 1)));
    }
    let Some(end) = scan(buf, 0, 0)? else {
        return Ok(None);
    };
    let words = first_bulks(&buf[..end], MAX_WORDS);
    Ok(Some((words.iter().map(|w| cut(w)).collect(), end)))
}

/// A command's name as told: `EVALSHA`, `CLIENT TRACKING` (with the
/// subcommand for the commands that have them), `?` when not known.
pub(crate) fn command_name(words: &[String]) -> String {
    const WITH_SUB: [&str; 9] = [
        "CLIENT", "SENTINEL", "SCRIPT", "CONFIG", "CLUSTER", "COMMAND", "PUBSUB", "OBJECT", "XINFO",
    ];
    let Some(first) = words.first() else {
        return "?".to_string();
    };
    let upper = first.to_ascii_uppercase();
    match words.get(1) {
        Some(sub) if WITH_SUB.contains(&upper.as_str()) => {
            format!("{upper} {}", sub.to_ascii_uppercase())
        }
        _ => upper,
    }
}

/// Whether `words` are a lock command: a script (`EVAL`, `EVALSHA`,
/// `FCALL` and their read-only forms), or a command naming one of
/// `lock_keys`.
pub(crate) fn is_lock_command(words: &[String], lock_keys: &[String]) -> bool {
    let name = words.first().map(|w| w.to_ascii_uppercase());
    let script = matches!(
        name.as_deref(),
        Some("EVAL" | "EVALSHA" | "EVAL_RO" | "EVALSHA_RO" | "FCALL" | "FCALL_RO")
    );
    script || words.iter().skip(1).any(|w| lock_keys.contains(w))
}

/// The first `n` bulk strings of an array frame.
fn first_bulks(frame: &[u8], n: usize) -> Vec<String> {
    let mut out = Vec::new();
    let Some(mut pos) = frame.iter().position(|&c| c == b'\n').map(|p| p + 1) else {
        return out;
    };
    while out.len() < n && pos < frame.len() && frame[pos] == b'$' {
        let Some(nl) = frame[pos..].iter().position(|&c| c == b'\n') else {
            break;
        };
        let len: usize = match std::str::from_utf8(&frame[pos + 1..pos + nl - 1])
            .ok()
            .and_then(|t| t.parse().ok())
        {
            Some(l) => l,
            None => break,
        };
        let start = pos + nl + 1;
        let Some(text) = frame.get(start..start + len) else {
            break;
        };
        out.push(String::from_utf8_lossy(text).into_owned());
        pos = start + len + 2;
    }
    out
}

/// Where the RESP2 or RESP3 value starting at `pos` ends; `None` if it is
/// not all there yet; `Err` if it is not RESP.
fn scan(buf: &[u8], pos: usize, depth: usize) -> Result<Option<usize>, ()> {
    if depth > 64 {
        return Err(());
    }
    let Some(&tag) = buf.get(pos) else {
        return Ok(None);
    };
    let Some(nl) = buf[pos..].iter().position(|&c| c == b'\n') else {
        return if buf.len() - pos > 64 * 1024 {
            Err(())
        } else {
            Ok(None)
        };
    };
    let line_end = pos + nl + 1;
    let head = std::str::from_utf8(&buf[pos + 1..pos + nl]).map_err(|_| ())?;
    let head = head.trim_end_matches('\r');
    let count = || head.parse::<i64>().map_err(|_| ());
    match tag {
        b'+' | b'-' | b':' | b'_' | b'#' | b',' | b'(' => Ok(Some(line_end)),
        b'$' | b'!' | b'=' => {
            let len = count()?;
            if len < 0 {
                return Ok(Some(line_end));
            }
            let end = line_end + len as usize + 2;
            Ok((buf.len() >= end).then_some(end))
        }
        b'*' | b'~' | b'>' | b'%' | b'|' => {
            let n = count()?;
            let items = if matches!(tag, b'%' | b'|') {
                n.saturating_mul(2)
            } else {
                n
            };
            let mut at = line_end;
            for _ in 0..items.max(0) {
                match scan(buf, at, depth + 1)? {
                    Some(end) => at = end,
                    None => return Ok(None),
                }
            }
            // An attribute goes before the value it describes.
            if tag == b'|' {
                return scan(buf, at, depth + 1);
            }
            Ok(Some(at))
        }
        _ => Err(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_command_is_a_script_or_names_a_lock_key() {
        let w = |s: &str| s.split(' ').map(str::to_string).collect::<Vec<_>>();
        let keys = vec!["lock".to_string()];
        assert!(is_lock_command(&w("evalsha abc 1 other"), &keys));
        assert!(is_lock_command(&w("SET lock t NX PX 10"), &keys));
        assert!(!is_lock_command(&w("CLIENT MAINT_NOTIFICATIONS ON"), &keys));
        assert!(!is_lock_command(&w("WAITAOF 0 1 0"), &keys));
        assert_eq!(command_name(&w("client tracking on")), "CLIENT TRACKING");
        assert_eq!(command_name(&[]), "?");
    }

    fn told() -> (Arc<Mutex<Pairing>>, Arc<Mutex<Vec<String>>>) {
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let s = seen.clone();
        let tap: ReplyTap = Arc::new(move |words: &[String], err: &str| {
            let cmd = command_name(words);
            s.lock().unwrap().push(format!("{cmd}: {err}"))
        });
        (Pairing::new(tap), seen)
    }

    #[test]
    fn an_unknown_command_is_told_with_its_command_and_reply() {
        let (p, seen) = told();
        let mut p = p.lock().unwrap();
        p.sent(b"*1\r\n$4\r\nPING\r\n*3\r\n$6\r\nCLIENT\r\n$8\r\nTRACKING\r\n$2\r\nON\r\n");
        // Split anywhere: the reply comes in two reads.
        p.answered(b"+PONG\r\n-ERR unknown subcommand 'TRACK");
        p.answered(b"ING'. Try CLIENT HELP.\r\n");
        assert_eq!(
            *seen.lock().unwrap(),
            ["CLIENT TRACKING: ERR unknown subcommand 'TRACKING'. Try CLIENT HELP."]
        );
    }

    #[test]
    fn a_script_error_is_told_and_a_working_runs_errors_are_not() {
        let (p, seen) = told();
        let mut p = p.lock().unwrap();
        p.sent(b"EVALSHA abc 1 lock\r\nEVAL x 1 lock\r\nSET lock v\r\nEVAL y 0\r\n");
        p.answered(b"-NOSCRIPT No matching script. Please use EVAL.\r\n");
        p.answered(b"-ERR user_script:1: Unknown Redis command called from script script: x\r\n");
        p.answered(b"-READONLY You can't write against a read only replica.\r\n");
        p.answered(b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
        assert_eq!(
            *seen.lock().unwrap(),
            ["EVAL: ERR user_script:1: Unknown Redis command called from script script: x"]
        );
    }

    #[test]
    fn resp3_pushes_are_no_replies_and_every_type_is_read() {
        let (p, seen) = told();
        let mut p = p.lock().unwrap();
        p.sent(
            b"*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*1\r\n$4\r\nTIME\r\n",
        );
        p.answered(b"%2\r\n+server\r\n$5\r\nredis\r\n+modules\r\n*0\r\n");
        // An invalidation pushed between two replies.
        p.answered(b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n");
        p.answered(b"|1\r\n+ttl\r\n:3\r\n$1\r\nv\r\n");
        p.answered(b"!21\r\nERR unknown command x\r\n");
        assert_eq!(*seen.lock().unwrap(), ["TIME: ERR unknown command x"]);
    }

    #[test]
    fn after_a_resp2_subscribe_errors_name_no_command() {
        let (p, seen) = told();
        let mut p = p.lock().unwrap();
        p.sent(b"SUBSCRIBE a b\r\nFOO\r\n");
        p.answered(
            b"*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n*3\r\n$9\r\nsubscribe\r\n$1\r\nb\r\n:2\r\n",
        );
        p.answered(b"-ERR unknown command 'FOO'\r\n");
        assert_eq!(*seen.lock().unwrap(), ["?: ERR unknown command 'FOO'"]);
    }

    #[test]
    fn an_enormous_map_count_waits_for_more_bytes_instead_of_overflowing() {
        // A client's bytes: a map header whose count doubled overflows i64.
        let buf = format!("%{}\r\n", i64::MAX);
        assert_eq!(scan(buf.as_bytes(), 0, 0), Ok(None));
        let buf = format!("|{}\r\n", i64::MAX / 2 + 1);
        assert_eq!(scan(buf.as_bytes(), 0, 0), Ok(None));
    }
}
