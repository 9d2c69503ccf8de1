//! `[budget]`: daily and monthly spending limits in USD (overall and per provider) and the share
//! of a limit at which the owner is warned once per period. No limit set: nothing is stopped.

use std::collections::BTreeMap;

/// The default `warn_at`: the owner is warned at 80 % of a limit.
pub const DEFAULT_WARN_AT: f64 = 0.8;

/// Daily and monthly limits, USD (`None`: no limit of that period).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Limits {
    pub daily: Option<f64>,
    pub monthly: Option<f64>,
}

impl Limits {
    /// Whether any limit is set.
    pub fn any(&self) -> bool {
        self.daily.is_some() || self.monthly.is_some()
    }
}

/// The validated `[budget]`.
#[derive(Debug, Clone, PartialEq)]
pub struct BudgetConfig {
    /// Over every provider.
    pub overall: Limits,
    /// `[budget.providers.<name>]`: over one provider's calls.
    pub providers: BTreeMap<String, Limits>,
    /// The share of a limit (0 < warn_at < 1) at which the owner gets one notice per period.
    pub warn_at: f64,
}

impl Default for BudgetConfig {
    fn default() -> Self {
        Self {
            overall: Limits::default(),
            providers: BTreeMap::new(),
            warn_at: DEFAULT_WARN_AT,
        }
    }
}

impl BudgetConfig {
    /// Whether any limit is configured (else the budget never stops anything).
    pub fn enabled(&self) -> bool {
        self.overall.any() || self.providers.values().any(Limits::any)
    }
}
