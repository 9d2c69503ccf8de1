//! `UsageLedger`: every model call's tokens (input, cache write, cache read, output) stored with
//! provider, model, session and time, and the `/usage` report (today in `general.timezone`, the
//! current session, the last 30 days) with its cost where `[providers.<name>.prices]` has the
//! model. A cheap `Clone` handle.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use kernel_common::Config;
use kernel_common::config::context::ModelPrice;

use crate::conversation::Usage;
use crate::store::{Store, StoreError, UsageSum};

/// The days `/usage` looks back.
pub(crate) const USAGE_DAYS: i64 = 30;

/// Tokens and cost over one period.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct UsageTotals {
    pub calls: u64,
    pub usage: Usage,
    /// USD, summed over the models with prices; `None` when none of them has one.
    pub cost_usd: Option<f64>,
}

/// The `/usage` report.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct UsageReport {
    pub today: UsageTotals,
    pub session: UsageTotals,
    pub last_30_days: UsageTotals,
}

/// The usage store and the configured prices.
#[derive(Debug, Clone)]
pub struct UsageLedger {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    store: Store,
    /// By (provider, model).
    prices: BTreeMap<(String, String), ModelPrice>,
    tz: Tz,
}

impl UsageLedger {
    /// The ledger over `store`, with the prices of `config`'s providers.
    pub fn new(config: &Config, store: Store) -> Self {
        let prices = config
            .providers
            .values()
            .flat_map(|p| {
                p.context
                    .prices
                    .iter()
                    .map(|(model, price)| ((p.name.clone(), model.clone()), *price))
            })
            .collect();
        Self {
            inner: Arc::new(Inner {
                store,
                prices,
                tz: config.general.timezone,
            }),
        }
    }

    /// Stores one model call's usage (a failure is logged: usage never fails a turn).
    pub async fn record(&self, session_id: i64, provider: &str, model: &str, usage: &Usage) {
        if let Err(e) = self
            .inner
            .store
            .record_usage(Some(session_id), provider, model, usage)
            .await
        {
            tracing::warn!(error = %e, "cannot record token usage");
        }
    }

    /// Today (since local midnight), session `session_id`, and the last [`USAGE_DAYS`] days.
    pub async fn report(&self, session_id: Option<i64>) -> Result<UsageReport, StoreError> {
        let now = Utc::now();
        let store = &self.inner.store;
        let today = store.usage_since(Some(self.midnight(now)), None).await?;
        let month = store
            .usage_since(Some(now - Duration::days(USAGE_DAYS)), None)
            .await?;
        let session = match session_id {
            Some(id) => store.usage_since(None, Some(id)).await?,
            None => Vec::new(),
        };
        Ok(UsageReport {
            today: self.totals(&today),
            session: self.totals(&session),
            last_30_days: self.totals(&month),
        })
    }

    fn midnight(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        let local = now.with_timezone(&self.inner.tz);
        local
            .date_naive()
            .and_hms_opt(0, 0, 0)
            .and_then(|t| t.and_local_timezone(self.inner.tz).earliest())
            .map_or(now - Duration::days(1), |t| t.with_timezone(&Utc))
    }

    fn totals(&self, sums: &[UsageSum]) -> UsageTotals {
        let mut t = UsageTotals::default();
        for s in sums {
            t.calls += s.calls;
            t.usage += s.usage;
            let key = (s.provider.clone(), s.model.clone());
            if let Some(price) = self.inner.prices.get(&key) {
                let u = &s.usage;
                let cost = price.cost(
                    u.input_tokens,
                    u.output_tokens,
                    u.cache_read_tokens,
                    u.cache_write_tokens,
                );
                *t.cost_usd.get_or_insert(0.0) += cost;
            }
        }
        t
    }
}
