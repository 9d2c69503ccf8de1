//! `Downloads`: every received attachment is kept under `data_dir/downloads/` (0600, in a 0700
//! folder) with a name Kernel makes — UTC time, process id, a counter and a sanitised extension
//! (`20261123-124447-123456-4242-0001.py`) — never the sender's file name. `retention` deletes
//! them after 7 days.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::Utc;
use tokio::io::AsyncWriteExt as _;

/// The folder under `data_dir`.
pub(crate) const DOWNLOADS_DIR: &str = "downloads";
/// Most extension characters kept in a saved name.
const MAX_EXTENSION_CHARS: usize = 16;
/// Attempts at a fresh name before giving up (a name is never reused).
const NAME_ATTEMPTS: u32 = 16;

/// Where received attachments are kept.
#[derive(Debug)]
pub struct Downloads {
    dir: PathBuf,
    counter: AtomicU64,
}

impl Downloads {
    /// Downloads under `data_dir/downloads/` (created on first save).
    pub fn new(data_dir: &Path) -> Self {
        Self {
            dir: data_dir.join(DOWNLOADS_DIR),
            counter: AtomicU64::new(0),
        }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes `data` to a new file with extension `ext` (sanitised; `bin` when nothing is left)
    /// and returns its path.
    pub async fn save(&self, ext: &str, data: &[u8]) -> std::io::Result<PathBuf> {
        create_private_dir(&self.dir).await?;
        let ext = sanitize_extension(ext);
        let mut last_err = None;
        for _ in 0..NAME_ATTEMPTS {
            let path = self.dir.join(self.fresh_name(&ext));
            match create_new_private(&path).await {
                Ok(mut file) => {
                    file.write_all(data).await?;
                    file.sync_all().await?;
                    return Ok(path);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last_err = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last_err.unwrap_or_else(|| std::io::Error::other("no free file name")))
    }

    fn fresh_name(&self, ext: &str) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed) + 1;
        format!(
            "{}-{}-{n:04}.{ext}",
            Utc::now().format("%Y%m%d-%H%M%S-%6f"),
            std::process::id()
        )
    }
}

/// Lower-case ASCII letters and digits of `ext`, at most [`MAX_EXTENSION_CHARS`]; `bin` if none.
pub(crate) fn sanitize_extension(ext: &str) -> String {
    let clean: String = ext
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(MAX_EXTENSION_CHARS)
        .collect::<String>()
        .to_ascii_lowercase();
    if clean.is_empty() {
        "bin".to_owned()
    } else {
        clean
    }
}

async fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = tokio::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    builder.mode(0o700);
    builder.create(dir).await
}

async fn create_new_private(path: &Path) -> std::io::Result<tokio::fs::File> {
    let mut options = tokio::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    options.mode(0o600);
    options.open(path).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_are_sanitised() {
        assert_eq!(sanitize_extension("PY"), "py");
        assert_eq!(sanitize_extension("../../x"), "x");
        assert_eq!(sanitize_extension("/"), "bin");
        assert_eq!(
            sanitize_extension(&"a".repeat(40)).len(),
            MAX_EXTENSION_CHARS
        );
    }

    #[tokio::test]
    async fn saves_get_fresh_private_names() {
        let data = tempfile::tempdir().unwrap();
        let downloads = Downloads::new(data.path());
        let a = downloads.save("py", b"print(1)").await.unwrap();
        let b = downloads.save("../etc", b"x").await.unwrap();
        assert_ne!(a, b);
        assert_eq!(a.parent().unwrap(), data.path().join("downloads"));
        assert_eq!(b.parent().unwrap(), data.path().join("downloads"));
        assert_eq!(std::fs::read(&a).unwrap(), b"print(1)");
        assert!(a.to_string_lossy().ends_with(".py"));
        assert!(b.to_string_lossy().ends_with(".etc"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&a), 0o600);
            assert_eq!(mode(downloads.dir()), 0o700);
        }
    }
}
