//! `Models`: the current provider and model and the provider clients; switched by RPC, saved in
//! `settings`, restored at start with a fall back to `default_provider` when the saved one is
//! unusable. Fail-over: a provider whose call failed (rate limit, overload, auth/billing,
//! network) cools down (`cooldown`); `current` skips a cooling provider and `fail_over` names the
//! next usable one of `general.fallback_providers`.

pub(crate) mod cooldown;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use kernel_common::Config;
use kernel_common::config::images::ImageLimits;
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

    /// The wire kind and configured image limits of provider `name`, or of the current one.
    pub fn images(&self, name: Option<&str>) -> Option<(ProviderKind, ImageLimits)> {
        let name = name.map_or_else(|| self.selection().provider, str::to_owned);
        self.inner.configs.get(&name).map(|p| (p.kind, p.images))
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

    /// The provider and model `spec` names — `provider/model`, or `provider` for its default
    /// model — for a turn that runs on it rather than on the current choice (a scheduled task).
    /// `Err` says in English what is wrong, naming the choices: an unknown provider, a model
    /// outside its `models`, a provider without a key.
    pub fn named(&self, spec: &str) -> Result<CurrentModel, String> {
        let spec = spec.trim();
        let (name, model) = match spec.split_once('/') {
            Some((p, m)) => (p.trim(), Some(m.trim())),
            None => (spec, None),
        };
        let Some(config) = self.inner.configs.get(name) else {
            let choices: Vec<&str> = self.inner.configs.keys().map(String::as_str).collect();
            return Err(format!(
                "unknown provider {:?}: use \"provider/model\" with one of {}",
                shown(name),
                choices.join(", ")
            ));
        };
        let model = model.unwrap_or(&config.default_model);
        if model != config.default_model && !config.models.iter().any(|m| m == model) {
            return Err(format!(
                "model {:?} is not configured for provider {name}: use one of {}",
                shown(model),
                config.models.join(", ")
            ));
        }
        let Some(provider) = self.inner.clients.get(name).cloned() else {
            return Err(format!(
                "provider {name} has no API key: set it, or name another provider"
            ));
        };
        Ok(CurrentModel {
            name: name.to_owned(),
            replaces: None,
            provider,
            model: model.to_owned(),
            kind: config.kind,
            retry: config.retry,
        })
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
mod tests;
