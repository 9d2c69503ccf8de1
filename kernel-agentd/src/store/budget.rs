//! Budget marks: what the budget service already did in a period (warned, overridden, told of
//! skipped tasks), so that a restart repeats nothing; the owner messages a budget limit refused,
//! kept (in `settings`, under `budget_refusal:<id>`) until a Continue press runs them once; and
//! the time of the newest ledger row.

use chrono::{DateTime, Utc};

use serde::{Deserialize, Serialize};

use super::follow_ups::Kept;
use super::{Store, StoreError, from_millis, now_millis};

/// The settings key prefix of a refused owner message.
const REFUSAL: &str = "budget_refusal:";

/// A refused message as kept in `settings` (JSON; older ones hold only `text` and `reply_to`).
#[derive(Debug, Serialize, Deserialize)]
struct Refused {
    #[serde(flatten)]
    kept: Kept,
    reply_to: Option<i64>,
}

impl Store {
    /// Records `kind` for `period`; `true` when it is new (`false`: it was recorded before).
    pub async fn mark_budget(&self, period: &str, kind: &str) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "INSERT INTO budget_marks (period, kind, created_at) VALUES (?1, ?2, ?3)
             ON CONFLICT (period, kind) DO NOTHING",
        )
        .bind(period)
        .bind(kind)
        .bind(now_millis())
        .execute(&self.pool)
        .await
        .map_err(StoreError::db("record a budget mark"))?;
        Ok(done.rows_affected() == 1)
    }

    /// Whether `kind` was recorded for `period`.
    pub async fn budget_marked(&self, period: &str, kind: &str) -> Result<bool, StoreError> {
        let found: Option<i64> =
            sqlx::query_scalar("SELECT 1 FROM budget_marks WHERE period = ?1 AND kind = ?2")
                .bind(period)
                .bind(kind)
                .fetch_optional(&self.pool)
                .await
                .map_err(StoreError::db("read a budget mark"))?;
        Ok(found.is_some())
    }

    /// Keeps the refused owner message `id` (and the message to reply to) until a Continue
    /// press takes it.
    pub async fn keep_budget_refusal(
        &self,
        id: &str,
        kept: &Kept,
        reply_to: Option<i64>,
    ) -> Result<(), StoreError> {
        let value = serde_json::to_string(&Refused {
            kept: kept.clone(),
            reply_to,
        })
        .map_err(|e| StoreError::Corrupt(format!("a refused message as JSON: {e}")))?;
        self.set_setting(&format!("{REFUSAL}{id}"), &value).await
    }

    /// Whether the refused message `id` is still kept (not run yet).
    pub async fn budget_refusal_pending(&self, id: &str) -> Result<bool, StoreError> {
        Ok(self.get_setting(&format!("{REFUSAL}{id}")).await?.is_some())
    }

    /// Takes the refused message `id` (and the message to reply to); `None` when it is unknown
    /// or was taken before (once only, whoever asks concurrently).
    pub async fn take_budget_refusal(
        &self,
        id: &str,
    ) -> Result<Option<(Kept, Option<i64>)>, StoreError> {
        let value: Option<String> =
            sqlx::query_scalar("DELETE FROM settings WHERE key = ?1 RETURNING value")
                .bind(format!("{REFUSAL}{id}"))
                .fetch_optional(&self.pool)
                .await
                .map_err(StoreError::db("take a refused message"))?;
        Ok(value.and_then(|v| {
            let refused: Refused = serde_json::from_str(&v).ok()?;
            Some((refused.kept, refused.reply_to))
        }))
    }

    /// Forgets the refused messages kept more than `age` (their ids are the microsecond they
    /// were refused): a Continue for one then runs nothing. How many.
    pub async fn forget_budget_refusals_older_than(
        &self,
        age: std::time::Duration,
    ) -> Result<u64, StoreError> {
        let cutoff_micros = (now_millis()
            .saturating_sub(i64::try_from(age.as_millis()).unwrap_or(i64::MAX)))
        .saturating_mul(1000);
        let done = sqlx::query(
            "DELETE FROM settings WHERE key LIKE 'budget_refusal:%'
             AND CAST(substr(key, 16) AS INTEGER) < ?1",
        )
        .bind(cutoff_micros)
        .execute(&self.pool)
        .await
        .map_err(StoreError::db("forget old refused messages"))?;
        Ok(done.rows_affected())
    }

    /// When the newest model call was recorded, if any.
    pub async fn latest_usage_at(&self) -> Result<Option<DateTime<Utc>>, StoreError> {
        let ms: Option<i64> = sqlx::query_scalar("SELECT MAX(created_at) FROM usage")
            .fetch_one(&self.pool)
            .await
            .map_err(StoreError::db("read usage"))?;
        ms.map(|ms| from_millis(ms, || "usage".to_owned()))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_mark_is_recorded_once_and_survives_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.db");
        let store = Store::open(&path).await.unwrap();
        assert!(store.latest_usage_at().await.unwrap().is_none());
        assert!(
            store
                .mark_budget("day:2026-11-27", "warn:all")
                .await
                .unwrap()
        );
        assert!(
            !store
                .mark_budget("day:2026-11-27", "warn:all")
                .await
                .unwrap()
        );
        assert!(
            store
                .mark_budget("day:2026-11-28", "warn:all")
                .await
                .unwrap()
        );
        drop(store);
        let store = Store::open(&path).await.unwrap();
        assert!(
            store
                .budget_marked("day:2026-11-27", "warn:all")
                .await
                .unwrap()
        );
        assert!(
            !store
                .budget_marked("day:2026-11-27", "override")
                .await
                .unwrap()
        );
    }

    #[tokio::test]
    async fn a_refused_message_is_taken_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("k.db")).await.unwrap();
        store
            .keep_budget_refusal("17", &Kept::text("the question"), Some(42))
            .await
            .unwrap();
        assert!(store.budget_refusal_pending("17").await.unwrap());
        assert!(!store.budget_refusal_pending("18").await.unwrap());
        assert_eq!(
            store.take_budget_refusal("17").await.unwrap(),
            Some((Kept::text("the question"), Some(42)))
        );
        assert_eq!(store.take_budget_refusal("17").await.unwrap(), None);
        assert_eq!(store.take_budget_refusal("forged").await.unwrap(), None);
        // Kept more than a week: forgotten; a newer one stays.
        let day = std::time::Duration::from_secs(24 * 3600);
        let old = (chrono::Utc::now() - chrono::Duration::days(8)).timestamp_micros();
        let new = chrono::Utc::now().timestamp_micros();
        for id in [old, new] {
            store
                .keep_budget_refusal(&id.to_string(), &Kept::text("q"), None)
                .await
                .unwrap();
        }
        assert_eq!(
            store
                .forget_budget_refusals_older_than(7 * day)
                .await
                .unwrap(),
            1
        );
        assert!(
            !store
                .budget_refusal_pending(&old.to_string())
                .await
                .unwrap()
        );
        assert!(
            store
                .budget_refusal_pending(&new.to_string())
                .await
                .unwrap()
        );
        // One kept before messages were kept whole reads as text.
        store
            .set_setting("budget_refusal:19", r#"{"text":"old","reply_to":null}"#)
            .await
            .unwrap();
        assert_eq!(
            store.take_budget_refusal("19").await.unwrap(),
            Some((Kept::text("old"), None))
        );
    }
}
