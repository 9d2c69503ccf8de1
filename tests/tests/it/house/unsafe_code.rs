//! ARCHITECTURE.md's unsafe allow-list, read from the sources: every workspace file with `unsafe`
//! code (an `unsafe` block, fn, impl or trait) or an `allow(unsafe_code)` is on the list, and the
//! list names only files that have some (the workspace lint denies `unsafe_code` everywhere else).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use regex::Regex;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Whether `text` has unsafe code: an `unsafe` block/fn/impl/trait/extern outside comments and
/// string literals, or an `allow(unsafe_code)`.
fn has_unsafe(text: &str) -> bool {
    let unsafe_item = Regex::new(r"\bunsafe\s*(\{|fn\b|impl\b|trait\b|extern\b)").unwrap();
    let string = Regex::new(r#""(?:[^"\\]|\\.)*""#).unwrap();
    text.lines()
        .map(|l| string.replace_all(l, "\"\""))
        .map(|l| l.split("//").next().unwrap_or("").to_owned())
        .any(|code| unsafe_item.is_match(&code) || code.contains("allow(unsafe_code)"))
}

/// The `.rs` files under `dir` (repository-relative), skipping build output and the excluded fuzz crate.
fn rust_files(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "target" && name != "node_modules" && name != "fuzz" {
                rust_files(root, &path, out);
            }
        } else if name.ends_with(".rs") {
            let rel = path.strip_prefix(root).unwrap().to_string_lossy();
            out.push(rel.replace('\\', "/"));
        }
    }
}

/// The backticked `.rs` paths of ARCHITECTURE.md's "Unsafe allow-list" bullet.
fn allow_list(doc: &str) -> BTreeSet<String> {
    let start = doc
        .find("- Unsafe allow-list:")
        .expect("ARCHITECTURE.md has an `- Unsafe allow-list:` invariant");
    let rest = &doc[start + 2..];
    let end = rest
        .find("\n- ")
        .or_else(|| rest.find("\n\n"))
        .unwrap_or(rest.len());
    Regex::new(r"`([^`]+\.rs)`")
        .unwrap()
        .captures_iter(&rest[..end])
        .map(|c| c[1].to_owned())
        .collect()
}

/// The files of `files` with unsafe code that `list` omits, and the names on `list` that are not
/// such a file.
fn mismatches(list: &BTreeSet<String>, files: &[(String, String)]) -> (Vec<String>, Vec<String>) {
    let unsafe_files: BTreeSet<String> = files
        .iter()
        .filter(|(_, text)| has_unsafe(text))
        .map(|(f, _)| f.clone())
        .collect();
    (
        unsafe_files.difference(list).cloned().collect(),
        list.difference(&unsafe_files).cloned().collect(),
    )
}

#[test]
fn only_the_allow_listed_files_contain_unsafe_code() {
    let root = root();
    let mut paths = Vec::new();
    for krate in [
        "kernel-proto",
        "kernel-common",
        "kernel-render",
        "kernel-agentd",
        "kernel-tg",
        "kernel-web",
        "tests",
    ] {
        rust_files(&root, &root.join(krate), &mut paths);
    }
    assert!(paths.len() > 300, "{} files read", paths.len());
    let files: Vec<(String, String)> = paths
        .into_iter()
        .map(|p| {
            let text = fs::read_to_string(root.join(&p)).unwrap();
            (p, text)
        })
        .collect();
    let doc = fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let list = allow_list(&doc);
    assert!(!list.is_empty());
    let (unlisted, not_unsafe) = mismatches(&list, &files);
    assert!(
        unlisted.is_empty(),
        "files with unsafe code missing from ARCHITECTURE.md's unsafe allow-list: {unlisted:?}"
    );
    assert!(
        not_unsafe.is_empty(),
        "ARCHITECTURE.md's unsafe allow-list names files without unsafe code: {not_unsafe:?}"
    );
}

#[test]
fn the_check_catches_a_new_unsafe_file_and_a_stale_entry() {
    assert!(has_unsafe("fn f() { unsafe { g() } }"));
    assert!(has_unsafe("unsafe impl Send for X {}"));
    assert!(has_unsafe("#![allow(unsafe_code)]"));
    assert!(!has_unsafe(
        "// no unsafe { here }\nlet csp = \"unsafe-inline\";"
    ));
    assert!(!has_unsafe("let s = \"unsafe { x }\";"));
    let doc = "## Invariants\n- Unsafe allow-list: `a/x.rs` and `a/gone.rs`.\n- Next.\n";
    let list = allow_list(doc);
    let files = vec![
        ("a/x.rs".to_owned(), "unsafe { }".to_owned()),
        ("a/new.rs".to_owned(), "pub unsafe fn f() {}".to_owned()),
        ("a/safe.rs".to_owned(), "fn f() {}".to_owned()),
    ];
    assert_eq!(
        mismatches(&list, &files),
        (vec!["a/new.rs".to_owned()], vec!["a/gone.rs".to_owned()])
    );
}
