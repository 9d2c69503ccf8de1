//! The `schedules` table: reminders and scheduled tasks with their next fire time. Firing a
//! reminder queues its outbox item, firing a task stores its pending run (`store::task_runs`),
//! in the transaction that moves (or, for a one-shot, deletes) the schedule, so either is queued
//! once however the process stops.

use chrono::{DateTime, Utc};
use sqlx::FromRow;

use super::outbox::{NewItem, insert_item};
use super::task_runs::insert_task_run;
use super::{Store, StoreError, from_millis, now_millis};

/// A stored schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleRow {
    pub id: i64,
    /// `at` (one-shot) or `cron`.
    pub spec: String,
    /// The RFC 3339 due instant of a one-shot, or the cron expression.
    pub expr: String,
    /// `remind` or `task`.
    pub mode: String,
    pub message: String,
    pub next_fire: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
}

/// A schedule to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSchedule {
    pub spec: String,
    pub expr: String,
    pub mode: String,
    pub message: String,
    pub next_fire: DateTime<Utc>,
}

/// What a schedule leaves behind when it fires.
#[derive(Debug, Clone, Copy)]
pub enum Firing<'a> {
    /// A reminder's outbox item.
    Notice(&'a NewItem),
    /// A task's run, with the prompt its turn is given.
    Task(&'a str),
}

#[derive(FromRow)]
struct RawRow {
    id: i64,
    spec: String,
    expr: String,
    mode: String,
    message: String,
    next_fire: i64,
    created_at: i64,
}

impl TryFrom<RawRow> for ScheduleRow {
    type Error = StoreError;

    fn try_from(r: RawRow) -> Result<Self, StoreError> {
        let what = || format!("schedule {}", r.id);
        Ok(ScheduleRow {
            id: r.id,
            next_fire: from_millis(r.next_fire, what)?,
            created_at: from_millis(r.created_at, what)?,
            spec: r.spec,
            expr: r.expr,
            mode: r.mode,
            message: r.message,
        })
    }
}

impl Store {
    /// Stores `schedule`; returns it with its id.
    pub async fn add_schedule(&self, s: &NewSchedule) -> Result<ScheduleRow, StoreError> {
        let raw: RawRow = sqlx::query_as(
            "INSERT INTO schedules (spec, expr, mode, message, next_fire, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             RETURNING id, spec, expr, mode, message, next_fire, created_at",
        )
        .bind(&s.spec)
        .bind(&s.expr)
        .bind(&s.mode)
        .bind(&s.message)
        .bind(s.next_fire.timestamp_millis())
        .bind(now_millis())
        .fetch_one(&self.pool)
        .await
        .map_err(StoreError::db("add a schedule"))?;
        raw.try_into()
    }

    /// Every schedule, the next due first.
    pub async fn schedules(&self) -> Result<Vec<ScheduleRow>, StoreError> {
        let raws: Vec<RawRow> = sqlx::query_as(
            "SELECT id, spec, expr, mode, message, next_fire, created_at
             FROM schedules ORDER BY next_fire, id",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("list schedules"))?;
        raws.into_iter().map(ScheduleRow::try_from).collect()
    }

    /// Deletes the schedules `ids` and their pending task runs (`ON DELETE CASCADE`); returns
    /// how many schedules went.
    pub async fn delete_schedules(&self, ids: &[i64]) -> Result<u64, StoreError> {
        self.delete_by_ids(
            "DELETE FROM schedules WHERE id = ?1",
            ids,
            "delete schedules",
        )
        .await
    }

    /// Marks schedule `id` as fired at `due`: it moves to `next` (deleted when `None`), and what
    /// `firing` leaves is stored in the same transaction: the reminder's outbox item, or the
    /// task's pending run (tied to the schedule unless it was a one-shot, now deleted). Returns
    /// the item's `seq` or the run's id, or `None` when the schedule is gone or was already
    /// moved past `due` (nothing is stored then).
    pub async fn fire_schedule(
        &self,
        id: i64,
        due: DateTime<Utc>,
        next: Option<DateTime<Utc>>,
        firing: Firing<'_>,
    ) -> Result<Option<i64>, StoreError> {
        let op = "fire a schedule";
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(op))?;
        let done = match next {
            Some(next) => {
                sqlx::query("UPDATE schedules SET next_fire = ?3 WHERE id = ?1 AND next_fire = ?2")
                    .bind(id)
                    .bind(due.timestamp_millis())
                    .bind(next.timestamp_millis())
                    .execute(&mut *tx)
                    .await
            }
            None => {
                sqlx::query("DELETE FROM schedules WHERE id = ?1 AND next_fire = ?2")
                    .bind(id)
                    .bind(due.timestamp_millis())
                    .execute(&mut *tx)
                    .await
            }
        }
        .map_err(StoreError::db(op))?;
        if done.rows_affected() == 0 {
            return Ok(None);
        }
        let stored = match firing {
            Firing::Notice(item) => insert_item(&mut tx, item, op).await?,
            Firing::Task(prompt) => {
                let schedule = next.is_some().then_some(id);
                insert_task_run(&mut tx, schedule, prompt, op).await?
            }
        };
        tx.commit().await.map_err(StoreError::db(op))?;
        Ok(Some(stored))
    }
}
