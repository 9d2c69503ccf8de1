//! kernel-tg's one integration-test binary: the renderer's suites. The support modules stay in
//! `tests/support/` because the fuzz target (`fuzz/fuzz_targets/render.rs`) and the fake
//! Telegram (`tests/src/fake_telegram/text.rs`) compile the same files by path.

#[path = "../support/invariants.rs"]
mod invariants;
#[path = "../support/markdownish.rs"]
mod markdownish;
#[path = "../support/telegram_html.rs"]
mod telegram_html;

mod render_draft;
mod render_props;
mod render_sentences;
mod render_snapshots;
mod render_split;
mod render_validator;
