//! kernel-render: a model's Markdown reply rendered for Telegram (and, from the same parse, for the web console): HTML chunks of at most 4096 visible
//! characters, each with a plain-text twin to resend when Telegram rejects the HTML.
//!
//! The pipeline is parse ([`build`]: pulldown-cmark events → a [`doc::Doc`] of styled text),
//! split ([`split`]: the best cut points under the limit) and emit ([`emit`]: Telegram HTML
//! and plain text for each piece). Because both outputs come from the same document, the
//! plain text of a chunk is the chunk's visible text plus the URLs of its links. A chunk that
//! starts among a table's rows repeats the table's header lines (in both outputs).
//!
//! Bot texts that are already Telegram HTML (command replies) take the same split through
//! [`render_html`] ([`html`] reads them back into a document).
//!
//! A reply still streaming renders as a live preview through [`draft`]: the tail that fits one
//! message, valid however the text so far is cut.
//!
//! The web console renders the same parse as a document through [`render_web`] ([`web`]:
//! tables as `<table>`, code as `<pre><code>`, raw HTML escaped).
//!
//! An all-whitespace reply renders to **zero** chunks; the adapter decides what to send then
//! (it must never send an empty message). Any other reply renders to at least one chunk.
//!
//! # Layout
//! - `build` → `doc` → `split` → `emit`: parse, lay out, cut, write HTML and plain text.
//! - `draft`: live previews; `html`: bot texts already in HTML; `web`: the console's HTML.
//! - `testing` (feature `test-support`): the strict validators and the invariants.
//!
//! Entry point: `render` (and `render_html`, `draft`, `render_web`).

#![forbid(unsafe_code)]

mod build;
mod doc;
mod draft;
mod emit;
mod html;
mod link;
mod split;
mod table;
mod text;
mod urls;
mod web;

#[cfg(feature = "test-support")]
pub mod testing;

pub use draft::{DraftPart, draft};
pub use web::{TAGS as WEB_TAGS, local_src, render_web};

/// Telegram's limit on one message's text, in UTF-16 code units, counted after entity parsing.
pub const MAX_CHUNK_UTF16: usize = 4096;

/// The smallest limit [`render_with_limit`] honours; smaller values are raised to it (a link's
/// plain-text URL, up to [`MAX_PLAIN_URL`] UTF-16 units, is never cut from its link text).
pub const MIN_LIMIT_UTF16: usize = 256;

/// Links whose URL is longer than this (in UTF-16 units) are shown without the URL in the plain
/// fallback.
pub const MAX_PLAIN_URL: usize = 200;

/// One Telegram message's worth of a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// Telegram HTML (`parse_mode = "HTML"`): only tags and entities Telegram accepts, every
    /// tag closed within the chunk, visible text 1..=4096 UTF-16 units, never whitespace-only.
    pub html: String,
    /// The same text without markup (link URLs in parentheses after their text), for sending
    /// with no parse mode when Telegram rejects `html`. 1..=4096 UTF-16 units, never blank.
    pub plain: String,
}

/// Renders `markdown` into Telegram-sized chunks ([`MAX_CHUNK_UTF16`]). Zero chunks means the
/// reply was empty or whitespace-only.
pub fn render(markdown: &str) -> Vec<Chunk> {
    render_with_limit(markdown, MAX_CHUNK_UTF16)
}

/// Like [`render`], with a different per-chunk limit in UTF-16 code units (at least
/// [`MIN_LIMIT_UTF16`]). `usize::MAX` renders the whole reply as a single chunk.
pub fn render_with_limit(markdown: &str, limit: usize) -> Vec<Chunk> {
    let limit = limit.max(MIN_LIMIT_UTF16);
    let doc = build::build(markdown);
    split::pieces(&doc, limit)
        .iter()
        .map(|piece| {
            let ranges = piece.ranges();
            Chunk {
                html: emit::html(&doc, &ranges),
                plain: emit::plain(&doc, &ranges),
            }
        })
        .collect()
}

/// Splits a bot text that is already Telegram HTML (a command reply from `Texts`) into chunks of
/// at most [`MAX_CHUNK_UTF16`] visible units, each with a plain twin; a text that fits is kept
/// exactly as written. Zero chunks when it shows only whitespace.
pub fn render_html(html: &str) -> Vec<Chunk> {
    html::chunks(html, MAX_CHUNK_UTF16)
}

/// The number of UTF-16 code units in `s` (how Telegram counts message length).
pub fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}
