//! `UsageLedger`: every model call's tokens (input, cache write, cache read, output) stored with
//! provider, model, [`Purpose`] (what the call was for), session and time, and the `/usage` report (today in `general.timezone`, the
//! current session, the last 30 days) with its cost where `[providers.<name>.prices]` has the
//! model, else the shipped list price ([`crate::prices`]); calls of a model priced nowhere are
//! counted as "cost unknown". A cheap `Clone` handle.

mod history;

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use kernel_common::Config;
use kernel_common::config::context::ModelPrice;

pub(crate) use crate::conversation::Purpose;
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
    /// Calls of models with no price (configured or shipped): their cost is unknown.
    pub unpriced_calls: u64,
}

/// The `/usage` report.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct UsageReport {
    pub today: UsageTotals,
    pub session: UsageTotals,
    pub last_30_days: UsageTotals,
}

/// Calls and cost of one provider's model over a period (`None`: no price), for one purpose
/// when the report is split by purpose.
#[derive(Debug, Clone, PartialEq)]
pub struct CostLine {
    pub provider: String,
    pub model: String,
    /// The [`Purpose`] name; empty in a report per model only.
    pub purpose: String,
    pub calls: u64,
    pub cost_usd: Option<f64>,
}

/// USD spent over a period, in total and per provider (calls of unpriced models count nothing).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spend {
    pub total: f64,
    pub by_provider: BTreeMap<String, f64>,
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

#[async_trait::async_trait]
impl crate::llm::titles::RecordUsage for UsageLedger {
    async fn record_call(&self, (provider, model): (&str, &str), purpose: Purpose, usage: &Usage) {
        self.record(None, (provider, model), purpose, usage).await;
    }
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

    /// Stores one model call's usage, made for `purpose` (of session `session_id` when it
    /// belongs to one); a failure is logged: usage never fails a turn.
    pub async fn record(
        &self,
        session_id: Option<i64>,
        (provider, model): (&str, &str),
        purpose: Purpose,
        usage: &Usage,
    ) {
        if let Err(e) = self
            .inner
            .store
            .record_usage(session_id, (provider, model), purpose.as_str(), usage)
            .await
        {
            tracing::warn!(error = %e, purpose = purpose.as_str(), "cannot record token usage");
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

    /// USD spent since `since` (rows stamped later than now count too: a clock that went back
    /// never hides spend).
    pub async fn spend_since(&self, since: DateTime<Utc>) -> Result<Spend, StoreError> {
        let sums = self.inner.store.usage_since(Some(since), None).await?;
        let mut spend = Spend::default();
        for s in &sums {
            if let Some(price) = self.price(&s.provider, &s.model) {
                let u = &s.usage;
                let cost = price.cost(
                    u.input_tokens,
                    u.output_tokens,
                    u.cache_read_tokens,
                    u.cache_write_tokens,
                );
                spend.total += cost;
                *spend.by_provider.entry(s.provider.clone()).or_default() += cost;
            }
        }
        Ok(spend)
    }

    /// Calls and cost since `since`, per provider and model (sorted by them).
    pub async fn by_model_since(&self, since: DateTime<Utc>) -> Result<Vec<CostLine>, StoreError> {
        let sums = self.inner.store.usage_since(Some(since), None).await?;
        Ok(sums
            .iter()
            .map(|s| CostLine {
                provider: s.provider.clone(),
                model: s.model.clone(),
                purpose: String::new(),
                calls: s.calls,
                cost_usd: self.cost(s),
            })
            .collect())
    }

    /// Calls and cost since `since`, per provider, model and purpose (sorted by them).
    pub async fn by_purpose_since(
        &self,
        since: DateTime<Utc>,
    ) -> Result<Vec<CostLine>, StoreError> {
        let sums = self.inner.store.usage_by_purpose_since(since).await?;
        Ok(sums
            .into_iter()
            .map(|p| CostLine {
                cost_usd: self.cost(&p.sum),
                provider: p.sum.provider,
                model: p.sum.model,
                purpose: p.purpose,
                calls: p.sum.calls,
            })
            .collect())
    }

    /// The cost of `s` (`None`: its model has no price).
    fn cost(&self, s: &UsageSum) -> Option<f64> {
        let u = &s.usage;
        self.price(&s.provider, &s.model).map(|p| {
            p.cost(
                u.input_tokens,
                u.output_tokens,
                u.cache_read_tokens,
                u.cache_write_tokens,
            )
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
            if let Some(price) = self.price(&s.provider, &s.model) {
                let u = &s.usage;
                let cost = price.cost(
                    u.input_tokens,
                    u.output_tokens,
                    u.cache_read_tokens,
                    u.cache_write_tokens,
                );
                *t.cost_usd.get_or_insert(0.0) += cost;
            } else {
                t.unpriced_calls += s.calls;
            }
        }
        t
    }

    /// The configured price of `model` at `provider`, else its shipped list price.
    pub fn price(&self, provider: &str, model: &str) -> Option<ModelPrice> {
        self.inner
            .prices
            .get(&(provider.to_owned(), model.to_owned()))
            .copied()
            .or_else(|| crate::prices::list_price(model))
    }
}
