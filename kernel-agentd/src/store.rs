//! `Store`: the SQLite database (sessions, messages, settings, memories, daily notes, the outbox,
//! schedules) behind a cheap `Clone` handle.
//! `Store`: the SQLite database (sessions, messages, settings, memories, the outbox, the `/next` queue) behind a cheap `Clone` handle.
//! `Store`: the SQLite database (sessions, messages, settings, memories, the outbox, session
//! summaries, token usage) behind a cheap `Clone` handle.
//!
//! The database runs in WAL mode with foreign keys on; its schema is the versioned migrations
//! under `kernel-agentd/migrations/`, applied by [`Store::open`]. Times are stored as unix
//! milliseconds (UTC). A session's `updated_at` is kept strictly increasing across sessions
//! (at least one millisecond after the newest one), so "most recently active first" is exact
//! even when two sessions are touched within the same millisecond.

pub mod budget;
pub mod consolidation;
pub mod edit_offers;
mod error;
pub mod feedback;
pub mod follow_ups;
pub mod history_index;
mod history_searches;
pub mod intake_keys;
pub mod jobs;
mod last_round;
pub mod memory;
pub mod memory_auto;
mod memory_browse;
mod messages;
pub mod outbox;
pub mod running_turns;
pub mod schedules;
pub mod schema;
mod session_search;
mod sessions;
mod settings;
mod summaries;
pub mod task_runs;
mod topics;
pub mod transfer;
mod usage;
pub mod vectors;
pub mod watch_runs;

use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::SqlitePool;
use sqlx::migrate::Migrator;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

pub use error::StoreError;
pub use memory_browse::{MemoryFilter, MemorySource};
pub use messages::StoredMessage;
pub use sessions::SessionRow;
pub use summaries::StoredSummary;
pub use usage::{PurposeSum, UsageSlot, UsageSum};

/// The embedded schema migrations, in version order.
pub static MIGRATOR: Migrator = sqlx::migrate!("./migrations");

/// How long a statement waits for another writer before failing with "locked".
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// Connections in the pool. One owner means a turn, a background job or two and a search at
/// most at once; each connection is a SQLite handle with its own page cache and an OS thread
/// (sqlx runs every SQLite connection on a worker thread).
const MAX_CONNECTIONS: u32 = 4;
/// Page cache per connection in KiB (SQLite's default is 2,000 KiB): the OS page cache holds the
/// rest of the file, so a bigger cache buys little for one user and costs resident memory. The
/// caches fill as the database grows and never shrink: at 1,024 KiB agentd's resident memory was
/// still climbing after 7,000 turns (up to 4 MiB for the pool), at 256 KiB it levels off after
/// ~2,500 (BENCHMARKS.md "The 2-hour soak").
const CACHE_KIB: u32 = 256;
/// A connection unused this long is closed, and its page cache and thread with it.
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// The handle to the database; clones share one connection pool.
#[derive(Debug, Clone)]
pub struct Store {
    pool: SqlitePool,
    path: PathBuf,
    fts5: bool,
    /// Notified after messages are committed (the conversation indexer waits on it).
    stored: std::sync::Arc<tokio::sync::Notify>,
}

impl Store {
    /// Runs `delete_one` (one `?1` id parameter) for each of `ids` in one `BEGIN IMMEDIATE`
    /// transaction; returns how many rows went.
    async fn delete_by_ids(
        &self,
        delete_one: &'static str,
        ids: &[i64],
        op: &'static str,
    ) -> Result<u64, StoreError> {
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(op))?;
        let mut deleted = 0;
        for &id in ids {
            let done = sqlx::query(delete_one)
                .bind(id)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::db(op))?;
            deleted += done.rows_affected();
        }
        tx.commit().await.map_err(StoreError::db(op))?;
        Ok(deleted)
    }

    /// Opens (creating if missing, mode 0600) the database at `path`, applies pending
    /// migrations and probes for FTS5.
    pub async fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| StoreError::io("create the data directory", e))?;
        }
        let created = create_private_file(path)?;
        if !created {
            // Refuses a newer schema before anything writes; backs up before migrations.
            schema::prepare(path).await?;
        }
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .foreign_keys(true)
            .busy_timeout(BUSY_TIMEOUT)
            .synchronous(SqliteSynchronous::Normal)
            .pragma("cache_size", format!("-{CACHE_KIB}"));
        let pool = SqlitePoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            .idle_timeout(IDLE_TIMEOUT)
            // Not recycled by age (sqlx's default is 30 min): a busy connection would be
            // replaced by a new one whose page cache fills again while the old one's memory
            // waits in the allocator.
            .max_lifetime(None)
            .connect_with(options)
            .await
            .map_err(StoreError::db("open the database"))?;
        if created {
            restrict_permissions(path)?;
        }
        MIGRATOR.run(&pool).await.map_err(StoreError::migrate)?;
        let fts5 = probe_fts5(&pool).await;
        let store = Store {
            pool,
            path: path.to_path_buf(),
            fts5,
            stored: Default::default(),
        };
        let version = store.schema_version().await?;
        tracing::info!(path = %path.display(), created, schema_version = version, fts5, "database opened");
        Ok(store)
    }

    /// Tells the conversation indexer that messages were committed.
    fn messages_stored(&self) {
        self.stored.notify_one();
    }

    /// Completes once messages were committed after the last completion (a permit is kept while
    /// nobody waits, so no commit is missed).
    pub async fn wait_for_messages(&self) {
        self.stored.notified().await;
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether SQLite has the FTS5 extension (full-text search for memories).
    pub fn fts5_available(&self) -> bool {
        self.fts5
    }

    /// The highest applied migration version.
    pub async fn schema_version(&self) -> Result<i64, StoreError> {
        let version: Option<i64> =
            sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations WHERE success")
                .fetch_one(&self.pool)
                .await
                .map_err(StoreError::db("read the schema version"))?;
        Ok(version.unwrap_or(0))
    }

    /// Closes the idle connections beyond `keep`, each with its page cache and worker thread;
    /// returns how many it closed. sqlx returns a used connection to the pool asynchronously
    /// (after a ping), so even strictly sequential work (start-up, one turn) often opens a second
    /// or third connection that then sits idle for [`IDLE_TIMEOUT`]; the quiet-time housekeeping
    /// (`quiet`) calls this with `keep` 0, so a quiet daemon holds no connection (the next
    /// operation opens one). Never waits and never opens a connection.
    pub async fn close_idle_connections(&self, keep: usize) -> usize {
        let mut idle = Vec::new();
        while let Some(connection) = self.pool.try_acquire() {
            idle.push(connection);
        }
        let surplus = idle.split_off(keep.min(idle.len()));
        let closed = surplus.len();
        for connection in surplus {
            // An error closing an idle connection leaves nothing to undo: it is gone either way.
            let _ = connection.close().await;
        }
        drop(idle);
        closed
    }

    /// Closes every connection; later operations fail with "the database is closed".
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// Creates an empty database file readable by the owner only; `false` if it already existed.
fn create_private_file(path: &Path) -> Result<bool, StoreError> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(StoreError::io("create the database file", e)),
    }
}

/// Makes a freshly created database file owner-only, whatever the umask did.
fn restrict_permissions(path: &Path) -> Result<(), StoreError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| StoreError::io("restrict the database file's permissions", e))?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// Whether an FTS5 virtual table can be created (on a temporary table, dropped at once).
async fn probe_fts5(pool: &SqlitePool) -> bool {
    let mut conn = match pool.acquire().await {
        Ok(conn) => conn,
        Err(e) => {
            tracing::warn!(error = %e, "cannot probe for FTS5");
            return false;
        }
    };
    match sqlx::query("CREATE VIRTUAL TABLE temp.kernel_fts5_probe USING fts5(a)")
        .execute(&mut *conn)
        .await
    {
        Ok(_) => {
            if let Err(e) = sqlx::query("DROP TABLE temp.kernel_fts5_probe")
                .execute(&mut *conn)
                .await
            {
                tracing::warn!(error = %e, "cannot drop the FTS5 probe table");
            }
            true
        }
        Err(e) => {
            tracing::warn!(error = %e, "FTS5 is not available");
            false
        }
    }
}

/// Now, as stored: unix milliseconds.
fn now_millis() -> i64 {
    Utc::now().timestamp_millis()
}

/// A stored timestamp back as a `DateTime`; `what` names the row for the error.
fn from_millis(ms: i64, what: impl FnOnce() -> String) -> Result<DateTime<Utc>, StoreError> {
    DateTime::from_timestamp_millis(ms)
        .ok_or_else(|| StoreError::Corrupt(format!("{}: bad timestamp {ms}", what())))
}

/// `text` with LIKE's wildcards and the escape character escaped (escape: `\`): the LIKE
/// searches of memories, the conversation index and session titles.
fn like_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '%' | '_') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `.cargo/config.toml` builds SQLite with the query planner stability guarantee: without
    /// it every run of a statement with `LIMIT ?` re-prepares it.
    #[tokio::test]
    async fn sqlite_keeps_query_plans_stable() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("kernel.db")).await.unwrap();
        let options: Vec<String> =
            sqlx::query_scalar("SELECT compile_options FROM pragma_compile_options")
                .fetch_all(&store.pool)
                .await
                .unwrap();
        assert!(
            options.iter().any(|o| o == "ENABLE_QPSG"),
            "compile options: {options:?}"
        );
    }

    #[tokio::test]
    async fn idle_connections_are_closed_and_the_store_still_works() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("kernel.db")).await.unwrap();
        // Three connections in use at once, then all returned to the pool.
        let held = [
            store.pool.acquire().await.unwrap(),
            store.pool.acquire().await.unwrap(),
            store.pool.acquire().await.unwrap(),
        ];
        assert!(store.pool.size() >= 3);
        drop(held);
        let open = store.pool.size() as usize;
        // sqlx hands a connection back from a spawned task: wait until all are idle.
        while store.pool.num_idle() < open {
            tokio::task::yield_now().await;
        }
        assert_eq!(store.close_idle_connections(1).await, open - 1);
        assert_eq!(store.pool.size(), 1);
        // The kept one goes back to the pool from a spawned task too.
        while store.pool.num_idle() < 1 {
            tokio::task::yield_now().await;
        }
        assert_eq!(
            store.close_idle_connections(1).await,
            0,
            "nothing beyond one left"
        );
        while store.pool.num_idle() < 1 {
            tokio::task::yield_now().await;
        }
        assert_eq!(store.close_idle_connections(0).await, 1);
        assert_eq!(store.pool.size(), 0, "no connection left");
        assert!(
            store.schema_version().await.unwrap() > 0,
            "the store still answers"
        );
    }
}
