//! Budget marks: what the budget service already did in a period (warned, overridden, told of
//! skipped tasks), so that a restart repeats nothing; and the time of the newest ledger row.

use chrono::{DateTime, Utc};

use super::{Store, StoreError, from_millis, now_millis};

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
}
