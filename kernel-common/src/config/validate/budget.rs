//! `[budget]`: every limit a positive, finite number of USD; `warn_at` between 0 and 1;
//! per-provider limits only for configured providers.

use std::collections::BTreeMap;

use super::Ctx;
use crate::config::ProviderConfig;
use crate::config::budget::{BudgetConfig, DEFAULT_WARN_AT, Limits};
use crate::config::raw::{RawBudget, RawLimits};

/// The validated `[budget]` (no limits when the section is absent).
pub(super) fn budget(
    ctx: &mut Ctx<'_>,
    raw: Option<&RawBudget>,
    providers: &BTreeMap<String, ProviderConfig>,
) -> BudgetConfig {
    let Some(raw) = raw else {
        return BudgetConfig::default();
    };
    let overall = limits(
        ctx,
        "budget",
        &RawLimits {
            daily: raw.daily.clone(),
            monthly: raw.monthly.clone(),
        },
    );
    let mut per_provider = BTreeMap::new();
    for (name, l) in &raw.providers {
        let key = format!("budget.providers.{name}");
        if !providers.contains_key(name) {
            let known: Vec<&str> = providers.keys().map(String::as_str).collect();
            ctx.refuse(format!(
                "{key}: no provider \"{name}\" is configured: use one of {}",
                known.join(", ")
            ));
            continue;
        }
        per_provider.insert(name.clone(), limits(ctx, &key, l));
    }
    let warn_at = match raw.warn_at.as_ref() {
        None => DEFAULT_WARN_AT,
        Some(v) => match number(v) {
            Some(w) if w.is_finite() && w > 0.0 && w < 1.0 => w,
            _ => {
                ctx.refuse(format!(
                    "budget.warn_at = {v} is not a share between 0 and 1: use e.g. warn_at = 0.8 \
                     (warn at 80 % of a limit, the default)"
                ));
                DEFAULT_WARN_AT
            }
        },
    };
    BudgetConfig {
        overall,
        providers: per_provider,
        warn_at,
    }
}

fn limits(ctx: &mut Ctx<'_>, section: &str, raw: &RawLimits) -> Limits {
    Limits {
        daily: usd(ctx, &format!("{section}.daily"), raw.daily.as_ref()),
        monthly: usd(ctx, &format!("{section}.monthly"), raw.monthly.as_ref()),
    }
}

/// A limit: a positive, finite number (an integer is fine).
fn usd(ctx: &mut Ctx<'_>, key: &str, raw: Option<&toml::Value>) -> Option<f64> {
    let v = raw?;
    match number(v) {
        Some(n) if n.is_finite() && n > 0.0 => Some(n),
        _ => {
            ctx.refuse(format!(
                "{key} = {v} is not a positive amount of USD: use a number above zero, e.g. \
                 {} = 5, or remove the key for no limit",
                key.rsplit('.').next().unwrap_or(key)
            ));
            None
        }
    }
}

fn number(v: &toml::Value) -> Option<f64> {
    match v {
        toml::Value::Float(f) => Some(*f),
        toml::Value::Integer(i) => Some(*i as f64),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{Component, Config, ConfigError};

    const BASE: &str = r#"
[general]
default_provider = "main"
[providers.main]
type = "claude"
api_key = "k"
max_tokens = 1024
default_model = "m"
"#;

    fn load(extra: &str) -> Result<Config, ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, format!("{BASE}\n{extra}")).unwrap();
        Config::load(&path, Component::Agentd, &|_| None)
    }

    fn problems(extra: &str) -> String {
        match load(extra) {
            Err(ConfigError::Invalid { problems }) => problems.join("\n"),
            other => panic!("expected a refusal for {extra:?}, got {other:?}"),
        }
    }

    #[test]
    fn a_budget_is_read_with_its_defaults() {
        let c = load("").unwrap();
        assert!(!c.budget.enabled());
        let c =
            load("[budget]\ndaily = 5\nmonthly = 50.5\n[budget.providers.main]\ndaily = 1.25\n")
                .unwrap();
        assert_eq!(c.budget.overall.daily, Some(5.0));
        assert_eq!(c.budget.overall.monthly, Some(50.5));
        assert_eq!(c.budget.providers["main"].daily, Some(1.25));
        assert_eq!(c.budget.warn_at, 0.8);
        assert!(c.budget.enabled());
        let c = load("[budget]\ndaily = 5\nwarn_at = 0.5\n").unwrap();
        assert_eq!(c.budget.warn_at, 0.5);
    }

    #[test]
    fn bad_limits_are_refused_with_the_key_and_the_fix() {
        for (extra, key) in [
            ("[budget]\ndaily = -1\n", "budget.daily = -1"),
            ("[budget]\ndaily = 0\n", "budget.daily = 0"),
            ("[budget]\nmonthly = nan\n", "budget.monthly = nan"),
            ("[budget]\nmonthly = inf\n", "budget.monthly = inf"),
            ("[budget]\ndaily = \"ten\"\n", "budget.daily = \"ten\""),
            (
                "[budget.providers.main]\nmonthly = -3.5\n",
                "budget.providers.main.monthly = -3.5",
            ),
        ] {
            let p = problems(extra);
            assert!(
                p.contains(key) && p.contains("positive amount of USD"),
                "{extra}: {p}"
            );
        }
        for warn in ["0", "1", "1.5", "-0.2", "nan", "\"high\""] {
            let p = problems(&format!("[budget]\ndaily = 1\nwarn_at = {warn}\n"));
            assert!(
                p.contains("budget.warn_at") && p.contains("between 0 and 1"),
                "{warn}: {p}"
            );
        }
        let p = problems("[budget.providers.nope]\ndaily = 1\n");
        assert!(
            p.contains("budget.providers.nope") && p.contains("main"),
            "{p}"
        );
        match load("[budget]\nweekly = 1\n") {
            Err(ConfigError::Parse { message, .. }) => {
                assert!(message.contains("weekly"), "{message}")
            }
            other => panic!("an unknown key is refused: {other:?}"),
        }
    }
}
