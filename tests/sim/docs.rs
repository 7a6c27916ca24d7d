//! The docs' Rust examples are compiled: every page under `docs/` (and the
//! README) with a ```` ```rust ```` block is included as a doctest by
//! `src/lib.rs`, so an example that stops compiling fails the suite.

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
