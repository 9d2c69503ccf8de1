//! The TCP token agentd generates into `data_dir/agentd.token` when it listens on loopback and no
//! token is configured: 32 bytes from the OS random number generator as 64 hex digits, written
//! atomically (a private temp file renamed over the old one) with user-only permissions (0600;
//! on Windows an access list of the current user alone), and reused by later starts while it is
//! well-formed, so kernel-tg and scripts keep working across restarts. kernel-tg reads it.

use std::fs::OpenOptions;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use crate::secret::Secret;

/// The file's name in `data_dir`.
pub const FILE_NAME: &str = "agentd.token";

/// Random bytes in a token (64 hex digits).
pub const TOKEN_BYTES: usize = 32;

/// Why the token file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    #[error("{} is not there yet (kernel-agentd writes it when it starts)", .0.display())]
    Missing(PathBuf),
    #[error(
        "{} does not hold a token ({} hex digits): kernel-agentd replaces it when it starts",
        .0.display(),
        TOKEN_BYTES * 2
    )]
    Malformed(PathBuf),
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: io::Error },
    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: io::Error },
    #[error("the OS random number generator failed: {0}")]
    Random(String),
}

/// Whether [`load_or_create`] found the token or made a new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Reused,
    Generated,
}

/// The token in `path` (kernel-tg, scripts): an error when it is missing or malformed.
pub fn read(path: &Path) -> Result<Secret, TokenFileError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(TokenFileError::Missing(path.to_path_buf()));
        }
        Err(source) => {
            return Err(TokenFileError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let token = text.trim();
    if is_well_formed(token) {
        Ok(Secret::new(token))
    } else {
        Err(TokenFileError::Malformed(path.to_path_buf()))
    }
}

/// The token in `path` when it is there and well-formed (its permissions tightened to 0600 if
/// they were wider), else a new one written there. Call it while holding the data-dir lock.
pub fn load_or_create(path: &Path) -> Result<(Secret, Origin), TokenFileError> {
    match read(path) {
        Ok(token) => {
            keep_private(path)?;
            return Ok((token, Origin::Reused));
        }
        Err(TokenFileError::Missing(_) | TokenFileError::Malformed(_)) => {}
        Err(e) => return Err(e),
    }
    let token = generate()?;
    write_atomically(path, token.expose())?;
    Ok((token, Origin::Generated))
}

/// A new token: [`TOKEN_BYTES`] from the OS, in lowercase hex.
pub fn generate() -> Result<Secret, TokenFileError> {
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| TokenFileError::Random(e.to_string()))?;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Ok(Secret::new(hex))
}

/// What [`generate`] makes: exactly `2 × TOKEN_BYTES` lowercase hex digits.
pub fn is_well_formed(token: &str) -> bool {
    token.len() == TOKEN_BYTES * 2
        && token
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Writes `token` to a private temp file next to `path`, flushes it to disk, and renames it
/// over `path`: a reader sees the old file or the new one, never half of one.
fn write_atomically(path: &Path, token: &str) -> Result<(), TokenFileError> {
    let tmp = path.with_extension(format!("token.{}.tmp", std::process::id()));
    let failed = |source| TokenFileError::Write {
        path: path.to_path_buf(),
        source,
    };
    // A temp file a crash left behind is ours to replace.
    match std::fs::remove_file(&tmp) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(failed(e)),
    }
    let result = (|| {
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&tmp)?;
        #[cfg(windows)]
        crate::owner_only::restrict_file(&tmp)?;
        file.write_all(format!("{token}\n").as_bytes())?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(failed)
}

/// Unix: a token file readable by others (copied in by hand, say) is narrowed to 0600.
#[cfg(unix)]
fn keep_private(path: &Path) -> Result<(), TokenFileError> {
    use std::os::unix::fs::PermissionsExt as _;
    let failed = |source| TokenFileError::Write {
        path: path.to_path_buf(),
        source,
    };
    let mode = std::fs::metadata(path)
        .map_err(failed)?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(failed)?;
    }
    Ok(())
}

/// Windows: the file inherits `data_dir`'s access list (the current user alone).
#[cfg(not(unix))]
fn keep_private(_path: &Path) -> Result<(), TokenFileError> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_token_is_written_private_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        assert!(matches!(read(&path), Err(TokenFileError::Missing(_))));

        let (first, origin) = load_or_create(&path).unwrap();
        assert_eq!(origin, Origin::Generated);
        assert!(is_well_formed(first.expose()), "{}", first.expose());
        assert_eq!(read(&path).unwrap().expose(), first.expose());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }

        let (again, origin) = load_or_create(&path).unwrap();
        assert_eq!(origin, Origin::Reused);
        assert_eq!(again.expose(), first.expose());
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers, [FILE_NAME], "no temp file is left behind");
    }

    #[test]
    fn a_malformed_token_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        for bad in [
            "",
            "short",
            &"G".repeat(64),
            &"a".repeat(63),
            &"A".repeat(64),
        ] {
            std::fs::write(&path, bad).unwrap();
            assert!(matches!(read(&path), Err(TokenFileError::Malformed(_))));
            let (token, origin) = load_or_create(&path).unwrap();
            assert_eq!(origin, Origin::Generated, "{bad:?}");
            assert_ne!(token.expose(), bad);
            assert!(is_well_formed(token.expose()));
        }
    }

    #[test]
    fn tokens_differ() {
        let a = generate().unwrap();
        let b = generate().unwrap();
        assert_ne!(a.expose(), b.expose());
        assert_eq!(a.expose().len(), 64);
    }

    #[cfg(unix)]
    #[test]
    fn a_readable_token_file_is_narrowed_to_the_user() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        std::fs::write(&path, format!("{}\n", "ab".repeat(32))).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let (token, origin) = load_or_create(&path).unwrap();
        assert_eq!(
            (token.expose(), origin),
            ("ab".repeat(32).as_str(), Origin::Reused)
        );
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
}
