//! `Refusal`: why an owner's request was refused, as a kind with its arguments. The English
//! text (`Display`) is the gRPC message for grpcurl users; `rpc::status` also sends the kind
//! and arguments (`kernel.v1.Refusal`) so kernel-tg can say it in the owner's language.

use std::fmt;

use kernel_proto::refused::{self, Refused};
use kernel_proto::words::{self, RefusalReason};

/// What a `#n` listing lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listed {
    Sessions,
    Memories,
    Schedules,
    Jobs,
}

impl Listed {
    /// The wire word (`"sessions"`, `"memories"`, `"schedules"` or `"jobs"`).
    pub fn word(self) -> words::Listed {
        match self {
            Listed::Sessions => words::Listed::Sessions,
            Listed::Memories => words::Listed::Memories,
            Listed::Schedules => words::Listed::Schedules,
            Listed::Jobs => words::Listed::Jobs,
        }
    }

    fn as_str(self) -> &'static str {
        self.word().as_str()
    }

    fn singular(self) -> &'static str {
        match self {
            Listed::Sessions => "session",
            Listed::Memories => "memory",
            Listed::Schedules => "schedule",
            Listed::Jobs => "job",
        }
    }

    fn command(self) -> &'static str {
        match self {
            Listed::Sessions => "/history",
            Listed::Memories => "/memory",
            Listed::Schedules => "/tasks",
            Listed::Jobs => "/jobs",
        }
    }
}

/// How the caller should see a refusal (mapped to a gRPC code in `rpc::status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalClass {
    /// The request itself is wrong.
    InvalidArgument,
    /// What it names does not exist (any more).
    NotFound,
    /// The state or the configuration does not allow it.
    FailedPrecondition,
}

/// A refused request, with what the owner needs to fix it.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// A delete named no `#n`.
    NoNumbers { what: Listed },
    /// A `#n` was given before anything was listed.
    ListingNotShown { what: Listed },
    /// `#number` is outside the latest listing `#1..#max`.
    NotInListing { number: u32, max: usize },
    /// The listed session `#number` was deleted since.
    SessionGone { number: u32 },
    /// The session was deleted while it was being worked on.
    SessionDeletedMeanwhile,
    /// No provider of that name is configured.
    UnknownProvider {
        provider: String,
        choices: Vec<String>,
    },
    /// The provider has no API key (`env` is the variable that would give it one).
    ProviderWithoutKey { provider: String, env: String },
    /// The current provider cannot be used (no API key).
    ProviderUnavailable { provider: String },
    /// The model is not in the current provider's `models`.
    UnknownModel {
        model: String,
        provider: String,
        choices: Vec<String>,
    },
    /// No `[titles]` provider is configured.
    TitlesNotConfigured,
    /// The session has no completed round yet.
    NothingToTitle,
    /// The titles provider failed (`detail`: redacted, English).
    TitleFailed { detail: String },
    /// An empty memory text.
    MemoryEmpty,
    /// A memory text over `max` characters.
    MemoryTooLong { chars: usize, max: usize },
    /// An empty search query.
    QueryEmpty,
    /// A `[budget]` limit is reached: no turn starts (`over`: the limit and the override
    /// keys; `message` the English words).
    BudgetExceeded {
        over: refused::BudgetExceeded,
        message: String,
    },
}

impl Refusal {
    /// The machine-readable reason, e.g. `NOT_IN_LISTING`.
    pub fn reason(&self) -> RefusalReason {
        match self {
            Refusal::NoNumbers { .. } => RefusalReason::NoNumbers,
            Refusal::ListingNotShown { .. } => RefusalReason::ListingNotShown,
            Refusal::NotInListing { .. } => RefusalReason::NotInListing,
            Refusal::SessionGone { .. } => RefusalReason::SessionGone,
            Refusal::SessionDeletedMeanwhile => RefusalReason::SessionDeletedMeanwhile,
            Refusal::UnknownProvider { .. } => RefusalReason::UnknownProvider,
            Refusal::ProviderWithoutKey { .. } => RefusalReason::ProviderWithoutKey,
            Refusal::ProviderUnavailable { .. } => RefusalReason::ProviderUnavailable,
            Refusal::UnknownModel { .. } => RefusalReason::UnknownModel,
            Refusal::TitlesNotConfigured => RefusalReason::TitlesNotConfigured,
            Refusal::NothingToTitle => RefusalReason::NothingToTitle,
            Refusal::TitleFailed { .. } => RefusalReason::TitleFailed,
            Refusal::MemoryEmpty => RefusalReason::MemoryEmpty,
            Refusal::MemoryTooLong { .. } => RefusalReason::MemoryTooLong,
            Refusal::QueryEmpty => RefusalReason::QueryEmpty,
            Refusal::BudgetExceeded { .. } => RefusalReason::BudgetExceeded,
        }
    }

    /// The kind with its arguments as clients read them (`kernel_proto::refused`).
    pub fn wire(&self) -> Refused {
        match self {
            Refusal::NoNumbers { what } => {
                Refused::NoNumbers(refused::NoNumbers { what: what.word() })
            }
            Refusal::ListingNotShown { what } => {
                Refused::ListingNotShown(refused::ListingNotShown { what: what.word() })
            }
            Refusal::NotInListing { number, max } => Refused::NotInListing(refused::NotInListing {
                number: *number,
                max: *max as u64,
            }),
            Refusal::SessionGone { number } => {
                Refused::SessionGone(refused::SessionGone { number: *number })
            }
            Refusal::SessionDeletedMeanwhile => Refused::SessionDeletedMeanwhile,
            Refusal::UnknownProvider { provider, choices } => {
                Refused::UnknownProvider(refused::UnknownProvider {
                    provider: provider.clone(),
                    choices: choices.clone(),
                })
            }
            Refusal::ProviderWithoutKey { provider, env } => {
                Refused::ProviderWithoutKey(refused::ProviderWithoutKey {
                    provider: provider.clone(),
                    env: env.clone(),
                })
            }
            Refusal::ProviderUnavailable { provider } => {
                Refused::ProviderUnavailable(refused::ProviderUnavailable {
                    provider: provider.clone(),
                })
            }
            Refusal::UnknownModel {
                model,
                provider,
                choices,
            } => Refused::UnknownModel(refused::UnknownModel {
                model: model.clone(),
                provider: provider.clone(),
                choices: choices.clone(),
            }),
            Refusal::TitlesNotConfigured => Refused::TitlesNotConfigured,
            Refusal::NothingToTitle => Refused::NothingToTitle,
            Refusal::TitleFailed { detail } => Refused::TitleFailed(refused::TitleFailed {
                detail: detail.clone(),
            }),
            Refusal::MemoryEmpty => Refused::MemoryEmpty,
            Refusal::MemoryTooLong { chars, max } => {
                Refused::MemoryTooLong(refused::MemoryTooLong {
                    chars: *chars as u64,
                    max: *max as u64,
                })
            }
            Refusal::QueryEmpty => Refused::QueryEmpty,
            Refusal::BudgetExceeded { over, .. } => Refused::BudgetExceeded(over.clone()),
        }
    }

    /// How the caller should see it.
    pub fn class(&self) -> RefusalClass {
        match self {
            Refusal::ListingNotShown { .. }
            | Refusal::ProviderWithoutKey { .. }
            | Refusal::ProviderUnavailable { .. }
            | Refusal::TitlesNotConfigured
            | Refusal::NothingToTitle
            | Refusal::TitleFailed { .. }
            | Refusal::BudgetExceeded { .. } => RefusalClass::FailedPrecondition,
            Refusal::SessionGone { .. } | Refusal::SessionDeletedMeanwhile => {
                RefusalClass::NotFound
            }
            Refusal::NoNumbers { .. }
            | Refusal::NotInListing { .. }
            | Refusal::UnknownProvider { .. }
            | Refusal::UnknownModel { .. }
            | Refusal::MemoryEmpty
            | Refusal::MemoryTooLong { .. }
            | Refusal::QueryEmpty => RefusalClass::InvalidArgument,
        }
    }
}

/// The English message (the gRPC message; kernel-tg renders the kind instead).
impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NoNumbers { what } => write!(f, "name at least one {}: #n", what.singular()),
            Refusal::ListingNotShown { what } => {
                write!(f, "list the {} first ({})", what.as_str(), what.command())
            }
            Refusal::NotInListing { number, max } => {
                write!(f, "#{number} is not in the latest listing (#1..#{max})")
            }
            Refusal::SessionGone { number } => write!(f, "session #{number} no longer exists"),
            Refusal::SessionDeletedMeanwhile => f.write_str("the session was deleted meanwhile"),
            Refusal::UnknownProvider { provider, choices } => write!(
                f,
                "unknown provider {provider:?}; configured: {}",
                choices.join(", ")
            ),
            Refusal::ProviderWithoutKey { provider, env } => write!(
                f,
                "provider {provider} has no API key: set providers.{provider}.api_key or {env}"
            ),
            Refusal::ProviderUnavailable { provider } => {
                write!(f, "provider {provider} is unavailable (no API key)")
            }
            Refusal::UnknownModel {
                model,
                provider,
                choices,
            } => write!(
                f,
                "model {model:?} is not configured for provider {provider}; choose one of: {}",
                choices.join(", ")
            ),
            Refusal::TitlesNotConfigured => f.write_str("no [titles] provider is configured"),
            Refusal::NothingToTitle => {
                f.write_str("the session has no completed round to title yet")
            }
            Refusal::TitleFailed { detail } => write!(f, "title generation failed: {detail}"),
            Refusal::MemoryEmpty => f.write_str("the memory text is empty"),
            Refusal::MemoryTooLong { chars, max } => write!(
                f,
                "the memory text is too long ({chars} characters; at most {max})"
            ),
            Refusal::QueryEmpty => f.write_str("the search query is empty"),
            Refusal::BudgetExceeded { message, .. } => f.write_str(message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_message_reason_and_args() {
        let r = Refusal::NotInListing { number: 9, max: 3 };
        assert_eq!(r.to_string(), "#9 is not in the latest listing (#1..#3)");
        assert_eq!(r.reason().as_str(), "NOT_IN_LISTING");
        assert_eq!(
            r.wire(),
            Refused::NotInListing(refused::NotInListing { number: 9, max: 3 })
        );
        assert_eq!(r.class(), RefusalClass::InvalidArgument);
        let r = Refusal::UnknownModel {
            model: "nope".into(),
            provider: "main".into(),
            choices: vec!["m1".into(), "m2".into()],
        };
        assert_eq!(
            r.to_string(),
            "model \"nope\" is not configured for provider main; choose one of: m1, m2"
        );
    }
}
