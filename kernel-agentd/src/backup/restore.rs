//! `kernel-agentd restore PATH`: puts a verified backup's database back in place of the current
//! one, which is kept beside it. Refused while kernel-agentd runs (its data-dir lock is held)
//! and for a backup from a newer schema.

use std::path::{Path, PathBuf};

use kernel_common::Config;

use super::{BackupError, DB_FILE, Manifest, Step, io};
use crate::listen::ListenError;
use crate::store::schema;

/// A restore that happened.
#[derive(Debug, Clone)]
pub struct Restored {
    pub manifest: Manifest,
    /// Where the database that was replaced now is (none if there was none).
    pub kept: Option<PathBuf>,
}

/// Restores the backup in `from` into `config`'s data_dir.
pub async fn restore(config: &Config, from: &Path) -> Result<Restored, BackupError> {
    let data_dir = &config.general.data_dir;
    let _lock = crate::listen::lock_data_dir(data_dir).map_err(|e| match e {
        ListenError::AlreadyRunning(dir) => BackupError::AgentdRunning(dir),
        ListenError::Io { path, source } => BackupError::Io {
            step: Step::Lock,
            path,
            source,
        },
    })?;
    let manifest = super::verify(from).await?;
    if manifest.schema_version > schema::known_version() {
        return Err(BackupError::NewerSchema {
            found: manifest.schema_version,
            known: schema::known_version(),
        });
    }
    let db = data_dir.join(DB_FILE);
    let staged = data_dir.join(format!("{DB_FILE}.restoring"));
    std::fs::copy(from.join(DB_FILE), &staged).map_err(io(Step::Copy, &staged))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(0o600))
            .map_err(io(Step::Restrict, &staged))?;
    }
    let kept = if db.exists() {
        let stamp = chrono::Utc::now().format("%Y%m%d-%H%M%S");
        let aside = data_dir.join(format!("{DB_FILE}.before-restore-{stamp}"));
        // The -wal and -shm files go with it under the matching names, so the kept copy opens.
        for suffix in ["-wal", "-shm", ""] {
            let from = PathBuf::from(format!("{}{suffix}", db.display()));
            if from.exists() {
                let to = PathBuf::from(format!("{}{suffix}", aside.display()));
                std::fs::rename(&from, &to).map_err(io(Step::MoveAside, &from))?;
            }
        }
        Some(aside)
    } else {
        None
    };
    std::fs::rename(&staged, &db).map_err(io(Step::PutInPlace, &db))?;
    tracing::info!(from = %from.display(), schema_version = manifest.schema_version, "backup restored");
    Ok(Restored { manifest, kept })
}
