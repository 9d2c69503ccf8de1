//! The database's migration level, read before the database is opened for writing: a database
//! from a newer Kernel (applied migrations this binary does not know) is refused and left
//! unchanged, and one with pending migrations is copied to `backups/` before they run.

use std::path::{Path, PathBuf};

use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use sqlx::{ConnectOptions as _, Connection as _};

use super::{BUSY_TIMEOUT, MIGRATOR, StoreError};

/// The migration level of an existing database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Level {
    /// Versions applied (successfully), ascending.
    pub applied: Vec<i64>,
    /// Applied versions this binary does not know (a newer Kernel wrote them).
    pub unknown: Vec<i64>,
    /// Versions this binary knows that are not applied yet.
    pub pending: Vec<i64>,
}

impl Level {
    /// The highest applied version (0 for none).
    pub fn version(&self) -> i64 {
        self.applied.last().copied().unwrap_or(0)
    }
}

/// The highest migration version this binary knows.
pub fn known_version() -> i64 {
    MIGRATOR.iter().map(|m| m.version).max().unwrap_or(0)
}

/// A read-only connection to the database at `path` (which must exist).
pub async fn read_only(path: &Path) -> Result<SqliteConnection, StoreError> {
    SqliteConnectOptions::new()
        .filename(path)
        .read_only(true)
        .busy_timeout(BUSY_TIMEOUT)
        .connect()
        .await
        .map_err(StoreError::db("open the database read-only"))
}

/// The migration level over `conn`; an empty database (no migrations table) has none applied.
pub async fn level(conn: &mut SqliteConnection) -> Result<Level, StoreError> {
    let has_table: Option<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'",
    )
    .fetch_optional(&mut *conn)
    .await
    .map_err(StoreError::db("read the schema version"))?;
    let applied: Vec<i64> = if has_table.is_some() {
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success ORDER BY version")
            .fetch_all(&mut *conn)
            .await
            .map_err(StoreError::db("read the schema version"))?
    } else {
        Vec::new()
    };
    let known: Vec<i64> = MIGRATOR.iter().map(|m| m.version).collect();
    Ok(Level {
        unknown: applied
            .iter()
            .copied()
            .filter(|v| !known.contains(v))
            .collect(),
        pending: known
            .iter()
            .copied()
            .filter(|v| !applied.contains(v))
            .collect(),
        applied,
    })
}

/// The refusal for a database written by a newer Kernel.
pub fn newer_error(level: &Level) -> StoreError {
    let found = level.unknown.iter().max().copied().unwrap_or(0);
    StoreError::Database(
        format!(
            "migrate: the database has schema version {found}, written by a newer Kernel (this \
             kernel-agentd knows up to {}); it was not opened for writing: run the newer \
             kernel-agentd, or restore a backup made by this version (kernel-agentd restore PATH)",
            known_version()
        ),
        sqlx::Error::Migrate(Box::new(sqlx::migrate::MigrateError::VersionMissing(found))),
    )
}

/// Before [`super::Store::open`] writes to an existing database: refuses one from a newer Kernel
/// and, when migrations are pending on one that has some applied, copies it (`VACUUM INTO`) to
/// `<its folder>/backups/pre-migration-v<N>-<time>.db`. Returns that copy, if one was made.
pub(super) async fn prepare(path: &Path) -> Result<Option<PathBuf>, StoreError> {
    let mut conn = read_only(path).await?;
    let level = level(&mut conn).await?;
    if !level.unknown.is_empty() {
        conn.close().await.ok();
        return Err(newer_error(&level));
    }
    if level.applied.is_empty() || level.pending.is_empty() {
        conn.close().await.ok();
        return Ok(None);
    }
    let dir = path
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .join("backups");
    std::fs::create_dir_all(&dir).map_err(|e| StoreError::io("create the backups folder", e))?;
    let stamp = chrono::Utc::now().format("%Y%m%d-%H%M%S");
    let copy = dir.join(format!("pre-migration-v{}-{stamp}.db", level.version()));
    vacuum_into(&mut conn, &copy).await?;
    conn.close().await.ok();
    tracing::info!(
        from = level.version(),
        to = known_version(),
        backup = %copy.display(),
        "database backed up before its migrations"
    );
    Ok(Some(copy))
}

/// A consistent copy of the database behind `conn` at `to` (which must not exist), owner-only.
pub async fn vacuum_into(conn: &mut SqliteConnection, to: &Path) -> Result<(), StoreError> {
    let target = to
        .to_str()
        .ok_or_else(|| StoreError::Corrupt(format!("{} is not UTF-8", to.display())))?;
    sqlx::query("VACUUM INTO ?1")
        .bind(target)
        .execute(&mut *conn)
        .await
        .map_err(StoreError::db("copy the database"))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| StoreError::io("restrict the copy's permissions", e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use sqlx::migrate::Migrator;
    use sqlx::sqlite::SqlitePoolOptions;

    use super::*;
    use crate::store::Store;

    /// A database at every migration but the last, as an older Kernel left it.
    async fn older_database(path: &Path) -> i64 {
        let all = MIGRATOR.migrations.to_vec();
        let older = Migrator {
            migrations: Cow::Owned(all[..all.len() - 1].to_vec()),
            ..Migrator::DEFAULT
        };
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true);
        let pool = SqlitePoolOptions::new()
            .connect_with(options)
            .await
            .unwrap();
        older.run(&pool).await.unwrap();
        sqlx::query("INSERT INTO memories (text, created_at) VALUES ('kept', 0)")
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
        all[all.len() - 2].version
    }

    #[tokio::test]
    async fn pending_migrations_on_an_existing_database_back_it_up_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kernel.db");
        let old = older_database(&path).await;
        let store = Store::open(&path).await.unwrap();
        assert_eq!(store.schema_version().await.unwrap(), known_version());
        store.close().await;
        let backups: Vec<_> = std::fs::read_dir(dir.path().join("backups"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(backups.len(), 1, "{backups:?}");
        let name = backups[0]
            .file_name()
            .unwrap()
            .to_string_lossy()
            .to_string();
        assert!(
            name.starts_with(&format!("pre-migration-v{old}-")),
            "{name}"
        );
        let mut conn = read_only(&backups[0]).await.unwrap();
        assert_eq!(level(&mut conn).await.unwrap().version(), old);
        let kept: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM memories")
            .fetch_one(&mut conn)
            .await
            .unwrap();
        assert_eq!(kept, 1);
    }

    #[tokio::test]
    async fn a_new_or_current_database_makes_no_backup() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kernel.db");
        Store::open(&path).await.unwrap().close().await;
        Store::open(&path).await.unwrap().close().await;
        assert!(!dir.path().join("backups").exists());
    }
}
