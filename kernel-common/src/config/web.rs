//! `[web]`: the web console (kernel-web): where it listens. It serves plain HTTP, so only a
//! loopback address is accepted; a non-loopback one is refused (put a TLS reverse proxy in
//! front for another machine).

use std::net::SocketAddr;

/// `web.listen` when unset.
pub const DEFAULT_WEB_LISTEN: &str = "127.0.0.1:8787";

/// `[web]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebConfig {
    /// `listen`: a loopback address and port.
    pub listen: SocketAddr,
}

impl Default for WebConfig {
    fn default() -> Self {
        Self {
            listen: DEFAULT_WEB_LISTEN.parse().expect("a valid default address"),
        }
    }
}

impl WebConfig {
    /// The console's base URL (`http://127.0.0.1:8787`).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.listen)
    }
}
