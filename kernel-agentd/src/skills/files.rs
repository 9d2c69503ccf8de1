//! A skill's files, confined to its folder: the listing `skill_read` shows, and reading one file
//! by the relative path the model gives. A path is refused when it is empty, absolute, has a
//! `..` (or any non-plain) component, or resolves (symlinks followed) outside the folder.

use std::path::{Component, Path, PathBuf};

/// Largest file `skill_read` returns (bytes).
pub(super) const MAX_FILE_BYTES: u64 = 256 * 1024;

/// Most files listed for one skill.
const MAX_LISTED: usize = 100;

/// Deepest folder level listed (the skill folder is 0).
const MAX_DEPTH: usize = 4;

/// Why a skill file could not be read; the text is the tool's error result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FileError {
    #[error(
        "file {0:?} is not allowed: give a relative path inside the skill's folder, without `..`"
    )]
    NotRelative(String),
    #[error("file {0:?} is outside the skill's folder")]
    Outside(String),
    #[error("file {0:?} does not exist in this skill")]
    Missing(String),
    #[error("file {0:?} is not a regular file")]
    NotAFile(String),
    #[error("file {0:?} is larger than {MAX_FILE_BYTES} bytes")]
    TooLarge(String),
    #[error("file {0:?} is not UTF-8 text")]
    NotText(String),
    #[error("file {path:?} cannot be read: {reason}")]
    Unreadable { path: String, reason: String },
}

/// Reads the text of `file` (relative to `dir`, the skill's folder) under the confinement rules.
pub(super) fn read_confined(dir: &Path, file: &str) -> Result<String, FileError> {
    let relative = Path::new(file);
    let plain = !file.trim().is_empty()
        && relative
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !plain {
        return Err(FileError::NotRelative(file.to_owned()));
    }
    let unreadable = |e: std::io::Error| FileError::Unreadable {
        path: file.to_owned(),
        reason: e.kind().to_string(),
    };
    let root = dir.canonicalize().map_err(unreadable)?;
    let target = match root.join(relative).canonicalize() {
        Ok(path) => path,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(FileError::Missing(file.to_owned()));
        }
        Err(e) => return Err(unreadable(e)),
    };
    if !target.starts_with(&root) {
        return Err(FileError::Outside(file.to_owned()));
    }
    let meta = std::fs::metadata(&target).map_err(unreadable)?;
    if !meta.is_file() {
        return Err(FileError::NotAFile(file.to_owned()));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(FileError::TooLarge(file.to_owned()));
    }
    let bytes = std::fs::read(&target).map_err(unreadable)?;
    String::from_utf8(bytes).map_err(|_| FileError::NotText(file.to_owned()))
}

/// The skill's files other than `SKILL.md`, as sorted `/`-separated relative paths: regular files
/// (symlinks only when they resolve to a file inside the folder), hidden names skipped, at most
/// [`MAX_LISTED`], [`MAX_DEPTH`] levels deep.
pub(super) fn list(dir: &Path) -> Vec<String> {
    let Ok(root) = dir.canonicalize() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    walk(&root, &root, 0, &mut out);
    out.sort();
    out.retain(|p| p != super::SKILL_FILE);
    out.truncate(MAX_LISTED);
    out
}

fn walk(root: &Path, dir: &Path, depth: usize, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if out.len() > MAX_LISTED {
            return;
        }
        let hidden = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_none_or(|n| n.starts_with('.'));
        let Ok(real) = path.canonicalize() else {
            continue;
        };
        if hidden || !real.starts_with(root) {
            continue;
        }
        // Real folders only (a symlinked folder could loop).
        let real_dir = path.symlink_metadata().is_ok_and(|m| m.is_dir());
        if real_dir {
            if depth < MAX_DEPTH {
                walk(root, &path, depth + 1, out);
            }
        } else if real.is_file()
            && let Ok(relative) = path.strip_prefix(root)
        {
            let parts: Vec<_> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect();
            out.push(parts.join("/"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_confined_to_the_skill_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("skill");
        std::fs::create_dir_all(dir.join("ref")).unwrap();
        std::fs::write(dir.join("SKILL.md"), "x").unwrap();
        std::fs::write(dir.join("ref/notes.md"), "notes").unwrap();
        std::fs::write(dir.join(".hidden"), "h").unwrap();
        std::fs::write(tmp.path().join("secret.txt"), "secret").unwrap();
        std::os::unix::fs::symlink(tmp.path().join("secret.txt"), dir.join("link")).unwrap();
        std::os::unix::fs::symlink(dir.join("ref/notes.md"), dir.join("inside")).unwrap();

        assert_eq!(read_confined(&dir, "ref/notes.md").unwrap(), "notes");
        assert_eq!(read_confined(&dir, "./inside").unwrap(), "notes");
        for bad in ["../secret.txt", "ref/../../secret.txt", "/etc/passwd", ""] {
            assert_eq!(
                read_confined(&dir, bad),
                Err(FileError::NotRelative(bad.into())),
                "{bad}"
            );
        }
        assert_eq!(
            read_confined(&dir, "link"),
            Err(FileError::Outside("link".into()))
        );
        assert_eq!(
            read_confined(&dir, "nope.md"),
            Err(FileError::Missing("nope.md".into()))
        );
        assert_eq!(
            read_confined(&dir, "ref"),
            Err(FileError::NotAFile("ref".into()))
        );
        assert_eq!(list(&dir), vec!["inside", "ref/notes.md"]);
    }
}
