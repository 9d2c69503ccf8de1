//! agentd's transactions take the write lock when they begin (`BEGIN IMMEDIATE`): a deferred
//! transaction (sqlx's `pool.begin()`) that reads and then writes fails at once with "database is
//! locked" when another connection committed in between (SQLite in WAL mode cannot upgrade a
//! stale read snapshot, and skips the busy timeout). Seen as "internal error" on `/new` inside
//! a topic while that topic's turn was storing its answer.

use std::fs;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_agentd_transaction_begins_immediate() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernel-agentd/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 50, "kernel-agentd's sources found: {src:?}");
    let deferred: Vec<String> = files
        .iter()
        .flat_map(|path| {
            let text = fs::read_to_string(path).unwrap();
            text.lines()
                .enumerate()
                .filter(|(_, line)| {
                    let code = line.split("//").next().unwrap_or("");
                    code.contains(".begin()")
                })
                .map(|(n, _)| format!("{}:{}", path.display(), n + 1))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        deferred.is_empty(),
        "deferred transactions (use `begin_with(\"BEGIN IMMEDIATE\")`): {deferred:#?}"
    );
}
