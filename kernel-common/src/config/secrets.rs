//! Which values of a loaded `Config` are secret: the [`Redactor`] that scrubs them from text.

use super::{Config, McpTransport};
use crate::redact::Redactor;
use crate::secret::Secret;

/// Words in an environment variable name that mark its value as a credential.
const SECRET_NAME_PARTS: [&str; 8] = [
    "KEY",
    "TOKEN",
    "SECRET",
    "PASS",
    "AUTH",
    "CREDENTIAL",
    "COOKIE",
    "SESSION",
];

impl Config {
    /// A redactor for every secret in this config: the bot token, provider/titles/stt/tts keys and
    /// the agentd token (masked); every configured header value and every secret-looking stdio MCP
    /// `env` value (`[REDACTED]`).
    pub fn redactor(&self) -> Redactor {
        let keys = [
            self.telegram.token.as_ref(),
            self.titles.as_ref().and_then(|t| t.api_key.as_ref()),
            self.agentd.token.as_ref(),
            self.stt.as_ref().and_then(|s| s.api_key.as_ref()),
            self.tts.as_ref().and_then(|t| t.api_key.as_ref()),
            self.embeddings.as_ref().and_then(|e| e.api_key.as_ref()),
        ]
        .into_iter()
        .flatten()
        .chain(self.providers.values().filter_map(|p| p.api_key.as_ref()))
        .map(Secret::expose);

        let header_maps = self
            .providers
            .values()
            .map(|p| &p.headers)
            .chain(self.titles.iter().map(|t| &t.headers))
            .chain(self.stt.iter().map(|s| &s.headers))
            .chain(self.tts.iter().map(|t| &t.headers))
            .chain(self.embeddings.iter().map(|e| &e.headers))
            .chain(self.mcp_servers.iter().filter_map(|s| match &s.transport {
                McpTransport::Http { headers, .. } => Some(headers),
                McpTransport::Stdio { .. } => None,
            }));
        let mut values: Vec<&str> = header_maps
            .flat_map(|m| m.values().map(Secret::expose))
            .collect();
        for server in &self.mcp_servers {
            if let McpTransport::Stdio { env, .. } = &server.transport {
                values.extend(
                    env.iter()
                        .filter(|(k, _)| looks_secret(k))
                        .map(|(_, v)| v.expose()),
                );
            }
        }
        Redactor::new(keys).with_header_values(values)
    }
}

/// Whether an environment variable's name says it holds a credential.
pub(super) fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_NAME_PARTS.iter().any(|part| upper.contains(part))
}
