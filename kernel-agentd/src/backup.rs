//! Backups of the owner's data: `kernel-agentd backup [--to DIR]` (also daily with `[backup]`)
//! copies the live database consistently (`VACUUM INTO`, safe while agentd runs), SOUL.md, the
//! skills and the config with its secrets masked into one folder with a `manifest.json`, then
//! verifies the copy (`integrity_check`, row counts); `restore` puts a database back.

pub mod daily;
pub mod manifest;
pub mod restore;
pub mod texts;

use std::path::{Path, PathBuf};

use kernel_common::Config;
use sqlx::Connection as _;

use crate::store::schema;
pub use manifest::Manifest;

/// The database file under `data_dir`.
pub const DB_FILE: &str = "kernel.db";
/// The masked config's name inside a backup.
pub const CONFIG_FILE: &str = "config.masked.toml";
/// The prefix of backups made into `backup.dir` (followed by `YYYYMMDD-HHMMSS`).
pub const PREFIX: &str = "kernel-";

/// Why a backup, its verification or a restore failed.
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error("{step} {}: {source}", path.display())]
    Io {
        step: Step,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Store(#[from] crate::store::StoreError),
    #[error("there is no database at {0} yet: start kernel-agentd once first")]
    NoDatabase(PathBuf),
    #[error("{0} is not empty: choose a new folder for the backup")]
    NotEmpty(PathBuf),
    #[error("{0} is not a Kernel backup (no readable manifest.json)")]
    NotABackup(PathBuf),
    #[error("the backup at {path} failed verification: {why}")]
    Verify { path: PathBuf, why: String },
    #[error("kernel-agentd is running on {0}: stop it first (systemctl --user stop kernel-agentd)")]
    AgentdRunning(PathBuf),
    #[error(
        "the backup has schema version {found}, newer than this kernel-agentd knows ({known}): \
         restore it with the newer kernel-agentd"
    )]
    NewerSchema { found: i64, known: i64 },
}

/// The file operation that failed, for [`BackupError::Io`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Lock,
    Read,
    Create,
    Write,
    Copy,
    Restrict,
    MoveAside,
    PutInPlace,
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Step::Lock => "cannot lock",
            Step::Read => "cannot read",
            Step::Create => "cannot create",
            Step::Write => "cannot write",
            Step::Copy => "cannot copy",
            Step::Restrict => "cannot restrict",
            Step::MoveAside => "cannot move aside",
            Step::PutInPlace => "cannot put in place",
        })
    }
}

fn io<'a>(step: Step, path: &'a Path) -> impl FnOnce(std::io::Error) -> BackupError + 'a {
    move |source| BackupError::Io {
        step,
        path: path.to_path_buf(),
        source,
    }
}

/// A backup just made and verified.
#[derive(Debug, Clone)]
pub struct Made {
    pub dir: PathBuf,
    pub manifest: Manifest,
}

/// Makes a backup of `config`'s data into `to` (a new or empty folder), default
/// `<backup.dir>/kernel-<UTC time>`, and verifies it.
pub async fn create(config: &Config, to: Option<&Path>) -> Result<Made, BackupError> {
    let db = config.general.data_dir.join(DB_FILE);
    if !db.is_file() {
        return Err(BackupError::NoDatabase(db));
    }
    let dir = match to {
        Some(dir) => dir.to_path_buf(),
        None => config.backup.dir.join(format!(
            "{PREFIX}{}",
            chrono::Utc::now().format("%Y%m%d-%H%M%S")
        )),
    };
    if std::fs::read_dir(&dir).is_ok_and(|mut entries| entries.next().is_some()) {
        return Err(BackupError::NotEmpty(dir));
    }
    create_private_dir(&dir)?;
    let mut conn = schema::read_only(&db).await?;
    let copied = schema::vacuum_into(&mut conn, &dir.join(DB_FILE)).await;
    conn.close().await.ok();
    copied?;
    copy_if_present(&config.general.soul_file, &dir.join("SOUL.md"))?;
    copy_tree(&config.general.skills_dir, &dir.join("skills"))?;
    let text = std::fs::read_to_string(&config.path).map_err(io(Step::Read, &config.path))?;
    let masked = kernel_common::config::masked::masked_config(&text).unwrap_or_default();
    write_private(&dir.join(CONFIG_FILE), masked.as_bytes())?;
    let manifest = Manifest::of_copy(&dir).await?;
    manifest.write(&dir)?;
    let manifest = verify(&dir).await?;
    tracing::info!(dir = %dir.display(), schema_version = manifest.schema_version, "backup made");
    Ok(Made { dir, manifest })
}

/// Checks the backup in `dir`: its database passes `integrity_check` and holds the schema
/// version and the row counts its manifest recorded.
pub async fn verify(dir: &Path) -> Result<Manifest, BackupError> {
    let manifest = Manifest::read(dir)?;
    let found = Manifest::of_copy(dir).await?;
    if found.schema_version != manifest.schema_version || found.counts != manifest.counts {
        return Err(BackupError::Verify {
            path: dir.to_path_buf(),
            why: format!(
                "its database holds {:?} at schema {}, the manifest says {:?} at schema {}",
                found.counts, found.schema_version, manifest.counts, manifest.schema_version
            ),
        });
    }
    Ok(manifest)
}

/// The backups in `dir` made by [`create`] without `--to` (daily or manual), oldest first.
pub fn list(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(PREFIX))
        .map(|e| e.path())
        .filter(|p| p.join(manifest::FILE).is_file())
        .collect();
    found.sort();
    found
}

/// Deletes the oldest backups in `dir` beyond the newest `keep`; returns those deleted.
pub fn prune(dir: &Path, keep: u32) -> Vec<PathBuf> {
    let all = list(dir);
    let excess = all.len().saturating_sub(keep as usize);
    let mut deleted = Vec::new();
    for old in all.into_iter().take(excess) {
        match std::fs::remove_dir_all(&old) {
            Ok(()) => deleted.push(old),
            Err(e) => {
                tracing::warn!(dir = %old.display(), error = %e, "cannot delete an old backup")
            }
        }
    }
    deleted
}

/// The newest backup in `dir` and its manifest, if any reads.
pub fn last(dir: &Path) -> Option<(PathBuf, Manifest)> {
    list(dir)
        .into_iter()
        .rev()
        .find_map(|p| Manifest::read(&p).ok().map(|m| (p, m)))
}

fn create_private_dir(dir: &Path) -> Result<(), BackupError> {
    crate::listen::create_private_dir(dir).map_err(|e| BackupError::Io {
        step: Step::Create,
        path: dir.to_path_buf(),
        source: std::io::Error::other(e.to_string()),
    })
}

fn write_private(path: &Path, bytes: &[u8]) -> Result<(), BackupError> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).map_err(io(Step::Write, path))?;
    std::io::Write::write_all(&mut file, bytes).map_err(io(Step::Write, path))
}

fn copy_if_present(from: &Path, to: &Path) -> Result<(), BackupError> {
    if from.is_file() {
        std::fs::copy(from, to).map_err(io(Step::Copy, from))?;
    }
    Ok(())
}

/// Copies the folder `from` (files and subfolders; symlinks are skipped) to `to`.
fn copy_tree(from: &Path, to: &Path) -> Result<(), BackupError> {
    if !from.is_dir() {
        return Ok(());
    }
    std::fs::create_dir_all(to).map_err(io(Step::Create, to))?;
    for entry in std::fs::read_dir(from).map_err(io(Step::Read, from))? {
        let entry = entry.map_err(io(Step::Read, from))?;
        let kind = entry.file_type().map_err(io(Step::Read, &entry.path()))?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target).map_err(io(Step::Copy, &entry.path()))?;
        }
    }
    Ok(())
}
