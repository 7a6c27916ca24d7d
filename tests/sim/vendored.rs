//! The vendored turmoil is the tree its own tests last passed on.
//!
//! turmoil's own tests (245, with the features they need) take minutes to
//! build, so they run when turmoil changes, not in every suite:
//! `scripts/turmoil-tests.sh` runs them and, if all pass, records the tree
//! of `vendor/turmoil` they ran on in `vendor/turmoil/TESTED`. This test
//! computes that tree as `scripts/turmoil-tree.sh` does and fails while
//! the record names another, so a change to turmoil cannot land untested.

use redlock_proto::sha1::sha1_hex;
use std::path::{Path, PathBuf};

const ROOT: &str = "vendor/turmoil";

/// Every file under `dir`, but the record, cargo's lock file and target/.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let skipped = [
            "vendor/turmoil/TESTED",
            "vendor/turmoil/Cargo.lock",
            "vendor/turmoil/target",
        ];
        if skipped.iter().any(|s| path == Path::new(s)) {
            continue;
        }
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// `scripts/turmoil-tree.sh`: the SHA1 of `sha1sum`'s listing of the
/// files, sorted bytewise by path.
fn tree() -> String {
    let mut all = Vec::new();
    files(Path::new(ROOT), &mut all);
    all.sort_by(|a, b| {
        a.as_os_str()
            .as_encoded_bytes()
            .cmp(b.as_os_str().as_encoded_bytes())
    });
    let listing: String = all
        .iter()
        .map(|p| {
            format!(
                "{}  {}\n",
                sha1_hex(&std::fs::read(p).unwrap()),
                p.display()
            )
        })
        .collect();
    sha1_hex(listing.as_bytes())
}

#[test]
fn the_vendored_turmoil_is_the_tree_its_own_tests_passed_on() {
    let record = std::fs::read_to_string("vendor/turmoil/TESTED")
        .expect("vendor/turmoil/TESTED: run `bash scripts/turmoil-tests.sh`");
    let field = |name: &str| {
        record
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name} ")))
            .unwrap_or_else(|| panic!("vendor/turmoil/TESTED has no {name} line"))
            .to_string()
    };
    assert_eq!(
        field("tree"),
        tree(),
        "vendor/turmoil changed since its own tests last passed: run `bash scripts/turmoil-tests.sh`"
    );
    let result = field("result");
    assert!(result.contains(" 0 failed"), "{result}");
    let passed: u32 = result.split(' ').next().unwrap().parse().unwrap();
    assert!(passed >= 245, "{result}: PATCH.md counts 245");
}
