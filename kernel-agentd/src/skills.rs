//! `Skills`: the owner's skills folder (`general.skills_dir`), one `<id>/SKILL.md` per skill
//! with front matter (`name`, `description`, `side_effects`). The index (one line per skill) is
//! part of the byte-stable system prompt; the model reads a skill's body and its other files on
//! demand with the `skill_read` tool (`skills::tool`), confined to the skill's folder
//! (`skills::files`).
//!
//! The folder is re-scanned cheaply at each turn start (names, and each SKILL.md's modification
//! time and length); only when that changes are the files parsed again, so the prompt changes
//! once per change, never per turn. A malformed SKILL.md is skipped with a WARN naming the file.

mod files;
mod front_matter;
mod tool;

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

pub(crate) use files::FileError;
pub(crate) use front_matter::SideEffects;
pub(crate) use tool::{TOOL_NAME, register_tool};

/// The file that makes a folder a skill.
pub(crate) const SKILL_FILE: &str = "SKILL.md";

/// Largest SKILL.md read (bytes); a larger one is skipped as malformed.
const MAX_SKILL_BYTES: u64 = files::MAX_FILE_BYTES;

/// The heading of the skills index in the system prompt.
pub(crate) const INDEX_HEADING: &str = "## 技能（按需读取）";

/// One skill as its front matter declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillInfo {
    pub name: String,
    /// One line.
    pub description: String,
    pub side_effects: SideEffects,
    /// The skill's folder.
    pub dir: PathBuf,
}

/// The skills found at the last scan and their index text.
#[derive(Debug, Default)]
pub struct Catalog {
    /// Sorted by folder name.
    pub skills: Vec<SkillInfo>,
    /// The system-prompt section; empty when there are no skills.
    pub index: Arc<str>,
}

/// Why `skill_read` could not answer; the text is the tool's error result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    #[error("unknown skill {name:?}; available: {available}")]
    Unknown { name: String, available: String },
    #[error(transparent)]
    File(#[from] FileError),
}

/// The skills service; a cheap `Clone` handle.
#[derive(Debug, Clone)]
pub struct Skills {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    dir: PathBuf,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// What the catalog was built from; `None` before the first scan.
    stamp: Option<Stamp>,
    catalog: Arc<Catalog>,
}

/// The folder's entries (sorted) and each one's SKILL.md (modification time, length).
type Stamp = Vec<(OsString, Option<(SystemTime, u64)>)>;

impl Skills {
    /// The skills under `dir` (scanned lazily; a missing folder means no skills).
    pub fn new(dir: PathBuf) -> Self {
        Self {
            inner: Arc::new(Inner {
                dir,
                state: Mutex::default(),
            }),
        }
    }

    fn state<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        f(&mut self.inner.state.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The current catalog, re-read when the folder changed since the last call.
    pub async fn catalog(&self) -> Arc<Catalog> {
        let dir = self.inner.dir.clone();
        let known = self.state(|s| s.stamp.clone());
        let scanned = tokio::task::spawn_blocking(move || {
            let stamp = stamp(&dir);
            if known.as_ref() == Some(&stamp) {
                return None;
            }
            let catalog = load(&dir, &stamp);
            Some((stamp, catalog))
        })
        .await;
        match scanned {
            Ok(Some((stamp, catalog))) => {
                let catalog = Arc::new(catalog);
                tracing::info!(
                    dir = %self.inner.dir.display(),
                    skills = catalog.skills.len(),
                    "skills loaded"
                );
                self.state(|s| {
                    s.stamp = Some(stamp);
                    s.catalog = catalog.clone();
                });
                catalog
            }
            Ok(None) | Err(_) => self.state(|s| s.catalog.clone()),
        }
    }

    /// A skill's `side_effects` as of the last scan (`None`: no such skill then).
    pub fn cached_side_effects(&self, name: &str) -> Option<SideEffects> {
        self.state(|s| {
            s.catalog
                .skills
                .iter()
                .find(|k| k.name == name)
                .map(|k| k.side_effects)
        })
    }

    /// The skills, sorted by folder name.
    pub async fn list(&self) -> Vec<SkillInfo> {
        self.catalog().await.skills.clone()
    }

    /// The index section of the system prompt (empty when there are no skills).
    pub async fn index(&self) -> Arc<str> {
        self.catalog().await.index.clone()
    }

    /// The body of skill `name`'s SKILL.md (front matter removed) followed by the list of its
    /// other files; or, with `file`, that file's text (confined to the skill's folder).
    pub async fn read(&self, name: &str, file: Option<&str>) -> Result<String, ReadError> {
        let catalog = self.catalog().await;
        let Some(skill) = catalog.skills.iter().find(|s| s.name == name) else {
            let names: Vec<&str> = catalog.skills.iter().map(|s| s.name.as_str()).collect();
            return Err(ReadError::Unknown {
                name: name.to_owned(),
                available: if names.is_empty() {
                    "(none)".to_owned()
                } else {
                    names.join(", ")
                },
            });
        };
        let dir = skill.dir.clone();
        let file = file.map(str::to_owned);
        let read = tokio::task::spawn_blocking(move || match file {
            Some(file) => files::read_confined(&dir, &file).map_err(ReadError::from),
            None => read_body(&dir),
        })
        .await;
        read.unwrap_or_else(|e| {
            Err(ReadError::File(FileError::Unreadable {
                path: SKILL_FILE.to_owned(),
                reason: e.to_string(),
            }))
        })
    }
}

/// The body of `dir/SKILL.md` and the list of the skill's other files.
fn read_body(dir: &Path) -> Result<String, ReadError> {
    let text = files::read_confined(dir, SKILL_FILE)?;
    let body = match front_matter::parse(&text) {
        Ok((_, body)) => body,
        Err(e) => {
            return Err(ReadError::File(FileError::Unreadable {
                path: SKILL_FILE.to_owned(),
                reason: e.to_string(),
            }));
        }
    };
    let mut out = body.trim_end().to_owned();
    let others = files::list(dir);
    if !others.is_empty() {
        out.push_str("\n\n---\nOther files of this skill (read one with skill_read and `file`):");
        for path in others {
            let _ = write!(out, "\n- {path}");
        }
    }
    Ok(out)
}

/// The cheap fingerprint of the folder: entry names and each SKILL.md's mtime and length.
fn stamp(dir: &Path) -> Stamp {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut stamp: Stamp = entries
        .flatten()
        .map(|entry| {
            let meta = std::fs::metadata(entry.path().join(SKILL_FILE))
                .ok()
                .map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len()));
            (entry.file_name(), meta)
        })
        .collect();
    stamp.sort();
    stamp
}

/// Parses every SKILL.md of the stamp; malformed ones and duplicate names are skipped with a WARN.
fn load(dir: &Path, stamp: &Stamp) -> Catalog {
    let mut skills: Vec<SkillInfo> = Vec::new();
    for (entry, meta) in stamp {
        let Some((_, len)) = meta else { continue };
        let skill_dir = dir.join(entry);
        let file = skill_dir.join(SKILL_FILE);
        let parsed = if *len > MAX_SKILL_BYTES {
            Err(format!("larger than {MAX_SKILL_BYTES} bytes"))
        } else {
            match std::fs::read(&file) {
                Ok(bytes) => match String::from_utf8(bytes) {
                    Ok(text) => front_matter::parse(&text)
                        .map(|(fm, _)| fm)
                        .map_err(|e| e.to_string()),
                    Err(_) => Err("not UTF-8 text".to_owned()),
                },
                Err(e) => Err(e.kind().to_string()),
            }
        };
        match parsed {
            Ok(fm) if skills.iter().any(|s| s.name == fm.name) => {
                tracing::warn!(file = %file.display(), name = %fm.name, "skill skipped: another skill has the same name");
            }
            Ok(fm) => skills.push(SkillInfo {
                name: fm.name,
                description: fm.description,
                side_effects: fm.side_effects,
                dir: skill_dir,
            }),
            Err(error) => {
                tracing::warn!(file = %file.display(), %error, "skill skipped: malformed SKILL.md");
            }
        }
    }
    let index = index_text(&skills).into();
    Catalog { skills, index }
}

/// The system-prompt section for `skills` (empty for none).
fn index_text(skills: &[SkillInfo]) -> String {
    if skills.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "{INDEX_HEADING}\n需要某项技能时，先用 {TOOL_NAME} 读取它的完整说明（以及其中列出的文件），再照做；括号里是技能声明的副作用级别。"
    );
    for s in skills {
        let description = s
            .description
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let _ = write!(out, "\n- {}（{}）：{description}", s.name, s.side_effects);
    }
    out
}

#[cfg(test)]
mod tests;
