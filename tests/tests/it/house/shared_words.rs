//! The owner-facing words both adapters say live once, in `kernel_common::said`: read from the
//! sources, no Chinese string literal outside tests appears in both kernel-tg and kernel-web
//! (a copy in each would let one change without the other).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use regex::Regex;

/// Words the owner types, not words said to the owner: kernel-tg reads them as command
/// arguments (`/tasks 删除 #1`, `/cancel 全部`, `/jobs 取消 #1`).
const TYPED_BY_THE_OWNER: &[&str] = &["删除", "全部", "取消"];

/// One Chinese word for two things: kernel-web's "Chat" tab and kernel-tg's usage purpose
/// "Your messages" (different in English, so not one shared sentence).
const HOMONYMS: &[&str] = &["对话"];

fn src(krate: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join(krate)
        .join("src")
}

/// The Chinese string literals of the non-test code under `dir`, each with a file it is in.
fn chinese_literals(dir: &Path, out: &mut BTreeMap<String, String>) {
    let literal = Regex::new(r#""((?:[^"\\]|\\.)*)""#).unwrap();
    let chinese = Regex::new(r"[\x{4e00}-\x{9fff}]").unwrap();
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "tests" {
                chinese_literals(&path, out);
            }
        } else if name.ends_with(".rs") && name != "tests.rs" {
            let text = fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for m in literal.captures_iter(code) {
                if chinese.is_match(&m[1]) {
                    out.entry(m[1].to_owned())
                        .or_insert_with(|| path.display().to_string());
                }
            }
        }
    }
}

#[test]
fn no_chinese_string_is_in_both_adapters() {
    let (mut tg, mut web) = (BTreeMap::new(), BTreeMap::new());
    chinese_literals(&src("kernel-tg"), &mut tg);
    chinese_literals(&src("kernel-web"), &mut web);
    assert!(tg.len() > 100 && web.len() > 100, "the sources were read");
    let allowed: BTreeSet<&str> = TYPED_BY_THE_OWNER.iter().chain(HOMONYMS).copied().collect();
    let both: Vec<_> = tg
        .iter()
        .filter(|(text, _)| web.contains_key(*text) && !allowed.contains(text.as_str()))
        .map(|(text, file)| format!("{text:?} in {file} and {}", web[text]))
        .collect();
    assert!(
        both.is_empty(),
        "say these once in kernel_common::said:\n{}",
        both.join("\n")
    );
}
