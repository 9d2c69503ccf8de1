//! Message text and caption checks with Telegram's real 400 descriptions: strict HTML (the
//! renderer tests' validator), emptiness, and the UTF-16 length limits.

use kernel_render::testing::telegram_html;

use super::wire::ApiError;

/// Telegram's limit on a message's visible text, in UTF-16 code units.
pub const TEXT_LIMIT: usize = 4096;
/// Telegram's limit on a media caption's visible text, in UTF-16 code units.
pub const CAPTION_LIMIT: usize = 1024;

/// How a text's markup is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Plain,
    Html,
    /// Accepted but not checked: its visible text is taken as the raw text.
    Markdown,
}

fn mode(parse_mode: Option<&str>) -> Result<Mode, ApiError> {
    match parse_mode.map(str::to_ascii_lowercase).as_deref() {
        None | Some("") => Ok(Mode::Plain),
        Some("html") => Ok(Mode::Html),
        Some("markdown" | "markdownv2") => Ok(Mode::Markdown),
        Some(_) => Err(ApiError::bad_request("unsupported parse_mode")),
    }
}

/// The visible text of a message's `text` (1..=4096 UTF-16 units after parsing).
pub(crate) fn message(text: Option<&str>, parse_mode: Option<&str>) -> Result<String, ApiError> {
    let empty = || ApiError::bad_request("message text is empty");
    let text = text.ok_or_else(empty)?;
    let visible = visible(text, mode(parse_mode)?)?;
    if visible.trim().is_empty() {
        return Err(empty());
    }
    if visible.encode_utf16().count() > TEXT_LIMIT {
        return Err(ApiError::bad_request("message is too long"));
    }
    Ok(visible)
}

/// The visible text of a media caption (may be empty; at most 1024 UTF-16 units).
pub(crate) fn caption(text: &str, parse_mode: Option<&str>) -> Result<String, ApiError> {
    let visible = visible(text, mode(parse_mode)?)?;
    if visible.encode_utf16().count() > CAPTION_LIMIT {
        return Err(ApiError::bad_request("message caption is too long"));
    }
    Ok(visible)
}

fn visible(text: &str, mode: Mode) -> Result<String, ApiError> {
    match mode {
        Mode::Plain | Mode::Markdown => Ok(text.to_owned()),
        Mode::Html => telegram_html::parse(text)
            .map_err(|detail| ApiError::bad_request(&format!("can't parse entities: {detail}"))),
    }
}
