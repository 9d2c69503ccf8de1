//! `[web]`: the web console (kernel-web): where it listens, whether it serves HTTPS (`tls_cert`
//! and `tls_key`; required for a non-loopback address) and the public address login links
//! start with.

use std::net::SocketAddr;

use super::TlsConfig;

/// `web.listen` when unset.
pub const DEFAULT_WEB_LISTEN: &str = "127.0.0.1:8787";

/// `[web]`.
#[derive(Debug, Clone)]
pub struct WebConfig {
    /// Whether the config has a `[web]` section at all (`/web` in Telegram needs one).
    pub configured: bool,
    /// `listen`: a loopback address and port, or any address with `tls`.
    pub listen: SocketAddr,
    /// `public_url` without a trailing `/`: what login links start with.
    pub public_url: Option<String>,
    /// `tls_cert` + `tls_key`: serve HTTPS.
    pub tls: Option<TlsConfig>,
}

impl Default for WebConfig {
    fn default() -> Self {
        Self {
            configured: false,
            listen: DEFAULT_WEB_LISTEN.parse().expect("a valid default address"),
            public_url: None,
            tls: None,
        }
    }
}

impl WebConfig {
    /// The console's base URL: `public_url`, else `http(s)://<listen>` (`http://127.0.0.1:8787`).
    pub fn base_url(&self) -> String {
        if let Some(url) = &self.public_url {
            return url.clone();
        }
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://{}", self.listen)
    }
}
