//! Access: `/login?token=…` redeems a one-time link with agentd and sets the session cookie
//! (HttpOnly, SameSite=Strict, Path=/; Secure over HTTPS); [`require`] checks the cookie with agentd on every
//! page and API call (401 and the login page without a valid one) and, on every state-changing
//! request, the CSRF token (`x-csrf-token` header or `csrf` form field; 403 without it).

use axum::body::Body;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use kernel_common::agentd_client::is_transport_failure;
use kernel_proto::v1::{CheckWebSessionRequest, RedeemWebLoginRequest};
use serde::Deserialize;

use crate::html;
use crate::state::Web;

/// The session cookie's name.
pub(crate) const COOKIE: &str = "kernel_session";
/// The CSRF header the page's script sends.
pub(crate) const CSRF_HEADER: &str = "x-csrf-token";
/// Largest form body read for the CSRF field.
const MAX_FORM: usize = 64 * 1024;

/// The checked session's CSRF token, for pages to embed in their forms.
#[derive(Clone, Debug)]
pub(crate) struct Csrf(pub(crate) String);

#[derive(Deserialize)]
pub(crate) struct LoginQuery {
    token: Option<String>,
}

/// `GET /login?token=…`.
pub(crate) async fn login(State(web): State<Web>, Query(q): Query<LoginQuery>) -> Response {
    let t = web.texts;
    let Some(token) = q.token.filter(|t| !t.is_empty() && t.len() <= 128) else {
        return logged_out(&web, StatusCode::UNAUTHORIZED, t.login_needed());
    };
    let mut client = match web.agentd.client().await {
        Ok(client) => client,
        Err(_) => return unavailable(&web),
    };
    match client
        .redeem_web_login(RedeemWebLoginRequest { token })
        .await
    {
        Ok(reply) => {
            let reply = reply.into_inner();
            let secure = if web.secure { "; Secure" } else { "" };
            let cookie = format!(
                "{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/; Max-Age={}{secure}",
                reply.session, reply.expires_in_secs
            );
            tracing::info!("web console: logged in");
            let mut res = Redirect::to("/chat").into_response();
            if let Ok(value) = cookie.parse() {
                res.headers_mut().insert(header::SET_COOKIE, value);
            }
            res
        }
        Err(status) if is_transport_failure(&status) => {
            web.agentd.lost();
            unavailable(&web)
        }
        Err(_) => logged_out(&web, StatusCode::UNAUTHORIZED, t.login_invalid()),
    }
}

/// The session check in front of every page and API.
pub(crate) async fn require(State(web): State<Web>, req: Request, next: Next) -> Response {
    let Some(session) = cookie(req.headers()) else {
        return logged_out(&web, StatusCode::UNAUTHORIZED, web.texts.login_needed());
    };
    let mut client = match web.agentd.client().await {
        Ok(client) => client,
        Err(_) => return unavailable(&web),
    };
    let csrf = match client
        .check_web_session(CheckWebSessionRequest { session })
        .await
    {
        Ok(reply) => reply.into_inner().csrf,
        Err(status) if is_transport_failure(&status) => {
            web.agentd.lost();
            return unavailable(&web);
        }
        Err(_) => return logged_out(&web, StatusCode::UNAUTHORIZED, web.texts.login_needed()),
    };
    let mut req = if req.method() == Method::GET || req.method() == Method::HEAD {
        req
    } else {
        match checked(req, &csrf).await {
            Ok(req) => req,
            Err(()) => {
                tracing::warn!("web console: a state-changing request without its CSRF token");
                return (StatusCode::FORBIDDEN, web.texts.csrf_refused()).into_response();
            }
        }
    };
    req.extensions_mut().insert(Csrf(csrf));
    next.run(req).await
}

/// `req` when it carries `csrf` (header, or `csrf` field of a form body, which is then put
/// back for the handler).
async fn checked(req: Request, csrf: &str) -> Result<Request, ()> {
    if req
        .headers()
        .get(CSRF_HEADER)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == csrf)
    {
        return Ok(req);
    }
    let (parts, body) = req.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_FORM).await.map_err(|_| ())?;
    let found = form_pairs(&bytes)
        .into_iter()
        .any(|(k, v)| k == "csrf" && v == csrf);
    if !found {
        return Err(());
    }
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

/// The `application/x-www-form-urlencoded` pairs of a body.
fn form_pairs(bytes: &[u8]) -> Vec<(String, String)> {
    let text = String::from_utf8_lossy(bytes);
    text.split('&')
        .filter_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            Some((decode(k)?, decode(v)?))
        })
        .collect()
}

fn decode(s: &str) -> Option<String> {
    let mut out = Vec::with_capacity(s.len());
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = s.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// The session cookie's value, if the request carries one.
fn cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find(|(k, v)| *k == COOKIE && !v.is_empty() && v.len() <= 256)
        .map(|(_, v)| v.to_owned())
}

fn logged_out(web: &Web, status: StatusCode, message: &str) -> Response {
    let t = web.texts;
    let body = format!(
        "<h1>{}</h1><p>{}</p>",
        html::escape(t.login_title()),
        html::escape(message)
    );
    (status, html::page(t, t.login_title(), "", &body)).into_response()
}

fn unavailable(web: &Web) -> Response {
    let t = web.texts;
    let body = format!("<p>{}</p>", html::escape(t.agentd_unreachable()));
    (
        StatusCode::SERVICE_UNAVAILABLE,
        html::page(t, t.login_title(), "", &body),
    )
        .into_response()
}
