//! Live previews of a reply still being written: the Markdown so far (an unfinished document —
//! an open fence, emphasis, a link or a table cut anywhere) and progress lines between its
//! segments, as one message of valid Telegram HTML holding the tail that fits.
//!
//! pulldown-cmark reads any prefix as a complete document (an open fence runs to the end, an
//! unclosed `**` or `[text](…` stays literal text), and the emitter closes every tag it opens,
//! so each piece is valid on its own; pieces are taken from the end while they fit.

use super::{Chunk, MAX_CHUNK_UTF16, render_with_limit, utf16_len};

/// Between two pieces of a draft.
const SEPARATOR: &str = "\n\n";

/// A piece of a draft, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DraftPart<'a> {
    /// Answer text so far (Markdown, possibly unfinished).
    Markdown(&'a str),
    /// A line that is already Telegram HTML (a bot text: a tool running, …).
    Html(&'a str),
}

/// The draft of `parts` as Telegram HTML: the last pieces that fit one message
/// ([`MAX_CHUNK_UTF16`] visible units, counted on a rendered piece's plain twin or an HTML
/// line's markup, neither shorter than what shows), or `None` when nothing shows.
pub fn draft(parts: &[DraftPart<'_>]) -> Option<String> {
    let mut budget = MAX_CHUNK_UTF16;
    let mut pieces: Vec<String> = Vec::new();
    'parts: for part in parts.iter().rev() {
        let chunks = match part {
            DraftPart::Markdown(markdown) => render_with_limit(markdown, MAX_CHUNK_UTF16),
            DraftPart::Html(html) if html.trim().is_empty() => Vec::new(),
            DraftPart::Html(html) => vec![Chunk {
                html: (*html).to_owned(),
                plain: (*html).to_owned(),
            }],
        };
        for chunk in chunks.into_iter().rev() {
            let separator = if pieces.is_empty() {
                0
            } else {
                SEPARATOR.len()
            };
            let cost = utf16_len(&chunk.plain) + separator;
            if cost > budget {
                break 'parts;
            }
            budget -= cost;
            pieces.push(chunk.html);
        }
    }
    if pieces.is_empty() {
        return None;
    }
    pieces.reverse();
    Some(pieces.join(SEPARATOR))
}
