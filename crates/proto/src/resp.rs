//! RESP2 and RESP3 frames and an incremental codec, shared by the node and
//! the client.
//!
//! [`Frame`] is one reply value: the RESP2 types, and the RESP3 types the
//! node's commands reply with (map, boolean, double). [`Frame::encode_as`]
//! with RESP2 writes (a RESP3 type in the form Redis gives a RESP2 connection: a
//! map as a flat array, a boolean as an integer, a double as a bulk string);
//! [`Frame::encode_as`] writes either protocol (under RESP3 a null is `_`). [`parse`] looks at the front of a buffer and
//! returns a whole frame with the number of bytes it used, `Ok(None)` when the
//! buffer holds only part of one, or a [`ProtocolError`] for bytes that can
//! never become a frame. [`Connection`] reads and writes frames on any async
//! byte stream (a tokio or a turmoil `TcpStream`). Malformed input is an error,
//! never a panic: lengths are bounded, nesting is bounded, and nothing is
//! allocated from a length before the bytes behind it have arrived.

use bytes::{Buf, Bytes, BytesMut};
use std::fmt;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Largest bulk string accepted, as Redis's default `proto-max-bulk-len`.
pub(crate) const MAX_BULK_LEN: i64 = 512 * 1024 * 1024;
/// Largest number of elements in one array.
pub(crate) const MAX_ARRAY_LEN: i64 = 1024 * 1024;
/// Deepest nesting of arrays accepted.
pub(crate) const MAX_DEPTH: usize = 32;
/// Longest inline command or header line.
pub(crate) const MAX_LINE: usize = 64 * 1024;

/// One reply value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    Simple(String),
    Error(String),
    Integer(i64),
    Bulk(Bytes),
    /// The null: `$-1` under RESP2, `_` under RESP3 (`*-1` parses to it too).
    Null,
    Array(Vec<Frame>),
    /// RESP3 map (`%`), in order; under RESP2 a flat array of keys and values.
    Map(Vec<(Frame, Frame)>),
    /// Pairs in order: under RESP3 an array of two-element arrays, under
    /// RESP2 a flat array (`ZRANGE ... WITHSCORES`).
    Pairs(Vec<(Frame, Frame)>),
    /// The null of an array reply: `*-1` under RESP2, `_` under RESP3
    /// (`BLPOP`'s timeout, `LPOP key count` of no key).
    NullArray,
    /// RESP3 boolean (`#t`/`#f`); under RESP2 the integer 1 or 0.
    Boolean(bool),
    /// RESP3 double (`,`), as the text Redis writes (`3.5`, `inf`, `-inf`);
    /// under RESP2 a bulk string of the same text.
    Double(String),
    /// RESP3 verbatim string of format `txt` (`=`), as `INFO` replies;
    /// under RESP2 a bulk string.
    Verbatim(Bytes),
    /// RESP3 set (`~`), as `CLIENT TRACKINGINFO`'s flags; under RESP2 an
    /// array.
    Set(Vec<Frame>),
    /// RESP3 push (`>`): what a server sends unasked (pub/sub messages,
    /// invalidations); under RESP2 an array.
    Push(Vec<Frame>),
}

/// The protocol a connection speaks: 2 until `HELLO 3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Protocol {
    #[default]
    Resp2,
    Resp3,
}

/// Bytes that can never be part of a valid RESP2 stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtocolError(pub String);

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Protocol error: {}", self.0)
    }
}

impl std::error::Error for ProtocolError {}

fn perr<T>(msg: impl Into<String>) -> Result<T, ProtocolError> {
    Err(ProtocolError(msg.into()))
}

impl Frame {
    /// A command as clients send it: an array of bulk strings.
    pub fn command<I, A>(args: I) -> Frame
    where
        I: IntoIterator<Item = A>,
        A: AsRef<[u8]>,
    {
        Frame::Array(
            args.into_iter()
                .map(|a| Frame::Bulk(Bytes::copy_from_slice(a.as_ref())))
                .collect(),
        )
    }

    pub fn ok() -> Frame {
        Frame::Simple("OK".into())
    }

    pub fn err(msg: impl Into<String>) -> Frame {
        Frame::Error(msg.into())
    }

    pub fn bulk(b: impl AsRef<[u8]>) -> Frame {
        Frame::Bulk(Bytes::copy_from_slice(b.as_ref()))
    }

    /// Appends the wire form of this frame in `proto` to `out`.
    pub(crate) fn encode_as(&self, proto: Protocol, out: &mut Vec<u8>) {
        let v3 = proto == Protocol::Resp3;
        match self {
            Frame::Simple(s) => line(out, b'+', s.as_bytes()),
            Frame::Error(s) => line(out, b'-', s.as_bytes()),
            Frame::Integer(n) => line(out, b':', n.to_string().as_bytes()),
            Frame::Null if v3 => out.extend_from_slice(b"_\r\n"),
            Frame::Null => out.extend_from_slice(b"$-1\r\n"),
            Frame::NullArray if v3 => out.extend_from_slice(b"_\r\n"),
            Frame::NullArray => out.extend_from_slice(b"*-1\r\n"),
            Frame::Pairs(pairs) => {
                let n = if v3 { pairs.len() } else { 2 * pairs.len() };
                line(out, b'*', n.to_string().as_bytes());
                for (a, b) in pairs {
                    if v3 {
                        out.extend_from_slice(b"*2\r\n");
                    }
                    a.encode_as(proto, out);
                    b.encode_as(proto, out);
                }
            }
            Frame::Bulk(b) => bulk(out, b),
            Frame::Array(items) => aggregate(out, b'*', items, proto),
            Frame::Set(items) => aggregate(out, if v3 { b'~' } else { b'*' }, items, proto),
            Frame::Push(items) => aggregate(out, if v3 { b'>' } else { b'*' }, items, proto),
            Frame::Map(pairs) => {
                if v3 {
                    line(out, b'%', pairs.len().to_string().as_bytes());
                } else {
                    line(out, b'*', (2 * pairs.len()).to_string().as_bytes());
                }
                for (k, v) in pairs {
                    k.encode_as(proto, out);
                    v.encode_as(proto, out);
                }
            }
            Frame::Boolean(b) if v3 => line(out, b'#', if *b { b"t" } else { b"f" }),
            Frame::Boolean(b) => line(out, b':', if *b { b"1" } else { b"0" }),
            Frame::Double(d) if v3 => line(out, b',', d.as_bytes()),
            Frame::Double(d) => bulk(out, d.as_bytes()),
            Frame::Verbatim(b) if v3 => {
                line(out, b'=', (b.len() + 4).to_string().as_bytes());
                out.extend_from_slice(b"txt:");
                out.extend_from_slice(b);
                out.extend_from_slice(b"\r\n");
            }
            Frame::Verbatim(b) => bulk(out, b),
        }
    }

    /// The RESP2 wire form.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.to_bytes_as(Protocol::Resp2)
    }

    pub fn to_bytes_as(&self, proto: Protocol) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_as(proto, &mut out);
        out
    }

    /// The value a RESP2 client sees: maps flattened, booleans as integers,
    /// doubles as bulk strings (for callers that hand replies on as RESP2
    /// values, as a script's `redis.call` does).
    pub fn into_resp2(self) -> Frame {
        match self {
            Frame::Array(items) | Frame::Set(items) | Frame::Push(items) => {
                Frame::Array(items.into_iter().map(Frame::into_resp2).collect())
            }
            Frame::Map(pairs) | Frame::Pairs(pairs) => Frame::Array(
                pairs
                    .into_iter()
                    .flat_map(|(k, v)| [k.into_resp2(), v.into_resp2()])
                    .collect(),
            ),
            Frame::NullArray => Frame::Null,
            Frame::Boolean(b) => Frame::Integer(b as i64),
            Frame::Double(d) => Frame::Bulk(Bytes::from(d)),
            Frame::Verbatim(b) => Frame::Bulk(b),
            other => other,
        }
    }
}

fn aggregate(out: &mut Vec<u8>, tag: u8, items: &[Frame], proto: Protocol) {
    line(out, tag, items.len().to_string().as_bytes());
    for item in items {
        item.encode_as(proto, out);
    }
}

fn bulk(out: &mut Vec<u8>, b: &[u8]) {
    line(out, b'$', b.len().to_string().as_bytes());
    out.extend_from_slice(b);
    out.extend_from_slice(b"\r\n");
}

fn line(out: &mut Vec<u8>, tag: u8, body: &[u8]) {
    out.push(tag);
    // Simple strings and errors cannot carry CR or LF; replace them so the
    // stream stays well formed whatever the message says.
    out.extend(
        body.iter()
            .map(|&c| if c == b'\r' || c == b'\n' { b' ' } else { c }),
    );
    out.extend_from_slice(b"\r\n");
}

/// Parses one frame from the front of `buf`.
pub fn parse(buf: &[u8]) -> Result<Option<(Frame, usize)>, ProtocolError> {
    let mut pos = 0;
    match parse_at(buf, &mut pos, 0)? {
        Some(frame) => Ok(Some((frame, pos))),
        None => Ok(None),
    }
}

/// Parses one request from the front of `buf`: a RESP array of bulk strings,
/// or an inline command (`PING\r\n`, as typed into telnet). Returns the
/// arguments; an empty inline line yields an empty list.
pub(crate) fn parse_request(buf: &[u8]) -> Result<Option<(Vec<Bytes>, usize)>, ProtocolError> {
    if buf.is_empty() {
        return Ok(None);
    }
    if buf[0] != b'*' {
        let Some(end) = find_crlf_or_lf(buf) else {
            if buf.len() > MAX_LINE {
                return perr("too big inline request");
            }
            return Ok(None);
        };
        let (text_end, used) = end;
        let args = buf[..text_end]
            .split(|c| c.is_ascii_whitespace())
            .filter(|a| !a.is_empty())
            .map(Bytes::copy_from_slice)
            .collect();
        return Ok(Some((args, used)));
    }
    let Some((frame, used)) = parse(buf)? else {
        return Ok(None);
    };
    let Frame::Array(items) = frame else {
        return perr("expected an array of bulk strings");
    };
    let mut args = Vec::with_capacity(items.len());
    for item in items {
        match item {
            Frame::Bulk(b) => args.push(b),
            _ => return perr("expected '$', got something else"),
        }
    }
    Ok(Some((args, used)))
}

fn find_crlf_or_lf(buf: &[u8]) -> Option<(usize, usize)> {
    let nl = buf.iter().take(MAX_LINE + 2).position(|&c| c == b'\n')?;
    let text_end = if nl > 0 && buf[nl - 1] == b'\r' {
        nl - 1
    } else {
        nl
    };
    Some((text_end, nl + 1))
}

fn parse_at(buf: &[u8], pos: &mut usize, depth: usize) -> Result<Option<Frame>, ProtocolError> {
    if depth > MAX_DEPTH {
        return perr("nesting too deep");
    }
    let Some(&tag) = buf.get(*pos) else {
        return Ok(None);
    };
    let Some(body) = read_line(buf, *pos + 1)? else {
        return Ok(None);
    };
    let after_line = *pos + 1 + body.len() + 2;
    let line = |pos: &mut usize, f: Frame| {
        *pos = after_line;
        Ok(Some(f))
    };
    match tag {
        b'+' => line(
            pos,
            Frame::Simple(String::from_utf8_lossy(body).into_owned()),
        ),
        b'-' => line(
            pos,
            Frame::Error(String::from_utf8_lossy(body).into_owned()),
        ),
        b':' => {
            let n = parse_int(body)?;
            line(pos, Frame::Integer(n))
        }
        b'$' => parse_bulk(buf, pos, body, after_line),
        b'_' if body.is_empty() => line(pos, Frame::Null),
        b'#' if body == b"t" || body == b"f" => line(pos, Frame::Boolean(body == b"t")),
        b',' => line(
            pos,
            Frame::Double(String::from_utf8_lossy(body).into_owned()),
        ),
        b'=' => parse_verbatim(buf, pos, body, after_line),
        b'%' => parse_map(buf, pos, body, after_line, depth),
        b'*' => parse_array(buf, pos, body, after_line, depth),
        b'~' | b'>' => match parse_array(buf, pos, body, after_line, depth)? {
            Some(Frame::Array(items)) if tag == b'~' => Ok(Some(Frame::Set(items))),
            Some(Frame::Array(items)) => Ok(Some(Frame::Push(items))),
            Some(_) => perr("invalid aggregate length"),
            None => Ok(None),
        },
        other => perr(format!("unexpected type byte {other:#04x}")),
    }
}

/// A bulk string (`$<len>`, or `$-1`: null) whose data starts at
/// `after_line`.
fn parse_bulk(
    buf: &[u8],
    pos: &mut usize,
    body: &[u8],
    after_line: usize,
) -> Result<Option<Frame>, ProtocolError> {
    let len = parse_int(body)?;
    if len == -1 {
        *pos = after_line;
        return Ok(Some(Frame::Null));
    }
    if !(0..=MAX_BULK_LEN).contains(&len) {
        return perr("invalid bulk length");
    }
    let end = after_line + len as usize;
    if buf.len() < end + 2 {
        return Ok(None);
    }
    if &buf[end..end + 2] != b"\r\n" {
        return perr("bulk string not terminated by CRLF");
    }
    *pos = end + 2;
    Ok(Some(Frame::Bulk(Bytes::copy_from_slice(
        &buf[after_line..end],
    ))))
}

/// A RESP3 verbatim string (`=<len>`, `txt:` and the text).
fn parse_verbatim(
    buf: &[u8],
    pos: &mut usize,
    body: &[u8],
    after_line: usize,
) -> Result<Option<Frame>, ProtocolError> {
    let len = parse_int(body)?;
    if !(4..=MAX_BULK_LEN).contains(&len) {
        return perr("invalid verbatim length");
    }
    let end = after_line + len as usize;
    if buf.len() < end + 2 {
        return Ok(None);
    }
    if &buf[end..end + 2] != b"\r\n" || buf[after_line + 3] != b':' {
        return perr("malformed verbatim string");
    }
    *pos = end + 2;
    Ok(Some(Frame::Verbatim(Bytes::copy_from_slice(
        &buf[after_line + 4..end],
    ))))
}

/// A RESP3 map (`%<pairs>`): its keys and values, one level deeper.
fn parse_map(
    buf: &[u8],
    pos: &mut usize,
    body: &[u8],
    after_line: usize,
    depth: usize,
) -> Result<Option<Frame>, ProtocolError> {
    let len = parse_int(body)?;
    if !(0..=MAX_ARRAY_LEN).contains(&len) {
        return perr("invalid map length");
    }
    let mut p = after_line;
    let mut pairs = Vec::new();
    for _ in 0..len {
        let Some(k) = parse_at(buf, &mut p, depth + 1)? else {
            return Ok(None);
        };
        let Some(v) = parse_at(buf, &mut p, depth + 1)? else {
            return Ok(None);
        };
        pairs.push((k, v));
    }
    *pos = p;
    Ok(Some(Frame::Map(pairs)))
}

/// An array (`*<len>`, or `*-1`: null): its elements, one level deeper.
fn parse_array(
    buf: &[u8],
    pos: &mut usize,
    body: &[u8],
    after_line: usize,
    depth: usize,
) -> Result<Option<Frame>, ProtocolError> {
    let len = parse_int(body)?;
    if len == -1 {
        *pos = after_line;
        return Ok(Some(Frame::Null));
    }
    if !(0..=MAX_ARRAY_LEN).contains(&len) {
        return perr("invalid multibulk length");
    }
    let mut p = after_line;
    // Grow as elements arrive: never trust the length for allocation.
    let mut items = Vec::new();
    for _ in 0..len {
        match parse_at(buf, &mut p, depth + 1)? {
            Some(f) => items.push(f),
            None => return Ok(None),
        }
    }
    *pos = p;
    Ok(Some(Frame::Array(items)))
}

/// The bytes of the line starting at `start`, without its CRLF.
fn read_line(buf: &[u8], start: usize) -> Result<Option<&[u8]>, ProtocolError> {
    let rest = buf.get(start..).unwrap_or(&[]);
    let limit = rest.len().min(MAX_LINE + 2);
    match rest[..limit].windows(2).position(|w| w == b"\r\n") {
        Some(i) => Ok(Some(&rest[..i])),
        None if rest.len() > MAX_LINE => perr("line too long"),
        None => Ok(None),
    }
}

fn parse_int(body: &[u8]) -> Result<i64, ProtocolError> {
    std::str::from_utf8(body)
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .map_or_else(|| perr("invalid integer"), Ok)
}

/// Error from a [`Connection`].
#[derive(Debug)]
pub enum ConnError {
    Io(std::io::Error),
    Protocol(ProtocolError),
    /// The peer closed the stream.
    Closed,
}

impl fmt::Display for ConnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnError::Io(e) => write!(f, "i/o error: {e}"),
            ConnError::Protocol(e) => write!(f, "{e}"),
            ConnError::Closed => write!(f, "connection closed by peer"),
        }
    }
}

impl std::error::Error for ConnError {}

impl From<std::io::Error> for ConnError {
    fn from(e: std::io::Error) -> Self {
        ConnError::Io(e)
    }
}

impl From<ProtocolError> for ConnError {
    fn from(e: ProtocolError) -> Self {
        ConnError::Protocol(e)
    }
}

/// Frames over a byte stream, with a read buffer.
pub struct Connection<S> {
    stream: S,
    buf: BytesMut,
    /// Bytes parsed so far: where the next frame starts in the stream.
    consumed: u64,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Connection<S> {
    pub fn new(stream: S) -> Self {
        Connection {
            stream,
            buf: BytesMut::with_capacity(4096),
            consumed: 0,
        }
    }

    /// Where in the stream the next frame or request starts (the bytes
    /// parsed so far).
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// Reads the next frame (a reply, on the client side).
    pub async fn read_frame(&mut self) -> Result<Frame, ConnError> {
        loop {
            if let Some((frame, used)) = parse(&self.buf)? {
                self.buf.advance(used);
                self.consumed += used as u64;
                return Ok(frame);
            }
            self.fill().await?;
        }
    }

    /// Reads the next request (on the server side). `Ok(None)` on a clean close
    /// between requests.
    pub async fn read_request(&mut self) -> Result<Option<Vec<Bytes>>, ConnError> {
        loop {
            if let Some((args, used)) = parse_request(&self.buf)? {
                self.buf.advance(used);
                self.consumed += used as u64;
                return Ok(Some(args));
            }
            match self.fill().await {
                Err(ConnError::Closed) if self.buf.is_empty() => return Ok(None),
                Err(e) => return Err(e),
                Ok(()) => {}
            }
        }
    }

    /// Reads more bytes into the buffer, parsing nothing (a blocked
    /// server-side connection watching for its peer's close).
    /// Cancel-safe: bytes read are kept.
    pub async fn read_more(&mut self) -> Result<(), ConnError> {
        self.fill().await
    }

    async fn fill(&mut self) -> Result<(), ConnError> {
        if self.stream.read_buf(&mut self.buf).await? == 0 {
            return Err(ConnError::Closed);
        }
        Ok(())
    }

    /// Writes `frame` in RESP2.
    pub async fn write_frame(&mut self, frame: &Frame) -> Result<(), ConnError> {
        self.write_frame_as(frame, Protocol::Resp2).await
    }

    pub async fn write_frame_as(
        &mut self,
        frame: &Frame,
        proto: Protocol,
    ) -> Result<(), ConnError> {
        self.stream.write_all(&frame.to_bytes_as(proto)).await?;
        self.stream.flush().await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn roundtrip(f: Frame) {
        let bytes = f.to_bytes();
        assert_eq!(parse(&bytes).unwrap(), Some((f, bytes.len())));
        // Every strict prefix is incomplete, never an error.
        for cut in 0..bytes.len() {
            assert_eq!(parse(&bytes[..cut]).unwrap(), None, "prefix {cut}");
        }
    }

    #[test]
    fn frames_roundtrip_and_prefixes_are_incomplete() {
        roundtrip(Frame::Simple("OK".into()));
        roundtrip(Frame::Error("ERR boom".into()));
        roundtrip(Frame::Integer(-42));
        roundtrip(Frame::bulk(b"a\r\nb"));
        roundtrip(Frame::bulk(b""));
        roundtrip(Frame::Null);
        roundtrip(Frame::Array(vec![]));
        roundtrip(Frame::Array(vec![
            Frame::Integer(1),
            Frame::Array(vec![Frame::Null]),
        ]));
    }

    fn roundtrip3(f: Frame) {
        let bytes = f.to_bytes_as(Protocol::Resp3);
        assert_eq!(parse(&bytes).unwrap(), Some((f, bytes.len())));
        for cut in 0..bytes.len() {
            assert_eq!(parse(&bytes[..cut]).unwrap(), None, "prefix {cut}");
        }
    }

    #[test]
    fn resp3_frames_roundtrip_and_have_resp2_forms() {
        let map = Frame::Map(vec![
            (Frame::bulk("a"), Frame::Integer(1)),
            (
                Frame::bulk("b"),
                Frame::Array(vec![Frame::Null, Frame::Boolean(true)]),
            ),
        ]);
        roundtrip3(map.clone());
        roundtrip3(Frame::Boolean(false));
        roundtrip3(Frame::Double("1.5".into()));
        roundtrip3(Frame::Null);
        roundtrip3(Frame::Verbatim(Bytes::from_static(b"# Server\r\n")));
        assert_eq!(
            Frame::Verbatim(Bytes::from_static(b"ab")).to_bytes_as(Protocol::Resp3),
            b"=6\r\ntxt:ab\r\n"
        );
        assert_eq!(
            Frame::Verbatim(Bytes::from_static(b"ab")).to_bytes(),
            b"$2\r\nab\r\n"
        );
        assert_eq!(Frame::Null.to_bytes_as(Protocol::Resp3), b"_\r\n");
        assert_eq!(
            map.to_bytes(),
            b"*4\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n*2\r\n$-1\r\n:1\r\n"
        );
        assert_eq!(
            parse(&map.to_bytes()).unwrap().unwrap().0,
            map.clone().into_resp2()
        );
        assert_eq!(Frame::Double("2".into()).to_bytes(), b"$1\r\n2\r\n");
        assert!(parse(b"#x\r\n").is_err());
        assert!(parse(b"_1\r\n").is_err());
        assert!(parse(b"%-1\r\n").is_err());
        let push = Frame::Push(vec![
            Frame::bulk("invalidate"),
            Frame::Set(vec![Frame::Null]),
        ]);
        roundtrip3(push.clone());
        assert_eq!(push.to_bytes(), b"*2\r\n$10\r\ninvalidate\r\n*1\r\n$-1\r\n");
        assert_eq!(
            push.to_bytes_as(Protocol::Resp3),
            b">2\r\n$10\r\ninvalidate\r\n~1\r\n_\r\n"
        );
        assert!(parse(b">-1\r\n").is_err());
        assert!(parse(b"~-1\r\n").is_err());
    }

    #[test]
    fn null_array_is_null() {
        assert_eq!(parse(b"*-1\r\n").unwrap(), Some((Frame::Null, 5)));
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(parse(b"?x\r\n").is_err());
        assert!(parse(b":12a\r\n").is_err());
        assert!(parse(b"$-2\r\n").is_err());
        assert!(parse(b"$3\r\nabcX\r\n").is_err());
        assert!(parse(b"*-7\r\n").is_err());
        let deep = "*1\r\n".repeat(MAX_DEPTH + 2);
        assert!(parse(deep.as_bytes()).is_err());
    }

    #[test]
    fn huge_lengths_allocate_nothing_and_wait() {
        assert_eq!(parse(b"*1000000\r\n").unwrap(), None);
        assert_eq!(parse(b"$536870912\r\n").unwrap(), None);
        assert!(parse(b"$536870913\r\n").is_err());
    }

    #[test]
    fn inline_requests() {
        let (args, used) = parse_request(b"SET  k v\r\nGET").unwrap().unwrap();
        assert_eq!(
            args,
            vec![Bytes::from("SET"), Bytes::from("k"), Bytes::from("v")]
        );
        assert_eq!(used, 10);
        assert_eq!(parse_request(b"PING").unwrap(), None);
        let (args, _) = parse_request(b"\r\n").unwrap().unwrap();
        assert!(args.is_empty());
        assert!(parse_request(b"*1\r\n:1\r\n").is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let _ = parse(&bytes);
            let _ = parse_request(&bytes);
        }

        #[test]
        fn random_resp_like_bytes_never_panic(
            parts in proptest::collection::vec(
                prop_oneof![
                    Just(b"*".to_vec()), Just(b"$".to_vec()), Just(b":".to_vec()),
                    Just(b"+".to_vec()), Just(b"-".to_vec()), Just(b"\r\n".to_vec()),
                    Just(b"-1".to_vec()), Just(b"3".to_vec()), Just(b"99999999999999999999".to_vec()),
                    proptest::collection::vec(any::<u8>(), 0..4),
                ], 0..40)
        ) {
            let bytes: Vec<u8> = parts.concat();
            if let Ok(Some((_, used))) = parse(&bytes) {
                prop_assert!(used <= bytes.len());
            }
            if let Ok(Some((_, used))) = parse_request(&bytes) {
                prop_assert!(used <= bytes.len());
            }
        }
    }
}
