//! `Redactor`: scrubs one provider's secrets (its key, its configured header values) out of any
//! text before it can reach an error message, a log line or the owner.

use std::collections::BTreeMap;

use kernel_common::Secret;
use kernel_common::redact::mask;

use super::LlmError;

/// What a configured header value is replaced by (spec §7: header values are replaced whole).
const HEADER_PLACEHOLDER: &str = "[REDACTED]";

/// Replaces every known secret value of one provider with a safe stand-in: the API key with its
/// mask (first 4 + `…` + last 4), header values with `[REDACTED]`.
#[derive(Clone, Default)]
pub struct Redactor {
    /// (secret, replacement), longest secret first so a secret containing another is caught whole.
    rules: Vec<(String, String)>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor")
            .field("rules", &self.rules.len())
            .finish()
    }
}

impl Redactor {
    /// A redactor for a provider with `key` and extra `headers`.
    pub fn new(key: Option<&Secret>, headers: &BTreeMap<String, Secret>) -> Self {
        let mut rules: Vec<(String, String)> = Vec::new();
        if let Some(key) = key.map(Secret::expose).filter(|k| !k.is_empty()) {
            rules.push((key.to_owned(), mask(key)));
        }
        for value in headers
            .values()
            .map(Secret::expose)
            .filter(|v| !v.trim().is_empty())
        {
            rules.push((value.to_owned(), HEADER_PLACEHOLDER.to_owned()));
        }
        rules.sort_by(|a, b| b.0.len().cmp(&a.0.len()));
        rules.dedup_by(|a, b| a.0 == b.0);
        Self { rules }
    }

    /// `text` with every secret replaced.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for (secret, replacement) in &self.rules {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), replacement);
            }
        }
        out
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
    fn longer_secret_wins_over_its_substring() {
        let mut headers = BTreeMap::new();
        headers.insert("x-a".to_owned(), Secret::new("abcdefghij"));
        let r = Redactor::new(Some(&Secret::new("abcdefghij-longer-key")), &headers);
        assert_eq!(r.redact("abcdefghij-longer-key"), "abcd…-key");
    }
}
