//! The raw TOML tree of a scenario file, in file order and with 1-based line
//! numbers on every key and value, and the `[sweep.vary]` overrides applied
//! to it before validation.

/// A table: its entries in file order.
#[derive(Clone, Debug, Default)]
pub(super) struct RawTable {
    /// Key/value pairs, in file order.
    pub entries: Vec<RawEntry>,
}

/// One key of a table.
#[derive(Clone, Debug)]
pub(super) struct RawEntry {
    /// The key as written (unquoted).
    pub key: String,
    /// Line of the key.
    pub key_line: Option<usize>,
    /// Its value.
    pub(crate) value: RawNode,
}

/// A value and the line it starts on (a table header for tables).
#[derive(Clone, Debug)]
pub(super) struct RawNode {
    /// The value.
    pub(crate) kind: RawKind,
    /// Line of the value.
    pub line: Option<usize>,
}

/// TOML value kinds.
#[derive(Clone, Debug)]
pub(super) enum RawKind {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Datetime(String),
    Array(Vec<RawNode>),
    Table(RawTable),
}

impl RawTable {
    /// The entry for `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&RawEntry> {
        self.entries.iter().find(|e| e.key == key)
    }
}

impl RawKind {
    /// "a string", "an integer"... for messages.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            RawKind::Str(_) => "a string",
            RawKind::Int(_) => "an integer",
            RawKind::Float(_) => "a float",
            RawKind::Bool(_) => "a boolean",
            RawKind::Datetime(_) => "a date-time",
            RawKind::Array(_) => "an array",
            RawKind::Table(_) => "a table",
        }
    }
}

/// Byte offset to 1-based line.
struct Lines(Vec<usize>);

impl Lines {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Lines(starts)
    }

    fn line(&self, span: Option<std::ops::Range<usize>>) -> Option<usize> {
        span.map(|s| self.0.partition_point(|&start| start <= s.start).max(1))
    }
}

/// Parses TOML text into a raw tree; a syntax error gives its line and message.
pub(super) fn parse_document(text: &str) -> Result<RawTable, (Option<usize>, String)> {
    let lines = Lines::new(text);
    let doc = toml_edit::ImDocument::parse(text).map_err(|e| {
        let message = e.message().trim().replace('\n', "; ");
        (lines.line(e.span()), message)
    })?;
    Ok(from_table(doc.as_table(), &lines))
}

fn from_table(table: &toml_edit::Table, lines: &Lines) -> RawTable {
    let mut entries = Vec::new();
    for (key, item) in table.iter() {
        let key_line = lines.line(table.key(key).and_then(|k| k.span()));
        if let Some(value) = from_item(item, lines, key_line) {
            entries.push(RawEntry {
                key: key.to_string(),
                key_line,
                value,
            });
        }
    }
    RawTable { entries }
}

fn from_item(item: &toml_edit::Item, lines: &Lines, key_line: Option<usize>) -> Option<RawNode> {
    Some(match item {
        toml_edit::Item::None => return None,
        toml_edit::Item::Value(v) => from_value(v, lines),
        toml_edit::Item::Table(t) => RawNode {
            line: lines.line(t.span()).or(key_line),
            kind: RawKind::Table(from_table(t, lines)),
        },
        toml_edit::Item::ArrayOfTables(a) => RawNode {
            line: lines.line(a.span()).or(key_line),
            kind: RawKind::Array(
                a.iter()
                    .map(|t| RawNode {
                        line: lines.line(t.span()).or(key_line),
                        kind: RawKind::Table(from_table(t, lines)),
                    })
                    .collect(),
            ),
        },
    })
}

fn from_value(value: &toml_edit::Value, lines: &Lines) -> RawNode {
    use toml_edit::Value as V;
    let kind = match value {
        V::String(s) => RawKind::Str(s.value().clone()),
        V::Integer(i) => RawKind::Int(*i.value()),
        V::Float(f) => RawKind::Float(*f.value()),
        V::Boolean(b) => RawKind::Bool(*b.value()),
        V::Datetime(d) => RawKind::Datetime(d.value().to_string()),
        V::Array(a) => RawKind::Array(a.iter().map(|v| from_value(v, lines)).collect()),
        V::InlineTable(t) => RawKind::Table(RawTable {
            entries: t
                .iter()
                .map(|(k, v)| RawEntry {
                    key: k.to_string(),
                    key_line: lines.line(t.key(k).and_then(|k| k.span())),
                    value: from_value(v, lines),
                })
                .collect(),
        }),
    };
    RawNode {
        kind,
        line: lines.line(value.span()),
    }
}

/// A `toml::Value` as a raw node, every part on `line`.
pub(super) fn from_toml(value: &toml::Value, line: Option<usize>) -> RawNode {
    use toml::Value as V;
    let kind = match value {
        V::String(s) => RawKind::Str(s.clone()),
        V::Integer(i) => RawKind::Int(*i),
        V::Float(f) => RawKind::Float(*f),
        V::Boolean(b) => RawKind::Bool(*b),
        V::Datetime(d) => RawKind::Datetime(d.to_string()),
        V::Array(a) => RawKind::Array(a.iter().map(|v| from_toml(v, line)).collect()),
        V::Table(t) => RawKind::Table(RawTable {
            entries: t
                .iter()
                .map(|(k, v)| RawEntry {
                    key: k.clone(),
                    key_line: line,
                    value: from_toml(v, line),
                })
                .collect(),
        }),
    };
    RawNode { kind, line }
}

/// A raw node as a `toml::Value` (for `[sweep.vary]` values).
pub(super) fn to_toml(node: &RawNode) -> toml::Value {
    use toml::Value as V;
    match &node.kind {
        RawKind::Str(s) => V::String(s.clone()),
        RawKind::Int(i) => V::Integer(*i),
        RawKind::Float(f) => V::Float(*f),
        RawKind::Bool(b) => V::Boolean(*b),
        RawKind::Datetime(d) => match d.parse::<toml::value::Datetime>() {
            Ok(d) => V::Datetime(d),
            Err(_) => V::String(d.clone()),
        },
        RawKind::Array(a) => V::Array(a.iter().map(to_toml).collect()),
        RawKind::Table(t) => V::Table(
            t.entries
                .iter()
                .map(|e| (e.key.clone(), to_toml(&e.value)))
                .collect(),
        ),
    }
}

/// The entries of `[sweep.vary]` as (dotted path, entry), nested tables
/// (unquoted dotted keys) flattened into paths.
pub(super) fn flatten_vary<'a>(
    table: &'a RawTable,
    prefix: &str,
    out: &mut Vec<(String, &'a RawEntry)>,
) {
    for e in &table.entries {
        let path = if prefix.is_empty() {
            e.key.clone()
        } else {
            format!("{prefix}.{}", e.key)
        };
        match &e.value.kind {
            RawKind::Table(t) => flatten_vary(t, &path, out),
            _ => out.push((path, e)),
        }
    }
}

/// Line of the dotted `path` (`clocks.drift`, `hosts.c1.clock_rate`) in
/// the file, if it is written there.
/// A part may index an array of tables: `faults[2].host`.
pub(super) fn key_line(root: &RawTable, path: &str) -> Option<usize> {
    let mut table = root;
    let mut parts = path.split('.').peekable();
    while let Some(part) = parts.next() {
        let (name, index) = match part.split_once('[') {
            Some((n, i)) => (n, Some(i.strip_suffix(']')?.parse::<usize>().ok()?)),
            None => (part, None),
        };
        let entry = table.get(name)?;
        let node = match (index, &entry.value.kind) {
            (None, _) => &entry.value,
            (Some(i), RawKind::Array(items)) => items.get(i)?,
            (Some(_), _) => return None,
        };
        if parts.peek().is_none() {
            return match index {
                None => entry.key_line.or(node.line),
                Some(_) => node.line,
            };
        }
        let RawKind::Table(t) = &node.kind else {
            return None;
        };
        table = t;
    }
    None
}

/// Line of `path` in the file's `[sweep.vary]`, if it is varied there.
pub(super) fn vary_line(root: &RawTable, path: &str) -> Option<usize> {
    let sweep = root.get("sweep")?;
    let RawKind::Table(sweep) = &sweep.value.kind else {
        return None;
    };
    let vary = sweep.get("vary")?;
    let RawKind::Table(vary) = &vary.value.kind else {
        return None;
    };
    let mut flat = Vec::new();
    flatten_vary(vary, "", &mut flat);
    flat.into_iter()
        .find(|(p, _)| p == path)
        .and_then(|(_, e)| e.key_line.or(e.value.line))
}

/// Most dotted parts in an override path (real ones have at most three).
const MAX_PATH_PARTS: usize = 8;

/// One step of a key path (`--set`, `[sweep.vary]`): a key or an index.
#[derive(Debug, PartialEq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// Splits `"hosts.n2.clock_rate"` or `"faults[0].at"` into steps; the one
/// reading of a key path, which the scenario's overrides and a found run's
/// TOML share.
pub fn parse_path(path: &str) -> Result<Vec<Seg>, String> {
    let bad = || {
        format!("`{path}` is not a key path: write dotted keys like \"cluster.restart\" or \"faults[0].at\"")
    };
    let mut segs = Vec::new();
    if path.split('.').count() > MAX_PATH_PARTS {
        return Err(format!("`{path}` is too deep to be a key of a scenario"));
    }
    for part in path.split('.') {
        let (name, mut rest) = match part.find('[') {
            Some(i) => part.split_at(i),
            None => (part, ""),
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(bad());
        }
        segs.push(Seg::Key(name.to_string()));
        while !rest.is_empty() {
            if segs.len() > 2 * MAX_PATH_PARTS {
                return Err(format!("`{path}` is too deep to be a key of a scenario"));
            }
            let close = rest.find(']').ok_or_else(bad)?;
            let index: usize = rest
                .get(1..close)
                .and_then(|d| d.parse().ok())
                .ok_or_else(bad)?;
            segs.push(Seg::Index(index));
            rest = &rest[close + 1..];
            if !rest.is_empty() && !rest.starts_with('[') {
                return Err(bad());
            }
        }
    }
    Ok(segs)
}

/// Sets `path` to `value` in the tree, creating intermediate tables; every
/// line of the new value is `line`.
pub(super) fn apply_override(
    root: &mut RawTable,
    path: &str,
    value: &toml::Value,
    line: Option<usize>,
) -> Result<(), String> {
    let segs = parse_path(path)?;
    // Every part of a path starts with a name: the root table is entered
    // by a key.
    assert!(
        matches!(segs.first(), Some(Seg::Key(_))),
        "override path {path:?} parsed to {segs:?}"
    );
    if segs.first() == Some(&Seg::Key("sweep".to_string())) {
        return Err("[sweep] itself cannot be varied".to_string());
    }
    let new = from_toml(value, line);
    let mut node = RawNode {
        kind: RawKind::Table(std::mem::take(root)),
        line: None,
    };
    let result = set_in(&mut node, &segs, new, line, String::new());
    if let RawKind::Table(t) = node.kind {
        *root = t;
    }
    result
}

fn set_in(
    node: &mut RawNode,
    segs: &[Seg],
    new: RawNode,
    line: Option<usize>,
    walked: String,
) -> Result<(), String> {
    let Some((first, rest)) = segs.split_first() else {
        *node = new;
        return Ok(());
    };
    match first {
        Seg::Key(key) => {
            let here = if walked.is_empty() {
                key.clone()
            } else {
                format!("{walked}.{key}")
            };
            let RawKind::Table(table) = &mut node.kind else {
                return Err(format!(
                    "`{walked}` is {}, not a table",
                    node.kind.type_name()
                ));
            };
            let pos = match table.entries.iter().position(|e| &e.key == key) {
                Some(pos) => pos,
                None => {
                    if let Some(Seg::Index(_)) = rest.first() {
                        return Err(format!("`{here}` does not exist, so it cannot be indexed"));
                    }
                    table.entries.push(RawEntry {
                        key: key.clone(),
                        key_line: line,
                        value: RawNode {
                            kind: RawKind::Table(RawTable::default()),
                            line,
                        },
                    });
                    table.entries.len() - 1
                }
            };
            let entry = &mut table.entries[pos];
            if rest.is_empty() && line.is_some() {
                entry.key_line = line;
            }
            set_in(&mut entry.value, rest, new, line, here)
        }
        Seg::Index(i) => {
            let here = format!("{walked}[{i}]");
            let RawKind::Array(items) = &mut node.kind else {
                return Err(format!(
                    "`{walked}` is {}, not an array",
                    node.kind.type_name()
                ));
            };
            let len = items.len();
            let item = items.get_mut(*i).ok_or_else(|| {
                format!("`{here}` does not exist: `{walked}` has {len} entries (counted from 0)")
            })?;
            set_in(item, rest, new, line, here)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(
            parse_path("faults[2].at").unwrap(),
            vec![
                Seg::Key("faults".into()),
                Seg::Index(2),
                Seg::Key("at".into())
            ]
        );
        assert_eq!(parse_path("hosts.n2.clock_rate").unwrap().len(), 3);
        for bad in ["", ".", "a..b", "a[", "a[x]", "a]", "a[1]b", "\"a\""] {
            assert!(parse_path(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn lines() {
        let l = Lines::new("a\nbc\n\nd");
        assert_eq!(l.line(Some(0..1)), Some(1));
        assert_eq!(l.line(Some(2..3)), Some(2));
        assert_eq!(l.line(Some(5..5)), Some(3));
        assert_eq!(l.line(Some(6..7)), Some(4));
        assert_eq!(l.line(Some(100..101)), Some(4));
    }
}
