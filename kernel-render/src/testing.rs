//! Test support (feature `test-support`): the strict Telegram-HTML validator and the renderer's
//! invariants, shared by the renderer's tests, its fuzz target and the fake Telegram in tests/;
//! the web renderer's strict checker (`web_html`).

pub mod invariants;
pub mod telegram_html;
pub mod web_html;
