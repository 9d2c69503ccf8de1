//! `Selection`: the current provider and model; switched by RPC, saved in `settings`, restored at
//! start with a fall back to `default_provider` when the saved one is unusable.

use std::sync::Arc;

use kernel_common::Config;
use kernel_common::config::{ProviderConfig, provider_key_env};

use crate::agent::Agent;
use crate::error::ApiError;
use crate::llm::Provider;
use crate::store::Store;

const PROVIDER_KEY: &str = "provider";
const MODEL_KEY: &str = "model";
/// Most characters of a rejected name echoed back in an error message.
const SHOWN_CHARS: usize = 64;

/// `name` as echoed in an error: cut to [`SHOWN_CHARS`] characters (a careless script may send
/// megabytes).
fn shown(name: &str) -> String {
    match name.char_indices().nth(SHOWN_CHARS) {
        Some((cut, _)) => format!("{}…", &name[..cut]),
        None => name.to_string(),
    }
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
    pub kind: &'static str,
    pub models: Vec<String>,
    pub default_model: String,
    pub available: bool,
    pub current: bool,
}

impl Selection {
    /// The saved choice if it is still usable, else the default provider and its default model.
    pub async fn restore(config: &Config, store: &Store) -> Result<Selection, ApiError> {
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

impl Agent {
    /// The current provider/model choice.
    pub fn selection(&self) -> Selection {
        self.inner
            .selection
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The current provider's client and model.
    pub fn current_provider(&self) -> Result<(Arc<dyn Provider>, String), ApiError> {
        let s = self.selection();
        let provider = self
            .inner
            .providers
            .get(&s.provider)
            .cloned()
            .ok_or_else(|| {
                ApiError::FailedPrecondition(format!(
                    "provider {} is unavailable (no API key)",
                    s.provider
                ))
            })?;
        Ok((provider, s.model))
    }

    /// Every configured provider, marking availability and the current one.
    pub fn list_providers(&self) -> (Vec<ProviderListing>, Selection) {
        let s = self.selection();
        let list = self
            .config()
            .providers
            .values()
            .map(|p| ProviderListing {
                name: p.name.clone(),
                kind: p.kind.as_str(),
                models: p.models.clone(),
                default_model: p.default_model.clone(),
                available: p.available(),
                current: p.name == s.provider,
            })
            .collect();
        (list, s)
    }

    /// Switches to provider `name` and its default model; saved for the next start.
    pub async fn select_provider(&self, name: &str) -> Result<Selection, ApiError> {
        let p = self.provider_config(name)?;
        if !p.available() {
            return Err(ApiError::FailedPrecondition(format!(
                "provider {name} has no API key: set providers.{name}.api_key or {}",
                provider_key_env(name)
            )));
        }
        let selection = Selection {
            provider: name.to_string(),
            model: p.default_model.clone(),
        };
        self.save_selection(selection).await
    }

    /// Switches model within the current provider's configured `models`.
    pub async fn select_model(&self, model: &str) -> Result<Selection, ApiError> {
        let current = self.selection();
        let p = self.provider_config(&current.provider)?;
        if !p.models.iter().any(|m| m == model) {
            return Err(ApiError::InvalidArgument(format!(
                "model {:?} is not configured for provider {}; choose one of: {}",
                shown(model),
                p.name,
                p.models.join(", ")
            )));
        }
        self.save_selection(Selection {
            provider: current.provider,
            model: model.to_string(),
        })
        .await
    }

    fn provider_config(&self, name: &str) -> Result<&ProviderConfig, ApiError> {
        self.config().providers.get(name).ok_or_else(|| {
            let names: Vec<&str> = self.config().providers.keys().map(String::as_str).collect();
            ApiError::InvalidArgument(format!(
                "unknown provider {:?}; configured: {}",
                shown(name),
                names.join(", ")
            ))
        })
    }

    async fn save_selection(&self, selection: Selection) -> Result<Selection, ApiError> {
        let store = self.store();
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
