//! ARCHITECTURE.md stays a true map: every path it names exists, every symbol it names (a
//! backticked `a::b` path or identifier) occurs in the workspace's code or the proto, and every
//! `.rs` file of every workspace member (read from the root `Cargo.toml`, so new crates are
//! covered) is named in its code map. A failure prints the lines to add, from each file's first
//! `//!` sentence.

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

/// A `key = [ "a", "b" ]` array of the root `Cargo.toml`'s `[workspace]`.
fn workspace_list(manifest: &str, key: &str) -> Vec<String> {
    let re = Regex::new(&format!(r"(?s)\n{key}\s*=\s*\[(.*?)\]")).unwrap();
    let Some(c) = re.captures(manifest) else {
        return Vec::new();
    };
    Regex::new(r#""([^"]+)""#)
        .unwrap()
        .captures_iter(&c[1])
        .map(|c| c[1].to_owned())
        .collect()
}

/// Every `.rs` file under `dir` (repository-relative), skipping build output and `excluded`.
fn rust_files(root: &Path, dir: &Path, excluded: &[String], out: &mut Vec<String>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if name == "target" || name == "node_modules" || excluded.contains(&rel) {
                continue;
            }
            rust_files(root, &path, excluded, out);
        } else if name.ends_with(".rs") {
            out.push(rel);
        }
    }
}

/// The code map section: from `## Code map` to the next `## ` heading.
fn code_map(doc: &str) -> &str {
    let start = doc
        .find("## Code map")
        .expect("ARCHITECTURE.md has a `## Code map`");
    let rest = &doc[start + 3..];
    let end = rest.find("\n## ").map_or(doc.len(), |e| start + 3 + e);
    &doc[start..end]
}

/// Every backticked span of `text` (code fences are not spans).
fn backticked(text: &str) -> Vec<String> {
    text.replace("```", "")
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// The `.rs` files not named (as a backticked repository-relative path) in `map`.
fn unnamed<'a>(map: &str, files: &'a [String]) -> Vec<&'a String> {
    let named: BTreeSet<String> = backticked(map).into_iter().collect();
    files.iter().filter(|f| !named.contains(*f)).collect()
}

/// The backticked paths of `doc` (a `/` and a file extension) that exist neither from the
/// repository root nor from any member's `src/`.
fn missing_paths(doc: &str, root: &Path, members: &[String]) -> Vec<String> {
    let path = Regex::new(r"^[A-Za-z0-9_.\-/{},]+\.(rs|proto|md|toml|sh|ps1)$").unwrap();
    let mut missing = Vec::new();
    for span in backticked(doc) {
        if !span.contains('/') || !path.is_match(&span) {
            continue;
        }
        for candidate in expand_braces(&span) {
            let found = root.join(&candidate).exists()
                || members
                    .iter()
                    .any(|m| root.join(m).join("src").join(&candidate).exists());
            if !found {
                missing.push(candidate);
            }
        }
    }
    missing
}

/// `a/{b,c}.rs` → `a/b.rs`, `a/c.rs` (one level of braces).
fn expand_braces(span: &str) -> Vec<String> {
    match (span.find('{'), span.find('}')) {
        (Some(open), Some(close)) if open < close => span[open + 1..close]
            .split(',')
            .map(|part| format!("{}{}{}", &span[..open], part, &span[close + 1..]))
            .collect(),
        _ => vec![span.to_owned()],
    }
}

/// The backticked symbols of `doc` (`a::b` paths and CamelCase names) whose last segment occurs
/// nowhere in `code`.
fn missing_symbols(doc: &str, code: &str) -> Vec<String> {
    let symbol = Regex::new(
        r"^(?:[A-Za-z_][A-Za-z0-9_]*::)+[A-Za-z_][A-Za-z0-9_]*$|^[A-Z][a-z]+[A-Z][A-Za-z0-9]*$",
    )
    .unwrap();
    let mut missing = BTreeSet::new();
    for span in backticked(doc) {
        if !symbol.is_match(&span) {
            continue;
        }
        let last = span.rsplit("::").next().unwrap();
        let word = Regex::new(&format!(r"\b{}\b", regex::escape(last))).unwrap();
        if !word.is_match(code) {
            missing.insert(span);
        }
    }
    missing.into_iter().collect()
}

/// The first sentence of `file`'s `//!` doc, for a suggested code map line.
fn first_sentence(file: &Path) -> String {
    let text = fs::read_to_string(file).unwrap_or_default();
    let doc: Vec<&str> = text
        .lines()
        .map_while(|l| l.strip_prefix("//!"))
        .map(str::trim)
        .collect();
    let joined = doc.join(" ");
    match joined.find(". ") {
        Some(end) => joined[..=end].to_owned(),
        None => joined,
    }
}

#[test]
fn the_code_map_names_every_module_and_only_what_exists() {
    let root = root();
    let manifest = fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let members = workspace_list(&manifest, "members");
    let excluded = workspace_list(&manifest, "exclude");
    assert!(members.len() >= 5, "members of the workspace: {members:?}");
    let mut files = Vec::new();
    for member in &members {
        rust_files(&root, &root.join(member), &excluded, &mut files);
    }
    files.sort();
    let doc = fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();

    let unnamed: Vec<String> = unnamed(code_map(&doc), &files)
        .into_iter()
        .map(|f| format!("- `{f}` — {}", first_sentence(&root.join(f))))
        .collect();
    assert!(
        unnamed.is_empty(),
        "modules the code map of ARCHITECTURE.md does not name; add:\n{}",
        unnamed.join("\n")
    );

    let missing = missing_paths(&doc, &root, &members);
    assert!(
        missing.is_empty(),
        "paths ARCHITECTURE.md names that do not exist: {missing:?}"
    );

    let mut code = String::new();
    for file in &files {
        code.push_str(&fs::read_to_string(root.join(file)).unwrap());
    }
    code.push_str(&fs::read_to_string(root.join("proto/kernel/v1/agent.proto")).unwrap());
    let missing = missing_symbols(&doc, &code);
    assert!(
        missing.is_empty(),
        "symbols ARCHITECTURE.md names that occur nowhere in the code: {missing:?}"
    );
}

#[test]
fn the_checks_catch_an_unnamed_module_a_missing_path_and_a_missing_symbol() {
    let files = vec!["a/src/lib.rs".to_owned(), "a/src/new.rs".to_owned()];
    let map = "## Code map\n- `a/src/lib.rs` — the root.\n";
    assert_eq!(unnamed(map, &files), vec![&files[1]]);
    assert!(unnamed("## Code map\n- `a/src/lib.rs`\n- `a/src/new.rs`\n", &files).is_empty());

    let root = root();
    let members = vec!["kernel-tg".to_owned()];
    assert_eq!(
        missing_paths(
            "`kernel-tg/src/gone.rs` and `kernel-tg/src/lib.rs`",
            &root,
            &members
        ),
        vec!["kernel-tg/src/gone.rs"]
    );
    assert_eq!(
        missing_paths("`delivery/{item,gone}.rs`", &root, &members),
        vec!["delivery/gone.rs"]
    );

    let code = "pub struct Texts; fn parse() {}";
    assert_eq!(
        missing_symbols(
            "`texts::Texts`, `command::parse`, `GoneType`, `x::gone`",
            code
        ),
        vec!["GoneType", "x::gone"]
    );
    assert_eq!(
        workspace_list(
            "[workspace]\nmembers = [\"a\", \"b\"]\nexclude = [\"a/fuzz\"]\n",
            "exclude"
        ),
        vec!["a/fuzz"]
    );
}
