//! The environment's part in configuration: which variables override which secrets, and `${VAR}`
//! substitution in MCP server settings.

/// Overrides `telegram.token`.
pub const TELEGRAM_TOKEN_ENV: &str = "KERNEL_TELEGRAM_TOKEN";
/// Overrides `titles.api_key`.
pub const TITLES_API_KEY_ENV: &str = "KERNEL_TITLES_API_KEY";
/// Overrides `agentd.token`.
pub const AGENTD_TOKEN_ENV: &str = "KERNEL_AGENTD_TOKEN";
/// Overrides `stt.api_key`.
pub const STT_API_KEY_ENV: &str = "KERNEL_STT_API_KEY";
/// Overrides `tts.api_key`.
pub const TTS_API_KEY_ENV: &str = "KERNEL_TTS_API_KEY";
/// Overrides `embeddings.api_key`.
pub const EMBEDDINGS_API_KEY_ENV: &str = "KERNEL_EMBEDDINGS_API_KEY";

/// The variable overriding `providers.<name>.api_key`: `KERNEL_PROVIDER_<NAME>_API_KEY`, NAME
/// upper-cased with every non-alphanumeric character turned into `_`.
pub fn provider_key_env(name: &str) -> String {
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("KERNEL_PROVIDER_{name}_API_KEY")
}

/// Whether `name` is one of Kernel's own secret variables (to strip from child environments).
pub fn is_secret_env(name: &str) -> bool {
    [
        TELEGRAM_TOKEN_ENV,
        TITLES_API_KEY_ENV,
        AGENTD_TOKEN_ENV,
        STT_API_KEY_ENV,
        TTS_API_KEY_ENV,
        EMBEDDINGS_API_KEY_ENV,
    ]
    .contains(&name)
        || (name.starts_with("KERNEL_PROVIDER_") && name.ends_with("_API_KEY"))
}

/// Every variable named by a well-formed `${VAR}` in the MCP servers' url, header and env values,
/// sorted and without duplicates (the config's secrets that live in the environment).
pub fn referenced_vars(servers: &[super::raw::RawMcpServer]) -> Vec<String> {
    let mut out = std::collections::BTreeSet::new();
    for server in servers {
        let values = server
            .url
            .iter()
            .chain(server.headers.iter().flat_map(|h| h.values()))
            .chain(server.env.iter().flat_map(|e| e.values()));
        for value in values {
            let mut rest = value.as_str();
            while let Some(start) = rest.find("${") {
                let after = &rest[start + 2..];
                let Some(end) = after.find('}') else { break };
                if is_var_name(&after[..end]) {
                    out.insert(after[..end].to_owned());
                }
                rest = &after[end + 1..];
            }
        }
    }
    out.into_iter().collect()
}

/// Why `${VAR}` substitution failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ExpandError {
    /// These variables are unset or empty.
    Missing(Vec<String>),
    /// A `${` without a closing `}` or with an invalid name; carries a description (no value).
    Malformed(String),
}

/// `value` with every `${VAR}` replaced from `env` (unset and empty both count as missing).
/// A `$` not followed by `{` is kept as is.
pub(super) fn expand(
    value: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(value.len());
    let mut missing = Vec::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(ExpandError::Malformed(
                "a `${` has no closing `}`".to_owned(),
            ));
        };
        let name = &after[..end];
        if !is_var_name(name) {
            return Err(ExpandError::Malformed(format!(
                "`${{{name}}}` is not a variable reference (use letters, digits and `_`)"
            )));
        }
        match env(name).filter(|v| !v.trim().is_empty()) {
            Some(v) => out.push_str(&v),
            None if !missing.iter().any(|m| m == name) => missing.push(name.to_owned()),
            None => {}
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(ExpandError::Missing(missing))
    }
}

fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "A" => Some("alpha".to_owned()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn provider_env_names() {
        assert_eq!(
            provider_key_env("anthropic"),
            "KERNEL_PROVIDER_ANTHROPIC_API_KEY"
        );
        assert_eq!(
            provider_key_env("deep-seek.v2"),
            "KERNEL_PROVIDER_DEEP_SEEK_V2_API_KEY"
        );
        assert_eq!(provider_key_env("中"), "KERNEL_PROVIDER___API_KEY");
    }

    #[test]
    fn secret_env_names() {
        assert!(is_secret_env("KERNEL_TELEGRAM_TOKEN"));
        assert!(is_secret_env("KERNEL_PROVIDER_OPENAI_API_KEY"));
        assert!(is_secret_env("KERNEL_AGENTD_TOKEN"));
        assert!(!is_secret_env("KERNEL_CONFIG"));
        assert!(!is_secret_env("PATH"));
    }

    #[test]
    fn expands_variables() {
        assert_eq!(expand("Bearer ${A}", &env), Ok("Bearer alpha".to_owned()));
        assert_eq!(expand("${A}-${A}", &env), Ok("alpha-alpha".to_owned()));
        assert_eq!(expand("$A costs $5", &env), Ok("$A costs $5".to_owned()));
        assert_eq!(expand("plain", &env), Ok("plain".to_owned()));
    }

    #[test]
    fn unset_and_empty_are_missing() {
        assert_eq!(
            expand("${NOPE} ${EMPTY} ${NOPE}", &env),
            Err(ExpandError::Missing(vec![
                "NOPE".to_owned(),
                "EMPTY".to_owned()
            ]))
        );
    }

    #[test]
    fn malformed_references() {
        assert!(matches!(
            expand("${A", &env),
            Err(ExpandError::Malformed(_))
        ));
        assert!(matches!(
            expand("${1A}", &env),
            Err(ExpandError::Malformed(_))
        ));
        assert!(matches!(
            expand("${}", &env),
            Err(ExpandError::Malformed(_))
        ));
    }

    #[test]
    fn referenced_vars_come_from_urls_headers_and_env_values() {
        use super::super::raw::RawMcpServer;
        let servers = [
            RawMcpServer {
                url: Some("https://x/mcp?k=${URL_KEY}".into()),
                headers: Some([("A".to_owned(), "Bearer ${HEADER_KEY}".to_owned())].into()),
                ..RawMcpServer::default()
            },
            RawMcpServer {
                env: Some(
                    [
                        ("T".to_owned(), "${ENV_KEY}${URL_KEY}".to_owned()),
                        ("U".to_owned(), "$PLAIN ${1bad} ${".to_owned()),
                    ]
                    .into(),
                ),
                args: Some(vec!["${NOT_A_SECRET_PLACE}".into()]),
                ..RawMcpServer::default()
            },
        ];
        assert_eq!(
            referenced_vars(&servers),
            ["ENV_KEY", "HEADER_KEY", "URL_KEY"]
        );
    }
}
