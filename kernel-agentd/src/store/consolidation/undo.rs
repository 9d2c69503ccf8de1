//! Undoing a consolidation run (everything put back as it was, in one transaction) and listing
//! the set-aside memories beside the others.

use super::super::memory::MemoryRow;
use super::super::{Store, StoreError, from_millis, now_millis};
use super::{SetAside, forget_derived};
use sqlx::SqliteConnection;

/// What a failure of an undo says it was doing.
const UNDO: &str = "undo a consolidation run";

/// A logged change as undo reads it: id, kind, memory, and the kept memory's text, date,
/// origin and importance before a merge.
type LoggedChange = (
    i64,
    String,
    i64,
    Option<String>,
    Option<i64>,
    Option<String>,
    Option<i64>,
);

impl Store {
    /// Undoes run `run_id` (0: the newest run not undone that changed something): its changes
    /// newest first, in one transaction. The run undone and the memories whose text came back
    /// (`(id, text)`: their index entries are the caller's to add); `None` when there is no such
    /// run or it was undone already.
    pub async fn undo_consolidation(
        &self,
        run_id: i64,
        indexed: bool,
    ) -> Result<Option<(i64, Vec<(i64, String)>)>, StoreError> {
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(UNDO))?;
        let Some(run) = run_to_undo(&mut tx, run_id)
            .await
            .map_err(StoreError::db(UNDO))?
        else {
            return Ok(None);
        };
        let changes: Vec<LoggedChange> = sqlx::query_as(
            "SELECT id, kind, memory_id, before_text, before_created_at, before_origin,
                        before_importance
                 FROM memory_changes WHERE run_id = ?1 AND undone_at IS NULL ORDER BY id DESC",
        )
        .bind(run)
        .fetch_all(&mut *tx)
        .await
        .map_err(StoreError::db(UNDO))?;
        let mut back = Vec::new();
        let now = now_millis();
        for change in changes {
            back.extend(undo_change(&mut tx, change, now, indexed).await?);
        }
        sqlx::query("UPDATE consolidation_runs SET undone_at = ?2 WHERE id = ?1")
            .bind(run)
            .bind(now)
            .execute(&mut *tx)
            .await
            .map_err(StoreError::db(UNDO))?;
        tx.commit().await.map_err(StoreError::db(UNDO))?;
        Ok(Some((run, back)))
    }

    /// Up to `limit` memories newest first, skipping the `offset` newest, the set-aside ones
    /// among them (each with why).
    pub async fn memories_page_with_set_aside(
        &self,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<(MemoryRow, Option<SetAside>)>, StoreError> {
        type Raw = (
            i64,
            String,
            i64,
            bool,
            Option<String>,
            Option<String>,
            Option<i64>,
        );
        let raws: Vec<Raw> = sqlx::query_as(
            "SELECT id, text, created_at, source = 'auto', origin, NULL, NULL FROM memories
             UNION ALL
             SELECT id, text, created_at, source = 'auto', origin, reason, by_id
             FROM memories_set_aside
             ORDER BY 1 DESC LIMIT ?1 OFFSET ?2",
        )
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .bind(i64::try_from(offset).unwrap_or(i64::MAX))
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("list a page of memories"))?;
        raws.into_iter()
            .map(|(id, text, created, auto, origin, reason, by)| {
                let row = MemoryRow {
                    id,
                    text,
                    created_at: from_millis(created, || format!("memory {id}"))?,
                    auto,
                    origin,
                };
                Ok((row, reason.map(|reason| SetAside { reason, by })))
            })
            .collect()
    }

    /// How many memories are set aside.
    pub async fn count_set_aside(&self) -> Result<u64, StoreError> {
        let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM memories_set_aside")
            .fetch_one(&self.pool)
            .await
            .map_err(StoreError::db("count set-aside memories"))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }
}

/// Run `run_id` (0: the newest) if it is not undone, changed something and is not an import's
/// (set-aside memories an import brought are undone in the database they were set aside in).
async fn run_to_undo(conn: &mut SqliteConnection, run_id: i64) -> Result<Option<i64>, sqlx::Error> {
    if run_id == 0 {
        sqlx::query_scalar(
            "SELECT id FROM consolidation_runs AS r WHERE undone_at IS NULL
             AND outcome != 'imported' AND EXISTS (SELECT 1 FROM memory_changes WHERE run_id = r.id)
             ORDER BY id DESC LIMIT 1",
        )
        .fetch_optional(conn)
        .await
    } else {
        sqlx::query_scalar(
            "SELECT id FROM consolidation_runs AS r WHERE id = ?1 AND undone_at IS NULL
             AND outcome != 'imported' AND EXISTS (SELECT 1 FROM memory_changes WHERE run_id = r.id)",
        )
        .bind(run_id)
        .fetch_optional(conn)
        .await
    }
}

/// Undoes one logged change (marked undone at `now`): the memories it set aside come back, and
/// a merge's kept memory gets its text, date, origin and importance back. The memories whose
/// text came back (`(id, text)`).
async fn undo_change(
    conn: &mut SqliteConnection,
    (change, kind, memory, text, created, origin, importance): LoggedChange,
    now: i64,
    indexed: bool,
) -> Result<Vec<(i64, String)>, StoreError> {
    let mut back: Vec<(i64, String)> = sqlx::query_as(
        "INSERT INTO memories (id, text, created_at, source, importance, refreshed_at,
                               origin)
         SELECT id, text, created_at, source, importance, refreshed_at, origin
         FROM memories_set_aside WHERE change_id = ?1
         RETURNING id, text",
    )
    .bind(change)
    .fetch_all(&mut *conn)
    .await
    .map_err(StoreError::db(UNDO))?;
    sqlx::query("DELETE FROM memories_set_aside WHERE change_id = ?1")
        .bind(change)
        .execute(&mut *conn)
        .await
        .map_err(StoreError::db(UNDO))?;
    if kind == "merge"
        && let (Some(text), Some(created)) = (text, created)
    {
        let done = sqlx::query(
            "UPDATE memories SET text = ?2, created_at = ?3, origin = ?4, importance = ?5
             WHERE id = ?1",
        )
        .bind(memory)
        .bind(&text)
        .bind(created)
        .bind(origin)
        .bind(importance)
        .execute(&mut *conn)
        .await
        .map_err(StoreError::db(UNDO))?;
        if done.rows_affected() > 0 {
            forget_derived(conn, memory, indexed).await?;
            back.push((memory, text));
        }
    }
    sqlx::query("UPDATE memory_changes SET undone_at = ?2 WHERE id = ?1")
        .bind(change)
        .bind(now)
        .execute(&mut *conn)
        .await
        .map_err(StoreError::db(UNDO))?;
    Ok(back)
}
