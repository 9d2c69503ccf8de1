//! Each refusal kind with its arguments typed: agentd encodes a [`Refused`] into the wire's
//! `kernel.v1.Refusal` (a reason and a string map, what grpcurl users read) and clients parse it
//! back here, so the argument names and their formats are written in this one place.

use std::collections::HashMap;

use crate::v1::Refusal;
use crate::words::{BudgetPeriod, Listed, RefusalReason};

/// A refusal with its arguments, one variant per [`RefusalReason`].
#[derive(Debug, Clone, PartialEq)]
pub enum Refused {
    NoNumbers(NoNumbers),
    ListingNotShown(ListingNotShown),
    NotInListing(NotInListing),
    SessionGone(SessionGone),
    SessionDeletedMeanwhile,
    UnknownProvider(UnknownProvider),
    ProviderWithoutKey(ProviderWithoutKey),
    ProviderUnavailable(ProviderUnavailable),
    UnknownModel(UnknownModel),
    TitlesNotConfigured,
    NothingToTitle,
    TitleFailed(TitleFailed),
    MemoryEmpty,
    MemoryTooLong(MemoryTooLong),
    QueryEmpty,
    BudgetExceeded(BudgetExceeded),
}

/// `NO_NUMBERS`: a delete named no `#n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoNumbers {
    pub what: Listed,
}

/// `LISTING_NOT_SHOWN`: a `#n` was given before anything was listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListingNotShown {
    pub what: Listed,
}

/// `NOT_IN_LISTING`: `#number` is outside the latest listing `#1..#max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotInListing {
    pub number: u32,
    pub max: u64,
}

/// `SESSION_GONE`: the listed session `#number` was deleted since.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionGone {
    pub number: u32,
}

/// `UNKNOWN_PROVIDER`: no provider of that name; `choices` are the configured ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownProvider {
    pub provider: String,
    pub choices: Vec<String>,
}

/// `PROVIDER_WITHOUT_KEY`: the provider has no API key (`env` would give it one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderWithoutKey {
    pub provider: String,
    pub env: String,
}

/// `PROVIDER_UNAVAILABLE`: the current provider cannot be used (no API key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderUnavailable {
    pub provider: String,
}

/// `UNKNOWN_MODEL`: the model is not among the provider's `choices`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownModel {
    pub model: String,
    pub provider: String,
    pub choices: Vec<String>,
}

/// `TITLE_FAILED`: the titles provider failed (`detail`: English, redacted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TitleFailed {
    pub detail: String,
}

/// `MEMORY_TOO_LONG`: a memory text of `chars` characters, over `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryTooLong {
    pub chars: u64,
    pub max: u64,
}

/// `BUDGET_EXCEEDED`: a `[budget]` limit is reached (also the arguments of a `TurnFailed` with
/// that reason, which may carry `refusal` besides).
#[derive(Debug, Clone, PartialEq)]
pub struct BudgetExceeded {
    pub period: BudgetPeriod,
    /// The provider of a per-provider limit; empty for the overall one.
    pub provider: String,
    /// On the wire with two decimals.
    pub spent_usd: f64,
    pub limit_usd: f64,
    /// The keys `GrantBudgetOverride` takes: `day:YYYY-MM-DD`, `month:YYYY-MM`.
    pub day: String,
    pub month: String,
}

/// The separator of a list argument (`choices`).
const LIST_SEPARATOR: &str = ", ";

/// A refusal's arguments being read: `None` as soon as one is missing or malformed.
struct Reader<'a>(&'a HashMap<String, String>);

impl Reader<'_> {
    fn text(&self, name: &str) -> Option<String> {
        self.0.get(name).cloned()
    }

    fn number<T: std::str::FromStr>(&self, name: &str) -> Option<T> {
        self.0.get(name)?.trim().parse().ok()
    }

    fn list(&self, name: &str) -> Option<Vec<String>> {
        let text = self.0.get(name)?;
        Some(
            text.split(LIST_SEPARATOR)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
        )
    }

    fn listed(&self) -> Option<Listed> {
        Listed::parse(self.0.get("what")?)
    }
}

impl BudgetExceeded {
    /// The arguments by name, as on the wire.
    pub fn args(&self) -> Vec<(&'static str, String)> {
        vec![
            ("period", self.period.as_str().to_owned()),
            ("provider", self.provider.clone()),
            ("spent_usd", format!("{:.2}", self.spent_usd)),
            ("limit_usd", format!("{:.2}", self.limit_usd)),
            ("day", self.day.clone()),
            ("month", self.month.clone()),
        ]
    }

    /// The arguments read back; `None` when one is missing or malformed.
    pub fn parse(args: &HashMap<String, String>) -> Option<Self> {
        let r = Reader(args);
        Some(BudgetExceeded {
            period: BudgetPeriod::parse(args.get("period")?)?,
            provider: r.text("provider").unwrap_or_default(),
            spent_usd: r.number("spent_usd")?,
            limit_usd: r.number("limit_usd")?,
            day: r.text("day").unwrap_or_default(),
            month: r.text("month").unwrap_or_default(),
        })
    }
}

impl Refused {
    /// The machine-readable reason.
    pub fn reason(&self) -> RefusalReason {
        match self {
            Refused::NoNumbers(_) => RefusalReason::NoNumbers,
            Refused::ListingNotShown(_) => RefusalReason::ListingNotShown,
            Refused::NotInListing(_) => RefusalReason::NotInListing,
            Refused::SessionGone(_) => RefusalReason::SessionGone,
            Refused::SessionDeletedMeanwhile => RefusalReason::SessionDeletedMeanwhile,
            Refused::UnknownProvider(_) => RefusalReason::UnknownProvider,
            Refused::ProviderWithoutKey(_) => RefusalReason::ProviderWithoutKey,
            Refused::ProviderUnavailable(_) => RefusalReason::ProviderUnavailable,
            Refused::UnknownModel(_) => RefusalReason::UnknownModel,
            Refused::TitlesNotConfigured => RefusalReason::TitlesNotConfigured,
            Refused::NothingToTitle => RefusalReason::NothingToTitle,
            Refused::TitleFailed(_) => RefusalReason::TitleFailed,
            Refused::MemoryEmpty => RefusalReason::MemoryEmpty,
            Refused::MemoryTooLong(_) => RefusalReason::MemoryTooLong,
            Refused::QueryEmpty => RefusalReason::QueryEmpty,
            Refused::BudgetExceeded(_) => RefusalReason::BudgetExceeded,
        }
    }

    /// The arguments by name, as on the wire (lists joined with `", "`).
    pub fn args(&self) -> Vec<(&'static str, String)> {
        let list = |items: &[String]| items.join(LIST_SEPARATOR);
        match self {
            Refused::NoNumbers(NoNumbers { what })
            | Refused::ListingNotShown(ListingNotShown { what }) => {
                vec![("what", what.as_str().to_owned())]
            }
            Refused::NotInListing(a) => {
                vec![("number", a.number.to_string()), ("max", a.max.to_string())]
            }
            Refused::SessionGone(a) => vec![("number", a.number.to_string())],
            Refused::UnknownProvider(a) => vec![
                ("provider", a.provider.clone()),
                ("choices", list(&a.choices)),
            ],
            Refused::ProviderWithoutKey(a) => {
                vec![("provider", a.provider.clone()), ("env", a.env.clone())]
            }
            Refused::ProviderUnavailable(a) => vec![("provider", a.provider.clone())],
            Refused::UnknownModel(a) => vec![
                ("model", a.model.clone()),
                ("provider", a.provider.clone()),
                ("choices", list(&a.choices)),
            ],
            Refused::TitleFailed(a) => vec![("detail", a.detail.clone())],
            Refused::MemoryTooLong(a) => {
                vec![("chars", a.chars.to_string()), ("max", a.max.to_string())]
            }
            Refused::BudgetExceeded(a) => a.args(),
            Refused::SessionDeletedMeanwhile
            | Refused::TitlesNotConfigured
            | Refused::NothingToTitle
            | Refused::MemoryEmpty
            | Refused::QueryEmpty => Vec::new(),
        }
    }

    /// The wire message.
    pub fn to_proto(&self) -> Refusal {
        Refusal {
            reason: self.reason().as_str().to_owned(),
            args: self
                .args()
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        }
    }

    /// A wire refusal read back; `None` for a reason this build does not know or arguments it
    /// cannot read (clients then show agentd's English message).
    pub fn parse(refusal: &Refusal) -> Option<Self> {
        let reason = RefusalReason::parse(&refusal.reason)?;
        let r = Reader(&refusal.args);
        Some(match reason {
            RefusalReason::NoNumbers => Refused::NoNumbers(NoNumbers { what: r.listed()? }),
            RefusalReason::ListingNotShown => {
                Refused::ListingNotShown(ListingNotShown { what: r.listed()? })
            }
            RefusalReason::NotInListing => Refused::NotInListing(NotInListing {
                number: r.number("number")?,
                max: r.number("max")?,
            }),
            RefusalReason::SessionGone => Refused::SessionGone(SessionGone {
                number: r.number("number")?,
            }),
            RefusalReason::SessionDeletedMeanwhile => Refused::SessionDeletedMeanwhile,
            RefusalReason::UnknownProvider => Refused::UnknownProvider(UnknownProvider {
                provider: r.text("provider")?,
                choices: r.list("choices")?,
            }),
            RefusalReason::ProviderWithoutKey => Refused::ProviderWithoutKey(ProviderWithoutKey {
                provider: r.text("provider")?,
                env: r.text("env")?,
            }),
            RefusalReason::ProviderUnavailable => {
                Refused::ProviderUnavailable(ProviderUnavailable {
                    provider: r.text("provider")?,
                })
            }
            RefusalReason::UnknownModel => Refused::UnknownModel(UnknownModel {
                model: r.text("model")?,
                provider: r.text("provider")?,
                choices: r.list("choices")?,
            }),
            RefusalReason::TitlesNotConfigured => Refused::TitlesNotConfigured,
            RefusalReason::NothingToTitle => Refused::NothingToTitle,
            RefusalReason::TitleFailed => Refused::TitleFailed(TitleFailed {
                detail: r.text("detail")?,
            }),
            RefusalReason::MemoryEmpty => Refused::MemoryEmpty,
            RefusalReason::MemoryTooLong => Refused::MemoryTooLong(MemoryTooLong {
                chars: r.number("chars")?,
                max: r.number("max")?,
            }),
            RefusalReason::QueryEmpty => Refused::QueryEmpty,
            RefusalReason::BudgetExceeded => {
                Refused::BudgetExceeded(BudgetExceeded::parse(&refusal.args)?)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One refusal of each kind.
    fn every_kind() -> Vec<Refused> {
        let every = vec![
            Refused::NoNumbers(NoNumbers {
                what: Listed::Memories,
            }),
            Refused::ListingNotShown(ListingNotShown { what: Listed::Jobs }),
            Refused::NotInListing(NotInListing { number: 9, max: 3 }),
            Refused::SessionGone(SessionGone { number: 2 }),
            Refused::SessionDeletedMeanwhile,
            Refused::UnknownProvider(UnknownProvider {
                provider: "nope".into(),
                choices: vec!["main".into(), "backup".into()],
            }),
            Refused::ProviderWithoutKey(ProviderWithoutKey {
                provider: "main".into(),
                env: "KERNEL_MAIN_API_KEY".into(),
            }),
            Refused::ProviderUnavailable(ProviderUnavailable {
                provider: "main".into(),
            }),
            Refused::UnknownModel(UnknownModel {
                model: "<m>".into(),
                provider: "main".into(),
                choices: vec![],
            }),
            Refused::TitlesNotConfigured,
            Refused::NothingToTitle,
            Refused::TitleFailed(TitleFailed {
                detail: "HTTP 500".into(),
            }),
            Refused::MemoryEmpty,
            Refused::MemoryTooLong(MemoryTooLong {
                chars: 10_001,
                max: 10_000,
            }),
            Refused::QueryEmpty,
            Refused::BudgetExceeded(BudgetExceeded {
                period: BudgetPeriod::Monthly,
                provider: String::new(),
                spent_usd: 5.2,
                limit_usd: 5.0,
                day: "day:2026-02-11".into(),
                month: "month:2026-02".into(),
            }),
        ];
        assert_eq!(every.len(), RefusalReason::ALL.len());
        every
    }

    #[test]
    fn every_kind_reads_back_as_itself() {
        for refused in every_kind() {
            let wire = refused.to_proto();
            assert_eq!(wire.reason, refused.reason().as_str());
            assert_eq!(Refused::parse(&wire), Some(refused));
        }
    }

    #[test]
    fn the_wire_is_the_map_grpcurl_users_read() {
        let wire = Refused::NotInListing(NotInListing { number: 9, max: 3 }).to_proto();
        assert_eq!(wire.reason, "NOT_IN_LISTING");
        assert_eq!(
            (wire.args["number"].as_str(), wire.args["max"].as_str()),
            ("9", "3")
        );
        let wire = every_kind().pop().unwrap().to_proto();
        assert_eq!(wire.args["period"], "monthly");
        assert_eq!(wire.args["spent_usd"], "5.20");
        let wire = every_kind().swap_remove(5).to_proto();
        assert_eq!(wire.args["choices"], "main, backup");
    }

    #[test]
    fn unknown_reasons_and_malformed_arguments_are_not_read() {
        let wire = |reason: &str, args: &[(&str, &str)]| Refusal {
            reason: reason.into(),
            args: args
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        };
        assert_eq!(Refused::parse(&wire("SOMETHING_NEW", &[])), None);
        assert_eq!(
            Refused::parse(&wire("NOT_IN_LISTING", &[("number", "x"), ("max", "3")])),
            None
        );
        assert_eq!(
            Refused::parse(&wire("NO_NUMBERS", &[("what", "pets")])),
            None
        );
        assert_eq!(
            Refused::parse(&wire("BUDGET_EXCEEDED", &[("period", "weekly")])),
            None
        );
    }
}
