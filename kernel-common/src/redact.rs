//! Redaction of secrets for logs, errors and gRPC replies: the one place the rules live.
//!
//! Rules (spec §7): keys and tokens are masked to first 4 + `…` + last 4 (entirely `*` when ≤ 8
//! chars); a value withheld whole is replaced by `[REDACTED]`; the Telegram bot token never
//! shows through a request URL. [`Redactor`] applies all of them to free text.

use std::sync::{Arc, LazyLock};

use regex::{Captures, Regex};

/// What a header value (or anything withheld whole) is replaced by.
pub const REDACTED: &str = "[REDACTED]";

/// Returned by [`Redactor::redact`] in the pathological case where masking cannot remove a secret
/// (a "secret" made of mask characters, say): the whole text is withheld.
const WITHHELD: &str = "[REDACTED: text withheld]";

/// Masks a key or token: first 4 + `…` + last 4; entirely `****` when ≤ 8 chars.
pub fn mask(value: &str) -> String {
    let chars: Vec<char> = value.chars().collect();
    if chars.len() <= 8 {
        return "*".repeat(chars.len().max(4));
    }
    let head: String = chars[..4].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}…{tail}")
}

/// `url` (or any text holding URLs) with credentials masked: the Telegram bot token in
/// `/bot<token>/` and `/file/bot<token>/`, the password in `scheme://user:password@`, and the
/// values of secret-looking query parameters (`?key=`, `api_key=`, `token=`, …).
pub fn redact_url(url: &str) -> String {
    let out = BOT_TOKEN.replace_all(url, |c: &Captures<'_>| format!("/bot{}", mask_once(&c[1])));
    let out = USERINFO.replace_all(&out, |c: &Captures<'_>| {
        format!("{}{}@", &c[1], mask_once(&c[2]))
    });
    let out = SECRET_QUERY.replace_all(&out, |c: &Captures<'_>| {
        format!("{}{}", &c[1], mask_once(&c[2]))
    });
    out.into_owned()
}

/// `/bot<id>:<secret>` in a Telegram Bot API URL (also matches `/file/bot…`).
static BOT_TOKEN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"/bot([^/\s?#:"'<>]+:[^/\s?#"'<>]+)"#).expect("valid regex"));

/// `scheme://user:password@`.
static USERINFO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@"'<>]+:)([^/\s@"'<>]+)@"#).expect("valid regex")
});

/// A query parameter whose name says it carries a credential.
static SECRET_QUERY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)([?&][A-Za-z0-9_.-]*(?:key|token|secret|password|passwd|signature|sig|auth)[A-Za-z0-9_.-]*=)([^&#\s"'<>]+)"#,
    )
    .expect("valid regex")
});

/// `Bearer <x>` / `Basic <x>` (an `Authorization` value quoted in text).
static AUTH_SCHEME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)\b((?:bearer|basic)\s+)([^\s"'<>,;]+)"#).expect("valid regex")
});

/// `x-api-key: <x>`, `api_key=<x>`, `"x-goog-api-key": "<x>"` and the like.
static API_KEY_FIELD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)\b((?:x-api-key|x-goog-api-key|api[-_]?key)["']?\s*[:=]\s*["']?)([^\s"'<>,;&]+)"#,
    )
    .expect("valid regex")
});

/// Masks `value` unless it already is a mask (so redacting twice changes nothing).
fn mask_once(value: &str) -> String {
    let already = value.contains('…') || value == REDACTED || value.chars().all(|c| c == '*');
    if already {
        value.to_owned()
    } else {
        mask(value)
    }
}

/// Masks the credentials in `Bearer`/`Basic`/`x-api-key` patterns.
fn redact_patterns(text: &str) -> String {
    let out = AUTH_SCHEME.replace_all(text, |c: &Captures<'_>| {
        format!("{}{}", &c[1], mask_once(&c[2]))
    });
    let out = API_KEY_FIELD.replace_all(&out, |c: &Captures<'_>| {
        format!("{}{}", &c[1], mask_once(&c[2]))
    });
    out.into_owned()
}

/// One known secret and what replaces it.
struct Rule {
    secret: String,
    replacement: String,
}

/// Scrubs known secrets and credential patterns out of free text. Cheap to clone (shared rules).
///
/// Known secrets are replaced longest first: keys and tokens by their [`mask`], header values by
/// `[REDACTED]`. Then [`redact_url`] and the `Bearer <x>` / `x-api-key: <x>` patterns apply. The
/// result never contains a known secret.
#[derive(Clone, Default)]
pub struct Redactor {
    rules: Arc<[Rule]>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor")
            .field("secrets", &self.rules.len())
            .finish()
    }
}

/// Header values shorter than this are not treated as secrets: replacing every `1` or `gzip` in
/// every log line would make logs unreadable and protect nothing.
const MIN_HEADER_VALUE_LEN: usize = 6;

impl Redactor {
    /// A redactor for `secrets` (keys, tokens), each replaced by its mask. Empty and
    /// whitespace-only entries are ignored.
    pub fn new<I, S>(secrets: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Self::default().with_secrets(secrets)
    }

    /// Adds more secrets, each replaced by its mask.
    pub fn with_secrets<I, S>(self, secrets: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let added = secrets.into_iter().filter_map(|s| {
            let s = s.as_ref();
            (!s.trim().is_empty()).then(|| Rule {
                secret: s.to_owned(),
                replacement: mask(s),
            })
        });
        self.extend(added.collect())
    }

    /// Adds header values, each replaced whole by `[REDACTED]` (values shorter than 6 chars are
    /// ignored: they carry no secret worth garbling every log line for).
    pub fn with_header_values<I, S>(self, values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let added = values.into_iter().filter_map(|v| {
            let v = v.as_ref();
            (v.trim().chars().count() >= MIN_HEADER_VALUE_LEN).then(|| Rule {
                secret: v.to_owned(),
                replacement: REDACTED.to_owned(),
            })
        });
        self.extend(added.collect())
    }

    fn extend(self, added: Vec<Rule>) -> Self {
        let mut rules: Vec<Rule> = self
            .rules
            .iter()
            .map(|r| Rule {
                secret: r.secret.clone(),
                replacement: r.replacement.clone(),
            })
            .chain(added)
            .collect();
        rules.sort_by(|a, b| {
            b.secret
                .len()
                .cmp(&a.secret.len())
                .then(a.secret.cmp(&b.secret))
        });
        rules.dedup_by(|a, b| a.secret == b.secret);
        for rule in &mut rules {
            rule.replacement = safe_replacement(&rule.secret, &rule.replacement);
        }
        Self {
            rules: rules.into(),
        }
    }

    /// How many known secrets this redactor holds.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether it holds no known secret (the URL and header patterns still apply).
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// `text` with every known secret and credential pattern masked.
    pub fn redact(&self, text: &str) -> String {
        let mut out = self.pass(text);
        // A replacement next to surrounding text can, in contrived cases, spell a secret again
        // (e.g. a mask's tail followed by the secret's own middle): repeat until clean.
        for _ in 0..8 {
            if !self.leaks(&out) {
                return out;
            }
            out = self.pass(&out);
        }
        if self.leaks(WITHHELD) {
            String::new()
        } else {
            WITHHELD.to_owned()
        }
    }

    fn pass(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for rule in self.rules.iter() {
            if out.contains(rule.secret.as_str()) {
                out = out.replace(rule.secret.as_str(), &rule.replacement);
            }
        }
        redact_patterns(&redact_url(&out))
    }

    fn leaks(&self, text: &str) -> bool {
        self.rules.iter().any(|r| text.contains(r.secret.as_str()))
    }
}

/// `preferred` unless it contains `secret` itself (a "secret" of asterisks, say).
fn safe_replacement(secret: &str, preferred: &str) -> String {
    [preferred, REDACTED, "****", "####"]
        .into_iter()
        .find(|c| !c.contains(secret))
        .unwrap_or("####")
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn mask_keeps_head_and_tail() {
        assert_eq!(mask("sk-ant-abcdefghijklmnop"), "sk-a…mnop");
        assert_eq!(mask("123456789"), "1234…6789");
        assert_eq!(mask("12345678"), "********");
        assert_eq!(mask("ab"), "****");
        assert_eq!(mask(""), "****");
        assert_eq!(mask("密钥密钥密钥密钥密钥"), "密钥密钥…密钥密钥");
    }

    #[test]
    fn bot_token_is_masked_in_urls() {
        let token = "123456789:AAFakeTelegramTokenForTests_xyzXYZ";
        let url = format!("https://api.telegram.org/bot{token}/getUpdates?timeout=30");
        let out = redact_url(&url);
        assert!(!out.contains(token), "{out}");
        assert_eq!(
            out,
            "https://api.telegram.org/bot1234…zXYZ/getUpdates?timeout=30"
        );
        let file = format!("https://api.telegram.org/file/bot{token}/photos/file_1.jpg");
        assert_eq!(
            redact_url(&file),
            "https://api.telegram.org/file/bot1234…zXYZ/photos/file_1.jpg"
        );
        let bare = format!("error sending request for url (http://127.0.0.1:8081/bot{token})");
        assert!(!redact_url(&bare).contains(token));
    }

    #[test]
    fn other_urls_are_left_alone() {
        for url in [
            "https://api.anthropic.com/v1/messages",
            "see /bottles/ and /both",
            "a:b",
        ] {
            assert_eq!(redact_url(url), url);
        }
    }

    #[test]
    fn url_credentials_are_masked() {
        let out = redact_url("https://user:hunter2hunter2@example.com/x");
        assert_eq!(out, "https://user:hunt…ter2@example.com/x");
        let out = redact_url("https://mcp.exa.ai/mcp?exaApiKey=abcdef0123456789&x=1");
        assert_eq!(out, "https://mcp.exa.ai/mcp?exaApiKey=abcd…6789&x=1");
        let out = redact_url("https://x.test/v1?key=AIzaSyA-0123456789");
        assert!(!out.contains("AIzaSyA-0123456789"), "{out}");
    }

    #[test]
    fn redaction_is_idempotent() {
        let r = Redactor::new(["sk-abcdefghijklmnop"]);
        let once =
            r.redact("Authorization: Bearer sk-abcdefghijklmnop, x-api-key: sk-abcdefghijklmnop");
        assert_eq!(r.redact(&once), once);
        assert_eq!(
            once,
            "Authorization: Bearer sk-a…mnop, x-api-key: sk-a…mnop"
        );
    }

    #[test]
    fn known_secrets_are_masked_everywhere() {
        let r = Redactor::new(["sk-ant-abcdefghijklmnop", "tok-0123456789"]);
        let out = r.redact(
            "key=sk-ant-abcdefghijklmnop token tok-0123456789 again sk-ant-abcdefghijklmnop",
        );
        assert_eq!(out, "key=sk-a…mnop token tok-…6789 again sk-a…mnop");
    }

    #[test]
    fn longest_secret_wins_over_its_substring() {
        let r = Redactor::new(["abcdefghij", "abcdefghij-longer-key"]);
        assert_eq!(r.redact("abcdefghij-longer-key"), "abcd…-key");
        assert_eq!(r.redact("abcdefghij"), "abcd…ghij");
    }

    #[test]
    fn header_values_become_redacted() {
        let r = Redactor::new(["sk-key-0123456789"]).with_header_values(["ctx7-secret-value", "1"]);
        let out = r.redact("sent ctx7-secret-value with sk-key-0123456789 and 1 retry");
        assert_eq!(out, "sent [REDACTED] with sk-k…6789 and 1 retry");
        assert_eq!(r.len(), 2);
    }

    #[test]
    fn empty_and_blank_secrets_are_ignored() {
        let r = Redactor::new(["", "   "]);
        assert!(r.is_empty());
        assert_eq!(r.redact("plain text"), "plain text");
    }

    #[test]
    fn patterns_apply_without_known_secrets() {
        let r = Redactor::default();
        let out = r.redact(r#"{"authorization": "Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig", "x-api-key": "sk-ant-api03-zzzzzzzzzzzz"}"#);
        assert!(!out.contains("eyJhbGciOiJIUzI1NiJ9.payload.sig"), "{out}");
        assert!(!out.contains("sk-ant-api03-zzzzzzzzzzzz"), "{out}");
        assert!(out.contains("Bearer eyJh…."), "{out}");
        let out = r.redact("x-api-key: short");
        assert_eq!(out, "x-api-key: *****");
        let out = r.redact("Authorization: Basic dXNlcjpwYXNzd29yZA==");
        assert_eq!(out, "Authorization: Basic dXNl…ZA==");
    }

    #[test]
    fn secrets_made_of_mask_characters_still_vanish() {
        let r = Redactor::new(["****", "**"]);
        let out = r.redact("a ** b **** c ******");
        assert!(!out.contains("**"), "{out}");
    }

    #[test]
    fn a_mask_that_would_spell_the_secret_again_is_caught() {
        // mask = "abcd…abcd"; the text after the first match continues with "12345abcd".
        let secret = "abcd12345abcd";
        let r = Redactor::new([secret]);
        let out = r.redact(&format!("{secret}12345abcd"));
        assert!(!out.contains(secret), "{out}");
    }

    #[test]
    fn clones_share_rules() {
        let r = Redactor::new(["sk-abcdefghijklmnop"]);
        let c = r.clone();
        assert!(Arc::ptr_eq(&r.rules, &c.rules));
        assert_eq!(format!("{r:?}"), "Redactor { secrets: 1 }");
    }

    proptest! {
        #[test]
        fn redacted_text_never_contains_the_secret(
            secret in "[A-Za-z0-9_:.+/=-]{1,40}",
            prefix in "\\PC{0,40}",
            suffix in "\\PC{0,40}",
            bearer in any::<bool>(),
        ) {
            let r = Redactor::new([secret.as_str()]);
            let text = if bearer {
                format!("{prefix}Authorization: Bearer {secret}{suffix}")
            } else {
                format!("{prefix}{secret}{suffix}{secret}")
            };
            let out = r.redact(&text);
            prop_assert!(!out.contains(&secret), "{:?} leaked in {:?}", secret, out);
        }

        #[test]
        fn redacted_text_never_contains_any_of_several_secrets(
            secrets in proptest::collection::vec("[a-z0-9*…-]{1,12}", 1..4),
            filler in proptest::collection::vec("[a-z0-9 *…-]{0,6}", 4),
        ) {
            let r = Redactor::new(secrets.iter()).with_header_values(secrets.iter());
            let mut text = String::new();
            for (i, s) in secrets.iter().enumerate() {
                text.push_str(&filler[i % filler.len()]);
                text.push_str(s);
            }
            let out = r.redact(&text);
            for s in secrets.iter().filter(|s| !s.trim().is_empty()) {
                prop_assert!(!out.contains(s.as_str()), "{:?} leaked in {:?}", s, out);
            }
        }
    }
}
