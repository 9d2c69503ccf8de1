//! The words both processes match as strings on the wire, defined once: each is an enum whose
//! `as_str` is the exact wire value and whose `parse` reads it back (`None` for a word this build
//! does not know, which clients show through agentd's English message). agentd produces them
//! from its own domain enums with a `match` that names every variant; kernel-tg says them in the
//! owner's language with a `match` that names every variant too (no `_` arm), so renaming,
//! adding or removing a word here fails to compile on both sides until each handles it.
//!
//! The wire stays a string (`TurnFailed.reason`, `Refusal.reason`, `RetryScheduled.reason`, …):
//! grpcurl users and older clients read the same JSON as before.

use std::fmt;

/// Defines a word enum with its wire values: `as_str`, `parse`, `ALL` and `Display`.
macro_rules! words {
    (
        $(#[$meta:meta])*
        $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every word, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The wire value.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $text, )+
                }
            }

            /// The word for a wire value; `None` when this build does not know it.
            pub fn parse(text: &str) -> Option<Self> {
                match text {
                    $( $text => Some($name::$variant), )+
                    _ => None,
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

words! {
    /// Why a turn failed: `TurnFailed.reason` (an empty reason is unknown).
    FailureReason {
        /// The provider refused the key (args: status, detail).
        ModelAuth = "MODEL_AUTH",
        /// 429 (args: detail, retry_after_secs when the provider said).
        ModelRateLimited = "MODEL_RATE_LIMITED",
        /// 5xx/529 (args: status, detail).
        ModelOverloaded = "MODEL_OVERLOADED",
        /// The provider refused the request (args: status, detail).
        ModelBadRequest = "MODEL_BAD_REQUEST",
        /// The request does not fit the context window even after compaction (args: detail).
        ModelContextTooLong = "MODEL_CONTEXT_TOO_LONG",
        /// The model lacks a capability (args: detail, provider, feature: a [`MissingFeature`]).
        ModelCapabilityMissing = "MODEL_CAPABILITY_MISSING",
        /// The provider could not be reached (args: detail).
        ModelNetwork = "MODEL_NETWORK",
        /// No bytes in time (args: secs).
        ModelStalled = "MODEL_STALLED",
        /// The stream broke off (args: detail).
        ModelStream = "MODEL_STREAM",
        /// The conversation could not be saved.
        StoreFailed = "STORE_FAILED",
        /// An agentd crash cut the owner turn off; its item's turn_id can be passed to RerunTurn.
        TurnCutOff = "TURN_CUT_OFF",
        /// A `[budget]` limit stopped the turn before any model call (args: period, provider,
        /// spent_usd, limit_usd, day, month — the keys `GrantBudgetOverride` takes).
        BudgetExceeded = "BUDGET_EXCEEDED",
    }
}

words! {
    /// The `feature` argument of [`FailureReason::ModelCapabilityMissing`].
    MissingFeature {
        Tools = "tools",
        Images = "images",
        Streaming = "streaming",
    }
}

words! {
    /// Why agentd refused a request: `Refusal.reason` (see `proto/kernel/v1/agent.proto` for
    /// each one's arguments).
    RefusalReason {
        NoNumbers = "NO_NUMBERS",
        ListingNotShown = "LISTING_NOT_SHOWN",
        NotInListing = "NOT_IN_LISTING",
        SessionGone = "SESSION_GONE",
        SessionDeletedMeanwhile = "SESSION_DELETED_MEANWHILE",
        UnknownProvider = "UNKNOWN_PROVIDER",
        ProviderWithoutKey = "PROVIDER_WITHOUT_KEY",
        ProviderUnavailable = "PROVIDER_UNAVAILABLE",
        UnknownModel = "UNKNOWN_MODEL",
        TitlesNotConfigured = "TITLES_NOT_CONFIGURED",
        NothingToTitle = "NOTHING_TO_TITLE",
        TitleFailed = "TITLE_FAILED",
        MemoryEmpty = "MEMORY_EMPTY",
        MemoryTooLong = "MEMORY_TOO_LONG",
        QueryEmpty = "QUERY_EMPTY",
        BudgetExceeded = "BUDGET_EXCEEDED",
    }
}

words! {
    /// What a `#n` listing lists: the `what` argument of the listing refusals.
    Listed {
        Sessions = "sessions",
        Memories = "memories",
        Schedules = "schedules",
        Jobs = "jobs",
    }
}

words! {
    /// Why a model call is retried on the same provider: `RetryScheduled.reason` and
    /// `ModelRetries.last_reason`.
    RetryReason {
        RateLimited = "rate_limited",
        Overloaded = "overloaded",
        Network = "network",
        Stalled = "stalled",
        StreamCut = "stream_cut",
    }
}

words! {
    /// Why a model call moved on to another provider: `FailedOver.reason`.
    FailoverReason {
        RateLimited = "rate_limited",
        Overloaded = "overloaded",
        Auth = "auth",
        Network = "network",
        Cooldown = "cooldown",
    }
}

words! {
    /// How a pending approval ended: `ApprovalClosed.decision`.
    ApprovalOutcome {
        Allowed = "allowed",
        Denied = "denied",
        Expired = "expired",
        Cancelled = "cancelled",
    }
}

words! {
    /// What a schedule does when it fires: `ScheduleInfo.mode` and `AddScheduleRequest.mode`.
    ScheduleMode {
        /// Its message is sent as is, with no model call.
        Remind = "remind",
        /// A turn runs with its message as the prompt; its answer is sent.
        Task = "task",
        /// A bounded turn on the cheap model runs with its message as the instruction; the
        /// owner hears only what it passes to `notify_owner`.
        Watch = "watch",
    }
}

words! {
    /// How a watch's last run ended: `ScheduleInfo.last_outcome`.
    WatchOutcome {
        /// It found nothing to tell (nothing was sent).
        Quiet = "quiet",
        /// It told the owner (one message).
        Notified = "notified",
        /// Its model call failed.
        Failed = "failed",
        /// A `[budget]` limit was reached: no model call.
        Skipped = "skipped",
    }
}

words! {
    /// What `ControlSchedule` does to a schedule: `ControlScheduleRequest.action`.
    ScheduleAction {
        Pause = "pause",
        Resume = "resume",
        Delete = "delete",
    }
}

words! {
    /// What a model call was for: `CostLine.purpose` (the usage ledger's purposes).
    UsagePurpose {
        Owner = "owner",
        Task = "task",
        Watch = "watch",
        Failover = "failover",
        Title = "title",
        Memory = "memory",
        Summary = "summary",
        Consolidation = "consolidation",
    }
}

words! {
    /// A background job's state: `JobInfo.status` (`ListJobs`).
    JobStatus {
        Running = "running",
        Done = "done",
        Failed = "failed",
        Cancelled = "cancelled",
        Interrupted = "interrupted",
    }
}

words! {
    /// Why memory consolidation set a memory aside: `MemoryInfo.superseded_reason` (empty: not set aside).
    SetAsideReason {
        Merged = "merged",
        Retired = "retired",
        Superseded = "superseded",
    }
}

words! {
    /// What the owner's press on a proposed merge did: `DecideMemoryProposalResponse.outcome`.
    ProposalOutcome {
        Merged = "merged",
        Kept = "kept",
        /// Decided already, its memories changed since, or unknown: nothing changed.
        Stale = "stale",
    }
}

words! {
    /// A skill's declared side-effect level: `SkillInfo.side_effects` (its front-matter spelling).
    SkillSideEffects {
        ReadOnly = "read-only",
        LocalWrite = "local-write",
        MessageSend = "message-send",
        ProcessControl = "process-control",
    }
}

words! {
    /// A `[budget]` limit's period: `BudgetLine.period`, `BudgetExceeded.period` and the
    /// `period` argument of the `BUDGET_EXCEEDED` refusal and failure.
    BudgetPeriod {
        Daily = "daily",
        Monthly = "monthly",
    }
}

words! {
    /// Where a memory came from: `BrowseMemoriesRequest.source` (empty: all).
    MemorySource {
        /// Added by the owner.
        Owner = "owner",
        /// Auto memory from the owner's own words.
        Auto = "auto",
        /// Auto memory from outside content.
        Outside = "outside",
    }
}

words! {
    /// How a background memory run ended: `MemoryAutoStatus.outcome` (auto memory) and
    /// `ConsolidationRun.outcome` (memory consolidation).
    RunOutcome {
        /// It ran and its changes are in.
        Ok = "ok",
        /// The model's answer was unusable; nothing changed.
        Malformed = "malformed",
        /// The provider failed or stalled; nothing changed.
        Failed = "failed",
    }
}

words! {
    /// One doctor check's verdict: `DoctorCheck.verdict`.
    DoctorVerdict {
        Ok = "ok",
        Warn = "warn",
        Fail = "fail",
    }
}

words! {
    /// Who wrote a stored message: `HistoryMessage.role` and `HistoryHit.role`.
    MessageRole {
        /// The owner.
        User = "user",
        /// Kernel.
        Assistant = "assistant",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trips<T: Copy + PartialEq + fmt::Debug>(
        all: &[T],
        as_str: fn(T) -> &'static str,
        parse: fn(&str) -> Option<T>,
    ) {
        let mut seen = std::collections::HashSet::new();
        for &w in all {
            assert_eq!(parse(as_str(w)), Some(w), "{w:?}");
            assert!(seen.insert(as_str(w)), "{w:?} said twice");
        }
        assert_eq!(parse(""), None);
        assert_eq!(parse("SOMETHING_NEW"), None);
    }

    #[test]
    fn every_word_reads_back_as_itself() {
        round_trips(
            FailureReason::ALL,
            FailureReason::as_str,
            FailureReason::parse,
        );
        round_trips(
            MissingFeature::ALL,
            MissingFeature::as_str,
            MissingFeature::parse,
        );
        round_trips(
            RefusalReason::ALL,
            RefusalReason::as_str,
            RefusalReason::parse,
        );
        round_trips(Listed::ALL, Listed::as_str, Listed::parse);
        round_trips(RetryReason::ALL, RetryReason::as_str, RetryReason::parse);
        round_trips(
            FailoverReason::ALL,
            FailoverReason::as_str,
            FailoverReason::parse,
        );
        round_trips(
            ApprovalOutcome::ALL,
            ApprovalOutcome::as_str,
            ApprovalOutcome::parse,
        );
        round_trips(ScheduleMode::ALL, ScheduleMode::as_str, ScheduleMode::parse);
        round_trips(WatchOutcome::ALL, WatchOutcome::as_str, WatchOutcome::parse);
        round_trips(
            ScheduleAction::ALL,
            ScheduleAction::as_str,
            ScheduleAction::parse,
        );
        round_trips(UsagePurpose::ALL, UsagePurpose::as_str, UsagePurpose::parse);
        round_trips(JobStatus::ALL, JobStatus::as_str, JobStatus::parse);
        round_trips(
            SetAsideReason::ALL,
            SetAsideReason::as_str,
            SetAsideReason::parse,
        );
        round_trips(
            ProposalOutcome::ALL,
            ProposalOutcome::as_str,
            ProposalOutcome::parse,
        );
        round_trips(
            SkillSideEffects::ALL,
            SkillSideEffects::as_str,
            SkillSideEffects::parse,
        );
        round_trips(BudgetPeriod::ALL, BudgetPeriod::as_str, BudgetPeriod::parse);
        round_trips(MemorySource::ALL, MemorySource::as_str, MemorySource::parse);
        round_trips(RunOutcome::ALL, RunOutcome::as_str, RunOutcome::parse);
        round_trips(
            DoctorVerdict::ALL,
            DoctorVerdict::as_str,
            DoctorVerdict::parse,
        );
        round_trips(MessageRole::ALL, MessageRole::as_str, MessageRole::parse);
    }

    #[test]
    fn the_wire_values_are_the_ones_clients_already_read() {
        assert_eq!(FailureReason::TurnCutOff.as_str(), "TURN_CUT_OFF");
        assert_eq!(RefusalReason::NotInListing.to_string(), "NOT_IN_LISTING");
        assert_eq!(RetryReason::StreamCut.as_str(), "stream_cut");
        assert_eq!(FailoverReason::Cooldown.as_str(), "cooldown");
        assert_eq!(ApprovalOutcome::Expired.as_str(), "expired");
        assert_eq!(Listed::Memories.as_str(), "memories");
        assert_eq!(MissingFeature::Images.as_str(), "images");
        assert_eq!(ScheduleMode::Task.as_str(), "task");
        assert_eq!(UsagePurpose::Consolidation.as_str(), "consolidation");
        assert_eq!(JobStatus::Interrupted.as_str(), "interrupted");
        assert_eq!(SetAsideReason::Superseded.as_str(), "superseded");
        assert_eq!(ProposalOutcome::Stale.as_str(), "stale");
        assert_eq!(SkillSideEffects::ProcessControl.as_str(), "process-control");
        assert_eq!(BudgetPeriod::Monthly.as_str(), "monthly");
        assert_eq!(MemorySource::Outside.as_str(), "outside");
        assert_eq!(RunOutcome::Malformed.as_str(), "malformed");
        assert_eq!(DoctorVerdict::Warn.as_str(), "warn");
        assert_eq!(MessageRole::Assistant.as_str(), "assistant");
    }
}
