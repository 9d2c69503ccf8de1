//! The `task_runs` table: runs of scheduled tasks that have fired and whose turn has not yet
//! ended with an outcome for the owner, oldest first. A run is stored by
//! [`Store::fire_schedule`] in the transaction that moves its schedule on, and deleted with its
//! schedule (`ON DELETE CASCADE`).

use chrono::{DateTime, Utc};
use sqlx::SqliteConnection;

use super::{Store, StoreError, from_millis, now_millis};

/// A stored run: id, schedule, prompt, created, model, session.
type RunRow = (i64, Option<i64>, String, i64, Option<String>, Option<i64>);

/// A pending run of a scheduled task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskRun {
    pub id: i64,
    /// Its schedule; `None` for a one-shot's (deleted as it fired).
    pub schedule_id: Option<i64>,
    /// The prompt the turn is given (its due time in it).
    pub prompt: String,
    /// The `provider/model` its turn runs on (`None`: the current one).
    pub model: Option<String>,
    /// The session its schedule was set in (a topic's runs there and answers in the topic).
    pub session_id: Option<i64>,
    pub created_at: DateTime<Utc>,
}

impl Store {
    /// Every pending run, oldest first.
    pub async fn task_runs(&self) -> Result<Vec<TaskRun>, StoreError> {
        let rows: Vec<RunRow> = sqlx::query_as(
            "SELECT id, schedule_id, prompt, created_at, model, session_id FROM task_runs ORDER BY id",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("read the task runs"))?;
        rows.into_iter()
            .map(|(id, schedule_id, prompt, created_at, model, session_id)| {
                Ok(TaskRun {
                    id,
                    schedule_id,
                    prompt,
                    model,
                    session_id,
                    created_at: from_millis(created_at, || format!("task run {id}"))?,
                })
            })
            .collect()
    }

    /// The oldest pending run, if any.
    pub async fn next_task_run(&self) -> Result<Option<TaskRun>, StoreError> {
        Ok(self.task_runs().await?.into_iter().next())
    }

    /// Whether the run `id` is still pending (not deleted with its schedule).
    pub async fn task_run_pending(&self, id: i64) -> Result<bool, StoreError> {
        let found: Option<i64> = sqlx::query_scalar("SELECT id FROM task_runs WHERE id = ?1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .map_err(StoreError::db("read a task run"))?;
        Ok(found.is_some())
    }

    /// Deletes the run `id` (its turn has ended); whether it was still there.
    pub async fn delete_task_run(&self, id: i64) -> Result<bool, StoreError> {
        let done = sqlx::query("DELETE FROM task_runs WHERE id = ?1")
            .bind(id)
            .execute(&self.pool)
            .await
            .map_err(StoreError::db("delete a task run"))?;
        Ok(done.rows_affected() == 1)
    }
}

/// Stores a pending run of schedule `schedule_id` (`None`: a one-shot's) with its prompt,
/// model and session on `conn` (within the caller's transaction); its id.
pub(super) async fn insert_task_run(
    conn: &mut SqliteConnection,
    schedule_id: Option<i64>,
    (prompt, model): (&str, Option<&str>),
    session_id: Option<i64>,
    op: &'static str,
) -> Result<i64, StoreError> {
    sqlx::query_scalar(
        "INSERT INTO task_runs (schedule_id, prompt, created_at, model, session_id)
         VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id",
    )
    .bind(schedule_id)
    .bind(prompt)
    .bind(now_millis())
    .bind(model)
    .bind(session_id)
    .fetch_one(conn)
    .await
    .map_err(StoreError::db(op))
}
