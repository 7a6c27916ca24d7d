//! The docs' Rust examples are compiled: every page under `docs/` (and the
//! README) with a ```` ```rust ```` block is included as a doctest by
//! `src/lib.rs`, so an example that stops compiling fails the suite; and
//! every relative link of the README, `docs/` and the reports resolves.

use std::path::Path;

/// The pages holding a fenced Rust block.
fn pages_with_rust() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    let mut docs: Vec<_> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ is readable")
        .map(|e| e.expect("a docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
        .into_iter()
        .filter(|p| {
            let text = std::fs::read_to_string(p).expect("a page is readable");
            text.lines().any(|l| l.trim_start().starts_with("```rust"))
        })
        .map(|p| p.strip_prefix(root).unwrap().display().to_string())
        .collect()
}

#[test]
fn every_page_with_a_rust_example_is_a_doctest() {
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs"))
        .expect("src/lib.rs is readable");
    let pages = pages_with_rust();
    assert!(
        pages.contains(&"docs/own-lock.md".to_string()),
        "docs/own-lock.md has Rust examples: {pages:?}"
    );
    for page in pages {
        let include = format!("include_str!(\"../{page}\")");
        assert!(
            lib.contains(&include),
            "{page} has a ```rust block but src/lib.rs does not compile it: add \
             #[cfg(doctest)] #[doc = {include}] to src/lib.rs"
        );
    }
}

#[test]
fn no_rust_example_is_ignored() {
    for page in pages_with_rust() {
        let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(&page))
            .expect("a page is readable");
        for (i, line) in text.lines().enumerate() {
            assert!(
                !(line.trim_start().starts_with("```rust") && line.contains("ignore")),
                "{page}:{}: an ignored Rust example is never compiled: {line}",
                i + 1
            );
        }
    }
}

/// Every Markdown page under `dir`, recursively, in name order.
fn pages_under(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("a directory of pages is readable")
        .map(|e| e.expect("an entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            pages_under(&p, out);
        } else if p.extension().is_some_and(|x| x == "md") {
            out.push(p);
        }
    }
}

/// The relative link targets of a Markdown page (`[text](target)` and
/// `[text](<target>)`, the fragment dropped); web addresses and anchors
/// are not files.
fn relative_links(text: &str) -> Vec<String> {
    let mut links = Vec::new();
    for (i, _) in text.match_indices("](") {
        let rest = &text[i + 2..];
        let Some(end) = rest.find(')') else { continue };
        let target = rest[..end].trim_start_matches('<').trim_end_matches('>');
        let target = target.split('#').next().unwrap_or_default();
        if target.is_empty() || target.contains(char::is_whitespace) || target.contains("://") {
            continue;
        }
        if !target.starts_with("mailto:") {
            links.push(target.to_string());
        }
    }
    links
}

/// The README, `docs/` and every committed report link only what is
/// there: a report that names a run's directory the repository does not
/// keep sends its reader nowhere (`matrix --keep-runs first` is how the
/// library matrices keep theirs).
#[test]
fn every_relative_link_of_the_readme_docs_and_reports_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    pages_under(&root.join("docs"), &mut pages);
    pages_under(&root.join("reports"), &mut pages);
    let (mut checked, mut broken) = (0, Vec::new());
    for page in &pages {
        let text = std::fs::read_to_string(page).expect("a page is readable");
        for link in relative_links(&text) {
            checked += 1;
            if !page.parent().unwrap().join(&link).exists() {
                broken.push(format!(
                    "{}: {link}",
                    page.strip_prefix(root).unwrap().display()
                ));
            }
        }
    }
    assert!(
        checked > 2000,
        "the pages hold the reports' links: {checked}"
    );
    assert!(
        broken.is_empty(),
        "{} of {checked} links lead nowhere, e.g.:\n{}",
        broken.len(),
        broken[..broken.len().min(20)].join("\n")
    );
}
