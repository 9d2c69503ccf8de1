//! Fuzz target: any bytes (as lossy UTF-8) through the renderer and splitter, at a limit taken
//! from the first byte and at Telegram's 4096; every chunk must pass the strict Telegram-HTML
//! validator and the text-preservation checks the tests use. The same text as a live preview
//! (`render::draft`, an unfinished reply) must be one valid message, and the web renderer's
//! HTML must pass the strict web checker.
#![no_main]

use kernel_render::testing::{invariants, telegram_html, web_html};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limit = 256 + usize::from(data.first().copied().unwrap_or(0)) * 8;
    let text = String::from_utf8_lossy(data.get(1..).unwrap_or_default());
    invariants::checked_render(&text, limit);
    invariants::checked_render(&text, kernel_render::MAX_CHUNK_UTF16);
    let parts = [kernel_render::DraftPart::Markdown(&text)];
    if let Some(html) = kernel_render::draft(&parts)
        && let Err(e) = telegram_html::validate(&html)
    {
        panic!("invalid draft ({e}):\n{html}");
    }
    let web = kernel_render::render_web(&text);
    if let Err(e) = web_html::validate(&web) {
        panic!("invalid web HTML ({e}):\n{web}");
    }
});
