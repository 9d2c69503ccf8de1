//! `[web]` → [`WebConfig`]: `listen` must be a loopback `address:port` (kernel-web serves plain
//! HTTP); anything else is refused for kernel-web, naming the key and the fix.

use std::net::SocketAddr;

use super::super::raw::RawWeb;
use super::super::web::{DEFAULT_WEB_LISTEN, WebConfig};
use super::{Component, Ctx};

pub(super) fn web(ctx: &mut Ctx<'_>, raw: Option<&RawWeb>) -> WebConfig {
    let given = raw.and_then(|r| r.listen.as_deref()).map(str::trim);
    let Some(text) = given.filter(|t| !t.is_empty()) else {
        return WebConfig::default();
    };
    match text.parse::<SocketAddr>() {
        Ok(listen) if listen.ip().is_loopback() => WebConfig { listen },
        Ok(listen) => {
            ctx.refuse_for(
                Component::Web,
                format!(
                    "web.listen = {listen:?} is not a loopback address: kernel-web serves plain \
                     HTTP without TLS, so it listens on loopback only; use \
                     {DEFAULT_WEB_LISTEN:?} (or another 127.0.0.1/[::1] port) and put a TLS \
                     reverse proxy in front to reach it from another machine"
                ),
            );
            WebConfig::default()
        }
        Err(_) => {
            ctx.refuse_for(
                Component::Web,
                format!(
                    "web.listen = {text:?} is not an address:port; use e.g. {DEFAULT_WEB_LISTEN:?}"
                ),
            );
            WebConfig::default()
        }
    }
}
