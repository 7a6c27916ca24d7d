//! Port numbers rewritten in a RESP stream, for the links around a real
//! `redis-sentinel` (`--servers redis`). Every host reaches every other
//! through a link of its own, so an address is only good for the host it
//! was made for: the sentinel knows each node by its own links' ports, a
//! client must be told its links' ports (as the node code's sentinel does
//! with one listener per client), and a node the sentinel points at a new
//! master must be told its own link to that master.
//!
//! A [`PortMap`] rewrites, in every bulk and simple string that passes,
//! each run of digits bounded by non-alphanumerics that is a port it
//! knows (`40123`, `127.0.0.1:40123`, `... 127.0.0.1 40123 ...` in a
//! `+switch-master` message), and fixes the bulk string's length. A frame
//! cut across reads waits for its end.

use bytes::{Bytes, BytesMut};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

/// Port → port, filled as the links open.
#[derive(Clone, Default)]
pub(crate) struct PortMap(Arc<RwLock<BTreeMap<u16, u16>>>);

impl PortMap {
    pub(crate) fn insert(&self, from: u16, to: u16) {
        let before = self
            .0
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(from, to);
        // A port is one link's: it maps to one port.
        assert!(
            before.is_none_or(|b| b == to),
            "port {from} mapped to {before:?}, then to {to}"
        );
    }

    /// `text` with each known port replaced.
    pub(crate) fn apply(&self, text: &[u8]) -> Vec<u8> {
        let map = self.0.read().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::with_capacity(text.len());
        let mut i = 0;
        while i < text.len() {
            let starts =
                text[i].is_ascii_digit() && (i == 0 || !text[i - 1].is_ascii_alphanumeric());
            if !starts {
                out.push(text[i]);
                i += 1;
                continue;
            }
            let end = i + text[i..].iter().take_while(|c| c.is_ascii_digit()).count();
            let bounded = end == text.len() || !text[end].is_ascii_alphanumeric();
            let port = std::str::from_utf8(&text[i..end])
                .ok()
                .and_then(|d| d.parse::<u16>().ok());
            match port.and_then(|p| map.get(&p)).filter(|_| bounded) {
                Some(to) => out.extend_from_slice(to.to_string().as_bytes()),
                None => out.extend_from_slice(&text[i..end]),
            }
            i = end;
        }
        out
    }
}

/// One direction's rewriter: bytes in, rewritten whole frames' parts out.
pub(crate) struct Rewriter {
    map: PortMap,
    buf: BytesMut,
}

impl Rewriter {
    pub(crate) fn new(map: PortMap) -> Rewriter {
        Rewriter {
            map,
            buf: BytesMut::new(),
        }
    }

    /// Takes `chunk`; returns what can go on now (a line or a bulk string
    /// not yet whole stays).
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> Bytes {
        self.buf.extend_from_slice(chunk);
        let mut out = Vec::new();
        while let Some(nl) = self.buf.iter().position(|&c| c == b'\n') {
            let tag = self.buf[0];
            if matches!(tag, b'$' | b'=' | b'!') {
                let len = std::str::from_utf8(&self.buf[1..nl])
                    .ok()
                    .and_then(|n| n.trim_end().parse::<i64>().ok());
                let Some(len) = len.filter(|l| *l >= 0) else {
                    out.extend_from_slice(&self.buf.split_to(nl + 1));
                    continue;
                };
                let total = nl + 1 + len as usize + 2;
                if self.buf.len() < total {
                    break;
                }
                let frame = self.buf.split_to(total);
                let body = self.map.apply(&frame[nl + 1..nl + 1 + len as usize]);
                out.push(tag);
                out.extend_from_slice(body.len().to_string().as_bytes());
                out.extend_from_slice(b"\r\n");
                out.extend_from_slice(&body);
                out.extend_from_slice(b"\r\n");
            } else if tag == b'+' {
                let line = self.buf.split_to(nl + 1);
                out.extend_from_slice(&self.map.apply(&line));
            } else {
                out.extend_from_slice(&self.buf.split_to(nl + 1));
            }
        }
        Bytes::from(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_ports_are_rewritten_wherever_a_string_names_them() {
        let map = PortMap::default();
        map.insert(40001, 51234);
        let mut r = Rewriter::new(map);
        let reply = b"*2\r\n$9\r\n127.0.0.1\r\n$5\r\n40001\r\n";
        let mut out = r.feed(&reply[..20]).to_vec();
        out.extend_from_slice(&r.feed(&reply[20..]));
        assert_eq!(out, b"*2\r\n$9\r\n127.0.0.1\r\n$5\r\n51234\r\n");
        let msg = b"$38\r\nmymaster 127.0.0.1 40001 127.0.0.1 777\r\n";
        assert_eq!(
            r.feed(msg).as_ref(),
            b"$38\r\nmymaster 127.0.0.1 51234 127.0.0.1 777\r\n"
        );
        // Not a port: digits inside a word, or a longer number.
        let other = b"+a40001 400012 127.0.0.1:40001\r\n";
        assert_eq!(
            r.feed(other).as_ref(),
            b"+a40001 400012 127.0.0.1:51234\r\n"
        );
    }
}
