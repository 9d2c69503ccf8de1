//! Limits both processes apply to what the owner sends, defined once: kernel-tg checks them
//! before downloading, kernel-agentd again before a turn (it may have other clients).

/// Image types both providers accept (an image sent as a file with one of these goes as an
/// image).
pub const IMAGE_TYPES: &[&str] = &["image/jpeg", "image/png", "image/gif", "image/webp"];

/// Largest attachment, in bytes: 20 MB, the Telegram Bot API's own download limit.
pub const MAX_ATTACHMENT_BYTES: usize = 20 * 1024 * 1024;

/// Most attachments one turn carries (Telegram's own album limit).
pub const MAX_ATTACHMENTS: usize = 10;
