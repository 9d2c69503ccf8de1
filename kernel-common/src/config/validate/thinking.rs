//! `[providers.<name>.thinking]`: Anthropic extended thinking (a token budget) or an
//! OpenAI-compatible `reasoning_effort`, checked against what the provider kind accepts.

use super::Ctx;
use crate::config::raw::RawThinking;
use crate::config::{ProviderKind, ThinkingConfig, ThinkingMode};

/// Anthropic's smallest thinking budget.
const MIN_BUDGET: u32 = 1024;
/// The efforts OpenAI-compatible endpoints take.
const EFFORTS: &[&str] = &["minimal", "low", "medium", "high"];

/// The validated thinking settings of provider `key` (`None` when absent or refused).
pub(super) fn thinking(
    ctx: &mut Ctx<'_>,
    key: &str,
    kind: Option<ProviderKind>,
    max_tokens: Option<u32>,
    models: &[String],
    raw: Option<&RawThinking>,
) -> Option<ThinkingConfig> {
    let raw = raw?;
    let key = format!("{key}.thinking");
    let mode = match kind? {
        ProviderKind::Claude => {
            if raw.effort.is_some() {
                ctx.refuse(format!(
                    "{key}.effort is for openai_compat providers: set budget_tokens instead"
                ));
                return None;
            }
            let Some(budget) = raw.budget_tokens else {
                ctx.refuse(format!(
                    "{key}.budget_tokens is missing: set e.g. budget_tokens = 4096"
                ));
                return None;
            };
            if budget < MIN_BUDGET || max_tokens.is_some_and(|max| budget >= max) {
                ctx.refuse(format!(
                    "{key}.budget_tokens = {budget} must be at least {MIN_BUDGET} and below \
                     max_tokens"
                ));
                return None;
            }
            ThinkingMode::Budget(budget)
        }
        ProviderKind::OpenAiCompat => {
            if raw.budget_tokens.is_some() {
                ctx.refuse(format!(
                    "{key}.budget_tokens is for claude providers: set effort instead"
                ));
                return None;
            }
            match raw.effort.as_deref().map(str::trim) {
                Some(effort) if EFFORTS.contains(&effort) => {
                    ThinkingMode::Effort(effort.to_owned())
                }
                other => {
                    ctx.refuse(format!(
                        "{key}.effort = {:?} is not one of {}",
                        other.unwrap_or(""),
                        EFFORTS.join(", ")
                    ));
                    return None;
                }
            }
        }
    };
    let only = raw.models.clone().unwrap_or_default();
    if let Some(unknown) = only.iter().find(|m| !models.contains(m)) {
        ctx.refuse(format!(
            "{key}.models names {unknown:?}, which is not one of the provider's models"
        ));
        return None;
    }
    Some(ThinkingConfig { mode, models: only })
}
