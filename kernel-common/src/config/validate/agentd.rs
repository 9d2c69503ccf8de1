//! `[agentd]`: the Unix socket, optional TCP with its bearer token and TLS, and the endpoint
//! kernel-tg dials. Nothing reaches the network unless configured, and never without a token; a
//! non-loopback address needs TLS and a configured token. On loopback without a configured token
//! agentd generates one into `data_dir/agentd.token` (`crate::agentd_token`) and kernel-tg, dialing
//! a loopback `http(s)://` endpoint, reads it from there.

use std::net::{IpAddr, SocketAddr};
use std::path::Path;

use super::{Ctx, given, placeholder_note};
use crate::config::env::AGENTD_TOKEN_ENV;
use crate::config::raw::RawAgentd;
use crate::config::{AgentdConfig, Component, TlsConfig};

/// `sun_path` holds 108 bytes including the terminating NUL.
const MAX_SOCKET_PATH: usize = 107;

pub(super) fn agentd(ctx: &mut Ctx<'_>, raw: &RawAgentd, data_dir: &Path) -> AgentdConfig {
    #[cfg(unix)]
    let socket = match given(raw.socket.as_deref()) {
        Some(s) => ctx.path(Some(s), ""),
        None => data_dir.join("agentd.sock"),
    };
    #[cfg(windows)]
    let socket = super::pipe::pipe_name(given(raw.socket.as_deref()), data_dir);
    let token = ctx.secret(raw.token.as_deref(), AGENTD_TOKEN_ENV);
    let listen = listen(ctx, raw.listen.as_deref());
    let tls = tls(ctx, raw, listen.is_some());
    let generated = data_dir.join(crate::agentd_token::FILE_NAME);
    let mut token_file = None;
    if let Some(addr) = listen {
        if token.is_none() && addr.ip().is_loopback() {
            token_file = Some(generated.clone());
        } else if token.is_none() {
            ctx.refuse(format!(
                "agentd.listen = \"{addr}\" is not a loopback address and there is no token{}: \
                 set agentd.token or {AGENTD_TOKEN_ENV} (TCP clients must send it as a bearer \
                 token; only on loopback is one generated into data_dir)",
                placeholder_note(raw.token.as_deref())
            ));
        }
        if !addr.ip().is_loopback() && tls.is_none() {
            ctx.refuse(format!(
                "agentd.listen = \"{addr}\" is not a loopback address: set agentd.tls_cert and \
                 agentd.tls_key, or listen on 127.0.0.1"
            ));
        }
    }
    check_socket_len(ctx, Component::Agentd, "agentd.socket", &socket);
    let endpoint = endpoint(ctx, raw.endpoint.as_deref(), &socket);
    if (endpoint.starts_with("http://") || endpoint.starts_with("https://")) && token.is_none() {
        if is_loopback_url(&endpoint) {
            token_file.get_or_insert(generated);
        } else {
            ctx.refuse_for(
                Component::Tg,
                format!(
                    "agentd.endpoint is a TCP address that is not loopback but there is no \
                     token: set agentd.token or {AGENTD_TOKEN_ENV} (the token agentd requires on \
                     TCP)"
                ),
            );
        }
    }
    if let Some(file) = &token_file
        && !placeholder_note(raw.token.as_deref()).is_empty()
    {
        ctx.warnings.push(format!(
            "agentd.token still holds the example placeholder, so it counts as not set: the \
             token kernel-agentd generates into {} is used instead",
            file.display()
        ));
    }
    AgentdConfig {
        socket,
        listen,
        token,
        token_file,
        tls,
        endpoint,
    }
}

/// Whether an `http(s)://host:port` URL names this machine: a loopback IP or `localhost`.
fn is_loopback_url(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split('/').next().unwrap_or_default();
    let authority = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let host = if let Some(bracketed) = authority.strip_prefix('[') {
        bracketed.split(']').next().unwrap_or_default()
    } else {
        authority
            .rsplit_once(':')
            .map_or(authority, |(host, _)| host)
    };
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn listen(ctx: &mut Ctx<'_>, raw: Option<&str>) -> Option<SocketAddr> {
    let value = given(raw)?.trim();
    match value.parse::<SocketAddr>() {
        Ok(addr) => Some(addr),
        Err(_) => {
            ctx.refuse(format!(
                "agentd.listen = \"{value}\" is not an IP:port address: use e.g. \"127.0.0.1:50051\""
            ));
            None
        }
    }
}

fn tls(ctx: &mut Ctx<'_>, raw: &RawAgentd, listening: bool) -> Option<TlsConfig> {
    let cert = given(raw.tls_cert.as_deref()).map(|c| ctx.path(Some(c), ""));
    let key = given(raw.tls_key.as_deref()).map(|k| ctx.path(Some(k), ""));
    let (cert, key) = match (cert, key) {
        (Some(cert), Some(key)) => (cert, key),
        (None, None) => return None,
        (Some(_), None) => {
            ctx.refuse(
                "agentd.tls_cert is set without agentd.tls_key: set both (PEM files) or neither",
            );
            return None;
        }
        (None, Some(_)) => {
            ctx.refuse(
                "agentd.tls_key is set without agentd.tls_cert: set both (PEM files) or neither",
            );
            return None;
        }
    };
    if !listening {
        ctx.warn_for(
            Component::Agentd,
            "agentd.tls_cert and agentd.tls_key are set but agentd.listen is not: TLS is unused",
        );
    }
    for (key_name, path) in [("agentd.tls_cert", &cert), ("agentd.tls_key", &key)] {
        if listening && !path.is_file() {
            ctx.refuse_for(
                Component::Agentd,
                format!(
                    "{key_name} = \"{}\" is not a readable file: point it at a PEM file",
                    path.display()
                ),
            );
        }
    }
    Some(TlsConfig { cert, key })
}

/// `unix:<path>` (relative paths resolved; default the socket) or `http(s)://host:port`.
fn endpoint(ctx: &mut Ctx<'_>, raw: Option<&str>, socket: &Path) -> String {
    #[cfg(windows)]
    if let Some(endpoint) = super::pipe::endpoint(ctx, raw, socket) {
        return endpoint;
    }
    let Some(value) = given(raw).map(str::trim) else {
        check_socket_len(ctx, Component::Tg, "agentd.socket", socket);
        return format!("unix:{}", socket.display());
    };
    if let Some(path) = value.strip_prefix("unix:") {
        let path = ctx.path(Some(path), "");
        check_socket_len(ctx, Component::Tg, "agentd.endpoint", &path);
        return format!("unix:{}", path.display());
    }
    if !(value.starts_with("http://") || value.starts_with("https://")) {
        ctx.refuse(format!(
            "agentd.endpoint = \"{value}\" is not understood: use \"unix:/path/to/agentd.sock\" or \
             \"http://127.0.0.1:50051\" (https:// with TLS)"
        ));
    }
    value.trim_end_matches('/').to_owned()
}

fn check_socket_len(ctx: &mut Ctx<'_>, component: Component, key: &str, path: &Path) {
    if cfg!(windows) {
        // A named pipe's name, not a `sun_path`.
        return;
    }
    let len = path.as_os_str().len();
    if len > MAX_SOCKET_PATH {
        ctx.refuse_for(
            component,
            format!(
                "{key}: the socket path is {len} bytes long, Unix sockets allow {MAX_SOCKET_PATH}: \
                 set agentd.socket to a shorter path"
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::is_loopback_url;

    #[test]
    fn loopback_urls_are_recognised() {
        for url in [
            "http://127.0.0.1:50051",
            "https://127.0.0.1:50051/",
            "http://127.1.2.3:1",
            "http://[::1]:50051",
            "http://localhost:50051",
            "http://LOCALHOST",
        ] {
            assert!(is_loopback_url(url), "{url}");
        }
        for url in [
            "http://192.168.1.10:50051",
            "https://example.com:443",
            "http://[::]:50051",
            "http://0.0.0.0:50051",
            "http://localhost.example.com:1",
            "http://127.0.0.1.example.com:1",
        ] {
            assert!(!is_loopback_url(url), "{url}");
        }
    }
}
