//! `Models`: the current provider and model and the provider clients; switched by RPC, saved in
//! `settings`, restored at start with a fall back to `default_provider` when the saved one is
//! unusable. Fail-over: a provider whose call failed (rate limit, overload, auth/billing,
//! network) cools down (`cooldown`); `current` skips a cooling provider and `fail_over` names the
//! next usable one of `general.fallback_providers`.

pub(crate) mod cooldown;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use kernel_common::Config;
use kernel_common::config::{ProviderConfig, ProviderKind, provider_key_env};

use crate::error::ApiError;
use crate::llm::retry::RetryStats;
use crate::llm::{LlmError, Provider};
use crate::refusal::Refusal;
use crate::store::Store;
use cooldown::{Clock, Cooldown, Cooldowns, FailoverReason};
use kernel_common::config::retry::RetryConfig;

const PROVIDER_KEY: &str = "provider";
const MODEL_KEY: &str = "model";
/// Most characters of a rejected name echoed back in an error message.
const SHOWN_CHARS: usize = 64;

/// `name` as echoed in an error: cut to [`SHOWN_CHARS`] characters (a careless script may send
/// megabytes).
fn shown(name: &str) -> String {
    kernel_common::text::truncate(name, SHOWN_CHARS).into_owned()
}

/// The current provider/model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    pub provider: String,
    pub model: String,
}

/// A provider as listed by `ListProviders`.
#[derive(Debug, Clone)]
pub struct ProviderListing {
    pub name: String,
    pub kind: ProviderKind,
    pub models: Vec<String>,
    pub default_model: String,
    pub available: bool,
    pub current: bool,
    /// Its cooldown, while it lasts.
    pub cooldown: Option<Cooldown>,
}

/// The current provider's client, model and wire kind: what a turn calls.
#[derive(Debug, Clone)]
pub struct CurrentModel {
    /// The provider's configured name.
    pub name: String,
    /// The selected provider this one stands in for (it is cooling down).
    pub replaces: Option<String>,
    pub provider: Arc<dyn Provider>,
    pub model: String,
    pub kind: ProviderKind,
    /// Its retry policy (`[providers.<name>.retry]`).
    pub retry: RetryConfig,
}

impl Selection {
    /// The saved choice if it is still usable, else the default provider and its default model.
    async fn restore(config: &Config, store: &Store) -> Result<Selection, ApiError> {
        let saved_provider = store
            .get_setting(PROVIDER_KEY)
            .await
            .map_err(ApiError::internal)?;
        let saved_model = store
            .get_setting(MODEL_KEY)
            .await
            .map_err(ApiError::internal)?;
        if let Some(name) = saved_provider {
            match config.providers.get(&name) {
                Some(p) if p.available() => {
                    let model = saved_model
                        .filter(|m| p.models.contains(m))
                        .unwrap_or_else(|| p.default_model.clone());
                    return Ok(Selection {
                        provider: name,
                        model,
                    });
                }
                _ => tracing::warn!(provider = %name, fallback = %config.general.default_provider,
                    "the saved provider is unusable (removed or no key); using the default provider"),
            }
        }
        let name = config.general.default_provider.clone();
        let model = config
            .providers
            .get(&name)
            .map(|p| p.default_model.clone())
            .ok_or_else(|| {
                ApiError::FailedPrecondition(format!("default provider {name} is not configured"))
            })?;
        Ok(Selection {
            provider: name,
            model,
        })
    }
}

/// Provider/model selection: the configured providers, the clients of the usable ones, and the
/// current choice (persisted). A cheap `Clone` handle.
#[derive(Debug, Clone)]
pub struct Models {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// Every configured provider, by name.
    configs: BTreeMap<String, ProviderConfig>,
    /// Usable providers (those with a key), by name.
    clients: BTreeMap<String, Arc<dyn Provider>>,
    store: Store,
    selection: Mutex<Selection>,
    /// `general.fallback_providers`, in order.
    fallbacks: Vec<String>,
    cooldowns: Cooldowns,
    /// Retries of turn model calls, for `/status`.
    retries: RetryStats,
}

impl Models {
    /// Restores the saved choice from `store` (see [`Selection`]); `clients` are the usable
    /// providers by name.
    pub async fn start(
        config: &Config,
        clients: BTreeMap<String, Arc<dyn Provider>>,
        store: Store,
    ) -> Result<Models, ApiError> {
        Self::start_with_clock(config, clients, store, Clock::system()).await
    }

    /// Like [`Models::start`], with cooldowns timed by `clock`.
    pub async fn start_with_clock(
        config: &Config,
        clients: BTreeMap<String, Arc<dyn Provider>>,
        store: Store,
        clock: Clock,
    ) -> Result<Models, ApiError> {
        let selection = Selection::restore(config, &store).await?;
        tracing::info!(provider = %selection.provider, model = %selection.model, "provider selected");
        let names = config
            .providers
            .keys()
            .map(String::as_str)
            .chain([cooldown::TITLES]);
        let cooldowns = Cooldowns::load(store.clone(), clock, names).await;
        Ok(Models {
            inner: Arc::new(Inner {
                configs: config.providers.clone(),
                clients,
                store,
                selection: Mutex::new(selection),
                fallbacks: config.general.fallback_providers.clone(),
                cooldowns,
                retries: RetryStats::default(),
            }),
        })
    }

    /// The providers' (and `[titles]`') cooldowns.
    pub fn cooldowns(&self) -> &Cooldowns {
        &self.inner.cooldowns
    }

    /// Retries of turn model calls since the start.
    pub fn retries(&self) -> &RetryStats {
        &self.inner.retries
    }

    /// The current provider/model choice.
    pub fn selection(&self) -> Selection {
        self.inner
            .selection
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The wire kind of the current provider.
    pub fn current_kind(&self) -> Option<ProviderKind> {
        let name = self.selection().provider;
        self.inner.configs.get(&name).map(|p| p.kind)
    }

    /// What the next model call uses: the selected provider and model, or — while the selected
    /// provider cools down — the first usable fallback provider with its default model (the
    /// selected one when none is usable).
    pub fn current(&self) -> Result<CurrentModel, ApiError> {
        let s = self.selection();
        if self.inner.cooldowns.is_cooling(&s.provider)
            && let Some(mut next) = self.next_usable(&s.provider)
        {
            tracing::info!(provider = %s.provider, fallback = %next.name, "the selected provider is cooling down");
            next.replaces = Some(s.provider);
            return Ok(next);
        }
        let unavailable = || {
            ApiError::from(Refusal::ProviderUnavailable {
                provider: s.provider.clone(),
            })
        };
        let provider = self
            .inner
            .clients
            .get(&s.provider)
            .cloned()
            .ok_or_else(unavailable)?;
        let config = self
            .inner
            .configs
            .get(&s.provider)
            .ok_or_else(unavailable)?;
        Ok(CurrentModel {
            name: s.provider,
            replaces: None,
            provider,
            model: s.model,
            kind: config.kind,
            retry: config.retry,
        })
    }

    /// After `failed`'s call failed with `error` before any answer text: when the error is a
    /// provider failure (see [`FailoverReason::of`]), `failed` cools down, and the next usable
    /// fallback provider (if any) is returned with the reason.
    pub async fn fail_over(
        &self,
        failed: &str,
        error: &LlmError,
    ) -> Option<(CurrentModel, FailoverReason)> {
        let reason = FailoverReason::of(error)?;
        self.inner.cooldowns.failed(failed).await;
        let next = self.next_usable(failed)?;
        tracing::warn!(provider = %failed, fallback = %next.name, reason = reason.code(), "failing over");
        Some((next, reason))
    }

    /// Records a successful call of `name` (its cooldown streak ends).
    pub async fn succeeded(&self, name: &str) {
        self.inner.cooldowns.succeeded(name).await;
    }

    /// The first fallback provider other than `except` that has a client and is not cooling
    /// down, with its default model.
    fn next_usable(&self, except: &str) -> Option<CurrentModel> {
        let inner = &self.inner;
        inner
            .fallbacks
            .iter()
            .filter(|name| *name != except && !inner.cooldowns.is_cooling(name))
            .find_map(|name| {
                let provider = inner.clients.get(name)?.clone();
                let config = inner.configs.get(name)?;
                Some(CurrentModel {
                    name: name.clone(),
                    replaces: None,
                    provider,
                    model: config.default_model.clone(),
                    kind: config.kind,
                    retry: config.retry,
                })
            })
    }

    /// Every configured provider, marking availability and the current one.
    pub fn list(&self) -> (Vec<ProviderListing>, Selection) {
        let s = self.selection();
        let list = self
            .inner
            .configs
            .values()
            .map(|p| ProviderListing {
                name: p.name.clone(),
                kind: p.kind,
                models: p.models.clone(),
                default_model: p.default_model.clone(),
                available: p.available(),
                current: p.name == s.provider,
                cooldown: self.inner.cooldowns.active(&p.name),
            })
            .collect();
        (list, s)
    }

    /// Switches to provider `name` and its default model; saved for the next start. The owner's
    /// explicit choice wins: a cooldown of `name` ends.
    pub async fn select_provider(&self, name: &str) -> Result<Selection, ApiError> {
        let p = self.provider_config(name)?;
        if !p.available() {
            return Err(Refusal::ProviderWithoutKey {
                provider: name.to_owned(),
                env: provider_key_env(name),
            }
            .into());
        }
        let selection = Selection {
            provider: name.to_string(),
            model: p.default_model.clone(),
        };
        let selection = self.save(selection).await?;
        self.inner.cooldowns.end_by_owner(name).await;
        Ok(selection)
    }

    /// Switches model within the current provider's configured `models`.
    pub async fn select_model(&self, model: &str) -> Result<Selection, ApiError> {
        let current = self.selection();
        let p = self.provider_config(&current.provider)?;
        if !p.models.iter().any(|m| m == model) {
            return Err(Refusal::UnknownModel {
                model: shown(model),
                provider: p.name.clone(),
                choices: p.models.clone(),
            }
            .into());
        }
        self.save(Selection {
            provider: current.provider,
            model: model.to_string(),
        })
        .await
    }

    fn provider_config(&self, name: &str) -> Result<&ProviderConfig, ApiError> {
        self.inner.configs.get(name).ok_or_else(|| {
            Refusal::UnknownProvider {
                provider: shown(name),
                choices: self.inner.configs.keys().cloned().collect(),
            }
            .into()
        })
    }

    async fn save(&self, selection: Selection) -> Result<Selection, ApiError> {
        let store = &self.inner.store;
        store
            .set_setting(PROVIDER_KEY, &selection.provider)
            .await
            .map_err(ApiError::internal)?;
        store
            .set_setting(MODEL_KEY, &selection.model)
            .await
            .map_err(ApiError::internal)?;
        *self
            .inner
            .selection
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = selection.clone();
        tracing::info!(provider = %selection.provider, model = %selection.model, "provider selected");
        Ok(selection)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{ScriptedProvider, TestEnv, env};
    use cooldown::tests::{assert_near, unpaused};

    /// `Models` over `env` with scripted clients for the providers that have a key.
    async fn models(env: &TestEnv) -> Models {
        let clients: BTreeMap<String, Arc<dyn Provider>> = ["main", "spare"]
            .into_iter()
            .map(|n| {
                (
                    n.to_owned(),
                    ScriptedProvider::new(vec![]) as Arc<dyn Provider>,
                )
            })
            .collect();
        Models::start(&env.config, clients, env.store.clone())
            .await
            .unwrap()
    }

    fn pair(s: &Selection) -> (&str, &str) {
        (&s.provider, &s.model)
    }

    #[tokio::test]
    async fn starts_with_the_default_provider_and_lists_every_configured_one() {
        let env = env("").await;
        let m = models(&env).await;
        assert_eq!(pair(&m.selection()), ("main", "m1"));
        let current = m.current().unwrap();
        assert_eq!(
            (current.model.as_str(), current.kind),
            ("m1", ProviderKind::Claude)
        );
        let (list, selection) = m.list();
        assert_eq!(pair(&selection), ("main", "m1"));
        let rows: Vec<(&str, ProviderKind, bool, bool)> = list
            .iter()
            .map(|p| (p.name.as_str(), p.kind, p.available, p.current))
            .collect();
        assert_eq!(
            rows,
            vec![
                ("keyless", ProviderKind::OpenAiCompat, false, false),
                ("main", ProviderKind::Claude, true, true),
                ("spare", ProviderKind::OpenAiCompat, true, false),
            ]
        );
    }

    #[tokio::test]
    async fn switching_is_checked_and_survives_a_restart() {
        let env = env("").await;
        let m = models(&env).await;
        assert!(matches!(
            m.select_provider("keyless").await,
            Err(ApiError::Refused(ref r @ Refusal::ProviderWithoutKey { .. }))
                if r.to_string().contains("providers.keyless.api_key")
        ));
        let long = "x".repeat(1000);
        let Err(ApiError::Refused(r @ Refusal::UnknownProvider { .. })) =
            m.select_provider(&long).await
        else {
            panic!("an unknown provider is refused");
        };
        let msg = r.to_string();
        assert!(msg.contains(&format!("{}…", "x".repeat(64))), "{msg}");
        assert!(!msg.contains(&"x".repeat(65)), "the name is cut");
        assert!(msg.ends_with("configured: keyless, main, spare"), "{msg}");
        assert!(matches!(
            m.select_model("s1").await,
            Err(ApiError::Refused(ref r @ Refusal::UnknownModel { .. }))
                if r.to_string().ends_with("choose one of: m1, m2")
        ));
        assert_eq!(pair(&m.select_model("m2").await.unwrap()), ("main", "m2"));
        assert_eq!(
            pair(&m.select_provider("spare").await.unwrap()),
            ("spare", "s1")
        );
        assert_eq!(m.current().unwrap().kind, ProviderKind::OpenAiCompat);
        assert_eq!(m.current_kind(), Some(ProviderKind::OpenAiCompat));

        let again = models(&env).await;
        assert_eq!(
            pair(&again.selection()),
            ("spare", "s1"),
            "restored from settings"
        );
    }

    #[tokio::test]
    async fn an_unusable_saved_choice_falls_back_to_the_default() {
        let env = env("").await;
        env.store
            .set_setting(PROVIDER_KEY, "keyless")
            .await
            .unwrap();
        assert_eq!(pair(&models(&env).await.selection()), ("main", "m1"));
        env.store.set_setting(PROVIDER_KEY, "main").await.unwrap();
        env.store.set_setting(MODEL_KEY, "gone").await.unwrap();
        assert_eq!(
            pair(&models(&env).await.selection()),
            ("main", "m1"),
            "a model no longer configured falls back to the provider's default"
        );
        env.store.set_setting(MODEL_KEY, "m2").await.unwrap();
        assert_eq!(pair(&models(&env).await.selection()), ("main", "m2"));
    }

    fn rate_limited() -> LlmError {
        LlmError::RateLimited {
            retry_after: None,
            message: "slow down".into(),
        }
    }

    /// `Models` with `main` failing over to `keyless` (no key: skipped), then `spare`, timed
    /// by a clock anchored at `t0`.
    async fn failover_models(env: &TestEnv, t0: chrono::DateTime<chrono::Utc>) -> Models {
        let mut config = env.config.clone();
        config.general.fallback_providers = vec!["keyless".into(), "spare".into(), "main".into()];
        let clients: BTreeMap<String, Arc<dyn Provider>> = ["main", "spare"]
            .into_iter()
            .map(|n| {
                (
                    n.to_owned(),
                    ScriptedProvider::new(vec![]) as Arc<dyn Provider>,
                )
            })
            .collect();
        Models::start_with_clock(&config, clients, env.store.clone(), Clock::anchored(t0))
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn a_failed_provider_cools_down_on_schedule_is_skipped_and_this_survives_a_restart() {
        let env = env("").await;
        let t0 = chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let minutes = chrono::Duration::minutes;
        tokio::time::pause();
        let m = unpaused(failover_models(&env, t0)).await;
        let bad = LlmError::BadRequest {
            status: 400,
            message: "no".into(),
        };
        assert!(
            unpaused(m.fail_over("main", &bad)).await.is_none(),
            "a 400 does not fail over"
        );
        assert!(m.list().0.iter().all(|p| p.cooldown.is_none()));

        let (next, reason) = unpaused(m.fail_over("main", &rate_limited()))
            .await
            .unwrap();
        assert_eq!((next.name.as_str(), next.model.as_str()), ("spare", "s1"));
        assert_eq!(
            (reason, next.kind),
            (FailoverReason::RateLimited, ProviderKind::OpenAiCompat)
        );
        let current = m.current().unwrap();
        assert_eq!(
            (
                current.name.as_str(),
                current.model.as_str(),
                current.replaces.as_deref()
            ),
            ("spare", "s1", Some("main")),
            "the selected provider is skipped while it cools down"
        );
        assert_eq!(
            pair(&m.selection()),
            ("main", "m1"),
            "the choice itself stays"
        );
        let (list, _) = m.list();
        let main = list.iter().find(|p| p.name == "main").unwrap();
        let cooldown = main.cooldown.expect("listed with its cooldown");
        assert_eq!(cooldown.failures, 1);
        assert_near(cooldown.until, t0 + minutes(5));

        tokio::time::advance(std::time::Duration::from_secs(5 * 60)).await;
        assert_eq!(m.current().unwrap().name, "main", "back after 5 min");
        unpaused(m.fail_over("main", &rate_limited()))
            .await
            .unwrap();
        let until = m.cooldowns().active("main").unwrap().until;
        assert_near(until, t0 + minutes(5 + 25));

        // Both cool down: nothing usable is left, so the call fails and turns keep `main`.
        assert!(
            unpaused(m.fail_over("spare", &rate_limited()))
                .await
                .is_none()
        );
        assert_eq!(m.current().unwrap().name, "main");

        let restarted = unpaused(failover_models(&env, t0 + minutes(6))).await;
        assert_eq!(
            restarted.cooldowns().active("main"),
            Some(Cooldown { failures: 2, until }),
            "cooldowns survive a restart"
        );
        assert_eq!(restarted.current().unwrap().name, "main");
        unpaused(restarted.succeeded("spare")).await;
        assert_eq!(
            restarted.current().unwrap().replaces.as_deref(),
            Some("main")
        );
        unpaused(restarted.succeeded("main")).await;
        assert_eq!(restarted.current().unwrap().replaces, None);
        let again = unpaused(failover_models(&env, t0 + minutes(6))).await;
        assert!(
            again.cooldowns().all_active().is_empty(),
            "the reset is saved"
        );
    }

    #[tokio::test]
    async fn choosing_a_cooling_provider_ends_its_cooldown_and_uses_it() {
        let env = env("").await;
        let t0 = chrono::Utc::now();
        let m = failover_models(&env, t0).await;
        m.fail_over("main", &rate_limited()).await.unwrap();
        assert_eq!(m.current().unwrap().name, "spare");
        m.select_provider("main").await.unwrap();
        let current = m.current().unwrap();
        assert_eq!((current.name.as_str(), current.replaces), ("main", None));
        assert!(m.cooldowns().active("main").is_none());
        let again = failover_models(&env, t0).await;
        assert!(
            again.cooldowns().active("main").is_none(),
            "the end is saved"
        );
    }

    #[tokio::test]
    async fn a_provider_without_a_client_is_unavailable() {
        let env = env("").await;
        let m = Models::start(&env.config, BTreeMap::new(), env.store.clone())
            .await
            .unwrap();
        assert!(matches!(
            m.current(),
            Err(ApiError::Refused(ref r @ Refusal::ProviderUnavailable { .. }))
                if r.to_string() == "provider main is unavailable (no API key)"
        ));
    }
}
