//! Reading the memory files other assistants leave, as Kernel memories:
//! - OpenClaw: the workspace's `MEMORY.md` (curated Markdown) and daily logs
//!   `memory/YYYY-MM-DD.md` (imported as daily notes);
//! - nanobot: `memory/MEMORY.md` (long-term facts, Markdown), `memory/HISTORY.md` (entries
//!   of `[YYYY-MM-DD HH:MM] …` separated by blank lines) and its daily files
//!   `memory/YYYY-MM-DD.md` (imported as daily notes, as OpenClaw's);
//! - Hermes Agent: `MEMORY.md` and `USER.md` (entries separated by a line holding only `§`).
//!
//! Markdown becomes one memory per list item or paragraph (headings and rules dropped). Every
//! file is read safely: inside the folder (no symlink out of it), at most [`MAX_FILE_BYTES`],
//! valid UTF-8 — else an error naming the file.

use std::path::{Path, PathBuf};

use super::{BadFile, TransferError};

/// The largest file an import reads.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Which assistant a folder came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    OpenClaw,
    Nanobot,
    Hermes,
}

impl Origin {
    /// The memories' `source`: `imported:<name>`.
    pub fn source(self) -> &'static str {
        match self {
            Origin::OpenClaw => "imported:openclaw",
            Origin::Nanobot => "imported:nanobot",
            Origin::Hermes => "imported:hermes",
        }
    }
}

/// What a foreign folder holds.
#[derive(Debug, Clone, Default)]
pub struct Found {
    pub memories: Vec<String>,
    /// Daily notes: (YYYY-MM-DD, text).
    pub notes: Vec<(String, String)>,
}

/// Which assistant `dir` looks like, if any.
pub fn detect(dir: &Path) -> Option<Origin> {
    if dir.join("memory/MEMORY.md").is_file() || dir.join("memory/HISTORY.md").is_file() {
        return Some(Origin::Nanobot);
    }
    if dir.join("USER.md").is_file() || dir.join("memories/USER.md").is_file() {
        return Some(Origin::Hermes);
    }
    if dir.join("MEMORY.md").is_file() || !daily_logs(dir).is_empty() {
        return Some(Origin::OpenClaw);
    }
    None
}

/// Reads `dir` as `origin` left it.
pub fn read(dir: &Path, origin: Origin) -> Result<Found, TransferError> {
    let mut found = Found::default();
    match origin {
        Origin::OpenClaw => {
            if let Some(text) = read_file(dir, "MEMORY.md")? {
                found.memories.extend(markdown_items(&text));
            }
            found.notes = daily_notes(dir)?;
        }
        Origin::Nanobot => {
            if let Some(text) = read_file(dir, "memory/MEMORY.md")? {
                found.memories.extend(markdown_items(&text));
            }
            if let Some(text) = read_file(dir, "memory/HISTORY.md")? {
                found.memories.extend(paragraphs(&text));
            }
            found.notes = daily_notes(dir)?;
        }
        Origin::Hermes => {
            let base = if dir.join("memories").is_dir() {
                "memories/"
            } else {
                ""
            };
            for name in ["MEMORY.md", "USER.md"] {
                if let Some(text) = read_file(dir, &format!("{base}{name}"))? {
                    found.memories.extend(
                        text.split("\n§\n")
                            .map(str::trim)
                            .filter(|e| !e.is_empty() && *e != "§")
                            .map(str::to_owned),
                    );
                }
            }
        }
    }
    Ok(found)
}

/// The daily files `memory/YYYY-MM-DD.md` (OpenClaw and nanobot) as (date, text), empty ones
/// left out.
fn daily_notes(dir: &Path) -> Result<Vec<(String, String)>, TransferError> {
    let mut notes = Vec::new();
    for (date, rel) in daily_logs(dir) {
        if let Some(text) = read_file(dir, &rel)? {
            let text = text.trim();
            if !text.is_empty() {
                notes.push((date, text.to_owned()));
            }
        }
    }
    Ok(notes)
}

/// The daily logs: (date, relative path) of `memory/YYYY-MM-DD.md`, by date.
fn daily_logs(dir: &Path) -> Vec<(String, String)> {
    let Ok(entries) = std::fs::read_dir(dir.join("memory")) else {
        return Vec::new();
    };
    let mut logs: Vec<(String, String)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let date = name.strip_suffix(".md")?;
            chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").ok()?;
            Some((date.to_owned(), format!("memory/{name}")))
        })
        .collect();
    logs.sort();
    logs
}

/// `dir/rel` as text, `None` when it does not exist; refused when it leaves `dir` (a symlink
/// out of it), is larger than [`MAX_FILE_BYTES`] or is not UTF-8.
pub fn read_file(dir: &Path, rel: &str) -> Result<Option<String>, TransferError> {
    let path = dir.join(rel);
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(None);
    }
    let bad = |why: BadFile| TransferError::BadFile {
        path: path.clone(),
        why,
    };
    let os = |e: std::io::Error| BadFile::Io(e.to_string());
    let root = dir.canonicalize().map_err(|e| bad(os(e)))?;
    let real: PathBuf = path.canonicalize().map_err(|e| bad(os(e)))?;
    if !real.starts_with(&root) {
        return Err(bad(BadFile::OutsideFolder));
    }
    let meta = std::fs::metadata(&real).map_err(|e| bad(os(e)))?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(bad(BadFile::TooLarge {
            mb: meta.len() / 1024 / 1024,
            max_mb: MAX_FILE_BYTES / 1024 / 1024,
        }));
    }
    let bytes = std::fs::read(&real).map_err(|e| bad(os(e)))?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| bad(BadFile::NotUtf8))
}

/// One memory per Markdown list item or paragraph; headings, rules and front matter dropped.
pub fn markdown_items(text: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut current = String::new();
    let flush = |current: &mut String, items: &mut Vec<String>| {
        let item = current.trim().to_owned();
        if !item.is_empty() {
            items.push(item);
        }
        current.clear();
    };
    for line in text.lines() {
        let trimmed = line.trim();
        let is_rule = trimmed.len() >= 3 && trimmed.chars().all(|c| matches!(c, '-' | '*' | '_'));
        if trimmed.is_empty() || trimmed.starts_with('#') || is_rule {
            flush(&mut current, &mut items);
            continue;
        }
        let item = trimmed
            .strip_prefix("- ")
            .or_else(|| trimmed.strip_prefix("* "))
            .or_else(|| trimmed.strip_prefix("+ "))
            .or_else(|| {
                let digits = trimmed.chars().take_while(char::is_ascii_digit).count();
                (digits > 0)
                    .then(|| trimmed[digits..].strip_prefix(". "))
                    .flatten()
            });
        match item {
            Some(item) if line.starts_with(|c: char| !c.is_whitespace()) => {
                flush(&mut current, &mut items);
                current.push_str(item.trim_start_matches("[ ] ").trim_start_matches("[x] "));
            }
            _ => {
                if !current.is_empty() {
                    current.push(' ');
                }
                current.push_str(item.unwrap_or(trimmed));
            }
        }
    }
    flush(&mut current, &mut items);
    items
}

/// Blank-line separated paragraphs (nanobot's HISTORY.md entries), whitespace collapsed.
fn paragraphs(text: &str) -> Vec<String> {
    text.split("\n\n")
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty() && !p.starts_with('#'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_becomes_one_memory_per_item_or_paragraph() {
        let text = "# Memory\n\n## Owner\n- Likes green tea\n- Lives in Hangzhou,\n  near the lake\n\nWorks on Kernel.\n---\n1. Prefers short answers\n";
        assert_eq!(
            markdown_items(text),
            [
                "Likes green tea",
                "Lives in Hangzhou, near the lake",
                "Works on Kernel.",
                "Prefers short answers"
            ]
        );
    }
}
