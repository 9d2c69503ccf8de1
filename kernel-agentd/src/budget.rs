//! `Budget`: the `[budget]` limits against the spend summed from the usage ledger (the ledger is
//! the truth: a restart while over the limit stays over), per day and per month in
//! `general.timezone`. It says whether a new model call may start ([`Budget::over`]), which
//! warnings are due (once per period and limit, remembered in the store), and takes the owner's
//! "Continue today / this month" override ([`Budget::grant`]): only for the current period, so a
//! stale or forged press changes nothing. A cheap `Clone` handle; it is handed the ledger, the
//! store and a clock, and knows nothing of turns.

mod period;
pub mod texts;

use kernel_proto::refused;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use kernel_common::config::BudgetConfig;
use kernel_common::config::budget::Limits;

use crate::store::{Store, StoreError};
use crate::usage::{Spend, UsageLedger};

pub use period::{PeriodKind, Periods, Watermark};

/// Where the budget service reads the time (tests set it).
pub type Clock = Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>;

/// The store's mark of a granted override.
const OVERRIDE: &str = "override";

/// One configured limit and the spend against it in the current period.
#[derive(Debug, Clone, PartialEq)]
pub struct LimitState {
    pub period: PeriodKind,
    /// `None`: over every provider.
    pub provider: Option<String>,
    pub spent_usd: f64,
    pub limit_usd: f64,
}

impl LimitState {
    /// What is left (never below zero).
    pub fn left_usd(&self) -> f64 {
        (self.limit_usd - self.spent_usd).max(0.0)
    }

    /// Whether the limit is reached.
    pub fn reached(&self) -> bool {
        self.spent_usd >= self.limit_usd
    }

    /// `"all"` or the provider's name (the store's warning marks).
    fn scope(&self) -> &str {
        self.provider.as_deref().unwrap_or("all")
    }
}

/// Where spending stands now.
#[derive(Debug, Clone, PartialEq)]
pub struct Standing {
    pub periods: Periods,
    /// Spent today and this month, over every provider.
    pub today: Spend,
    pub month: Spend,
    /// Every configured limit, daily ones first.
    pub limits: Vec<LimitState>,
    /// The owner pressed "Continue today" / "Continue this month" for the current period.
    pub day_override: bool,
    pub month_override: bool,
}

impl Standing {
    /// The arguments of a `BUDGET_EXCEEDED` refusal for `over`: `period` (`daily`/`monthly`),
    /// `provider` (empty: overall), `spent_usd`, `limit_usd` (two decimals), and the override
    /// keys `day` and `month`.
    pub fn refusal_args(&self, over: &LimitState) -> refused::BudgetExceeded {
        refused::BudgetExceeded {
            period: over.period.word(),
            provider: over.provider.clone().unwrap_or_default(),
            spent_usd: over.spent_usd,
            limit_usd: over.limit_usd,
            day: self.periods.key(PeriodKind::Day),
            month: self.periods.key(PeriodKind::Month),
        }
    }

    /// The first limit reached and not lifted by an override: nothing new may start.
    pub fn over(&self) -> Option<&LimitState> {
        if self.day_override || self.month_override {
            return None;
        }
        self.limits.iter().find(|l| l.reached())
    }
}

/// The budget service.
#[derive(Clone)]
pub struct Budget {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Budget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Budget")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

struct Inner {
    config: BudgetConfig,
    ledger: UsageLedger,
    store: Store,
    tz: Tz,
    clock: Clock,
    watermark: Watermark,
}

impl Budget {
    /// The budget of `config` over `ledger`, reading the time from `clock`.
    pub fn new(
        config: BudgetConfig,
        tz: Tz,
        ledger: UsageLedger,
        store: Store,
        clock: Clock,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                config,
                ledger,
                store,
                tz,
                clock,
                watermark: Watermark::default(),
            }),
        }
    }

    /// The budget on the system clock.
    pub fn with_system_clock(
        config: BudgetConfig,
        tz: Tz,
        ledger: UsageLedger,
        store: Store,
    ) -> Self {
        Self::new(config, tz, ledger, store, Arc::new(Utc::now))
    }

    /// The usage ledger the spend is summed from (where model calls are recorded).
    pub fn ledger(&self) -> &UsageLedger {
        &self.inner.ledger
    }

    /// Whether any limit is configured.
    pub fn enabled(&self) -> bool {
        self.inner.config.enabled()
    }

    /// Now, never earlier than the newest ledger row or any "now" before.
    async fn now(&self) -> Result<DateTime<Utc>, StoreError> {
        let inner = &self.inner;
        let clock = (inner.clock)();
        let newest = inner.store.latest_usage_at().await?;
        inner.watermark.advance(clock);
        Ok(match newest {
            Some(t) => inner.watermark.advance(t),
            None => inner.watermark.advance(clock),
        })
    }

    /// Where spending stands now.
    pub async fn standing(&self) -> Result<Standing, StoreError> {
        let inner = &self.inner;
        let periods = Periods::at(self.now().await?, inner.tz);
        let today = inner.ledger.spend_since(periods.day_start).await?;
        let month = inner.ledger.spend_since(periods.month_start).await?;
        let mut limits = Vec::new();
        let mut add = |provider: Option<&str>, l: &Limits| {
            for (period, limit, spend) in [
                (PeriodKind::Day, l.daily, &today),
                (PeriodKind::Month, l.monthly, &month),
            ] {
                let Some(limit_usd) = limit else { continue };
                let spent_usd = match provider {
                    None => spend.total,
                    Some(p) => spend.by_provider.get(p).copied().unwrap_or(0.0),
                };
                limits.push(LimitState {
                    period,
                    provider: provider.map(str::to_owned),
                    spent_usd,
                    limit_usd,
                });
            }
        };
        add(None, &inner.config.overall);
        for (name, l) in &inner.config.providers {
            add(Some(name), l);
        }
        limits.sort_by_key(|l| l.period);
        let (day_key, month_key) = (periods.key(PeriodKind::Day), periods.key(PeriodKind::Month));
        let (day_override, month_override) = tokio::try_join!(
            inner.store.budget_marked(&day_key, OVERRIDE),
            inner.store.budget_marked(&month_key, OVERRIDE),
        )?;
        Ok(Standing {
            periods,
            today,
            month,
            limits,
            day_override,
            month_override,
        })
    }

    /// The limit that stops new model work now, if any (no limits: never; a store failure is
    /// logged and stops nothing).
    pub async fn over(&self) -> Option<(Standing, LimitState)> {
        if !self.enabled() {
            return None;
        }
        match self.standing().await {
            Ok(s) => {
                let over = s.over().cloned()?;
                Some((s, over))
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the spend; the budget stops nothing");
                None
            }
        }
    }

    /// The limits that reached `warn_at` in this period and were not warned of yet; each is
    /// remembered before it is returned, so it is warned of once (restarts included).
    pub async fn warnings_due(&self) -> Vec<LimitState> {
        if !self.enabled() {
            return Vec::new();
        }
        let standing = match self.standing().await {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the spend for a budget warning");
                return Vec::new();
            }
        };
        let warn_at = self.inner.config.warn_at;
        let mut due = Vec::new();
        for l in standing.limits {
            if l.spent_usd < l.limit_usd * warn_at {
                continue;
            }
            let key = standing.periods.key(l.period);
            match self
                .inner
                .store
                .mark_budget(&key, &format!("warn:{}", l.scope()))
                .await
            {
                Ok(true) => {
                    tracing::info!(period = %key, scope = l.scope(), spent = l.spent_usd, limit = l.limit_usd, "budget warning due");
                    due.push(l);
                }
                Ok(false) => {}
                Err(e) => tracing::warn!(error = %e, "cannot record a budget warning"),
            }
        }
        due
    }

    /// Remembers that the owner was told of skipped work named `what` in the current day;
    /// `true` the first time (tell the owner then).
    pub async fn first_skip(&self, what: &str) -> bool {
        let key = match self.now().await {
            Ok(now) => Periods::at(now, self.inner.tz).key(PeriodKind::Day),
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the time of the ledger");
                return true;
            }
        };
        self.inner
            .store
            .mark_budget(&key, &format!("skipped:{what}"))
            .await
            .unwrap_or(true)
    }

    /// The owner's override for `period` (`day:YYYY-MM-DD` or `month:YYYY-MM`): granted (and
    /// logged) only when it names the current day or month; anything else — a stale press from
    /// an earlier period, a forged key — changes nothing (`false`).
    pub async fn grant(&self, period: &str) -> Result<bool, StoreError> {
        let periods = Periods::at(self.now().await?, self.inner.tz);
        let current = [PeriodKind::Day, PeriodKind::Month]
            .into_iter()
            .any(|k| periods.key(k) == period);
        if !current {
            tracing::info!(period, "a budget override for another period was refused");
            return Ok(false);
        }
        let new = self.inner.store.mark_budget(period, OVERRIDE).await?;
        tracing::info!(period, new, "budget override granted by the owner");
        Ok(true)
    }
}

#[cfg(test)]
mod tests;
