//! `run`: the router (served over HTTP, or HTTPS through `tls`) (pages behind the session check, `/login` and `/assets` outside it), the
//! security headers every answer carries, and serving until shutdown; [`login_url`] for
//! `kernel-web --login-url`.

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderName, HeaderValue, header};
use axum::middleware;
use axum::routing::{get, post};
use kernel_common::Config;
use kernel_common::agentd_client::{Agentd, Token};
use kernel_proto::v1::CreateWebLoginRequest;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use crate::state::Web;
use crate::texts::Texts;
use crate::tls::TlsListener;
use crate::{assets, auth, pages};

/// The strict Content-Security-Policy of every answer: only our own script and style, no
/// inline code, no framing, forms post only to us.
pub(crate) const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; \
     base-uri 'none'";

/// Serves the console on `listener` (over TLS with `tls`) until `shutdown` is cancelled.
pub async fn run(
    config: Config,
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let web = Web {
        agentd: Agentd::new(config.agentd.endpoint.clone(), Token::of(&config.agentd)),
        texts: Texts::new(config.general.locale),
        secure: tls.is_some(),
    };
    let app = router(web.clone());
    let stop = shutdown.clone();
    let stopped = async move { stop.cancelled().await };
    let served = match tls {
        Some(tls) => {
            axum::serve(TlsListener::new(listener, tls)?, app)
                .with_graceful_shutdown(stopped)
                .await
        }
        None => {
            axum::serve(listener, app)
                .with_graceful_shutdown(stopped)
                .await
        }
    };
    web.agentd.shutdown().await;
    tracing::info!("kernel-web stopped");
    served
}

fn router(web: Web) -> Router {
    let pages = Router::new()
        .route("/", get(pages::chat_page::page))
        .route("/chat", get(pages::chat_page::page))
        .route("/sessions/new", post(pages::chat_page::new_session))
        .route("/api/chat", post(pages::chat::send))
        .route("/api/stop", post(pages::chat::stop))
        .route("/api/answer", post(pages::chat::answer))
        .route("/api/retry", post(pages::chat_living::retry))
        .route("/api/edit", post(pages::chat_living::edit))
        .route("/api/turn", get(pages::chat_living::turn))
        .route("/memory", get(pages::memory::page))
        .route("/memory/forget", post(pages::memory::forget))
        .route("/sessions", get(pages::sessions::page))
        .route("/sessions/resume", post(pages::sessions::resume))
        .route("/sessions/delete", post(pages::sessions::delete))
        .route("/status", get(pages::status::page))
        .route("/api/approve", post(pages::chat::approve))
        .route(
            "/api/chat/upload",
            post(pages::chat_upload::upload)
                .layer(DefaultBodyLimit::max(pages::chat_upload::MAX_UPLOAD_BYTES)),
        )
        // The reading and tending pages (usage, sessions' history, notes, schedules, skills).
        .route("/usage", get(pages::usage::page))
        .route("/sessions/{id}", get(pages::history::page))
        .route("/sessions/rename", post(pages::sessions::rename))
        .route("/notes", get(pages::notes::page))
        .route("/schedules", get(pages::schedules::page))
        .route("/schedules/delete", post(pages::schedules::delete))
        .route("/jobs/cancel", post(pages::schedules::cancel))
        .route("/skills", get(pages::skills::page))
        .route("/memory/edit", post(pages::memory::edit))
        .route("/memory/undo", post(pages::memory_aside::undo_latest))
        .route_layer(middleware::from_fn_with_state(web.clone(), auth::require));
    Router::new()
        .merge(pages)
        .route("/login", get(auth::login))
        .route("/assets/{name}", get(assets::serve))
        .layer(middleware::map_response(secure_headers))
        .with_state(web)
}

async fn secure_headers(mut res: axum::response::Response) -> axum::response::Response {
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(
        HeaderName::from_static("cross-origin-opener-policy"),
        HeaderValue::from_static("same-origin"),
    );
    h.entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    res
}

/// A one-time login link for `kernel-web --login-url`: asks agentd for a token.
pub async fn login_url(config: &Config) -> Result<String, String> {
    let agentd = Agentd::new(config.agentd.endpoint.clone(), Token::of(&config.agentd));
    let mut client = agentd.client().await.map_err(|e| e.to_string())?;
    let reply = client
        .create_web_login(CreateWebLoginRequest {})
        .await
        .map_err(|s| s.message().to_owned())?
        .into_inner();
    Ok(format!(
        "{}/login?token={}",
        config.web.base_url(),
        reply.token
    ))
}
