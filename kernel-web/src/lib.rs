//! kernel-web as a library: the stateless web console, a third adapter beside kernel-tg. It
//! serves server-rendered HTML on loopback (`[web] listen`) and reaches kernel-agentd over gRPC
//! exactly like kernel-tg (`kernel_common::agentd_client`); login tokens and the session key are
//! agentd's (`CreateWebLogin`/`RedeemWebLogin`/`CheckWebSession`), so kernel-web keeps nothing.
//! [`run`] is the whole program; `main` loads config, starts logging and handles signals.
//!
//! # Layout
//! - `app`: the router and `run`; `auth`: login link, session cookie, CSRF.
//! - `pages`: one module per page, each a thin call to agentd.
//! - `texts`, `texts_pages`: every owner-visible text, zh and en; `html`: escaping.
//!
//! Entry point: `run`.
#![forbid(unsafe_code)]

mod app;
mod assets;
mod auth;
mod html;
mod pages;
mod state;
mod texts;
mod texts_pages;
pub mod tls;

pub use app::{login_url, run};
