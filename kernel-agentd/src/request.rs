//! Building a model request from plain inputs, apart from running it: [`build`] (`build`) takes
//! the persona, the tools, the stored summary and rounds, the budget, the new message, the time
//! and the recalled memories and returns the request. Its parts: the byte-stable system prompt
//! and the per-turn block (`context`), the session's history within the token budget (`history`,
//! `fold`, `tokens`), what is stored of each message (`slim`), the session summary rounds fold
//! into (`session_summary`), and the repair of a stored transcript so it is valid to send
//! (`repair`). No store, no network, no clock; it never imports `crate::turn`.

pub(crate) mod build;
pub(crate) mod context;
pub(crate) mod fold;
pub(crate) mod history;
pub(crate) mod repair;
pub(crate) mod session_summary;
pub(crate) mod slim;
pub(crate) mod tokens;

pub(crate) use build::{RequestInputs, build};
