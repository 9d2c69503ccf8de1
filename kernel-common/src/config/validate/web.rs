//! `[web]` → [`WebConfig`]: `listen` must be an `address:port`, loopback unless `tls_cert` and
//! `tls_key` are set (kernel-web then serves HTTPS; both PEM files must be readable);
//! `public_url` must be an `http(s)://` URL. Problems are refused for kernel-web, naming the key
//! and the fix.

use std::net::SocketAddr;

use super::super::TlsConfig;
use super::super::raw::RawWeb;
use super::super::web::{DEFAULT_WEB_LISTEN, WebConfig};
use super::{Component, Ctx, given};

pub(super) fn web(ctx: &mut Ctx<'_>, raw: Option<&RawWeb>) -> WebConfig {
    let Some(raw) = raw else {
        return WebConfig::default();
    };
    let tls = tls(ctx, raw);
    let listen = listen(ctx, raw, tls.is_some());
    let public_url = given(raw.public_url.as_deref()).map(|url| public_url(ctx, url));
    WebConfig {
        configured: true,
        listen,
        public_url,
        tls,
    }
}

fn listen(ctx: &mut Ctx<'_>, raw: &RawWeb, tls: bool) -> SocketAddr {
    let default = WebConfig::default().listen;
    let Some(text) = given(raw.listen.as_deref()).map(str::trim) else {
        return default;
    };
    match text.parse::<SocketAddr>() {
        Ok(listen) if listen.ip().is_loopback() || tls => listen,
        Ok(listen) => {
            ctx.refuse_for(
                Component::Web,
                format!(
                    "web.listen = {listen:?} is not a loopback address and there is no TLS: \
                     set web.tls_cert and web.tls_key (PEM files) to serve HTTPS there, or use \
                     {DEFAULT_WEB_LISTEN:?} (or another 127.0.0.1/[::1] port)"
                ),
            );
            default
        }
        Err(_) => {
            ctx.refuse_for(
                Component::Web,
                format!(
                    "web.listen = {text:?} is not an address:port; use e.g. {DEFAULT_WEB_LISTEN:?}"
                ),
            );
            default
        }
    }
}

fn tls(ctx: &mut Ctx<'_>, raw: &RawWeb) -> Option<TlsConfig> {
    let cert = given(raw.tls_cert.as_deref()).map(|c| ctx.path(Some(c), ""));
    let key = given(raw.tls_key.as_deref()).map(|k| ctx.path(Some(k), ""));
    let (cert, key) = match (cert, key) {
        (Some(cert), Some(key)) => (cert, key),
        (None, None) => return None,
        (Some(_), None) | (None, Some(_)) => {
            ctx.refuse_for(
                Component::Web,
                "web.tls_cert and web.tls_key go together: set both (PEM files) or neither",
            );
            return None;
        }
    };
    for (key_name, path) in [("web.tls_cert", &cert), ("web.tls_key", &key)] {
        if !path.is_file() {
            ctx.refuse_for(
                Component::Web,
                format!(
                    "{key_name} = \"{}\" is not a readable file: point it at a PEM file",
                    path.display()
                ),
            );
        }
    }
    Some(TlsConfig { cert, key })
}

fn public_url(ctx: &mut Ctx<'_>, url: &str) -> String {
    let url = url.trim().trim_end_matches('/').to_owned();
    let host = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    if host.is_none_or(|h| h.is_empty() || h.chars().any(|c| c.is_whitespace() || c == '?')) {
        ctx.refuse_for(
            Component::Web,
            format!(
                "web.public_url = {url:?} is not an http:// or https:// address: set it to what \
                 the browser opens, e.g. \"https://kernel.example.net:8787\""
            ),
        );
    }
    url
}
