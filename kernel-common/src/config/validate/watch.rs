//! `[watch]` (max_steps, max_tokens_per_run, min_interval_minutes); the cheap model is the
//! `[titles]` endpoint.

use super::Ctx;
use crate::config::TitlesConfig;
use crate::config::raw::RawWatch;
use crate::config::watch::{
    DEFAULT_WATCH_MAX_STEPS, DEFAULT_WATCH_MAX_TOKENS_PER_RUN, DEFAULT_WATCH_MIN_INTERVAL_MINUTES,
    MAX_WATCH_MAX_STEPS, MAX_WATCH_MIN_INTERVAL_MINUTES, MIN_WATCH_MAX_TOKENS_PER_RUN,
    WATCH_OUTPUT_TOKENS, WatchConfig,
};

/// The validated `[watch]` (the defaults when the section is absent).
pub(super) fn watch(
    ctx: &mut Ctx<'_>,
    raw: Option<&RawWatch>,
    titles: Option<&TitlesConfig>,
) -> WatchConfig {
    let default = RawWatch::default();
    let raw = raw.unwrap_or(&default);
    let max_steps = match raw.max_steps {
        None => DEFAULT_WATCH_MAX_STEPS,
        Some(n) if (1..=MAX_WATCH_MAX_STEPS).contains(&n) => n,
        Some(n) => {
            ctx.refuse(format!(
                "watch.max_steps = {n} is out of range: use 1 to {MAX_WATCH_MAX_STEPS} model \
                 calls per run (default {DEFAULT_WATCH_MAX_STEPS})"
            ));
            DEFAULT_WATCH_MAX_STEPS
        }
    };
    let max_tokens_per_run = match raw.max_tokens_per_run {
        None => DEFAULT_WATCH_MAX_TOKENS_PER_RUN,
        Some(n) if n >= MIN_WATCH_MAX_TOKENS_PER_RUN => n,
        Some(n) => {
            ctx.refuse(format!(
                "watch.max_tokens_per_run = {n} is too small: use at least \
                 {MIN_WATCH_MAX_TOKENS_PER_RUN} (default {DEFAULT_WATCH_MAX_TOKENS_PER_RUN})"
            ));
            DEFAULT_WATCH_MAX_TOKENS_PER_RUN
        }
    };
    let min_interval_minutes = match raw.min_interval_minutes {
        None => DEFAULT_WATCH_MIN_INTERVAL_MINUTES,
        Some(n) if (1..=MAX_WATCH_MIN_INTERVAL_MINUTES).contains(&n) => n,
        Some(n) => {
            ctx.refuse(format!(
                "watch.min_interval_minutes = {n} is out of range: use 1 to \
                 {MAX_WATCH_MIN_INTERVAL_MINUTES} (default {DEFAULT_WATCH_MIN_INTERVAL_MINUTES})"
            ));
            DEFAULT_WATCH_MIN_INTERVAL_MINUTES
        }
    };
    WatchConfig {
        max_steps,
        max_tokens_per_run,
        min_interval_minutes,
        endpoint: titles.map(|t| TitlesConfig {
            max_tokens: WATCH_OUTPUT_TOKENS,
            ..t.clone()
        }),
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{Component, Config, ConfigError};

    fn load(extra: &str) -> Result<Config, ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let text = format!(
            "[telegram]\ntoken = \"t\"\nallowed_user = 1\n\n[providers.claude]\ntype = \"claude\"\n\
             api_key = \"k\"\nmax_tokens = 1000\ndefault_model = \"m\"\n\n{extra}"
        );
        std::fs::write(&path, text).unwrap();
        Config::load(&path, Component::Agentd, &|_| None)
    }

    #[test]
    fn the_defaults_hold_without_the_section() {
        let watch = load("").unwrap().watch;
        assert_eq!(watch.max_steps, 4);
        assert_eq!(watch.max_tokens_per_run, 30_000);
        assert_eq!(watch.min_interval_minutes, 5);
        assert!(watch.endpoint.is_none());
    }

    #[test]
    fn set_values_are_taken_and_bad_ones_refused_naming_the_key() {
        let watch =
            load("[watch]\nmax_steps = 2\nmax_tokens_per_run = 5000\nmin_interval_minutes = 1\n")
                .unwrap()
                .watch;
        assert_eq!(
            (
                watch.max_steps,
                watch.max_tokens_per_run,
                watch.min_interval_minutes
            ),
            (2, 5000, 1)
        );
        let e = load("[watch]\nmax_steps = 0\nmax_tokens_per_run = 10\nmin_interval_minutes = 0\n")
            .unwrap_err()
            .to_string();
        for key in [
            "watch.max_steps",
            "watch.max_tokens_per_run",
            "watch.min_interval_minutes",
        ] {
            assert!(e.contains(key), "{e}");
        }
        let e = load("[watch]\nmax_step = 2\n").unwrap_err().to_string();
        assert!(e.contains("max_step"), "{e}");
    }
}
