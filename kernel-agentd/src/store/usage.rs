//! Token usage: one row per model call (provider, model, purpose, session, time, the four token
//! counts), summed per provider and model — or per provider, model and purpose — for `/usage`.

use chrono::{DateTime, Utc};

use super::{Store, StoreError, now_millis};
use crate::conversation::Usage;

/// The usage of one provider/model over a period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageSum {
    pub provider: String,
    pub model: String,
    pub calls: u64,
    pub usage: Usage,
}

/// A summed row: provider, model, purpose, calls, the four token counts.
type PurposeRow = (String, String, String, i64, i64, i64, i64, i64);

/// The usage of one provider/model for one purpose over a period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PurposeSum {
    pub purpose: String,
    pub sum: UsageSum,
}

impl Store {
    /// Records one model call's usage; `purpose` says what it was for (`owner`, `task`, …).
    pub async fn record_usage(
        &self,
        session_id: Option<i64>,
        (provider, model): (&str, &str),
        purpose: &str,
        usage: &Usage,
    ) -> Result<(), StoreError> {
        let n = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        sqlx::query(
            "INSERT INTO usage (session_id, provider, model, input_tokens, output_tokens,
                 cache_read_tokens, cache_write_tokens, created_at, purpose)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )
        .bind(session_id)
        .bind(provider)
        .bind(model)
        .bind(n(usage.input_tokens))
        .bind(n(usage.output_tokens))
        .bind(n(usage.cache_read_tokens))
        .bind(n(usage.cache_write_tokens))
        .bind(now_millis())
        .bind(purpose)
        .execute(&self.pool)
        .await
        .map_err(StoreError::db("record usage"))?;
        Ok(())
    }

    /// Usage since `since` (all time when `None`), of `session_id` only when set, summed per
    /// provider and model (sorted by them).
    pub async fn usage_since(
        &self,
        since: Option<DateTime<Utc>>,
        session_id: Option<i64>,
    ) -> Result<Vec<UsageSum>, StoreError> {
        let since = since.map_or(i64::MIN, |t| t.timestamp_millis());
        let rows: Vec<(String, String, i64, i64, i64, i64, i64)> = sqlx::query_as(
            "SELECT provider, model, COUNT(*), SUM(input_tokens), SUM(output_tokens),
                    SUM(cache_read_tokens), SUM(cache_write_tokens)
             FROM usage WHERE created_at >= ?1 AND (?2 IS NULL OR session_id = ?2)
             GROUP BY provider, model ORDER BY provider, model",
        )
        .bind(since)
        .bind(session_id)
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("read usage"))?;
        Ok(rows
            .into_iter()
            .map(|(provider, model, calls, i, o, r, w)| {
                usage_sum(provider, model, [calls, i, o, r, w])
            })
            .collect())
    }

    /// Usage since `since`, summed per provider, model and purpose (sorted by them).
    pub async fn usage_by_purpose_since(
        &self,
        since: DateTime<Utc>,
    ) -> Result<Vec<PurposeSum>, StoreError> {
        let rows: Vec<PurposeRow> = sqlx::query_as(
            "SELECT provider, model, purpose, COUNT(*), SUM(input_tokens), SUM(output_tokens),
                    SUM(cache_read_tokens), SUM(cache_write_tokens)
             FROM usage WHERE created_at >= ?1
             GROUP BY provider, model, purpose ORDER BY provider, model, purpose",
        )
        .bind(since.timestamp_millis())
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("read usage"))?;
        Ok(rows
            .into_iter()
            .map(|(provider, model, purpose, calls, i, o, r, w)| PurposeSum {
                purpose,
                sum: usage_sum(provider, model, [calls, i, o, r, w]),
            })
            .collect())
    }
}

/// A summed row: `[calls, input, output, cache read, cache write]` as SQLite returns them (a
/// negative count, which only a corrupt row could give, reads as 0).
fn usage_sum(provider: String, model: String, counts: [i64; 5]) -> UsageSum {
    let [calls, input, output, read, write] = counts.map(|v| u64::try_from(v).unwrap_or(0));
    UsageSum {
        provider,
        model,
        calls,
        usage: Usage {
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: read,
            cache_write_tokens: write,
        },
    }
}

/// The usage of one provider/model/purpose within one quarter hour (the web console's daily
/// history: quarter hours map onto local days in every time zone).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageSlot {
    /// The start of the quarter hour.
    pub start: DateTime<Utc>,
    pub provider: String,
    pub model: String,
    /// What the calls were for (`usage.purpose`; may be empty).
    pub purpose: String,
    pub calls: u64,
    pub usage: Usage,
}

/// A quarter hour in milliseconds.
const SLOT_MILLIS: i64 = 15 * 60 * 1000;

impl Store {
    /// Usage since `since`, summed per quarter hour, provider, model and purpose (oldest first).
    pub async fn usage_slots_since(
        &self,
        since: DateTime<Utc>,
    ) -> Result<Vec<UsageSlot>, StoreError> {
        type Row = (i64, String, String, String, i64, i64, i64, i64, i64);
        let rows: Vec<Row> = sqlx::query_as(
            "SELECT created_at / ?2, provider, model, purpose, COUNT(*), SUM(input_tokens),
                    SUM(output_tokens), SUM(cache_read_tokens), SUM(cache_write_tokens)
             FROM usage WHERE created_at >= ?1
             GROUP BY created_at / ?2, provider, model, purpose
             ORDER BY 1, provider, model, purpose",
        )
        .bind(since.timestamp_millis())
        .bind(SLOT_MILLIS)
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("read usage history"))?;
        let u = |v: i64| u64::try_from(v).unwrap_or(0);
        Ok(rows
            .into_iter()
            .filter_map(|(slot, provider, model, purpose, calls, i, o, r, w)| {
                Some(UsageSlot {
                    start: DateTime::from_timestamp_millis(slot.checked_mul(SLOT_MILLIS)?)?,
                    provider,
                    model,
                    purpose,
                    calls: u(calls),
                    usage: Usage {
                        input_tokens: u(i),
                        output_tokens: u(o),
                        cache_read_tokens: u(r),
                        cache_write_tokens: u(w),
                    },
                })
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn usage_sums_per_model_session_and_period() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("k.db")).await.unwrap();
        let a = store.create_session("p", "m").await.unwrap().id;
        let b = store.create_session("p", "m").await.unwrap().id;
        let u = |i, o, r, w| Usage {
            input_tokens: i,
            output_tokens: o,
            cache_read_tokens: r,
            cache_write_tokens: w,
        };
        store
            .record_usage(Some(a), ("p", "m"), "owner", &u(1, 2, 3, 4))
            .await
            .unwrap();
        store
            .record_usage(Some(a), ("p", "m"), "title", &u(10, 20, 30, 40))
            .await
            .unwrap();
        store
            .record_usage(None, ("q", "n"), "memory", &u(5, 5, 5, 5))
            .await
            .unwrap();
        let all = store.usage_since(None, None).await.unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!((all[0].calls, all[0].usage), (2, u(11, 22, 33, 44)));
        let only_a = store.usage_since(None, Some(a)).await.unwrap();
        assert_eq!(only_a.len(), 1);
        assert_eq!(only_a[0].model, "m");
        assert!(store.usage_since(None, Some(b)).await.unwrap().is_empty());
        let split = store
            .usage_by_purpose_since(Utc::now() - chrono::Duration::hours(1))
            .await
            .unwrap();
        let keys: Vec<(&str, &str, u64)> = split
            .iter()
            .map(|p| (p.sum.provider.as_str(), p.purpose.as_str(), p.sum.calls))
            .collect();
        assert_eq!(
            keys,
            [("p", "owner", 1), ("p", "title", 1), ("q", "memory", 1)]
        );
        assert_eq!(split[1].sum.usage, u(10, 20, 30, 40));
        let future = Utc::now() + chrono::Duration::hours(1);
        assert!(
            store
                .usage_since(Some(future), None)
                .await
                .unwrap()
                .is_empty()
        );
    }

    #[tokio::test]
    async fn usage_slots_sum_per_quarter_hour_model_and_purpose() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("k.db")).await.unwrap();
        let u = Usage {
            input_tokens: 7,
            output_tokens: 1,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
        };
        store
            .record_usage(None, ("p", "m"), "owner", &u)
            .await
            .unwrap();
        store
            .record_usage(None, ("p", "m"), "owner", &u)
            .await
            .unwrap();
        let hour_ago = Utc::now() - chrono::Duration::hours(1);
        let slots = store.usage_slots_since(hour_ago).await.unwrap();
        assert_eq!(slots.len(), 1, "{slots:?}");
        assert_eq!((slots[0].calls, slots[0].usage.input_tokens), (2, 14));
        assert_eq!(slots[0].purpose, "owner");
        assert!(
            slots[0].start <= Utc::now()
                && slots[0].start > hour_ago - chrono::Duration::minutes(15)
        );
        let future = Utc::now() + chrono::Duration::hours(1);
        assert!(store.usage_slots_since(future).await.unwrap().is_empty());
    }
}
