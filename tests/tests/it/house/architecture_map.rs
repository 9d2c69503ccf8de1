//! ARCHITECTURE.md stays a true map of folders: every folder of every workspace member (read from
//! the root `Cargo.toml`, so new crates are covered) that holds a `.rs` file has one entry in its
//! code map (`- `folder/` — …`), no entry is there twice, every folder, path and symbol it names
//! (a backticked `a::b` path or identifier) exists, and every `.rs` file starts with the `//!`
//! doc that says what it owns (the per-file truth the map leaves to the files).

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

/// The folders (repository-relative, ending in `/`) that directly hold one of `files`.
fn folders(files: &[String]) -> BTreeSet<String> {
    files
        .iter()
        .map(|f| match f.rfind('/') {
            Some(i) => f[..=i].to_owned(),
            None => String::new(),
        })
        .collect()
}

/// The folders of the map's entries (`- `a/b/` — …` lines), in order, duplicates kept.
fn entries(map: &str) -> Vec<String> {
    let entry = Regex::new(r"^- `([^`]+/)`").unwrap();
    map.lines()
        .filter_map(|l| entry.captures(l).map(|c| c[1].to_owned()))
        .collect()
}

/// The folders holding Rust files that no entry of `map` names.
fn unnamed(map: &str, folders: &BTreeSet<String>) -> Vec<String> {
    let named: BTreeSet<String> = entries(map).into_iter().collect();
    folders
        .iter()
        .filter(|f| !named.contains(*f))
        .cloned()
        .collect()
}

/// The folders `map` has an entry for more than once.
fn twice(map: &str) -> Vec<String> {
    let mut seen = BTreeSet::new();
    entries(map)
        .into_iter()
        .filter(|e| !seen.insert(e.clone()))
        .collect()
}

/// The backticked folders of `doc` (a path ending in `/`) that exist neither from the repository
/// root nor from any member's `src/`.
fn missing_folders(doc: &str, root: &Path, members: &[String]) -> Vec<String> {
    let folder = Regex::new(r"^[A-Za-z0-9_.\-/]+/$").unwrap();
    backticked(doc)
        .into_iter()
        .filter(|span| {
            folder.is_match(span)
                && !root.join(span).is_dir()
                && !members
                    .iter()
                    .any(|m| root.join(m).join("src").join(span).is_dir())
        })
        .collect()
}

/// The files of `files` whose text (read by `read`) does not start with a `//!` line.
fn undocumented(files: &[String], read: impl Fn(&str) -> String) -> Vec<&String> {
    files
        .iter()
        .filter(|f| !read(f).starts_with("//!"))
        .collect()
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

fn workspace_files(root: &Path) -> (Vec<String>, Vec<String>) {
    let manifest = fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let members = workspace_list(&manifest, "members");
    let excluded = workspace_list(&manifest, "exclude");
    assert!(members.len() >= 5, "members of the workspace: {members:?}");
    let mut files = Vec::new();
    for member in &members {
        rust_files(root, &root.join(member), &excluded, &mut files);
    }
    files.sort();
    (members, files)
}

/// A suggested entry for `folder`: the first sentence of its module file's `//!` (`a/b.rs` for
/// `a/b/`, else the folder's `lib.rs` or `main.rs`).
fn suggestion(root: &Path, folder: &str) -> String {
    let trimmed = folder.trim_end_matches('/');
    let candidates = [
        format!("{trimmed}.rs"),
        format!("{folder}lib.rs"),
        format!("{folder}main.rs"),
    ];
    let doc = candidates
        .iter()
        .map(|c| root.join(c))
        .find(|p| p.exists())
        .map(|p| first_sentence(&p))
        .unwrap_or_default();
    format!("- `{folder}` — {doc}")
}

#[test]
fn the_code_map_names_every_folder_once_and_only_what_exists() {
    let root = root();
    let (members, files) = workspace_files(&root);
    let doc = fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let map = code_map(&doc);

    let unnamed: Vec<String> = unnamed(map, &folders(&files))
        .iter()
        .map(|f| suggestion(&root, f))
        .collect();
    assert!(
        unnamed.is_empty(),
        "folders the code map of ARCHITECTURE.md does not name; add:\n{}",
        unnamed.join("\n")
    );
    let twice = twice(map);
    assert!(
        twice.is_empty(),
        "folders the code map names more than once: {twice:?}"
    );
    let gone = missing_folders(&doc, &root, &members);
    assert!(
        gone.is_empty(),
        "folders ARCHITECTURE.md names that do not exist: {gone:?}"
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
    let lines = doc.lines().count();
    assert!(
        lines <= 450,
        "ARCHITECTURE.md has {lines} lines (at most 450)"
    );
}

#[test]
fn every_rust_file_starts_with_the_doc_that_says_what_it_owns() {
    let root = root();
    let (_, files) = workspace_files(&root);
    let bare = undocumented(&files, |f| {
        fs::read_to_string(root.join(f)).unwrap_or_default()
    });
    assert!(
        bare.is_empty(),
        "files without a leading `//!` saying what they own: {bare:?}"
    );
}

#[test]
fn the_checks_catch_an_unnamed_folder_a_twice_named_one_a_missing_path_and_a_missing_symbol() {
    let files = vec![
        "a/src/lib.rs".to_owned(),
        "a/src/new/x.rs".to_owned(),
        "a/src/new/y.rs".to_owned(),
    ];
    let folders = folders(&files);
    assert_eq!(
        folders.iter().cloned().collect::<Vec<_>>(),
        vec!["a/src/", "a/src/new/"]
    );
    let map = "## Code map\n- `a/src/` — the root.\n";
    assert_eq!(unnamed(map, &folders), vec!["a/src/new/"]);
    let map = "## Code map\n- `a/src/` — root\n- `a/src/new/` — new\n- `a/src/` — again\n";
    assert!(unnamed(map, &folders).is_empty());
    assert_eq!(twice(map), vec!["a/src/"]);

    let root = root();
    let members = vec!["kernel-tg".to_owned()];
    assert_eq!(
        missing_folders(
            "`kernel-tg/src/`, `delivery/` and `kernel-tg/src/gone/`",
            &root,
            &members
        ),
        vec!["kernel-tg/src/gone/"]
    );
    assert_eq!(
        undocumented(&files, |f| if f.ends_with("y.rs") {
            "use x;".to_owned()
        } else {
            "//! Owns x.".to_owned()
        }),
        vec![&files[2]]
    );

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
