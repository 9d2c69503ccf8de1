//! The `task_runs` table: runs of scheduled tasks that have fired and whose turn has not yet
//! ended with an outcome for the owner, oldest first. A run is stored by
//! [`Store::fire_schedule`] in the transaction that moves its schedule on, and deleted with its
//! schedule (`ON DELETE CASCADE`).

use chrono::{DateTime, Utc};
use sqlx::SqliteConnection;

use super::{Store, StoreError, from_millis, now_millis};

/// A pending run of a scheduled task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskRun {
    pub id: i64,
    /// Its schedule; `None` for a one-shot's (deleted as it fired).
    pub schedule_id: Option<i64>,
    /// The prompt the turn is given (its due time in it).
    pub prompt: String,
    pub created_at: DateTime<Utc>,
}

impl Store {
    /// Every pending run, oldest first.
    pub async fn task_runs(&self) -> Result<Vec<TaskRun>, StoreError> {
        let rows: Vec<(i64, Option<i64>, String, i64)> =
            sqlx::query_as("SELECT id, schedule_id, prompt, created_at FROM task_runs ORDER BY id")
                .fetch_all(&self.pool)
                .await
                .map_err(StoreError::db("read the task runs"))?;
        rows.into_iter()
            .map(|(id, schedule_id, prompt, created_at)| {
                Ok(TaskRun {
                    id,
                    schedule_id,
                    prompt,
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

/// Stores a pending run of schedule `schedule_id` (`None`: a one-shot's) on `conn` (within the
/// caller's transaction); its id.
pub(super) async fn insert_task_run(
    conn: &mut SqliteConnection,
    schedule_id: Option<i64>,
    prompt: &str,
    op: &'static str,
) -> Result<i64, StoreError> {
    sqlx::query_scalar(
        "INSERT INTO task_runs (schedule_id, prompt, created_at) VALUES (?1, ?2, ?3)
         RETURNING id",
    )
    .bind(schedule_id)
    .bind(prompt)
    .bind(now_millis())
    .fetch_one(conn)
    .await
    .map_err(StoreError::db(op))
}

#[cfg(test)]
mod tests {
    use chrono::{TimeDelta, Utc};

    use super::Store;
    use crate::store::schedules::{Firing, NewSchedule, ScheduleRow};

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
                Firing::Task("[task] report"),
            )
            .await
            .unwrap();
        let runs = store.task_runs().await.unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(fired, Some(runs[0].id));
        assert_eq!(runs[0].schedule_id, Some(row.id));
        assert_eq!(runs[0].prompt, "[task] report");
        assert_eq!(store.schedules().await.unwrap()[0].next_fire, next);

        // Compare-and-swap on the due time: the same occurrence fires once.
        let again = store
            .fire_schedule(
                row.id,
                row.next_fire,
                Some(next),
                Firing::Task("[task] report"),
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
            .fire_schedule(row.id, row.next_fire, None, Firing::Task("[task] call mum"))
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
                Firing::Task("[task] report"),
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
                .fire_schedule(row.id, row.next_fire, next, Firing::Task(&prompt))
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
