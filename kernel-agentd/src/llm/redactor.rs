//! `Redactor`: one provider's secrets (its key, its configured header values) scrubbed out of
//! any text or [`LlmError`] before it can reach an error message, a log line or the owner.
//! The rules themselves live in [`kernel_common::redact`].

use std::collections::BTreeMap;

use kernel_common::Secret;
use kernel_common::redact::Redactor as Rules;

use super::LlmError;

/// Replaces a provider's API key with its mask (first 4 + `…` + last 4) and its header values
/// with `[REDACTED]`; credential patterns (`Bearer …`, `x-api-key: …`, URL userinfo) are
/// masked too.
#[derive(Clone, Debug, Default)]
pub struct Redactor {
    rules: Rules,
}

impl Redactor {
    /// A redactor for a provider with `key` and extra `headers`.
    pub fn new(key: Option<&Secret>, headers: &BTreeMap<String, Secret>) -> Self {
        let rules = Rules::new(key.map(Secret::expose))
            .with_header_values(headers.values().map(Secret::expose));
        Self { rules }
    }

    /// `text` with every secret replaced.
    pub fn redact(&self, text: &str) -> String {
        self.rules.redact(text)
    }

    /// `error` with every message it carries redacted.
    pub fn error(&self, error: LlmError) -> LlmError {
        use LlmError as E;
        let r = |m: String| self.redact(&m);
        match error {
            E::Authentication { status, message } => E::Authentication {
                status,
                message: r(message),
            },
            E::RateLimited {
                retry_after,
                message,
            } => E::RateLimited {
                retry_after,
                message: r(message),
            },
            E::Overloaded { status, message } => E::Overloaded {
                status,
                message: r(message),
            },
            E::BadRequest { status, message } => E::BadRequest {
                status,
                message: r(message),
            },
            E::ContextTooLong { message } => E::ContextTooLong {
                message: r(message),
            },
            E::CapabilityMissing { message } => E::CapabilityMissing {
                message: r(message),
            },
            E::Network { message } => E::Network {
                message: r(message),
            },
            E::Stream { message } => E::Stream {
                message: r(message),
            },
            E::Stalled { after } => E::Stalled { after },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_key_and_header_values() {
        let mut headers = BTreeMap::new();
        headers.insert("x-org".to_owned(), Secret::new("org-secret-value"));
        let r = Redactor::new(Some(&Secret::new("sk-abcdefghijklmnop")), &headers);
        let out =
            r.redact("key sk-abcdefghijklmnop and org-secret-value and Bearer sk-abcdefghijklmnop");
        assert!(!out.contains("sk-abcdefghijklmnop"));
        assert!(!out.contains("org-secret-value"));
        assert!(out.contains("sk-a…mnop"));
        assert!(out.contains("[REDACTED]"));
    }

    #[test]
    fn errors_are_redacted() {
        let r = Redactor::new(Some(&Secret::new("sk-abcdefghijklmnop")), &BTreeMap::new());
        let e = r.error(LlmError::Authentication {
            status: 401,
            message: "bad key sk-abcdefghijklmnop".into(),
        });
        assert_eq!(
            e,
            LlmError::Authentication {
                status: 401,
                message: "bad key sk-a…mnop".into()
            }
        );
    }
}
