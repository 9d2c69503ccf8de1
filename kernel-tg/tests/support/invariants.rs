//! The renderer's contract, checked on any input: every chunk valid Telegram HTML within the
//! limit (per `telegram_html`), every plain twin non-blank and within the limit and holding the
//! HTML's visible text, nothing lost or duplicated across chunks (modulo whitespace at the cuts,
//! and a table's header lines repeated at the start of a chunk that continues the table), and
//! zero chunks exactly for blank input.
#![allow(dead_code)]

use kernel_tg::render::{Chunk, render_with_limit, utf16_len};

use crate::telegram_html;

/// Renders `markdown` with `limit`, checks every invariant, and returns the chunks.
pub(crate) fn checked_render(markdown: &str, limit: usize) -> Vec<Chunk> {
    let chunks = render_with_limit(markdown, limit);
    if let Err(problem) = check(markdown, limit, &chunks) {
        panic!(
            "{problem}\n--- markdown ({} bytes) ---\n{markdown:?}",
            markdown.len()
        );
    }
    chunks
}

/// Checks `chunks`, the rendering of `markdown` with `limit`.
pub(crate) fn check(markdown: &str, limit: usize, chunks: &[Chunk]) -> Result<(), String> {
    let blank = !markdown
        .chars()
        .any(|c| !c.is_whitespace() && !c.is_control() && c != '\u{feff}');
    if blank != chunks.is_empty() {
        return Err(format!("blank input: {blank}, but {} chunks", chunks.len()));
    }
    let mut visible = Vec::with_capacity(chunks.len());
    for (index, chunk) in chunks.iter().enumerate() {
        let text = telegram_html::validate_with_limit(&chunk.html, limit)
            .map_err(|e| format!("chunk {index} html invalid: {e}\n{}", chunk.html))?;
        check_plain(&chunk.plain, limit).map_err(|e| format!("chunk {index} plain: {e}"))?;
        if !is_subsequence(&text, &chunk.plain) {
            return Err(format!(
                "chunk {index}: plain does not hold the visible text\nvisible: {text:?}\nplain: {:?}",
                chunk.plain
            ));
        }
        visible.push(text);
    }
    let whole = render_with_limit(markdown, usize::MAX);
    if whole.len() > 1 {
        return Err(format!("unlimited render gave {} chunks", whole.len()));
    }
    let (whole_visible, whole_plain) = match whole.first() {
        Some(chunk) => (
            telegram_html::parse(&chunk.html).map_err(|e| format!("unlimited render: {e}"))?,
            chunk.plain.clone(),
        ),
        None => (String::new(), String::new()),
    };
    preserved(&whole_visible, &visible).map_err(|e| format!("visible text: {e}"))?;
    let plains: Vec<String> = chunks.iter().map(|c| c.plain.clone()).collect();
    preserved(&whole_plain, &plains).map_err(|e| format!("plain text: {e}"))?;
    Ok(())
}

fn check_plain(plain: &str, limit: usize) -> Result<(), String> {
    let units = utf16_len(plain);
    if units > limit {
        return Err(format!("{units} UTF-16 units, over {limit}"));
    }
    if plain.trim().is_empty() {
        return Err("empty or whitespace-only".to_owned());
    }
    Ok(())
}

/// Whether `needle`'s characters appear in `haystack` in order.
fn is_subsequence(needle: &str, haystack: &str) -> bool {
    let mut hay = haystack.chars();
    needle.chars().all(|c| hay.any(|h| h == c))
}

/// Whether `parts`, in order, make up `whole` with only whitespace dropped at their joins and
/// table headers repeated at their starts.
pub(crate) fn preserved(whole: &str, parts: &[String]) -> Result<(), String> {
    let mut rest = whole;
    for (index, part) in parts.iter().enumerate() {
        rest = rest.trim_start();
        let seen = &whole[..whole.len() - rest.len()];
        let mut part = part.as_str();
        if !rest.starts_with(part.trim_start())
            && let Some(header) = repeated_header(part, seen)
        {
            part = &part[header.len()..];
        }
        let part = part.trim_start();
        if !rest.starts_with(part) {
            let shown: String = rest.chars().take(80).collect();
            let wanted: String = part.chars().take(80).collect();
            return Err(format!(
                "part {index} does not continue the text\n expected: {shown:?}\n got: {wanted:?}"
            ));
        }
        rest = &rest[part.len()..];
    }
    if !rest.trim().is_empty() {
        let lost: String = rest.chars().take(80).collect();
        return Err(format!("text lost after the last part: {lost:?}"));
    }
    Ok(())
}

/// The header lines `part` starts with when it repeats a table header already shown in `seen`:
/// a line, then a rule line (`-` and `+` only) and its newline, found at a line start in `seen`.
pub(crate) fn repeated_header<'a>(part: &'a str, seen: &str) -> Option<&'a str> {
    let mut lines = part.split_inclusive('\n');
    let row = lines.next()?;
    let rule = lines.next()?;
    let is_rule = rule.ends_with('\n')
        && rule.trim_end().contains('-')
        && rule.trim_end().chars().all(|c| c == '-' || c == '+');
    let header = &part[..row.len() + rule.len()];
    let shown = seen
        .match_indices(header)
        .any(|(index, _)| index == 0 || seen[..index].ends_with('\n'));
    (is_rule && shown).then_some(header)
}
