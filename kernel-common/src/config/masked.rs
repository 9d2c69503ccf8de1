//! A config file's text with every secret replaced by `[REDACTED]`: `token` and `api_key`
//! values, MCP header and env values (a bare `${VAR}` reference stays), and credentials in
//! URLs. What a backup keeps of the config (comments are not kept).

use toml::{Table, Value};

use crate::redact::{REDACTED, redact_url};

/// The note at the top of a masked config.
const NOTE: &str =
    "# Kernel config with secrets masked ([REDACTED]): fill them in again before use.\n";

/// `text` (a config file) as TOML with its secrets masked; `Err` when it is not valid TOML.
pub fn masked_config(text: &str) -> Result<String, toml::de::Error> {
    let mut table: Table = text.parse()?;
    mask_table(&mut table, false);
    Ok(format!(
        "{NOTE}{}",
        toml::to_string(&table).unwrap_or_default()
    ))
}

fn mask_table(table: &mut Table, all_values: bool) {
    for (key, value) in table.iter_mut() {
        let secret_key = all_values || matches!(key.as_str(), "token" | "api_key");
        let values_secret = matches!(key.as_str(), "headers" | "env");
        let url = matches!(key.as_str(), "url" | "api_url" | "api_base");
        mask_value(value, secret_key, values_secret, url);
    }
}

fn mask_value(value: &mut Value, secret: bool, values_secret: bool, url: bool) {
    match value {
        Value::String(s) if secret && !is_reference(s) => *s = REDACTED.to_owned(),
        Value::String(s) if url => *s = redact_url(s),
        Value::Table(t) => mask_table(t, values_secret),
        Value::Array(items) => {
            for item in items {
                mask_value(item, secret, values_secret, url);
            }
        }
        _ => {}
    }
}

/// A value that is only `${VAR}` (the secret lives in the environment, not the file).
fn is_reference(value: &str) -> bool {
    let v = value.trim();
    v.starts_with("${") && v.ends_with('}') && !v[2..v.len() - 1].contains(['$', '{', '}'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_masked_and_the_rest_kept() {
        let text = r#"
[telegram]
token = "123456:SecretBotToken_abcdef"
allowed_user = 42
[providers.a]
api_key = "sk-secret-0123456789"
api_base = "https://user:pw@example.com/v1"
[[mcp.servers]]
name = "x"
headers = { Authorization = "Bearer abcdef0123456789", K = "${K}" }
env = { T = "ghp_secret0123456789" }
"#;
        let out = masked_config(text).unwrap();
        for secret in [
            "SecretBotToken",
            "sk-secret",
            "abcdef0123456789",
            "ghp_secret",
            ":pw@",
        ] {
            assert!(!out.contains(secret), "{secret} in {out}");
        }
        assert!(out.contains("allowed_user = 42"), "{out}");
        assert!(out.contains("${K}"), "{out}");
        assert!(
            out.starts_with("# Kernel config with secrets masked"),
            "{out}"
        );
    }
}
