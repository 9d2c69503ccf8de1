//! The `jobs` table: background delegations, running and recent. A job's end (or its
//! interruption) and the outbox notice telling the owner about it are written in one
//! transaction, so the owner is told once however the process stops.

use chrono::{DateTime, Utc};
use sqlx::FromRow;

use super::outbox::{NewItem, insert_item};
use super::{Store, StoreError, from_millis, now_millis};

/// A stored job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobRow {
    pub id: i64,
    pub cli: String,
    pub task: String,
    pub cwd: String,
    /// `running`, `done`, `failed`, `cancelled` or `interrupted`.
    pub status: String,
    pub exit_code: Option<i32>,
    pub output_path: String,
    pub output: String,
    pub started_at: DateTime<Utc>,
    pub ended_at: Option<DateTime<Utc>>,
}

/// How a job ended, to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobEnd {
    pub status: String,
    pub exit_code: Option<i32>,
    pub output_path: String,
    pub output: String,
}

#[derive(FromRow)]
struct RawRow {
    id: i64,
    cli: String,
    task: String,
    cwd: String,
    status: String,
    exit_code: Option<i64>,
    output_path: String,
    output: String,
    started_at: i64,
    ended_at: Option<i64>,
}

impl TryFrom<RawRow> for JobRow {
    type Error = StoreError;

    fn try_from(r: RawRow) -> Result<Self, StoreError> {
        let what = || format!("job {}", r.id);
        Ok(JobRow {
            id: r.id,
            started_at: from_millis(r.started_at, what)?,
            ended_at: r.ended_at.map(|t| from_millis(t, what)).transpose()?,
            exit_code: r.exit_code.and_then(|c| i32::try_from(c).ok()),
            cli: r.cli,
            task: r.task,
            cwd: r.cwd,
            status: r.status,
            output_path: r.output_path,
            output: r.output,
        })
    }
}

impl Store {
    /// Stores a new running job; returns it with its id.
    pub async fn add_job(&self, cli: &str, task: &str, cwd: &str) -> Result<JobRow, StoreError> {
        let raw: RawRow = sqlx::query_as(
            "INSERT INTO jobs (cli, task, cwd, status, started_at)
             VALUES (?1, ?2, ?3, 'running', ?4)
             RETURNING id, cli, task, cwd, status, exit_code, output_path, output, started_at, ended_at",
        )
        .bind(cli)
        .bind(task)
        .bind(cwd)
        .bind(now_millis())
        .fetch_one(&self.pool)
        .await
        .map_err(StoreError::db("add a job"))?;
        raw.try_into()
    }

    /// Records that job `id` was started by a turn of session `session_id`.
    pub async fn set_job_session(&self, id: i64, session_id: i64) -> Result<(), StoreError> {
        sqlx::query("UPDATE jobs SET session_id = ?2 WHERE id = ?1")
            .bind(id)
            .bind(session_id)
            .execute(&self.pool)
            .await
            .map_err(StoreError::db("record a job's session"))?;
        Ok(())
    }

    /// The session job `id` was started from, if known.
    pub async fn job_session(&self, id: i64) -> Result<Option<i64>, StoreError> {
        let found: Option<Option<i64>> =
            sqlx::query_scalar("SELECT session_id FROM jobs WHERE id = ?1")
                .bind(id)
                .fetch_optional(&self.pool)
                .await
                .map_err(StoreError::db("read a job's session"))?;
        Ok(found.flatten())
    }

    /// The running jobs (oldest first), then the `recent` latest ended ones (newest first).
    pub async fn jobs(&self, recent: u32) -> Result<Vec<JobRow>, StoreError> {
        let raws: Vec<RawRow> = sqlx::query_as(
            "SELECT id, cli, task, cwd, status, exit_code, output_path, output, started_at, ended_at FROM (
                 SELECT *, 0 AS k, started_at AS o FROM jobs WHERE status = 'running'
                 UNION ALL
                 SELECT * FROM (SELECT *, 1 AS k, -id AS o FROM jobs
                                WHERE status != 'running' ORDER BY id DESC LIMIT ?1)
             ) ORDER BY k, o, id",
        )
        .bind(recent)
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("list jobs"))?;
        raws.into_iter().map(JobRow::try_from).collect()
    }

    /// Ends running job `id` with `end`, queueing `item` in the same transaction. Returns the
    /// item's `seq` (0 without an item), or `None` when the job was no longer running.
    pub async fn end_job(
        &self,
        id: i64,
        end: &JobEnd,
        item: Option<&NewItem>,
    ) -> Result<Option<i64>, StoreError> {
        let op = "end a job";
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(op))?;
        let done = sqlx::query(
            "UPDATE jobs SET status = ?2, exit_code = ?3, output_path = ?4, output = ?5,
             ended_at = ?6 WHERE id = ?1 AND status = 'running'",
        )
        .bind(id)
        .bind(&end.status)
        .bind(end.exit_code)
        .bind(&end.output_path)
        .bind(&end.output)
        .bind(now_millis())
        .execute(&mut *tx)
        .await
        .map_err(StoreError::db(op))?;
        if done.rows_affected() == 0 {
            return Ok(None);
        }
        let seq = match item {
            Some(item) => insert_item(&mut tx, item, op).await?,
            None => 0,
        };
        tx.commit().await.map_err(StoreError::db(op))?;
        Ok(Some(seq))
    }

    /// Marks every running job `interrupted` (left running by an agentd that stopped), each
    /// with the item `notice` makes for it and the Telegram topic of the session it was started
    /// from (if that session lives in one), in one transaction; the items and their `seq`s.
    pub async fn interrupt_jobs(
        &self,
        notice: impl Fn(&JobRow, Option<i64>) -> NewItem,
    ) -> Result<Vec<(i64, NewItem)>, StoreError> {
        let op = "interrupt jobs";
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(op))?;
        let raws: Vec<RawRow> = sqlx::query_as(
            "UPDATE jobs SET status = 'interrupted', ended_at = ?1 WHERE status = 'running'
             RETURNING id, cli, task, cwd, status, exit_code, output_path, output, started_at, ended_at",
        )
        .bind(now_millis())
        .fetch_all(&mut *tx)
        .await
        .map_err(StoreError::db(op))?;
        let mut rows: Vec<JobRow> = raws
            .into_iter()
            .map(JobRow::try_from)
            .collect::<Result<_, _>>()?;
        rows.sort_by_key(|r| r.id);
        let mut queued = Vec::new();
        for row in &rows {
            let thread: Option<i64> = sqlx::query_scalar(
                "SELECT t.thread_id FROM jobs j JOIN topic_sessions t ON t.session_id = j.session_id
                 WHERE j.id = ?1",
            )
            .bind(row.id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(StoreError::db(op))?;
            let item = notice(row, thread);
            let seq = insert_item(&mut tx, &item, op).await?;
            queued.push((seq, item));
        }
        tx.commit().await.map_err(StoreError::db(op))?;
        Ok(queued)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::outbox::ItemBody;

    fn end(status: &str) -> JobEnd {
        JobEnd {
            status: status.into(),
            exit_code: Some(0),
            output_path: "/out.txt".into(),
            output: "fine".into(),
        }
    }

    fn notice(job: &JobRow, thread_id: Option<i64>) -> NewItem {
        NewItem {
            turn_id: format!("job-{}", job.id),
            body: ItemBody::Notice {
                text: format!("job {} interrupted", job.id),
            },
            reply_to: None,
            placeholder: None,
            thread_id,
            outside: true,
        }
    }

    #[tokio::test]
    async fn running_jobs_list_first_and_end_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = &Store::open(&dir.path().join("kernel.db")).await.unwrap();
        let a = store.add_job("claude_code", "first", "/w").await.unwrap();
        let b = store.add_job("codex", "second", "/w").await.unwrap();
        let c = store.add_job("claude_code", "third", "/w").await.unwrap();
        assert_eq!(a.status, "running");
        assert_eq!(
            store.end_job(a.id, &end("done"), None).await.unwrap(),
            Some(0)
        );
        assert_eq!(
            store.end_job(a.id, &end("failed"), None).await.unwrap(),
            None
        );
        assert_eq!(
            store.end_job(c.id, &end("failed"), None).await.unwrap(),
            Some(0)
        );
        let ids: Vec<i64> = store.jobs(10).await.unwrap().iter().map(|j| j.id).collect();
        assert_eq!(
            ids,
            [b.id, c.id, a.id],
            "running first, then the newest ended"
        );
        let ids: Vec<i64> = store.jobs(1).await.unwrap().iter().map(|j| j.id).collect();
        assert_eq!(ids, [b.id, c.id]);
        let ended = &store.jobs(10).await.unwrap()[2];
        assert_eq!(
            (
                ended.status.as_str(),
                ended.exit_code,
                ended.output.as_str()
            ),
            ("done", Some(0), "fine")
        );
        assert!(ended.ended_at.is_some());
    }

    #[tokio::test]
    async fn interrupting_marks_running_jobs_and_queues_a_notice_each() {
        let dir = tempfile::tempdir().unwrap();
        let store = &Store::open(&dir.path().join("kernel.db")).await.unwrap();
        let a = store.add_job("claude_code", "first", "/w").await.unwrap();
        let b = store.add_job("claude_code", "second", "/w").await.unwrap();
        store.end_job(a.id, &end("done"), None).await.unwrap();
        let queued = store.interrupt_jobs(notice).await.unwrap();
        assert_eq!(queued.len(), 1);
        assert_eq!(queued[0].1.turn_id, format!("job-{}", b.id));
        let pending = store.pending_outbox(0).await.unwrap();
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].seq, queued[0].0);
        let b_now = store.jobs(10).await.unwrap();
        assert!(b_now.iter().all(|j| j.status != "running"));
        assert!(store.interrupt_jobs(notice).await.unwrap().is_empty());
    }
}
