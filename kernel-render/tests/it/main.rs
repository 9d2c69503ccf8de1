//! kernel-render's one integration-test binary: the renderer's suites. The validator and the
//! invariants come from the crate's `testing` module (feature `test-support`), which the fuzz
//! target and the fake Telegram use too.

use kernel_render::testing::{invariants, telegram_html};

mod markdownish;

mod render_draft;
mod render_props;
mod render_sentences;
mod render_snapshots;
mod render_split;
mod render_validator;
mod render_web_props;
