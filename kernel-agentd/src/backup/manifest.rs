//! `manifest.json` of a backup: when it was made, by which Kernel, the schema version and the
//! row counts of its database (what verification checks again).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sqlx::Connection as _;

use super::{BackupError, DB_FILE};
use crate::store::schema;

/// The manifest's file name.
pub const FILE: &str = "manifest.json";
/// The tables whose rows a manifest counts.
pub const COUNTED: [&str; 8] = [
    "sessions",
    "messages",
    "memories",
    "daily_notes",
    "schedules",
    "outbox",
    "usage",
    "jobs",
];

/// What a backup holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always `"kernel-backup"`.
    pub format: String,
    /// The kernel-agentd version that made it.
    pub kernel_version: String,
    /// When it was made (RFC 3339, UTC).
    pub created_at: String,
    /// The highest applied migration of its database.
    pub schema_version: i64,
    /// Rows per table of [`COUNTED`].
    pub counts: BTreeMap<String, i64>,
}

impl Manifest {
    /// Reads `dir/manifest.json`.
    pub fn read(dir: &Path) -> Result<Manifest, BackupError> {
        let text = std::fs::read_to_string(dir.join(FILE))
            .map_err(|_| BackupError::NotABackup(dir.to_path_buf()))?;
        let manifest: Manifest =
            serde_json::from_str(&text).map_err(|_| BackupError::NotABackup(dir.to_path_buf()))?;
        if manifest.format != "kernel-backup" {
            return Err(BackupError::NotABackup(dir.to_path_buf()));
        }
        Ok(manifest)
    }

    /// Writes it as `dir/manifest.json`.
    pub fn write(&self, dir: &Path) -> Result<(), BackupError> {
        let text = serde_json::to_string_pretty(self).unwrap_or_default();
        super::write_private(&dir.join(FILE), text.as_bytes())
    }

    /// The manifest of the database `dir/kernel.db` as it is now, after `integrity_check`.
    pub async fn of_copy(dir: &Path) -> Result<Manifest, BackupError> {
        let db = dir.join(DB_FILE);
        if !db.is_file() {
            return Err(BackupError::NotABackup(dir.to_path_buf()));
        }
        let verify = |why: String| BackupError::Verify {
            path: dir.to_path_buf(),
            why,
        };
        let mut conn = schema::read_only(&db).await?;
        let result = async {
            let check: Vec<String> = sqlx::query_scalar("PRAGMA integrity_check")
                .fetch_all(&mut conn)
                .await
                .map_err(|e| verify(format!("integrity_check cannot run: {e}")))?;
            if check != ["ok"] {
                return Err(verify(format!("integrity_check: {}", check.join("; "))));
            }
            let level = schema::level(&mut conn).await?;
            let mut counts = BTreeMap::new();
            for table in COUNTED {
                let n: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
                    "SELECT COUNT(*) FROM {table}"
                )))
                .fetch_one(&mut conn)
                .await
                .unwrap_or(0);
                counts.insert(table.to_owned(), n);
            }
            Ok(Manifest {
                format: "kernel-backup".to_owned(),
                kernel_version: env!("CARGO_PKG_VERSION").to_owned(),
                created_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                schema_version: level.version(),
                counts,
            })
        }
        .await;
        conn.close().await.ok();
        result
    }
}
