//! `FailReason`: why a turn failed, as a machine-readable reason and its arguments, sent next to
//! the English message (`kernel.v1.TurnFailed.reason`/`args`) so clients say it in the owner's
//! language. An empty reason is unknown: clients fall back to the message.

use std::collections::BTreeMap;

use kernel_common::Redactor;
use kernel_proto::words::{FailureReason, MissingFeature};

use crate::llm::LlmError;

/// A failed turn's reason and arguments; the default (no reason) is unknown.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FailReason {
    pub reason: Option<FailureReason>,
    pub args: BTreeMap<String, String>,
}

impl FailReason {
    pub(crate) fn new(reason: FailureReason, args: &[(&str, String)]) -> Self {
        Self {
            reason: Some(reason),
            args: args
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
        }
    }

    /// This failure of `provider`'s call with its name as an argument (`provider`), and for a
    /// missing capability the feature (`feature`: `tools`, `images`, `streaming`, or none when
    /// the provider's words do not say).
    pub fn of_provider(mut self, provider: &str, e: &LlmError) -> Self {
        self.args.insert("provider".to_owned(), provider.to_owned());
        if let LlmError::CapabilityMissing { message } = e {
            let lower = message.to_lowercase();
            let feature = if lower.contains("tool") || lower.contains("function") {
                Some(MissingFeature::Tools)
            } else if lower.contains("image") || lower.contains("vision") {
                Some(MissingFeature::Images)
            } else if lower.contains("stream") {
                Some(MissingFeature::Streaming)
            } else {
                None
            };
            if let Some(f) = feature {
                self.args
                    .insert("feature".to_owned(), f.as_str().to_owned());
            }
        }
        self
    }

    /// The conversation could not be saved.
    pub fn store_failed() -> Self {
        Self::new(FailureReason::StoreFailed, &[])
    }

    /// The reason for a failed model call; `detail` carries the provider's own (redacted) words.
    pub fn llm(e: &LlmError) -> Self {
        use LlmError as E;
        let status = |s: &u16| ("status", s.to_string());
        let detail = |m: &String| ("detail", m.clone());
        match e {
            E::Authentication { status: s, message } => {
                Self::new(FailureReason::ModelAuth, &[status(s), detail(message)])
            }
            E::RateLimited {
                retry_after,
                message,
            } => {
                let mut args = vec![detail(message)];
                if let Some(after) = retry_after {
                    args.push(("retry_after_secs", after.as_secs().to_string()));
                }
                Self::new(FailureReason::ModelRateLimited, &args)
            }
            E::Overloaded { status: s, message } => Self::new(
                FailureReason::ModelOverloaded,
                &[status(s), detail(message)],
            ),
            E::BadRequest { status: s, message } => Self::new(
                FailureReason::ModelBadRequest,
                &[status(s), detail(message)],
            ),
            E::ContextTooLong { message } => {
                Self::new(FailureReason::ModelContextTooLong, &[detail(message)])
            }
            E::CapabilityMissing { message } => {
                Self::new(FailureReason::ModelCapabilityMissing, &[detail(message)])
            }
            E::Network { message } => Self::new(FailureReason::ModelNetwork, &[detail(message)]),
            E::Stalled { after } => Self::new(
                FailureReason::ModelStalled,
                &[("secs", after.as_secs().to_string())],
            ),
            E::Stream { message } => Self::new(FailureReason::ModelStream, &[detail(message)]),
        }
    }

    /// This reason with every argument redacted by `redactor`.
    pub fn redacted(self, redactor: &Redactor) -> Self {
        Self {
            reason: self.reason,
            args: self
                .args
                .into_iter()
                .map(|(k, v)| (k, redactor.redact(&v)))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_missing_capability_names_the_provider_and_the_feature() {
        let cases = [
            ("this model does not support tools", Some("tools")),
            (
                "Image input is not supported for this model",
                Some("images"),
            ),
            ("it does not support streaming", Some("streaming")),
            ("something else", None),
        ];
        for (message, feature) in cases {
            let e = LlmError::CapabilityMissing {
                message: message.into(),
            };
            let r = FailReason::llm(&e).of_provider("ollama", &e);
            assert_eq!(r.args.get("provider").map(String::as_str), Some("ollama"));
            assert_eq!(
                r.args.get("feature").map(String::as_str),
                feature,
                "{message}"
            );
        }
        let e = LlmError::Network {
            message: "refused".into(),
        };
        let r = FailReason::llm(&e).of_provider("main", &e);
        assert_eq!(r.args.get("feature"), None);
        assert_eq!(r.args.get("provider").map(String::as_str), Some("main"));
    }

    #[test]
    fn every_model_error_has_a_listed_reason_with_its_numbers() {
        let m = || "x".to_owned();
        let errors = [
            LlmError::Authentication {
                status: 401,
                message: m(),
            },
            LlmError::RateLimited {
                retry_after: Some(Duration::from_secs(7)),
                message: m(),
            },
            LlmError::Overloaded {
                status: 529,
                message: m(),
            },
            LlmError::BadRequest {
                status: 400,
                message: m(),
            },
            LlmError::ContextTooLong { message: m() },
            LlmError::CapabilityMissing { message: m() },
            LlmError::Network { message: m() },
            LlmError::Stalled {
                after: Duration::from_secs(60),
            },
            LlmError::Stream { message: m() },
        ];
        for e in &errors {
            let r = FailReason::llm(e);
            assert!(r.reason.is_some(), "{r:?}");
        }
        assert_eq!(FailReason::llm(&errors[0]).args["status"], "401");
        assert_eq!(FailReason::llm(&errors[1]).args["retry_after_secs"], "7");
        assert_eq!(FailReason::llm(&errors[7]).args["secs"], "60");
        assert_eq!(
            FailReason::store_failed().reason,
            Some(FailureReason::StoreFailed)
        );
    }

    #[test]
    fn arguments_are_redacted() {
        let r = Redactor::new(["sk-abcdefghijklmnop"]);
        let reason = FailReason::llm(&LlmError::Network {
            message: "sk-abcdefghijklmnop".into(),
        })
        .redacted(&r);
        assert_eq!(reason.args["detail"], "sk-a…mnop");
    }
}
