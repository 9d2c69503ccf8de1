//! The owner's data as plain rows for `export` and `import`: sessions with their messages (the
//! stored JSON content kept as is) and the Telegram topic each lives in, memories (with where an automatic one came from), the
//! memories consolidation set aside (imported set aside again, under one `imported` run that
//! undo leaves alone: undoing belongs to the database they were set aside in), daily notes,
//! schedules and usage; and one import written in a single transaction (all of it or nothing),
//! skipping what is already there. Every column
//! of these tables is exported or named as not exported (`columns` test), so a new column
//! cannot be forgotten.

use serde::{Deserialize, Serialize};
use sqlx::SqliteConnection;

use super::{Store, StoreError, now_millis};

/// A session and its messages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
pub struct SessionOut {
    pub id: i64,
    pub title: Option<String>,
    pub provider: String,
    pub model: String,
    pub created_at: i64,
    pub updated_at: i64,
    #[sqlx(skip)]
    #[serde(default)]
    pub messages: Vec<MessageOut>,
    /// The Telegram topic it lives in (`topic_sessions`), if any.
    #[sqlx(skip)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic: Option<TopicOut>,
}

/// A session's Telegram topic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
pub struct TopicOut {
    pub thread_id: i64,
    /// The topic's name, if seen.
    #[serde(default)]
    pub name: Option<String>,
    pub created_at: i64,
}

/// A stored message: `content` is its stored JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
pub struct MessageOut {
    pub ordinal: i64,
    pub role: String,
    pub content: String,
    pub created_at: i64,
    pub starts_round: i64,
    /// The owner's reaction to this answer (`answer_feedback`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
}

/// A memory and where it came from (`owner`, `auto`, `imported:<assistant>`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
pub struct MemoryOut {
    pub text: String,
    pub source: String,
    pub created_at: i64,
    /// An automatic memory's weight (1–5), if it has one.
    #[serde(default)]
    pub importance: Option<i64>,
    /// When an automatic memory was last confirmed.
    #[serde(default)]
    pub refreshed_at: Option<i64>,
    /// Where an automatic memory's content came from when not from the owner (a tool's result);
    /// recall shows it, so an import must keep it.
    #[serde(default)]
    pub origin: Option<String>,
}

/// A memory consolidation set aside (merged, retired or superseded).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
pub struct SetAsideOut {
    pub text: String,
    pub source: String,
    pub origin: Option<String>,
    pub created_at: i64,
    /// An automatic memory's weight (1–5), if it had one.
    #[serde(default)]
    pub importance: Option<i64>,
    /// When an automatic memory was last confirmed.
    #[serde(default)]
    pub refreshed_at: Option<i64>,
    /// `merged`, `retired` or `superseded`.
    pub reason: String,
    /// The text of the memory it was merged into or superseded by, if that one is still there.
    pub by: Option<String>,
    pub set_aside_at: i64,
}

/// A daily note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
pub struct NoteOut {
    pub date: String,
    pub text: String,
    pub updated_at: i64,
}

/// A schedule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
pub struct ScheduleOut {
    pub spec: String,
    pub expr: String,
    pub mode: String,
    pub message: String,
    pub next_fire: i64,
    pub created_at: i64,
    /// The provider and model a task runs on ("provider/model"); none: the current one.
    #[serde(default)]
    pub model: Option<String>,
}

/// A usage row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
pub struct UsageOut {
    pub session_id: Option<i64>,
    pub provider: String,
    pub model: String,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cache_read_tokens: i64,
    pub cache_write_tokens: i64,
    pub created_at: i64,
    /// What the call was for (`owner`, `task`, `title`, …).
    pub purpose: String,
}

/// What an import adds (memories already de-duplicated by the caller). Imported memories get
/// their full-text index entries at agentd's next start (`prepare_memory_index` indexes the
/// memories the index lacks).
#[derive(Debug, Clone, Default)]
pub struct ImportRows {
    pub sessions: Vec<SessionOut>,
    pub memories: Vec<MemoryOut>,
    pub notes: Vec<NoteOut>,
    pub schedules: Vec<ScheduleOut>,
    /// Set-aside memories (de-duplicated by the caller), set aside again here.
    pub set_aside: Vec<SetAsideOut>,
}

/// How many rows an import added.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Added {
    pub sessions: usize,
    pub memories: usize,
    /// Memories set aside (as they were in the export).
    pub set_aside: usize,
    pub notes: usize,
    pub schedules: usize,
}

impl Store {
    /// Every session with its messages, oldest first.
    pub async fn export_sessions(&self) -> Result<Vec<SessionOut>, StoreError> {
        let op = "export sessions";
        let mut sessions: Vec<SessionOut> = sqlx::query_as(
            "SELECT id, title, provider, model, created_at, updated_at FROM sessions ORDER BY id",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db(op))?;
        for s in &mut sessions {
            s.messages = sqlx::query_as(
                "SELECT m.ordinal, m.role, m.content, m.created_at, m.starts_round,
                        f.feedback
                 FROM messages m LEFT JOIN answer_feedback f ON f.message_id = m.id
                 WHERE m.session_id = ?1 ORDER BY m.ordinal",
            )
            .bind(s.id)
            .fetch_all(&self.pool)
            .await
            .map_err(StoreError::db(op))?;
            s.topic = sqlx::query_as(
                "SELECT thread_id, name, created_at FROM topic_sessions WHERE session_id = ?1",
            )
            .bind(s.id)
            .fetch_optional(&self.pool)
            .await
            .map_err(StoreError::db(op))?;
        }
        Ok(sessions)
    }

    /// Every memory, oldest first.
    pub async fn export_memories(&self) -> Result<Vec<MemoryOut>, StoreError> {
        sqlx::query_as(
            "SELECT text, source, created_at, importance, refreshed_at, origin FROM memories
             ORDER BY id",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("export memories"))
    }

    /// Every memory set aside, in the order they were.
    pub async fn export_set_aside(&self) -> Result<Vec<SetAsideOut>, StoreError> {
        sqlx::query_as(
            "SELECT a.text, a.source, a.origin, a.created_at, a.importance, a.refreshed_at,
                    a.reason, m.text AS by, a.set_aside_at
             FROM memories_set_aside a LEFT JOIN memories m ON m.id = a.by_id
             ORDER BY a.set_aside_at, a.id",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("export set-aside memories"))
    }

    /// Every daily note, by date.
    pub async fn export_notes(&self) -> Result<Vec<NoteOut>, StoreError> {
        sqlx::query_as("SELECT date, text, updated_at FROM daily_notes ORDER BY date")
            .fetch_all(&self.pool)
            .await
            .map_err(StoreError::db("export notes"))
    }

    /// Every schedule.
    pub async fn export_schedules(&self) -> Result<Vec<ScheduleOut>, StoreError> {
        sqlx::query_as(
            "SELECT spec, expr, mode, message, next_fire, created_at, model FROM schedules
             ORDER BY id",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("export schedules"))
    }

    /// Every usage row.
    pub async fn export_usage(&self) -> Result<Vec<UsageOut>, StoreError> {
        sqlx::query_as(
            "SELECT session_id, provider, model, input_tokens, output_tokens, cache_read_tokens,
                    cache_write_tokens, created_at, purpose FROM usage ORDER BY id",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("export usage"))
    }

    /// Adds `rows` in one transaction: sessions (skipped when one with the same creation time,
    /// provider and model exists), memories as given, notes for dates without one, schedules
    /// unless the same spec and message exist, set-aside memories as given (after the memories, so
    /// `by` finds the memory they were merged into or superseded by). With `dry_run` the transaction is rolled back:
    /// the counts say what it would add.
    pub async fn import_rows(&self, rows: &ImportRows, dry_run: bool) -> Result<Added, StoreError> {
        let op = "import";
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(op))?;
        let mut added = Added::default();
        for s in &rows.sessions {
            if import_session(&mut tx, s)
                .await
                .map_err(StoreError::db(op))?
            {
                added.sessions += 1;
            }
        }
        for m in &rows.memories {
            import_memory(&mut tx, m)
                .await
                .map_err(StoreError::db(op))?;
            added.memories += 1;
        }
        if !rows.set_aside.is_empty() {
            import_set_aside(&mut tx, &rows.set_aside)
                .await
                .map_err(StoreError::db(op))?;
            added.set_aside = rows.set_aside.len();
        }
        for n in &rows.notes {
            if import_note(&mut tx, n).await.map_err(StoreError::db(op))? {
                added.notes += 1;
            }
        }
        for s in &rows.schedules {
            if import_schedule(&mut tx, s)
                .await
                .map_err(StoreError::db(op))?
            {
                added.schedules += 1;
            }
        }
        if dry_run {
            tx.rollback().await.map_err(StoreError::db(op))?;
        } else {
            tx.commit().await.map_err(StoreError::db(op))?;
        }
        Ok(added)
    }
}

/// Adds session `s` with its messages; `false` when a session created at the same instant with
/// the same provider and model is there already (imported before).
async fn import_session(conn: &mut SqliteConnection, s: &SessionOut) -> Result<bool, sqlx::Error> {
    let exists: Option<i64> = sqlx::query_scalar(
        "SELECT id FROM sessions WHERE created_at = ?1 AND provider = ?2 AND model = ?3",
    )
    .bind(s.created_at)
    .bind(&s.provider)
    .bind(&s.model)
    .fetch_optional(&mut *conn)
    .await?;
    if exists.is_some() {
        return Ok(false);
    }
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO sessions (title, provider, model, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id",
    )
    .bind(&s.title)
    .bind(&s.provider)
    .bind(&s.model)
    .bind(s.created_at)
    .bind(s.updated_at)
    .fetch_one(&mut *conn)
    .await?;
    for m in &s.messages {
        let message_id: i64 = sqlx::query_scalar(
            "INSERT INTO messages (session_id, ordinal, role, content, created_at, starts_round)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id",
        )
        .bind(id)
        .bind(m.ordinal)
        .bind(&m.role)
        .bind(&m.content)
        .bind(m.created_at)
        .bind(m.starts_round)
        .fetch_one(&mut *conn)
        .await?;
        if let Some(feedback) = m.feedback.as_deref().filter(|f| !f.is_empty()) {
            // The chat message it was given on belongs to the exporting install: 0 here.
            sqlx::query(
                "INSERT INTO answer_feedback (message_id, feedback, chat_message_id, created_at)
                 VALUES (?1, ?2, 0, ?3)",
            )
            .bind(message_id)
            .bind(feedback)
            .bind(m.created_at)
            .execute(&mut *conn)
            .await?;
        }
    }
    if let Some(topic) = &s.topic {
        // Bound again unless that topic already has a session here.
        sqlx::query(
            "INSERT OR IGNORE INTO topic_sessions (thread_id, session_id, created_at, name)
             VALUES (?1, ?2, ?3, ?4)",
        )
        .bind(topic.thread_id)
        .bind(id)
        .bind(topic.created_at)
        .bind(&topic.name)
        .execute(&mut *conn)
        .await?;
    }
    Ok(true)
}

/// Adds memory `m` (created now when it has no time).
async fn import_memory(conn: &mut SqliteConnection, m: &MemoryOut) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO memories (text, created_at, source, importance, refreshed_at, origin)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )
    .bind(&m.text)
    .bind(if m.created_at > 0 {
        m.created_at
    } else {
        now_millis()
    })
    .bind(&m.source)
    .bind(m.importance)
    .bind(m.refreshed_at)
    .bind(&m.origin)
    .execute(conn)
    .await?;
    Ok(())
}

/// Sets `aside` aside again, as one consolidation run with outcome `imported` (undo leaves such
/// a run alone): each gets a fresh memory id (one `memories` will never hand out), a logged
/// change, and `by_id` pointing at the memory whose text its `by` names, if there is one.
async fn import_set_aside(
    conn: &mut SqliteConnection,
    aside: &[SetAsideOut],
) -> Result<(), sqlx::Error> {
    let now = now_millis();
    let count = |reason: &str| aside.iter().filter(|a| a.reason == reason).count() as i64;
    let (run,): (i64,) = sqlx::query_as(
        "INSERT INTO consolidation_runs (at, outcome, merged, retired, superseded)
         VALUES (?1, 'imported', ?2, ?3, ?4) RETURNING id",
    )
    .bind(now)
    .bind(count("merged"))
    .bind(count("retired"))
    .bind(count("superseded"))
    .fetch_one(&mut *conn)
    .await?;
    for a in aside {
        // AUTOINCREMENT never hands an id out twice: take one and give the row back.
        let (id,): (i64,) =
            sqlx::query_as("INSERT INTO memories (text, created_at) VALUES ('', 0) RETURNING id")
                .fetch_one(&mut *conn)
                .await?;
        sqlx::query("DELETE FROM memories WHERE id = ?1")
            .bind(id)
            .execute(&mut *conn)
            .await?;
        let kind = match a.reason.as_str() {
            "merged" => "merge",
            "superseded" => "supersede",
            _ => "retire",
        };
        let (change,): (i64,) = sqlx::query_as(
            "INSERT INTO memory_changes (run_id, kind, memory_id, at) VALUES (?1, ?2, ?3, ?4)
             RETURNING id",
        )
        .bind(run)
        .bind(kind)
        .bind(id)
        .bind(now)
        .fetch_one(&mut *conn)
        .await?;
        sqlx::query(
            "INSERT INTO memories_set_aside (id, text, created_at, source, importance,
                                             refreshed_at, origin, reason, by_id, change_id,
                                             set_aside_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8,
                     (SELECT id FROM memories WHERE text = ?9 ORDER BY id LIMIT 1), ?10, ?11)",
        )
        .bind(id)
        .bind(&a.text)
        .bind(a.created_at)
        .bind(&a.source)
        .bind(a.importance)
        .bind(a.refreshed_at)
        .bind(&a.origin)
        .bind(&a.reason)
        .bind(&a.by)
        .bind(change)
        .bind(a.set_aside_at)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// Adds daily note `n`; `false` when that day has a note already.
async fn import_note(conn: &mut SqliteConnection, n: &NoteOut) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "INSERT INTO daily_notes (date, text, updated_at) VALUES (?1, ?2, ?3)
         ON CONFLICT (date) DO NOTHING",
    )
    .bind(&n.date)
    .bind(&n.text)
    .bind(n.updated_at)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// Adds schedule `s`; `false` when one with the same spec and message is there already.
async fn import_schedule(
    conn: &mut SqliteConnection,
    s: &ScheduleOut,
) -> Result<bool, sqlx::Error> {
    let exists: Option<i64> =
        sqlx::query_scalar("SELECT id FROM schedules WHERE spec = ?1 AND message = ?2")
            .bind(&s.spec)
            .bind(&s.message)
            .fetch_optional(&mut *conn)
            .await?;
    if exists.is_some() {
        return Ok(false);
    }
    sqlx::query(
        "INSERT INTO schedules (spec, expr, mode, message, next_fire, created_at, model)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )
    .bind(&s.spec)
    .bind(&s.expr)
    .bind(&s.mode)
    .bind(&s.message)
    .bind(s.next_fire)
    .bind(s.created_at)
    .bind(&s.model)
    .execute(conn)
    .await?;
    Ok(true)
}

#[cfg(test)]
mod tests;
