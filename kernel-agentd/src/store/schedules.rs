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
    /// The `provider/model` a task runs on (`None`: the current one).
    pub model: Option<String>,
    /// It does not fire until resumed.
    pub paused: bool,
}

/// A schedule to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSchedule {
    pub spec: String,
    pub expr: String,
    pub mode: String,
    pub message: String,
    pub next_fire: DateTime<Utc>,
    /// The `provider/model` a task runs on (`None`: the current one).
    pub model: Option<String>,
}

/// What a schedule leaves behind when it fires.
#[derive(Debug, Clone, Copy)]
pub enum Firing<'a> {
    /// A reminder's outbox item.
    Notice(&'a NewItem),
    /// A task's run, with the prompt its turn is given and the `provider/model` it runs on.
    Task(&'a str, Option<&'a str>),
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
    model: Option<String>,
    paused: bool,
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
            model: r.model,
            paused: r.paused,
        })
    }
}

impl Store {
    /// Stores `schedule`; returns it with its id.
    pub async fn add_schedule(&self, s: &NewSchedule) -> Result<ScheduleRow, StoreError> {
        self.add_schedule_in(s, None).await
    }

    /// Stores `schedule`, set in session `session_id` (it reports in that session's Telegram
    /// topic; `None`: the main chat); returns it with its id.
    pub async fn add_schedule_in(
        &self,
        s: &NewSchedule,
        session_id: Option<i64>,
    ) -> Result<ScheduleRow, StoreError> {
        let raw: RawRow = sqlx::query_as(
            "INSERT INTO schedules (spec, expr, mode, message, next_fire, created_at, model, session_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             RETURNING id, spec, expr, mode, message, next_fire, created_at, model, paused",
        )
        .bind(&s.spec)
        .bind(&s.expr)
        .bind(&s.mode)
        .bind(&s.message)
        .bind(s.next_fire.timestamp_millis())
        .bind(now_millis())
        .bind(&s.model)
        .bind(session_id)
        .fetch_one(&self.pool)
        .await
        .map_err(StoreError::db("add a schedule"))?;
        raw.try_into()
    }

    /// The Telegram topic schedule `id` reports in: the one its session is bound to, if any.
    pub async fn schedule_topic(&self, id: i64) -> Result<Option<i64>, StoreError> {
        sqlx::query_scalar(
            "SELECT t.thread_id FROM schedules s JOIN topic_sessions t ON t.session_id = s.session_id
             WHERE s.id = ?1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await
        .map_err(StoreError::db("read a schedule's topic"))
    }

    /// Every schedule, the next due first.
    pub async fn schedules(&self) -> Result<Vec<ScheduleRow>, StoreError> {
        let raws: Vec<RawRow> = sqlx::query_as(
            "SELECT id, spec, expr, mode, message, next_fire, created_at, model, paused
             FROM schedules ORDER BY next_fire, id",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("list schedules"))?;
        raws.into_iter().map(ScheduleRow::try_from).collect()
    }

    /// The schedule `id`, if it exists.
    pub async fn schedule(&self, id: i64) -> Result<Option<ScheduleRow>, StoreError> {
        let raw: Option<RawRow> = sqlx::query_as(
            "SELECT id, spec, expr, mode, message, next_fire, created_at, model, paused
             FROM schedules WHERE id = ?1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await
        .map_err(StoreError::db("read a schedule"))?;
        raw.map(ScheduleRow::try_from).transpose()
    }

    /// Pauses schedule `id`, or resumes it to fire next at `next_fire` (`None`: pause);
    /// whether it exists.
    pub async fn set_schedule_paused(
        &self,
        id: i64,
        resume_at: Option<DateTime<Utc>>,
    ) -> Result<bool, StoreError> {
        let done = match resume_at {
            None => {
                sqlx::query("UPDATE schedules SET paused = 1 WHERE id = ?1")
                    .bind(id)
                    .execute(&self.pool)
                    .await
            }
            Some(next) => {
                sqlx::query("UPDATE schedules SET paused = 0, next_fire = ?2 WHERE id = ?1")
                    .bind(id)
                    .bind(next.timestamp_millis())
                    .execute(&self.pool)
                    .await
            }
        }
        .map_err(StoreError::db("pause or resume a schedule"))?;
        Ok(done.rows_affected() == 1)
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

    /// Marks schedule `id` (not paused) as fired at `due`: it moves to `next` (deleted when `None`), and what
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
        // Read before a one-shot's row goes: its run keeps the session it was set in.
        let session_id: Option<i64> =
            sqlx::query_scalar("SELECT session_id FROM schedules WHERE id = ?1")
                .bind(id)
                .fetch_optional(&mut *tx)
                .await
                .map_err(StoreError::db(op))?
                .flatten();
        let done = match next {
            Some(next) => {
                sqlx::query(
                    "UPDATE schedules SET next_fire = ?3 WHERE id = ?1 AND next_fire = ?2 AND NOT paused",
                )
                    .bind(id)
                    .bind(due.timestamp_millis())
                    .bind(next.timestamp_millis())
                    .execute(&mut *tx)
                    .await
            }
            None => {
                sqlx::query("DELETE FROM schedules WHERE id = ?1 AND next_fire = ?2 AND NOT paused")
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
            Firing::Task(prompt, model) => {
                let schedule = next.is_some().then_some(id);
                insert_task_run(&mut tx, schedule, (prompt, model), session_id, op).await?
            }
        };
        tx.commit().await.map_err(StoreError::db(op))?;
        Ok(Some(stored))
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeDelta, Utc};

    use super::{Firing, NewSchedule, ScheduleRow};
    use crate::store::Store;

    async fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("kernel.db")).await.unwrap();
        (dir, store)
    }

    /// A task schedule due a minute ago: a one-shot (`at`) or a recurring one (`cron`).
    async fn task(store: &Store, spec: &str, message: &str) -> ScheduleRow {
        let due = Utc::now() - TimeDelta::minutes(1);
        store
            .add_schedule(&NewSchedule {
                spec: spec.into(),
                expr: if spec == "at" {
                    due.to_rfc3339()
                } else {
                    "0 9 * * *".into()
                },
                mode: "task".into(),
                message: message.into(),
                next_fire: due,
                model: (spec == "cron").then(|| "spare/cheap".to_owned()),
            })
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn firing_a_task_moves_its_schedule_and_stores_its_run_once() {
        let (_dir, store) = store().await;
        let row = task(&store, "cron", "report").await;
        let next = row.next_fire + TimeDelta::days(1);
        let fired = store
            .fire_schedule(
                row.id,
                row.next_fire,
                Some(next),
                Firing::Task("[task] report", Some("spare/cheap")),
            )
            .await
            .unwrap();
        let runs = store.task_runs().await.unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(fired, Some(runs[0].id));
        assert_eq!(runs[0].schedule_id, Some(row.id));
        assert_eq!(runs[0].prompt, "[task] report");
        assert_eq!(runs[0].model.as_deref(), Some("spare/cheap"));
        assert_eq!(row.model.as_deref(), Some("spare/cheap"));
        assert_eq!(store.schedules().await.unwrap()[0].next_fire, next);

        // Compare-and-swap on the due time: the same occurrence fires once.
        let again = store
            .fire_schedule(
                row.id,
                row.next_fire,
                Some(next),
                Firing::Task("[task] report", Some("spare/cheap")),
            )
            .await
            .unwrap();
        assert_eq!(again, None);
        assert_eq!(store.task_runs().await.unwrap().len(), 1);
    }

    #[tokio::test]
    async fn a_one_shot_task_is_deleted_as_it_fires_and_its_run_stays() {
        let (_dir, store) = store().await;
        let row = task(&store, "at", "call mum").await;
        let fired = store
            .fire_schedule(
                row.id,
                row.next_fire,
                None,
                Firing::Task("[task] call mum", None),
            )
            .await
            .unwrap();
        assert!(fired.is_some());
        assert!(store.schedules().await.unwrap().is_empty());
        let runs = store.task_runs().await.unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].schedule_id, None);
        assert_eq!(store.next_task_run().await.unwrap(), Some(runs[0].clone()));
        assert!(store.task_run_pending(runs[0].id).await.unwrap());
        assert!(store.delete_task_run(runs[0].id).await.unwrap());
        assert!(!store.task_run_pending(runs[0].id).await.unwrap());
        assert!(!store.delete_task_run(runs[0].id).await.unwrap());
        assert_eq!(store.next_task_run().await.unwrap(), None);
    }

    #[tokio::test]
    async fn the_run_is_stored_in_the_transaction_that_moves_the_schedule() {
        let (_dir, store) = store().await;
        let row = task(&store, "cron", "report").await;
        // The run cannot be stored: the schedule must not move either.
        sqlx::query("DROP TABLE task_runs")
            .execute(&store.pool)
            .await
            .unwrap();
        let next = row.next_fire + TimeDelta::days(1);
        let fired = store
            .fire_schedule(
                row.id,
                row.next_fire,
                Some(next),
                Firing::Task("[task] report", Some("spare/cheap")),
            )
            .await;
        assert!(fired.is_err(), "{fired:?}");
        assert_eq!(store.schedules().await.unwrap(), vec![row]);
    }

    #[tokio::test]
    async fn deleting_a_schedule_drops_its_pending_runs_and_no_other() {
        let (_dir, store) = store().await;
        let kept = task(&store, "cron", "kept").await;
        let dropped = task(&store, "cron", "dropped").await;
        let once = task(&store, "at", "once").await;
        for (row, next) in [
            (&kept, Some(kept.next_fire + TimeDelta::days(1))),
            (&dropped, Some(dropped.next_fire + TimeDelta::days(1))),
            (&once, None),
        ] {
            let prompt = format!("[task] {}", row.message);
            store
                .fire_schedule(row.id, row.next_fire, next, Firing::Task(&prompt, None))
                .await
                .unwrap()
                .unwrap();
        }
        assert_eq!(store.task_runs().await.unwrap().len(), 3);
        assert_eq!(store.delete_schedules(&[dropped.id]).await.unwrap(), 1);
        let prompts: Vec<String> = store
            .task_runs()
            .await
            .unwrap()
            .into_iter()
            .map(|r| r.prompt)
            .collect();
        assert_eq!(prompts, ["[task] kept", "[task] once"]);
    }
}
