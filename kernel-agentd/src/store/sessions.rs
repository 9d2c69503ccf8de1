//! Sessions: create, get, list newest first, retitle, switch model, touch, delete.

use chrono::{DateTime, Utc};
use sqlx::{FromRow, SqliteConnection};

use super::{Store, StoreError, from_millis, now_millis};

/// A stored session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    pub id: i64,
    /// `None` until titled.
    pub title: Option<String>,
    pub provider: String,
    pub model: String,
    pub created_at: DateTime<Utc>,
    /// The last activity (a message appended or an explicit touch).
    pub updated_at: DateTime<Utc>,
}

/// A `sessions` row as SQLite has it.
#[derive(FromRow)]
struct RawSession {
    id: i64,
    title: Option<String>,
    provider: String,
    model: String,
    created_at: i64,
    updated_at: i64,
}

impl TryFrom<RawSession> for SessionRow {
    type Error = StoreError;

    fn try_from(r: RawSession) -> Result<Self, StoreError> {
        let what = || format!("session {}", r.id);
        Ok(SessionRow {
            id: r.id,
            created_at: from_millis(r.created_at, what)?,
            updated_at: from_millis(r.updated_at, what)?,
            title: r.title,
            provider: r.provider,
            model: r.model,
        })
    }
}

impl Store {
    /// Creates an untitled session using `provider`/`model`; it becomes the newest.
    pub async fn create_session(
        &self,
        provider: &str,
        model: &str,
    ) -> Result<SessionRow, StoreError> {
        let raw: RawSession = sqlx::query_as(
            "INSERT INTO sessions (title, provider, model, created_at, updated_at)
             VALUES (NULL, ?1, ?2, ?3,
                     MAX(?3, (SELECT COALESCE(MAX(updated_at), 0) + 1 FROM sessions)))
             RETURNING id, title, provider, model, created_at, updated_at",
        )
        .bind(provider)
        .bind(model)
        .bind(now_millis())
        .fetch_one(&self.pool)
        .await
        .map_err(StoreError::db("create a session"))?;
        tracing::debug!(session = raw.id, provider, model, "session created");
        raw.try_into()
    }

    /// The session `id`, if it exists.
    pub async fn get_session(&self, id: i64) -> Result<Option<SessionRow>, StoreError> {
        let raw: Option<RawSession> = sqlx::query_as(
            "SELECT id, title, provider, model, created_at, updated_at FROM sessions WHERE id = ?1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await
        .map_err(StoreError::db("load a session"))?;
        raw.map(SessionRow::try_from).transpose()
    }

    /// Up to `limit` sessions, most recently active first (ties: higher id first).
    pub async fn list_sessions(&self, limit: usize) -> Result<Vec<SessionRow>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let raws: Vec<RawSession> = sqlx::query_as(
            "SELECT id, title, provider, model, created_at, updated_at FROM sessions
             ORDER BY updated_at DESC, id DESC LIMIT ?1",
        )
        .bind(limit)
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("list sessions"))?;
        raws.into_iter().map(SessionRow::try_from).collect()
    }

    /// Deletes the sessions `ids` (missing ones are skipped) and, by cascade, their messages,
    /// in one transaction. Returns how many sessions were deleted.
    pub async fn delete_sessions(&self, ids: &[i64]) -> Result<u64, StoreError> {
        let deleted = self
            .delete_by_ids("DELETE FROM sessions WHERE id = ?1", ids, "delete sessions")
            .await?;
        tracing::debug!(requested = ids.len(), deleted, "sessions deleted");
        Ok(deleted)
    }

    /// Sets the title of session `id` (does not count as activity).
    pub async fn set_session_title(&self, id: i64, title: &str) -> Result<(), StoreError> {
        let done = sqlx::query("UPDATE sessions SET title = ?1 WHERE id = ?2")
            .bind(title)
            .bind(id)
            .execute(&self.pool)
            .await
            .map_err(StoreError::db("set a session title"))?;
        found(done.rows_affected())
    }

    /// Records that session `id` now uses `provider`/`model` (does not count as activity).
    #[cfg(any(test, feature = "test-support"))]
    pub async fn set_session_model(
        &self,
        id: i64,
        provider: &str,
        model: &str,
    ) -> Result<(), StoreError> {
        let done = sqlx::query("UPDATE sessions SET provider = ?1, model = ?2 WHERE id = ?3")
            .bind(provider)
            .bind(model)
            .bind(id)
            .execute(&self.pool)
            .await
            .map_err(StoreError::db("set a session model"))?;
        found(done.rows_affected())
    }

    /// Marks session `id` as the most recently active one.
    pub async fn touch_session(&self, id: i64) -> Result<(), StoreError> {
        let mut conn = self
            .pool
            .acquire()
            .await
            .map_err(StoreError::db("touch a session"))?;
        touch(&mut conn, id).await
    }
}

/// Bumps `updated_at` of session `id` past every other session's; `NotFound` if it is missing.
pub(super) async fn touch(conn: &mut SqliteConnection, id: i64) -> Result<(), StoreError> {
    let done = sqlx::query(
        "UPDATE sessions
         SET updated_at = MAX(?1, (SELECT COALESCE(MAX(updated_at), 0) + 1 FROM sessions))
         WHERE id = ?2",
    )
    .bind(now_millis())
    .bind(id)
    .execute(conn)
    .await
    .map_err(StoreError::db("touch a session"))?;
    found(done.rows_affected())
}

/// `NotFound` when an update matched no row.
fn found(rows: u64) -> Result<(), StoreError> {
    if rows == 0 {
        Err(StoreError::NotFound)
    } else {
        Ok(())
    }
}
