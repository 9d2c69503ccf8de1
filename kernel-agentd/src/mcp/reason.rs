//! Why an MCP connection or call failed, in a few words for `/status`, the log and the model
//! ("mcp.exa.ai: name not resolved", "connection refused", "HTTP 401"): rmcp's errors wrap the
//! transport's type chain and the HTTP client's internals, which mean nothing to the owner.

use std::error::Error;
use std::io::ErrorKind;

use kernel_common::config::{McpServerConfig, McpTransport};
use rmcp::ServiceError;
use rmcp::service::ClientInitializeError;
use rmcp::transport::streamable_http_client::StreamableHttpError;

type HttpError = StreamableHttpError<reqwest::Error>;

/// Where `server` lives, as the owner knows it: the URL's host (and port, when the URL names
/// one) or the command's file name.
pub(super) fn place(server: &McpServerConfig) -> String {
    match &server.transport {
        McpTransport::Http { url, .. } => match reqwest::Url::parse(url) {
            Ok(u) => match (u.host_str(), u.port()) {
                (Some(host), Some(port)) => format!("{host}:{port}"),
                (Some(host), None) => host.to_owned(),
                (None, _) => server.name.clone(),
            },
            Err(_) => server.name.clone(),
        },
        McpTransport::Stdio { command, .. } => command
            .rsplit('/')
            .next()
            .unwrap_or(command.as_str())
            .to_owned(),
    }
}

/// Why initialising a connection failed.
pub(super) fn initialize(e: &ClientInitializeError) -> String {
    match e {
        ClientInitializeError::TransportError { error, .. } => chain(error),
        ClientInitializeError::ConnectionClosed(_) => {
            "closed the connection before it answered".into()
        }
        ClientInitializeError::JsonRpcError(data) => format!("refused to start: {}", data.message),
        ClientInitializeError::Cancelled => "cancelled".into(),
        ClientInitializeError::NoCompatibleProtocolVersion { .. } => {
            "speaks no protocol version we do".into()
        }
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => initialize(fallback),
        other => chain(other),
    }
}

/// Why a request on a live connection failed.
pub(super) fn service(e: &ServiceError) -> String {
    match e {
        ServiceError::McpError(data) => format!("error {}: {}", data.code.0, data.message),
        ServiceError::TransportClosed => "the connection closed".into(),
        ServiceError::Timeout { .. } => "timed out".into(),
        other => chain(other),
    }
}

/// The first cause along `e`'s source chain that can be said in words; else the innermost
/// error's own text.
pub(super) fn chain(e: &(dyn Error + 'static)) -> String {
    let mut innermost = e;
    let mut current = Some(e);
    while let Some(err) = current {
        if let Some(said) = words(err) {
            return said;
        }
        innermost = err;
        current = err.source();
    }
    innermost.to_string()
}

/// `err` in words, if it is one of the errors that can be said briefly.
fn words(err: &(dyn Error + 'static)) -> Option<String> {
    if let Some(e) = err.downcast_ref::<HttpError>() {
        return http(e);
    }
    if let Some(e) = err.downcast_ref::<reqwest::Error>() {
        return Some(request(e));
    }
    if let Some(e) = err.downcast_ref::<std::io::Error>() {
        return io(e);
    }
    let text = err.to_string();
    if is_dns(&text) {
        return Some("name not resolved".into());
    }
    None
}

fn http(e: &HttpError) -> Option<String> {
    Some(match e {
        StreamableHttpError::Client(e) => request(e),
        StreamableHttpError::HttpStatus(s) => format!("HTTP {}", s.status),
        StreamableHttpError::AuthRequired(_) => "HTTP 401 (authorisation required)".into(),
        StreamableHttpError::InsufficientScope(_) => "HTTP 403 (insufficient scope)".into(),
        // "HTTP 401 Unauthorized: <body>": the status, never the body.
        StreamableHttpError::UnexpectedServerResponse(text) if text.starts_with("HTTP ") => {
            text.split(':').next().unwrap_or(text).trim().to_owned()
        }
        StreamableHttpError::UnexpectedServerResponse(_) => "unexpected answer".into(),
        StreamableHttpError::UnexpectedContentType(_) => {
            "not an MCP endpoint (content type)".into()
        }
        StreamableHttpError::SessionExpired => "session expired".into(),
        StreamableHttpError::UnexpectedEndOfStream => "the answer ended early".into(),
        StreamableHttpError::Io(e) => return io(e),
        _ => return None,
    })
}

/// A failed HTTP request: what went wrong underneath (refused, name, timeout, TLS, status).
fn request(e: &reqwest::Error) -> String {
    if let Some(status) = e.status() {
        return format!("HTTP {}", status.as_u16());
    }
    if e.is_timeout() {
        return "timed out".into();
    }
    let mut cause = e.source();
    while let Some(err) = cause {
        if let Some(io) = err.downcast_ref::<std::io::Error>().and_then(io) {
            return io;
        }
        let text = err.to_string();
        if is_dns(&text) {
            return "name not resolved".into();
        }
        if text.contains("certificate") {
            return "TLS certificate not accepted".into();
        }
        cause = err.source();
    }
    if e.is_connect() {
        "cannot connect".into()
    } else if e.is_body() || e.is_decode() {
        "the answer could not be read".into()
    } else {
        "the request failed".into()
    }
}

fn io(e: &std::io::Error) -> Option<String> {
    let said = match e.kind() {
        ErrorKind::ConnectionRefused => "connection refused",
        ErrorKind::ConnectionReset => "connection reset",
        ErrorKind::ConnectionAborted => "connection aborted",
        ErrorKind::TimedOut => "timed out",
        ErrorKind::HostUnreachable => "host unreachable",
        ErrorKind::NetworkUnreachable => "network unreachable",
        ErrorKind::NotFound => "not found",
        ErrorKind::PermissionDenied => "permission denied",
        ErrorKind::BrokenPipe | ErrorKind::UnexpectedEof => "the connection closed",
        _ if is_dns(&e.to_string()) => "name not resolved",
        _ => return None,
    };
    Some(said.to_owned())
}

/// Whether `text` is a resolver failure (hyper's "dns error", getaddrinfo's messages).
fn is_dns(text: &str) -> bool {
    let t = text.to_ascii_lowercase();
    t.contains("dns error")
        || t.contains("failed to lookup address")
        || t.contains("name or service not known")
        || t.contains("temporary failure in name resolution")
        || t.contains("no address associated with hostname")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error with a message and an optional cause, like the HTTP stack's layers.
    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<dyn Error + Send + Sync + 'static>>);

    impl std::fmt::Display for Layer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl Error for Layer {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            self.1.as_deref().map(|e| e as &(dyn Error + 'static))
        }
    }

    fn layers(top: &'static str, inner: impl Error + Send + Sync + 'static) -> Layer {
        Layer(top, Some(Box::new(inner)))
    }

    #[test]
    fn a_resolver_failure_is_a_name_not_resolved() {
        let gai = std::io::Error::other(
            "failed to lookup address information: Name or service not known",
        );
        let e = layers(
            "Send message error Transport [rmcp::…] error: Client error",
            layers("client error (Connect)", layers("dns error", gai)),
        );
        assert_eq!(chain(&e), "name not resolved");
    }

    #[test]
    fn socket_errors_have_their_words() {
        for (kind, said) in [
            (ErrorKind::ConnectionRefused, "connection refused"),
            (ErrorKind::TimedOut, "timed out"),
            (ErrorKind::ConnectionReset, "connection reset"),
        ] {
            let e = layers("tcp connect error", std::io::Error::from(kind));
            assert_eq!(chain(&e), said);
        }
    }

    #[test]
    fn a_status_answer_keeps_the_status_and_drops_the_body() {
        let e: HttpError = StreamableHttpError::UnexpectedServerResponse(
            "HTTP 401 Unauthorized: {\"token\":\"abc\"}".into(),
        );
        assert_eq!(chain(&e), "HTTP 401 Unauthorized");
        let e: HttpError = StreamableHttpError::AuthRequired(
            rmcp::transport::streamable_http_client::AuthRequiredError::new("Bearer".into()),
        );
        assert_eq!(chain(&e), "HTTP 401 (authorisation required)");
    }

    #[test]
    fn anything_else_is_the_innermost_text() {
        let e = layers(
            "outer [rmcp::transport::worker::WorkerTransport<…>]",
            Layer("the real reason", None),
        );
        assert_eq!(chain(&e), "the real reason");
    }

    #[test]
    fn the_place_is_the_host_or_the_command() {
        let http = |url: &str| McpServerConfig {
            name: "exa".into(),
            transport: McpTransport::Http {
                url: url.into(),
                headers: Default::default(),
            },
            connect_timeout: None,
            call_timeout: None,
            approval: Default::default(),
        };
        assert_eq!(place(&http("https://mcp.exa.ai/mcp")), "mcp.exa.ai");
        assert_eq!(place(&http("http://127.0.0.1:8123/mcp")), "127.0.0.1:8123");
        let stdio = McpServerConfig {
            name: "fs".into(),
            transport: McpTransport::Stdio {
                command: "/usr/bin/npx".into(),
                args: Vec::new(),
                env: Default::default(),
            },
            connect_timeout: None,
            call_timeout: None,
            approval: Default::default(),
        };
        assert_eq!(place(&stdio), "npx");
    }
}
