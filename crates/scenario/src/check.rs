//! Value-level checks shared by the scenario parser: typed access to the
//! raw tree with key paths and lines, durations, ranges, TTL multiples,
//! choices with suggestions, unknown-key detection, and host names.

use std::time::Duration;

use super::raw::{RawKind, RawNode, RawTable};
use super::types::*;
use super::ScenarioError;
use redlock_proto::duration;

/// Result of a check.
pub(super) type Checked<T> = Result<T, ScenarioError>;

/// Largest magnitude of a duration or offset, in ms (as `duration::parse`).
const MAX_MS: f64 = 1e12;

/// Error context: the file name.
pub(super) struct FileErrors<'a> {
    pub(super) file: &'a str,
}

impl FileErrors<'_> {
    pub(super) fn err(
        &self,
        key: &str,
        line: Option<usize>,
        message: impl Into<String>,
    ) -> ScenarioError {
        ScenarioError {
            file: self.file.to_string(),
            key: key.to_string(),
            line,
            message: message.into(),
        }
    }
}

/// Joins a key onto a dotted path, quoting it unless it is a bare key.
pub(super) fn join(path: &str, key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let key = if bare {
        key.to_string()
    } else {
        format!("{key:?}")
    };
    if path.is_empty() {
        key
    } else {
        format!("{path}.{key}")
    }
}

/// A table being validated, with its path and how to name it in messages.
pub(super) struct TableAt<'a> {
    pub(super) path: String,
    pub(super) table: &'a RawTable,
    pub(super) line: Option<usize>,
    pub(super) what: String,
}

/// A value being validated, with its path.
pub(super) struct ValueAt<'a> {
    pub(super) path: String,
    pub(super) node: &'a RawNode,
    pub(super) key_line: Option<usize>,
}

impl<'a> TableAt<'a> {
    pub(super) fn root(table: &'a RawTable) -> Self {
        TableAt {
            path: String::new(),
            table,
            line: None,
            what: "the top level".to_string(),
        }
    }

    pub(super) fn get(&self, key: &str) -> Option<ValueAt<'a>> {
        self.table.get(key).map(|e| ValueAt {
            path: join(&self.path, key),
            node: &e.value,
            key_line: e.key_line,
        })
    }

    pub(super) fn require(&self, cx: &FileErrors, key: &str) -> Checked<ValueAt<'a>> {
        self.get(key).ok_or_else(|| {
            cx.err(
                &join(&self.path, key),
                self.line,
                format!("{} needs `{key}`, which is missing", self.what),
            )
        })
    }

    pub(super) fn check_keys(&self, cx: &FileErrors, allowed: &[&str]) -> Checked<()> {
        for e in &self.table.entries {
            if allowed.contains(&e.key.as_str()) {
                continue;
            }
            let hint = closest(&e.key, allowed)
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default();
            let list = if allowed.is_empty() {
                "it takes no keys".to_string()
            } else {
                format!("allowed keys: {}", allowed.join(", "))
            };
            return Err(cx.err(
                &join(&self.path, &e.key),
                e.key_line.or(e.value.line),
                format!("unknown key `{}` in {}{hint}; {list}", e.key, self.what),
            ));
        }
        Ok(())
    }

    /// The sub-table `key`, if present (error if it is not a table).
    pub(super) fn table(&self, cx: &FileErrors, key: &str) -> Checked<Option<TableAt<'a>>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v
                .table(cx, &format!("[{}]", join(&self.path, key)))
                .map(Some),
        }
    }
}

/// The allowed word nearest to `word`, if it is a likely typo.
pub(super) fn closest<'s>(word: &str, allowed: &[&'s str]) -> Option<&'s str> {
    let word = word.to_ascii_lowercase();
    let n = word.chars().count();
    allowed
        .iter()
        .map(|a| (levenshtein(&word, a), *a))
        .filter(|(d, _)| *d <= 2 && *d < n)
        .min_by_key(|(d, _)| *d)
        .map(|(_, a)| a)
}

pub(super) fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Short rendering of a raw value for messages.
pub(super) fn preview(node: &RawNode) -> String {
    match &node.kind {
        RawKind::Str(s) if s.chars().count() > 40 => {
            format!("{:?}...", s.chars().take(40).collect::<String>())
        }
        RawKind::Str(s) => format!("{s:?}"),
        RawKind::Int(i) => i.to_string(),
        RawKind::Float(f) => f.to_string(),
        RawKind::Bool(b) => b.to_string(),
        RawKind::Datetime(d) => d.clone(),
        RawKind::Array(_) => "[...]".to_string(),
        RawKind::Table(_) => "{...}".to_string(),
    }
}

impl<'a> ValueAt<'a> {
    pub(super) fn line(&self) -> Option<usize> {
        self.node.line.or(self.key_line)
    }

    pub(super) fn err(&self, cx: &FileErrors, message: impl Into<String>) -> ScenarioError {
        cx.err(&self.path, self.line(), message)
    }

    pub(super) fn wrong(&self, cx: &FileErrors, want: &str) -> ScenarioError {
        let found = match &self.node.kind {
            RawKind::Array(_) | RawKind::Table(_) => self.node.kind.type_name().to_string(),
            k => format!("{} ({})", k.type_name(), preview(self.node)),
        };
        self.err(cx, format!("expected {want}, found {found}"))
    }

    pub(super) fn str(&self, cx: &FileErrors) -> Checked<&'a str> {
        match &self.node.kind {
            RawKind::Str(s) => Ok(s),
            _ => Err(self.wrong(cx, "a string")),
        }
    }

    pub(super) fn int(&self, cx: &FileErrors) -> Checked<i64> {
        match &self.node.kind {
            RawKind::Int(i) => Ok(*i),
            _ => Err(self.wrong(cx, "an integer")),
        }
    }

    /// An integer in `lo..=hi`.
    pub(super) fn int_in(&self, cx: &FileErrors, lo: i64, hi: i64) -> Checked<i64> {
        let i = self.int(cx)?;
        if i < lo || i > hi {
            return Err(self.err(
                cx,
                format!("{i} is out of range: it must be from {lo} to {hi}"),
            ));
        }
        Ok(i)
    }

    pub(super) fn float(&self, cx: &FileErrors) -> Checked<f64> {
        match &self.node.kind {
            RawKind::Float(f) if f.is_finite() => Ok(*f),
            RawKind::Float(f) => Err(self.err(cx, format!("{f} is not a finite number"))),
            RawKind::Int(i) => Ok(*i as f64),
            _ => Err(self.wrong(cx, "a number")),
        }
    }

    pub(super) fn bool(&self, cx: &FileErrors) -> Checked<bool> {
        match &self.node.kind {
            RawKind::Bool(b) => Ok(*b),
            _ => Err(self.wrong(cx, "true or false")),
        }
    }

    pub(super) fn array(&self, cx: &FileErrors) -> Checked<Vec<ValueAt<'a>>> {
        match &self.node.kind {
            RawKind::Array(items) => Ok(items
                .iter()
                .enumerate()
                .map(|(i, node)| ValueAt {
                    path: format!("{}[{i}]", self.path),
                    node,
                    key_line: node.line,
                })
                .collect()),
            _ => Err(self.wrong(cx, "an array")),
        }
    }

    pub(super) fn table(&self, cx: &FileErrors, what: &str) -> Checked<TableAt<'a>> {
        match &self.node.kind {
            RawKind::Table(table) => Ok(TableAt {
                path: self.path.clone(),
                table,
                line: self.line(),
                what: what.to_string(),
            }),
            _ => Err(self.wrong(cx, &format!("a table {what}"))),
        }
    }

    /// The text of a value where a duration is expected; a bare number is
    /// an error that says durations need a unit.
    pub(super) fn duration_text(&self, cx: &FileErrors) -> Checked<&'a str> {
        match &self.node.kind {
            RawKind::Str(s) => Ok(s),
            RawKind::Int(_) | RawKind::Float(_) => {
                let n = preview(self.node);
                Err(self.err(
                    cx,
                    format!(
                        "expected a duration, found the bare number {n}: durations need a unit, e.g. \"150ms\" or \"{n}s\""
                    ),
                ))
            }
            _ => Err(self.wrong(cx, "a duration string such as \"150ms\"")),
        }
    }

    /// A duration; TTL multiples (`"0.5ttl"`) only when `ttl` is given.
    pub(super) fn duration(&self, cx: &FileErrors, ttl: Option<Duration>) -> Checked<Duration> {
        let text = self.duration_text(cx)?;
        parse_duration(text, ttl).map_err(|m| self.err(cx, m))
    }

    /// A duration that must be more than zero.
    pub(super) fn positive(&self, cx: &FileErrors, ttl: Option<Duration>) -> Checked<Duration> {
        let d = self.duration(cx, ttl)?;
        if d.is_zero() {
            return Err(self.err(cx, "must be more than zero"));
        }
        Ok(d)
    }

    pub(super) fn dur_range(&self, cx: &FileErrors) -> Checked<DurRange> {
        let text = self.duration_text(cx)?;
        let (lo, hi) = split_range(text).map_err(|m| self.err(cx, m))?;
        let lo = duration::parse(lo).map_err(|m| self.err(cx, m))?;
        let hi = duration::parse(hi).map_err(|m| self.err(cx, m))?;
        if lo > hi {
            return Err(self.err(
                cx,
                format!("range \"{text}\" runs backwards: its start is after its end"),
            ));
        }
        Ok(DurRange { lo, hi })
    }

    pub(super) fn signed_ms(&self, cx: &FileErrors) -> Checked<f64> {
        let text = self.duration_text(cx)?;
        signed(text).map_err(|m| self.err(cx, m))
    }

    pub(super) fn signed_range(&self, cx: &FileErrors) -> Checked<SignedRange> {
        let text = self.duration_text(cx)?;
        let (lo, hi) = split_range(text).map_err(|m| self.err(cx, m))?;
        let lo_ms = signed(lo).map_err(|m| self.err(cx, m))?;
        let hi_ms = signed(hi).map_err(|m| self.err(cx, m))?;
        if lo_ms > hi_ms {
            return Err(self.err(
                cx,
                format!("range \"{text}\" runs backwards: its start is after its end"),
            ));
        }
        Ok(SignedRange { lo_ms, hi_ms })
    }

    /// One of `options` (string values), with a suggestion when close.
    pub(super) fn choice<T: Copy>(&self, cx: &FileErrors, options: &[(&str, T)]) -> Checked<T> {
        let s = self.str(cx)?;
        if let Some((_, v)) = options.iter().find(|(name, _)| *name == s) {
            return Ok(*v);
        }
        let names: Vec<&str> = options.iter().map(|(n, _)| *n).collect();
        let hint = closest(s, &names)
            .map(|n| format!(" (did you mean \"{n}\"?)"))
            .unwrap_or_default();
        let list: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
        Err(self.err(
            cx,
            format!(
                "{s:?} is not valid here{hint}; use one of {}",
                list.join(", ")
            ),
        ))
    }

    pub(super) fn restart(&self, cx: &FileErrors, ttl: Duration) -> Checked<Restart> {
        let text = self.duration_text(cx)?;
        match text.trim() {
            "immediate" => Ok(Restart::Immediate),
            "never" => Ok(Restart::Never),
            t => parse_duration(t, Some(ttl)).map(Restart::After).map_err(|m| {
                self.err(
                    cx,
                    format!("{m}; a restart is \"immediate\", \"never\", a duration like \"5s\" or a TTL multiple like \"0.5ttl\""),
                )
            }),
        }
    }
}

/// Splits `"lo..hi"`; a single value is both ends.
pub(super) fn split_range(text: &str) -> Result<(&str, &str), String> {
    match text.split_once("..") {
        None => Ok((text, text)),
        Some((_, hi)) if hi.starts_with('=') => Err(format!(
            "\"{text}\": write a range as \"lo..hi\", without \"=\" (both ends are included)"
        )),
        Some((lo, hi)) => Ok((lo, hi)),
    }
}

/// A signed duration in ms, bounded.
pub(super) fn signed(text: &str) -> Result<f64, String> {
    let ms = duration::parse_signed_ms(text)?;
    if ms.abs() > MAX_MS {
        return Err(format!("\"{text}\" is too long"));
    }
    Ok(ms)
}

/// A duration, or with `ttl` a TTL multiple (`"ttl"`, `"0.5ttl"`).
pub(super) fn parse_duration(text: &str, ttl: Option<Duration>) -> Result<Duration, String> {
    let t = text.trim();
    let Some(factor) = t.strip_suffix("ttl") else {
        return duration::parse(text);
    };
    let Some(ttl) = ttl else {
        return Err(format!(
            "\"{text}\": a TTL multiple is not allowed here; write a duration like \"10s\""
        ));
    };
    let factor = factor.trim();
    let k: f64 = if factor.is_empty() {
        1.0
    } else {
        factor
            .parse()
            .ok()
            .filter(|k: &f64| k.is_finite() && *k >= 0.0)
            .ok_or_else(|| {
                format!("\"{text}\" is not a TTL multiple: write \"ttl\", \"0.5ttl\" or \"2ttl\"")
            })?
    };
    let ms = ttl.as_secs_f64() * 1e3 * k;
    if ms.is_nan() || ms > MAX_MS {
        return Err(format!("\"{text}\" is too long"));
    }
    Ok(Duration::from_nanos((ms * 1e6).round() as u64))
}

/// What kind of host a name is.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Kind {
    Node,
    Client(usize),
    Store,
    Sentinel,
}

/// The hosts of a scenario.
pub(super) struct Hosts {
    pub(super) nodes: usize,
    pub(super) clients: usize,
    pub(super) single: bool,
}

/// `prefix` followed by a number in 1..=max without leading zeros.
pub(super) fn numbered(name: &str, prefix: char, max: usize) -> Option<usize> {
    let digits = name.strip_prefix(prefix)?;
    if digits.is_empty() || digits.starts_with('0') || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|i| (1..=max).contains(i))
}

impl Hosts {
    pub(super) fn kind(&self, name: &str) -> Option<Kind> {
        match name {
            "store" => Some(Kind::Store),
            "sentinel" if self.single => Some(Kind::Sentinel),
            _ => {
                if let Some(i) = numbered(name, 'c', self.clients) {
                    Some(Kind::Client(i))
                } else {
                    numbered(name, 'n', self.nodes).map(|_| Kind::Node)
                }
            }
        }
    }

    pub(super) fn range(prefix: char, n: usize) -> String {
        match n {
            1 => format!("{prefix}1"),
            2 => format!("{prefix}1, {prefix}2"),
            _ => format!("{prefix}1..{prefix}{n}"),
        }
    }

    pub(super) fn list(&self) -> String {
        let mut s = format!(
            "{}, {}, store",
            Hosts::range('n', self.nodes),
            Hosts::range('c', self.clients)
        );
        if self.single {
            s.push_str(", sentinel");
        }
        s
    }

    pub(super) fn unknown(&self, name: &str) -> String {
        if name == "sentinel" {
            return "host \"sentinel\" exists only with cluster.topology = \"single\"".to_string();
        }
        if name == "master" {
            return "\"master\" can only be a fault's `host`, with cluster.topology = \"single\""
                .to_string();
        }
        format!("unknown host {name:?}; the hosts are {}", self.list())
    }

    /// A host name value.
    pub(super) fn host(&self, cx: &FileErrors, v: &ValueAt) -> Checked<(String, Kind)> {
        let name = v.str(cx)?;
        match self.kind(name) {
            Some(k) => Ok((name.to_string(), k)),
            None => Err(v.err(cx, self.unknown(name))),
        }
    }

    /// A fault's `host`: a name of an allowed kind, or `"master"`.
    pub(super) fn target(
        &self,
        cx: &FileErrors,
        v: &ValueAt,
        allow: fn(Kind) -> bool,
        what: &str,
    ) -> Checked<Target> {
        if v.str(cx)? == "master" {
            if !self.single {
                return Err(v.err(
                    cx,
                    "\"master\" needs cluster.topology = \"single\" (redlock has no master)",
                ));
            }
            return Ok(Target::Master);
        }
        let (name, kind) = self.host(cx, v)?;
        if !allow(kind) {
            return Err(v.err(cx, format!("host {name:?} cannot be the target: {what}")));
        }
        Ok(Target::Host(name))
    }
}

pub(super) fn is_node(k: Kind) -> bool {
    k == Kind::Node
}

/// What a `pause` may stop: a client, a node, or the store (a slow
/// database: the writes it holds land late).
pub(super) fn pausable(k: Kind) -> bool {
    matches!(k, Kind::Node | Kind::Client(_) | Kind::Store)
}

pub(super) fn any_host(_: Kind) -> bool {
    true
}
