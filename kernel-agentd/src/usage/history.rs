//! The daily usage history of the web console's Usage page: tokens, calls and cost per local
//! day (`general.timezone`), provider, model and purpose over the last days, from the ledger's
//! quarter-hour sums (so every time zone's midnight falls on a slot boundary).

use std::collections::BTreeMap;

use chrono::{Duration, NaiveDate, Utc};

use super::UsageLedger;
use crate::conversation::Usage;
use crate::store::StoreError;

/// The most days a history covers.
pub(crate) const MAX_HISTORY_DAYS: u32 = 366;

/// One local day's usage of one provider/model/purpose.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DailyUsage {
    pub(crate) date: NaiveDate,
    pub(crate) provider: String,
    pub(crate) model: String,
    /// What the calls were for (empty when the ledger has none).
    pub(crate) purpose: String,
    pub(crate) calls: u64,
    pub(crate) usage: Usage,
    /// USD; `None` when the model has no price.
    pub(crate) cost_usd: Option<f64>,
}

/// The days asked for (oldest first, today last) and the usage within them.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct UsageHistory {
    pub(crate) dates: Vec<NaiveDate>,
    /// Sorted by date, provider, model and purpose.
    pub(crate) days: Vec<DailyUsage>,
}

impl UsageLedger {
    /// The last `days` local days (clamped to 1..=[`MAX_HISTORY_DAYS`]), today included.
    pub(crate) async fn history(&self, days: u32) -> Result<UsageHistory, StoreError> {
        let days = days.clamp(1, MAX_HISTORY_DAYS);
        let tz = self.inner.tz;
        let now = Utc::now();
        let today = now.with_timezone(&tz).date_naive();
        let first = today - Duration::days(i64::from(days) - 1);
        let since = first
            .and_hms_opt(0, 0, 0)
            .and_then(|t| t.and_local_timezone(tz).earliest())
            .map_or(now - Duration::days(i64::from(days)), |t| {
                t.with_timezone(&Utc)
            });
        let slots = self.inner.store.usage_slots_since(since).await?;
        let mut sums: BTreeMap<(NaiveDate, String, String, String), (u64, Usage)> = BTreeMap::new();
        for s in slots {
            let date = s.start.with_timezone(&tz).date_naive();
            if date < first || date > today {
                continue;
            }
            let sum = sums
                .entry((date, s.provider, s.model, s.purpose))
                .or_default();
            sum.0 += s.calls;
            sum.1 += s.usage;
        }
        let days_list = first.iter_days().take_while(|d| *d <= today).collect();
        let days = sums
            .into_iter()
            .map(|((date, provider, model, purpose), (calls, usage))| {
                let cost_usd = self.price(&provider, &model).map(|p| {
                    p.cost(
                        usage.input_tokens,
                        usage.output_tokens,
                        usage.cache_read_tokens,
                        usage.cache_write_tokens,
                    )
                });
                DailyUsage {
                    date,
                    provider,
                    model,
                    purpose,
                    calls,
                    usage,
                    cost_usd,
                }
            })
            .collect();
        Ok(UsageHistory {
            dates: days_list,
            days,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::env;

    #[tokio::test]
    async fn history_lists_every_day_and_sums_todays_calls_with_their_cost() {
        let env = env("[providers.main.prices.m1]\ninput = 1.0\noutput = 0.0\n").await;
        let store = env.store.clone();
        let ledger = UsageLedger::new(&env.config, store.clone());
        let u = Usage {
            input_tokens: 1_000_000,
            output_tokens: 0,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
        };
        store
            .record_usage(None, ("main", "m1"), "owner", &u)
            .await
            .unwrap();
        let h = ledger.history(90).await.unwrap();
        assert_eq!(h.dates.len(), 90);
        assert!(h.dates.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(h.days.len(), 1, "{h:?}");
        let day = &h.days[0];
        assert_eq!(day.date, *h.dates.last().unwrap(), "today");
        assert_eq!(day.calls, 1);
        assert_eq!(day.cost_usd, Some(1.0), "{day:?}");
        assert_eq!(ledger.history(0).await.unwrap().dates.len(), 1);
        assert_eq!(ledger.history(u32::MAX).await.unwrap().dates.len(), 366);
    }
}
