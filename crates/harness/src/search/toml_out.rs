//! The text of `minimal.toml`: the user's own file (every key they wrote,
//! in their order, with their comments) with the `--set` values applied,
//! without `[nemesis]`, `[sweep]` and the file's `[[faults]]`, with a new
//! name, description, seed and `expect = "violation"`, and the shrunk
//! faults as explicit `[[faults]]` entries.

use super::explicit;
use crate::scenario::{parse_path, Fault, Seg};
use toml_edit::{DocumentMut, Item, Table};

/// What replaces the file's own top-level keys.
pub(crate) struct Header<'a> {
    pub(crate) name: &'a str,
    pub(crate) description: &'a str,
    pub seed: u64,
}

/// Builds the minimal scenario's text from the file's `source` text.
/// `sets` were already applied and validated by the scenario parser, so an
/// error here is a bug of the caller (the message says which path).
pub(crate) fn minimal(
    source: &str,
    sets: &[(String, toml::Value)],
    header: &Header,
    faults: &[Fault],
) -> Result<String, String> {
    let mut doc: DocumentMut = source
        .parse()
        .map_err(|e| format!("the scenario's TOML does not parse again: {e}"))?;
    for (path, value) in sets {
        set(doc.as_table_mut(), path, value)?;
    }
    let root = doc.as_table_mut();
    for gone in ["nemesis", "sweep", "faults"] {
        root.remove(gone);
    }
    put(root, "name", toml_edit::value(header.name));
    put(root, "description", toml_edit::value(header.description));
    let seed = i64::try_from(header.seed).map_err(|_| "the seed does not fit a TOML integer")?;
    put(root, "seed", toml_edit::value(seed));
    put(root, "expect", toml_edit::value("violation"));
    if !faults.is_empty() {
        root.insert("faults", Item::ArrayOfTables(explicit::entries(faults)));
    }
    Ok(doc.to_string())
}

/// Sets a top-level key, in place when the file has it (keeping its
/// position), else added.
fn put(root: &mut Table, key: &str, item: Item) {
    match root.get_mut(key) {
        Some(slot) => *slot = item,
        None => {
            root.insert(key, item);
        }
    }
}

/// Applies one `--set` to the document as the scenario parser applies it
/// to its own tree: intermediate tables are created. Paths into `[nemesis]`,
/// `[sweep]` or `[[faults]]` are skipped (those go: the run's faults are
/// written out explicitly).
fn set(root: &mut Table, path: &str, value: &toml::Value) -> Result<(), String> {
    let segs = parse_path(path)?;
    if let Some(Seg::Key(k)) = segs.first() {
        if ["nemesis", "sweep", "faults"].contains(&k.as_str()) {
            return Ok(());
        }
    }
    let new = to_edit(value);
    let mut node = Item::Table(std::mem::take(root));
    let result = set_in(&mut node, &segs, new, path);
    if let Item::Table(t) = node {
        *root = t;
    }
    result
}

fn set_in(node: &mut Item, segs: &[Seg], new: toml_edit::Value, path: &str) -> Result<(), String> {
    let Some((first, rest)) = segs.split_first() else {
        *node = Item::Value(new);
        return Ok(());
    };
    let wrong = || format!("--set {path}: the file's value there is not a table or array");
    match first {
        Seg::Key(key) => {
            // Inside an inline table everything stays inline.
            let inline = matches!(node, Item::Value(_));
            let table = node.as_table_like_mut().ok_or_else(wrong)?;
            if table.get(key).is_none() {
                let fresh = if inline {
                    Item::Value(toml_edit::InlineTable::new().into())
                } else {
                    let mut t = Table::new();
                    t.set_implicit(true);
                    Item::Table(t)
                };
                table.insert(key, fresh);
            }
            let child = table.get_mut(key).ok_or_else(wrong)?;
            if rest.is_empty() {
                *child = Item::Value(new);
                return Ok(());
            }
            set_in(child, rest, new, path)
        }
        Seg::Index(i) => match node {
            Item::Value(toml_edit::Value::Array(a)) => {
                let v = a.get_mut(*i).ok_or_else(wrong)?;
                let mut item = Item::Value(std::mem::replace(v, toml_edit::Value::from(0)));
                let r = set_in(&mut item, rest, new, path);
                if let Item::Value(x) = item {
                    *v = x;
                }
                r
            }
            Item::ArrayOfTables(a) => {
                let t = a.get_mut(*i).ok_or_else(wrong)?;
                let mut item = Item::Table(std::mem::take(t));
                let r = set_in(&mut item, rest, new, path);
                if let Item::Table(x) = item {
                    *t = x;
                }
                r
            }
            _ => Err(wrong()),
        },
    }
}

/// A `toml::Value` (a `--set` value) as an editable value.
fn to_edit(v: &toml::Value) -> toml_edit::Value {
    use toml::Value as V;
    match v {
        V::String(s) => s.as_str().into(),
        V::Integer(i) => (*i).into(),
        V::Float(f) => (*f).into(),
        V::Boolean(b) => (*b).into(),
        V::Datetime(d) => d
            .to_string()
            .parse::<toml_edit::Datetime>()
            .map(Into::into)
            .unwrap_or_else(|_| d.to_string().into()),
        V::Array(a) => toml_edit::Value::Array(a.iter().map(to_edit).collect()),
        V::Table(t) => {
            let mut it = toml_edit::InlineTable::new();
            for (k, v) in t {
                it.insert(k, to_edit(v));
            }
            toml_edit::Value::InlineTable(it)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"# a comment kept
name = "x"
duration = "10s"
seed = 3
clients.ttl = "2s"

[cluster]
restart = "immediate" # why

[hosts.c2]
start = "1s"

[nemesis]
crash_every = "1s"

[[faults]]
at = "1s"
do = "heal"

[sweep.vary]
"cluster.restart" = ["immediate", "ttl"]
"#;

    #[test]
    fn sets_into_inline_and_dotted_tables() {
        let file =
            "duration = \"10s\"\nclients = { count = 2, ttl = \"2s\" }\nhosts.c1.hold = \"1s\"\n";
        let sets = vec![
            (
                "clients.hold".to_string(),
                toml::Value::String("500ms".into()),
            ),
            (
                "hosts.c1.start".to_string(),
                toml::Value::String("1s".into()),
            ),
            (
                "hosts.c2.start".to_string(),
                toml::Value::String("2s".into()),
            ),
            ("clocks.drift".to_string(), toml::Value::Float(0.005)),
        ];
        let header = Header {
            name: "y",
            description: "",
            seed: 1,
        };
        let text = minimal(file, &sets, &header, &[]).unwrap();
        let s =
            crate::scenario::parse_str(&text, "m.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
        let original = crate::scenario::parse_with_overrides(file, "y.toml", &sets).unwrap();
        assert_eq!(s.clients, original.clients, "{text}");
        assert_eq!(s.clocks, original.clocks, "{text}");
    }

    #[test]
    fn sets_strips_and_renames() {
        let sets = vec![
            (
                "cluster.restart".to_string(),
                toml::Value::String("0.5ttl".into()),
            ),
            ("clients.hold".to_string(), toml::Value::String("1s".into())),
            ("hosts.n1.clock_rate".to_string(), toml::Value::Float(1.01)),
            (
                "hosts.c2.start".to_string(),
                toml::Value::String("3s".into()),
            ),
            (
                "nemesis.crash_every".to_string(),
                toml::Value::String("2s".into()),
            ),
            ("duration".to_string(), toml::Value::String("5s".into())),
        ];
        let header = Header {
            name: "x-shrunk",
            description: "from \"x\"",
            seed: 7,
        };
        let text = minimal(FILE, &sets, &header, &[]).unwrap();
        let s =
            crate::scenario::parse_str(&text, "m.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(s.name, "x-shrunk");
        assert_eq!(s.description, "from \"x\"");
        assert_eq!(s.seed, 7);
        assert_eq!(s.expect, crate::scenario::Expect::Violation);
        assert_eq!(s.duration, std::time::Duration::from_secs(5));
        assert_eq!(
            s.cluster.restart,
            crate::scenario::Restart::After(std::time::Duration::from_secs(1))
        );
        assert_eq!(
            s.clients[0].hold,
            crate::scenario::Hold::For(crate::scenario::DurRange::fixed(
                std::time::Duration::from_secs(1)
            ))
        );
        assert!(s.nemesis.is_none() && s.sweep.is_none() && s.faults.is_empty());
        assert!(text.contains("# a comment kept"), "{text}");
        let original = crate::scenario::parse_with_overrides(FILE, "x.toml", &sets).unwrap();
        assert_eq!(s.clients, original.clients);
        assert_eq!(s.hosts, original.hosts);
    }
}
