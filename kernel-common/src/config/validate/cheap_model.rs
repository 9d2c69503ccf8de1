//! The endpoint of a background cheap-model job (`[memory_auto]`, `[summary]`): the `[titles]`
//! one by default, or a `[providers.<name>]` entry, with the job's own `model` and `max_tokens`.

use std::collections::BTreeMap;

use super::{Ctx, given};
use crate::config::{ProviderConfig, TitlesConfig};

/// The endpoint `section.provider` names (`[titles]` when not given), `None` when there is none
/// (an unknown provider is refused, naming the configured ones).
pub(super) fn endpoint(
    ctx: &mut Ctx<'_>,
    section: &str,
    (provider, model): (Option<&str>, Option<&str>),
    max_tokens: u32,
    titles: Option<&TitlesConfig>,
    providers: &BTreeMap<String, ProviderConfig>,
) -> Option<TitlesConfig> {
    let model = given(model).map(|m| m.trim().to_owned());
    match given(provider).map(str::trim) {
        None => titles.map(|t| TitlesConfig {
            model: model.clone().unwrap_or_else(|| t.model.clone()),
            max_tokens,
            ..t.clone()
        }),
        Some(name) => match providers.get(name) {
            Some(p) => Some(TitlesConfig {
                provider: name.to_owned(),
                kind: p.kind,
                api_base: p.api_base.clone(),
                api_key: p.api_key.clone(),
                model: model.clone().unwrap_or_else(|| p.default_model.clone()),
                max_tokens,
                headers: p.headers.clone(),
                retry: p.retry,
            }),
            None => {
                let choices: Vec<&str> = providers.keys().map(String::as_str).collect();
                ctx.refuse(format!(
                    "{section}.provider = \"{name}\" is not a configured provider: use one of \
                     {}, or leave it out to use [titles]",
                    choices.join(", ")
                ));
                None
            }
        },
    }
}
