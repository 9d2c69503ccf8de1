//! The `watch_runs` table: each watch's recent runs — when, how it ended, its summary, tokens
//! and cost — for the next run's context, `/tasks` and the spend per watch. A run's row, its
//! outbox item (when it told the owner) and the deletion of its pending task run are one
//! transaction ([`Store::finish_watch_run`]), so a run tells the owner at most once.

use chrono::{DateTime, Utc};
use sqlx::FromRow;

use super::outbox::{NewItem, insert_item};
use super::{Store, StoreError, from_millis, now_millis};

/// Runs kept whatever their age (per watch).
const KEEP_RECENT: i64 = 10;
/// Notifying runs kept whatever their age (per watch).
const KEEP_NOTIFIED: i64 = 5;
/// Older runs beyond those are deleted after this long (the spend of today and yesterday stays).
const KEEP_FOR: chrono::TimeDelta = chrono::TimeDelta::hours(48);

/// A stored run of a watch.
#[derive(Debug, Clone, PartialEq)]
pub struct WatchRun {
    pub id: i64,
    pub schedule_id: i64,
    pub ran_at: DateTime<Utc>,
    /// A `kernel_proto::words::WatchOutcome` word.
    pub outcome: String,
    /// What it told the owner, or why it said nothing.
    pub summary: String,
    pub tokens: u64,
    /// USD; `None` when the model has no price.
    pub cost_usd: Option<f64>,
}

/// A run's end, to store.
#[derive(Debug, Clone, PartialEq)]
pub struct NewWatchRun<'a> {
    pub outcome: &'a str,
    pub summary: &'a str,
    pub tokens: u64,
    pub cost_usd: Option<f64>,
}

/// A watch's runs and cost over a period.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WatchSpend {
    pub runs: u32,
    /// USD over the runs with a price; `None` when none had one.
    pub cost_usd: Option<f64>,
}

#[derive(FromRow)]
struct RawRun {
    id: i64,
    schedule_id: i64,
    ran_at: i64,
    outcome: String,
    summary: String,
    tokens: i64,
    cost_usd: Option<f64>,
}

impl TryFrom<RawRun> for WatchRun {
    type Error = StoreError;

    fn try_from(r: RawRun) -> Result<Self, StoreError> {
        Ok(WatchRun {
            ran_at: from_millis(r.ran_at, || format!("watch run {}", r.id))?,
            id: r.id,
            schedule_id: r.schedule_id,
            outcome: r.outcome,
            summary: r.summary,
            tokens: u64::try_from(r.tokens).unwrap_or(0),
            cost_usd: r.cost_usd,
        })
    }
}

impl Store {
    /// The last `limit` runs of watch `schedule_id` (only those that told the owner when
    /// `notified_only`), newest first.
    pub async fn watch_runs(
        &self,
        schedule_id: i64,
        limit: u32,
        notified_only: bool,
    ) -> Result<Vec<WatchRun>, StoreError> {
        let raws: Vec<RawRun> = sqlx::query_as(
            "SELECT id, schedule_id, ran_at, outcome, summary, tokens, cost_usd FROM watch_runs
             WHERE schedule_id = ?1 AND (NOT ?3 OR outcome = 'notified')
             ORDER BY id DESC LIMIT ?2",
        )
        .bind(schedule_id)
        .bind(i64::from(limit))
        .bind(notified_only)
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("read a watch's runs"))?;
        raws.into_iter().map(WatchRun::try_from).collect()
    }

    /// Runs and cost per watch since `since`, by schedule id.
    pub async fn watch_spend_since(
        &self,
        since: DateTime<Utc>,
    ) -> Result<Vec<(i64, WatchSpend)>, StoreError> {
        let rows: Vec<(i64, i64, Option<f64>)> = sqlx::query_as(
            "SELECT schedule_id, COUNT(*), SUM(cost_usd) FROM watch_runs
             WHERE ran_at >= ?1 GROUP BY schedule_id",
        )
        .bind(since.timestamp_millis())
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("sum the watches' spend"))?;
        Ok(rows
            .into_iter()
            .map(|(id, runs, cost_usd)| {
                let runs = u32::try_from(runs).unwrap_or(u32::MAX);
                (id, WatchSpend { runs, cost_usd })
            })
            .collect())
    }

    /// Stores the end of a run of watch `schedule_id`: its row, `item` for the owner (if it
    /// told them anything) and the deletion of its pending task run `task_run`, in one
    /// transaction; then prunes the watch's old runs. Returns the item's `seq`, or `None` when
    /// there is none or the task run was already gone (deleted with its schedule: nothing is
    /// stored then).
    pub async fn finish_watch_run(
        &self,
        schedule_id: i64,
        run: &NewWatchRun<'_>,
        item: Option<&NewItem>,
        task_run: i64,
    ) -> Result<Option<i64>, StoreError> {
        let op = "store a watch run";
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(op))?;
        let taken = sqlx::query("DELETE FROM task_runs WHERE id = ?1")
            .bind(task_run)
            .execute(&mut *tx)
            .await
            .map_err(StoreError::db(op))?;
        if taken.rows_affected() == 0 {
            return Ok(None);
        }
        let now = now_millis();
        sqlx::query(
            "INSERT INTO watch_runs (schedule_id, ran_at, outcome, summary, tokens, cost_usd)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .bind(schedule_id)
        .bind(now)
        .bind(run.outcome)
        .bind(run.summary)
        .bind(i64::try_from(run.tokens).unwrap_or(i64::MAX))
        .bind(run.cost_usd)
        .execute(&mut *tx)
        .await
        .map_err(StoreError::db(op))?;
        let seq = match item {
            Some(item) => Some(insert_item(&mut tx, item, op).await?),
            None => None,
        };
        sqlx::query(
            "DELETE FROM watch_runs WHERE schedule_id = ?1 AND ran_at < ?2
             AND id NOT IN (SELECT id FROM watch_runs WHERE schedule_id = ?1
                            ORDER BY id DESC LIMIT ?3)
             AND id NOT IN (SELECT id FROM watch_runs WHERE schedule_id = ?1
                            AND outcome = 'notified' ORDER BY id DESC LIMIT ?4)",
        )
        .bind(schedule_id)
        .bind(now - KEEP_FOR.num_milliseconds())
        .bind(KEEP_RECENT)
        .bind(KEEP_NOTIFIED)
        .execute(&mut *tx)
        .await
        .map_err(StoreError::db(op))?;
        tx.commit().await.map_err(StoreError::db(op))?;
        Ok(seq)
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeDelta, Utc};

    use super::NewWatchRun;
    use crate::store::Store;
    use crate::store::outbox::{ItemBody, NewItem};
    use crate::store::schedules::{Firing, NewSchedule};

    /// A watch that has fired once: its id and its pending run's id.
    async fn fired_watch(store: &Store) -> (i64, i64) {
        let due = Utc::now() - TimeDelta::minutes(1);
        let row = store
            .add_schedule(&NewSchedule {
                spec: "cron".into(),
                expr: "*/5 * * * *".into(),
                mode: "watch".into(),
                message: "release 2.0?".into(),
                next_fire: due,
                model: None,
            })
            .await
            .unwrap();
        let run = store
            .fire_schedule(
                row.id,
                due,
                Some(due + TimeDelta::minutes(5)),
                Firing::Task("release 2.0?", None),
            )
            .await
            .unwrap()
            .unwrap();
        (row.id, run)
    }

    #[tokio::test]
    async fn a_run_its_item_and_its_task_run_go_together_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("kernel.db")).await.unwrap();
        let (watch, run) = fired_watch(&store).await;
        let item = NewItem {
            turn_id: String::new(),
            body: ItemBody::WatchNotice {
                text: "2.0 is out".into(),
                watch,
            },
            reply_to: None,
            placeholder: None,
            thread_id: None,
            outside: false,
        };
        let end = NewWatchRun {
            outcome: "notified",
            summary: "2.0 is out",
            tokens: 120,
            cost_usd: Some(0.01),
        };
        let seq = store
            .finish_watch_run(watch, &end, Some(&item), run)
            .await
            .unwrap();
        assert!(seq.is_some());
        assert!(store.task_runs().await.unwrap().is_empty());
        // The same run again (a replay after a crash) stores nothing.
        let again = store
            .finish_watch_run(watch, &end, Some(&item), run)
            .await
            .unwrap();
        assert_eq!(again, None);
        let runs = store.watch_runs(watch, 5, false).await.unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].summary, "2.0 is out");
        assert_eq!(store.watch_runs(watch, 5, true).await.unwrap().len(), 1);
        let pending = store.pending_outbox(0).await.unwrap();
        assert_eq!(pending.len(), 1);
        assert_eq!((Some(pending[0].seq), &pending[0].body), (seq, &item.body));
        let spend = store
            .watch_spend_since(Utc::now() - TimeDelta::hours(1))
            .await
            .unwrap();
        assert_eq!(spend.len(), 1);
        assert_eq!((spend[0].0, spend[0].1.runs), (watch, 1));
        // Deleting the watch deletes its runs.
        store.delete_schedules(&[watch]).await.unwrap();
        assert!(store.watch_runs(watch, 5, false).await.unwrap().is_empty());
    }
}
