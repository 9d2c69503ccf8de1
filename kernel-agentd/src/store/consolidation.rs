//! What memory consolidation writes: a run's changes in one transaction (merged texts, memories
//! moved with their ids to `memories_set_aside`, each change logged in `memory_changes`), the
//! proposals for the owner's memories; undoing a run and listing set-aside memories are `undo`'s.

use chrono::{DateTime, Utc};
use sqlx::{FromRow, SqliteConnection};

mod undo;

use super::{Store, StoreError, from_millis, now_millis};

/// A merge to apply: the memories `ids` become one with `text` (its index `terms` when indexed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeStep {
    pub ids: Vec<i64>,
    pub text: String,
    pub terms: Option<String>,
}

/// A merge proposed to the owner: the memories with their texts as shown, and the merged text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewProposal {
    pub memories: Vec<(i64, String)>,
    pub text: String,
}

/// A run's checked plan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    pub merges: Vec<MergeStep>,
    pub retire: Vec<i64>,
    /// `(old, new)`.
    pub supersede: Vec<(i64, i64)>,
    pub proposals: Vec<NewProposal>,
}

impl Changes {
    /// Every memory the changes name (merged, retired, superseded; not the proposals').
    pub fn named(&self) -> Vec<i64> {
        let merged = self.merges.iter().flat_map(|m| m.ids.iter().copied());
        let superseded = self.supersede.iter().map(|&(old, _)| old);
        merged
            .chain(self.retire.iter().copied())
            .chain(superseded)
            .collect()
    }
}

/// A consolidation run as logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRow {
    pub id: i64,
    pub at: DateTime<Utc>,
    /// `ok`, `malformed`, `failed`, or `owner` (the owner's merge of a proposal).
    pub outcome: String,
    pub merged: u32,
    pub retired: u32,
    pub superseded: u32,
    pub proposed: u32,
    pub undone: bool,
}

/// What applying came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Applied {
    /// Logged as this run, with the new proposals' ids (in the order given).
    Done(RunRow, Vec<i64>),
    /// A memory named is gone or is no longer what the plan was made from: nothing changed.
    Stale(i64),
}

/// Why a memory is set aside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetAside {
    /// `merged`, `retired` or `superseded`.
    pub reason: String,
    /// The memory it was merged into, or the newer one that superseded it.
    pub by: Option<i64>,
}

/// A pending proposal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProposalRow {
    pub id: i64,
    pub memories: Vec<(i64, String)>,
    pub text: String,
}

/// What the owner's decision on a proposal came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decided {
    /// Merged (logged as this run) or kept.
    Merged(i64),
    Kept,
    /// Unknown, already decided, or its memories changed since: nothing changed.
    Stale,
}

#[derive(FromRow)]
struct RawRun {
    id: i64,
    at: i64,
    outcome: String,
    merged: i64,
    retired: i64,
    superseded: i64,
    proposed: i64,
    undone_at: Option<i64>,
}

impl TryFrom<RawRun> for RunRow {
    type Error = StoreError;

    fn try_from(r: RawRun) -> Result<Self, StoreError> {
        let n = |v: i64| u32::try_from(v).unwrap_or(0);
        Ok(RunRow {
            at: from_millis(r.at, || format!("consolidation run {}", r.id))?,
            id: r.id,
            outcome: r.outcome,
            merged: n(r.merged),
            retired: n(r.retired),
            superseded: n(r.superseded),
            proposed: n(r.proposed),
            undone: r.undone_at.is_some(),
        })
    }
}

/// A memory as read for a merge.
#[derive(FromRow)]
struct Member {
    id: i64,
    text: String,
    created_at: i64,
    source: String,
    importance: Option<i64>,
    refreshed_at: Option<i64>,
    origin: Option<String>,
}

impl Store {
    /// Logs a run that changed nothing (`outcome`: `malformed` or `failed`).
    pub async fn log_consolidation_failure(&self, outcome: &str) -> Result<RunRow, StoreError> {
        let raw: RawRun = sqlx::query_as(
            "INSERT INTO consolidation_runs (at, outcome) VALUES (?1, ?2)
             RETURNING id, at, outcome, merged, retired, superseded, proposed, undone_at",
        )
        .bind(now_millis())
        .bind(outcome)
        .fetch_one(&self.pool)
        .await
        .map_err(StoreError::db("log a consolidation run"))?;
        raw.try_into()
    }

    /// The newest run of the job (the owner's merges and imports not counted), if any.
    pub async fn last_consolidation_run(&self) -> Result<Option<RunRow>, StoreError> {
        let raw: Option<RawRun> = sqlx::query_as(
            "SELECT id, at, outcome, merged, retired, superseded, proposed, undone_at
             FROM consolidation_runs WHERE outcome NOT IN ('owner', 'imported')
             ORDER BY id DESC LIMIT 1",
        )
        .fetch_optional(&self.pool)
        .await
        .map_err(StoreError::db("read the last consolidation run"))?;
        raw.map(RunRow::try_from).transpose()
    }

    /// Applies `changes` as one run, in one transaction: every memory named must still exist
    /// (and be automatic where the job changes it), else nothing changes. `indexed`: keep the
    /// FTS5 index in step.
    pub async fn apply_consolidation(
        &self,
        changes: &Changes,
        indexed: bool,
    ) -> Result<Applied, StoreError> {
        let op = "apply a consolidation";
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(op))?;
        let n = |v: usize| i64::try_from(v).unwrap_or(i64::MAX);
        let (run_id,): (i64,) = sqlx::query_as(
            "INSERT INTO consolidation_runs (at, outcome, merged, retired, superseded, proposed)
             VALUES (?1, 'ok', ?2, ?3, ?4, ?5) RETURNING id",
        )
        .bind(now_millis())
        .bind(n(changes.merges.len()))
        .bind(n(changes.retire.len()))
        .bind(n(changes.supersede.len()))
        .bind(n(changes.proposals.len()))
        .fetch_one(&mut *tx)
        .await
        .map_err(StoreError::db(op))?;
        for m in &changes.merges {
            if let Err(stale) = merge(&mut tx, run_id, m, true, indexed).await? {
                return Ok(Applied::Stale(stale));
            }
        }
        for &id in &changes.retire {
            let change = log_change(&mut tx, run_id, "retire", id, None).await?;
            if !set_aside(&mut tx, id, "retired", None, change, true, indexed).await? {
                return Ok(Applied::Stale(id));
            }
        }
        for &(old, new) in &changes.supersede {
            if !exists(&mut tx, new).await? {
                return Ok(Applied::Stale(new));
            }
            let change = log_change(&mut tx, run_id, "supersede", old, None).await?;
            if !set_aside(&mut tx, old, "superseded", Some(new), change, true, indexed).await? {
                return Ok(Applied::Stale(old));
            }
        }
        let mut proposals = Vec::new();
        for p in &changes.proposals {
            let memories = serde_json::to_string(&p.memories).unwrap_or_default();
            let (id,): (i64,) = sqlx::query_as(
                "INSERT INTO memory_proposals (run_id, memories, text, created_at)
                 VALUES (?1, ?2, ?3, ?4) RETURNING id",
            )
            .bind(run_id)
            .bind(memories)
            .bind(&p.text)
            .bind(now_millis())
            .fetch_one(&mut *tx)
            .await
            .map_err(StoreError::db(op))?;
            proposals.push(id);
        }
        let run: RawRun = sqlx::query_as(
            "SELECT id, at, outcome, merged, retired, superseded, proposed, undone_at
             FROM consolidation_runs WHERE id = ?1",
        )
        .bind(run_id)
        .fetch_one(&mut *tx)
        .await
        .map_err(StoreError::db(op))?;
        tx.commit().await.map_err(StoreError::db(op))?;
        Ok(Applied::Done(run.try_into()?, proposals))
    }

    /// The pending proposal `id`, if it is pending.
    pub async fn pending_proposal(&self, id: i64) -> Result<Option<ProposalRow>, StoreError> {
        let row: Option<(i64, String, String)> = sqlx::query_as(
            "SELECT id, memories, text FROM memory_proposals WHERE id = ?1 AND decision IS NULL",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await
        .map_err(StoreError::db("read a memory proposal"))?;
        Ok(row.and_then(|(id, memories, text)| {
            let memories = serde_json::from_str(&memories).ok()?;
            Some(ProposalRow { id, memories, text })
        }))
    }

    /// The owner's decision on proposal `id` (`terms`: the merged text's index terms when
    /// indexed): merged as a run of its own (`owner`), kept, or stale — unknown, decided
    /// already, or a memory of it gone or changed since (then nothing changes).
    pub async fn decide_proposal(
        &self,
        id: i64,
        merge_it: bool,
        terms: Option<String>,
        indexed: bool,
    ) -> Result<Decided, StoreError> {
        let op = "decide a memory proposal";
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(op))?;
        let row: Option<(String, String)> = sqlx::query_as(
            "SELECT memories, text FROM memory_proposals WHERE id = ?1 AND decision IS NULL",
        )
        .bind(id)
        .fetch_optional(&mut *tx)
        .await
        .map_err(StoreError::db(op))?;
        let Some((memories, text)) = row else {
            return Ok(Decided::Stale);
        };
        let memories: Vec<(i64, String)> = serde_json::from_str(&memories).unwrap_or_default();
        let mut decided = Decided::Kept;
        let mut decision = "kept";
        if merge_it {
            let mut same = !memories.is_empty();
            for (mid, was) in &memories {
                let now: Option<String> =
                    sqlx::query_scalar("SELECT text FROM memories WHERE id = ?1")
                        .bind(mid)
                        .fetch_optional(&mut *tx)
                        .await
                        .map_err(StoreError::db(op))?;
                same &= now.as_deref() == Some(was.as_str());
            }
            if same {
                let (run_id,): (i64,) = sqlx::query_as(
                    "INSERT INTO consolidation_runs (at, outcome, merged) VALUES (?1, 'owner', 1)
                     RETURNING id",
                )
                .bind(now_millis())
                .fetch_one(&mut *tx)
                .await
                .map_err(StoreError::db(op))?;
                let step = MergeStep {
                    ids: memories.iter().map(|(m, _)| *m).collect(),
                    text,
                    terms,
                };
                if merge(&mut tx, run_id, &step, false, indexed)
                    .await?
                    .is_err()
                {
                    return Ok(Decided::Stale);
                }
                decided = Decided::Merged(run_id);
                decision = "merged";
            } else {
                decided = Decided::Stale;
                decision = "stale";
            }
        }
        sqlx::query("UPDATE memory_proposals SET decision = ?2, decided_at = ?3 WHERE id = ?1")
            .bind(id)
            .bind(decision)
            .bind(now_millis())
            .execute(&mut *tx)
            .await
            .map_err(StoreError::db(op))?;
        tx.commit().await.map_err(StoreError::db(op))?;
        Ok(decided)
    }
}

/// Logs one change of run `run`; its id.
async fn log_change(
    conn: &mut SqliteConnection,
    run: i64,
    kind: &str,
    memory: i64,
    before: Option<&Member>,
) -> Result<i64, StoreError> {
    let (id,): (i64,) = sqlx::query_as(
        "INSERT INTO memory_changes (run_id, kind, memory_id, before_text, before_created_at,
                                     before_origin, before_importance, at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id",
    )
    .bind(run)
    .bind(kind)
    .bind(memory)
    .bind(before.map(|b| b.text.as_str()))
    .bind(before.map(|b| b.created_at))
    .bind(before.and_then(|b| b.origin.as_deref()))
    .bind(before.and_then(|b| b.importance))
    .bind(now_millis())
    .fetch_one(conn)
    .await
    .map_err(StoreError::db("log a memory change"))?;
    Ok(id)
}

/// Moves memory `id` (automatic only, when `only_auto`) to `memories_set_aside`; whether it was
/// there to move.
async fn set_aside(
    conn: &mut SqliteConnection,
    id: i64,
    reason: &str,
    by: Option<i64>,
    change: i64,
    only_auto: bool,
    indexed: bool,
) -> Result<bool, StoreError> {
    let op = "set a memory aside";
    let moved = sqlx::query(
        "INSERT INTO memories_set_aside (id, text, created_at, source, importance, refreshed_at,
                                         origin, reason, by_id, change_id, set_aside_at)
         SELECT id, text, created_at, source, importance, refreshed_at, origin, ?2, ?3, ?4, ?5
         FROM memories WHERE id = ?1 AND (source = 'auto' OR NOT ?6)",
    )
    .bind(id)
    .bind(reason)
    .bind(by)
    .bind(change)
    .bind(now_millis())
    .bind(only_auto)
    .execute(&mut *conn)
    .await
    .map_err(StoreError::db(op))?;
    if moved.rows_affected() == 0 {
        return Ok(false);
    }
    if indexed {
        sqlx::query("DELETE FROM memories_fts WHERE rowid = ?1")
            .bind(id)
            .execute(&mut *conn)
            .await
            .map_err(StoreError::db(op))?;
    }
    // The vector goes with the row (ON DELETE CASCADE); undo makes a new one.
    sqlx::query("DELETE FROM memories WHERE id = ?1")
        .bind(id)
        .execute(conn)
        .await
        .map_err(StoreError::db(op))?;
    Ok(true)
}

/// Whether memory `id` exists.
async fn exists(conn: &mut SqliteConnection, id: i64) -> Result<bool, StoreError> {
    let found: Option<i64> = sqlx::query_scalar("SELECT id FROM memories WHERE id = ?1")
        .bind(id)
        .fetch_optional(conn)
        .await
        .map_err(StoreError::db("find a memory"))?;
    Ok(found.is_some())
}

/// Drops memory `id`'s index entry (when `indexed`) and vector: its text changed.
async fn forget_derived(
    conn: &mut SqliteConnection,
    id: i64,
    indexed: bool,
) -> Result<(), StoreError> {
    let op = "drop a changed memory's index entry";
    if indexed {
        sqlx::query("DELETE FROM memories_fts WHERE rowid = ?1")
            .bind(id)
            .execute(&mut *conn)
            .await
            .map_err(StoreError::db(op))?;
    }
    sqlx::query("DELETE FROM memory_vectors WHERE memory_id = ?1")
        .bind(id)
        .execute(conn)
        .await
        .map_err(StoreError::db(op))?;
    Ok(())
}

/// Merges `step` within run `run`: the earliest memory keeps the merged text, the earliest date,
/// the highest importance and the first outside origin; the others are set aside. With
/// `only_auto`, every member must be automatic. `Err(id)`: member `id` is gone (or the owner's).
async fn merge(
    conn: &mut SqliteConnection,
    run: i64,
    step: &MergeStep,
    only_auto: bool,
    indexed: bool,
) -> Result<Result<(), i64>, StoreError> {
    let op = "merge memories";
    let mut members = Vec::new();
    for &id in &step.ids {
        let m: Option<Member> = sqlx::query_as(
            "SELECT id, text, created_at, source, importance, refreshed_at, origin
             FROM memories WHERE id = ?1",
        )
        .bind(id)
        .fetch_optional(&mut *conn)
        .await
        .map_err(StoreError::db(op))?;
        match m {
            Some(m) if !only_auto || m.source == "auto" => members.push(m),
            _ => return Ok(Err(id)),
        }
    }
    // The owner's merge keeps an owner's memory (a proposal always has one).
    let keep = members
        .iter()
        .filter(|m| only_auto || m.source != "auto")
        .min_by_key(|m| (m.created_at, m.id))
        .or_else(|| members.iter().min_by_key(|m| (m.created_at, m.id)))
        .map(|m| m.id)
        .unwrap_or_default();
    let earliest = members.iter().map(|m| m.created_at).min().unwrap_or(0);
    let importance = members.iter().filter_map(|m| m.importance).max();
    let refreshed = members.iter().filter_map(|m| m.refreshed_at).max();
    let origin = if only_auto {
        members.iter().find_map(|m| m.origin.clone())
    } else {
        None
    };
    let kept = members
        .iter()
        .find(|m| m.id == keep)
        .expect("keep is a member");
    let change = log_change(conn, run, "merge", keep, Some(kept)).await?;
    sqlx::query(
        "UPDATE memories SET text = ?2, created_at = ?3,
             importance = CASE WHEN source = 'auto' THEN ?4 ELSE importance END,
             refreshed_at = COALESCE(?5, refreshed_at), origin = ?6
         WHERE id = ?1",
    )
    .bind(keep)
    .bind(step.text.trim())
    .bind(earliest)
    .bind(importance)
    .bind(refreshed)
    .bind(origin)
    .execute(&mut *conn)
    .await
    .map_err(StoreError::db(op))?;
    forget_derived(conn, keep, indexed).await?;
    if indexed && let Some(terms) = &step.terms {
        sqlx::query("INSERT INTO memories_fts (rowid, terms) VALUES (?1, ?2)")
            .bind(keep)
            .bind(terms)
            .execute(&mut *conn)
            .await
            .map_err(StoreError::db(op))?;
    }
    for m in members.iter().filter(|m| m.id != keep) {
        if !set_aside(conn, m.id, "merged", Some(keep), change, only_auto, indexed).await? {
            return Ok(Err(m.id));
        }
    }
    Ok(Ok(()))
}
