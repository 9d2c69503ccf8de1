//! Images: the types both providers accept, recognising them by their bytes (a client's MIME
//! type may be wrong, and the providers refuse an image whose declared type does not match), and
//! the smaller size limit of the Anthropic Messages API.

use kernel_common::config::ProviderKind;
use kernel_common::config::images::ImageLimits;
use kernel_common::limits::MAX_ATTACHMENT_BYTES;

use kernel_common::limits::IMAGE_TYPES;

/// The most base64 the Anthropic Messages API takes for one image ("image exceeds 5 MB maximum:
/// … bytes > 5242880 bytes"): the limit applies to the encoded data, not the decoded bytes.
pub(crate) const CLAUDE_MAX_BASE64_BYTES: usize = 5 * 1024 * 1024;

/// The most pixels a side the Anthropic Messages API takes.
pub(crate) const CLAUDE_MAX_SIDE: u32 = 8000;

/// The largest image (decoded bytes) a provider of wire kind `kind` takes, when it is below the
/// general attachment limit: 3.75 MB for `claude`, whose 5 MB limit counts base64; `None` for
/// the others.
pub(crate) fn provider_max_bytes(kind: ProviderKind) -> Option<usize> {
    // Base64 turns every 3 bytes (or fewer, at the end) into 4 characters.
    (kind == ProviderKind::Claude).then_some(CLAUDE_MAX_BASE64_BYTES / 4 * 3)
}

/// What one image may be for a provider of wire kind `kind` configured with `configured`
/// (`max_image_bytes` / `max_image_side_px`, which can only lower Claude's own limit); `None`:
/// no limit below the general one.
pub(crate) fn provider_limit(
    kind: ProviderKind,
    configured: ImageLimits,
) -> Option<super::image_fit::ImageLimit> {
    let own_side = (kind == ProviderKind::Claude).then_some(CLAUDE_MAX_SIDE);
    let lower = |own: Option<usize>, set: Option<usize>| match (own, set) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let max_bytes = lower(provider_max_bytes(kind), configured.max_bytes);
    let max_side = lower(
        own_side.map(|s| s as usize),
        configured.max_side.map(|s| s as usize),
    );
    if max_bytes.is_none() && max_side.is_none() {
        return None;
    }
    Some(super::image_fit::ImageLimit {
        max_bytes: max_bytes.unwrap_or(MAX_ATTACHMENT_BYTES),
        max_side: max_side.map_or(u32::MAX, |s| u32::try_from(s).unwrap_or(u32::MAX)),
    })
}

/// The type `data` actually is, by its signature, if it is one of [`IMAGE_TYPES`].
pub(crate) fn sniff(data: &[u8]) -> Option<&'static str> {
    if data.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if data.starts_with(b"\xff\xd8\xff") {
        Some("image/jpeg")
    } else if data.starts_with(b"GIF87a") || data.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if data.len() >= 12 && data.starts_with(b"RIFF") && &data[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// The type to send for an image declared as `declared`: what the bytes say when they say it,
/// else the declared type (lower case, `image/jpg` read as `image/jpeg`) when it is accepted.
pub(crate) fn image_type(declared: &str, data: &[u8]) -> Option<&'static str> {
    if let Some(sniffed) = sniff(data) {
        return Some(sniffed);
    }
    let declared = declared.trim().to_ascii_lowercase();
    let declared = if declared == "image/jpg" {
        "image/jpeg"
    } else {
        declared.as_str()
    };
    IMAGE_TYPES.iter().copied().find(|t| *t == declared)
}

/// The extension a saved image of `mime_type` gets.
pub(crate) fn extension(mime_type: &str) -> &'static str {
    match mime_type {
        "image/png" => "png",
        "image/gif" => "gif",
        "image/webp" => "webp",
        _ => "jpg",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_win_over_declared_types() {
        assert_eq!(
            image_type("image/jpeg", b"\x89PNG\r\n\x1a\nrest"),
            Some("image/png")
        );
        assert_eq!(image_type("", b"\xff\xd8\xff\xe0"), Some("image/jpeg"));
        assert_eq!(image_type("x", b"GIF89a.."), Some("image/gif"));
        assert_eq!(image_type("", b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(image_type("image/bmp", b"BM.."), None);
    }

    #[test]
    fn declared_types_are_used_when_the_bytes_say_nothing() {
        assert_eq!(image_type(" Image/PNG ", &[7; 3]), Some("image/png"));
        assert_eq!(image_type("image/jpg", &[7; 3]), Some("image/jpeg"));
        assert_eq!(image_type("image/tiff", &[7; 3]), None);
        assert_eq!(extension("image/webp"), "webp");
        assert_eq!(extension("image/jpeg"), "jpg");
    }

    #[test]
    fn claude_takes_images_whose_base64_fits_in_5_mb() {
        let max = provider_max_bytes(ProviderKind::Claude).unwrap();
        assert_eq!(max, 3_932_160);
        let encoded = |n: usize| n.div_ceil(3) * 4;
        assert!(encoded(max) <= CLAUDE_MAX_BASE64_BYTES);
        assert!(encoded(max + 1) > CLAUDE_MAX_BASE64_BYTES);
        assert_eq!(provider_max_bytes(ProviderKind::OpenAiCompat), None);
    }

    #[test]
    fn a_configured_image_limit_applies_to_openai_and_only_lowers_claudes() {
        use super::super::image_fit::ImageLimit;
        let none = ImageLimits::default();
        assert_eq!(provider_limit(ProviderKind::OpenAiCompat, none), None);
        let bytes = ImageLimits {
            max_bytes: Some(1_000_000),
            max_side: None,
        };
        assert_eq!(
            provider_limit(ProviderKind::OpenAiCompat, bytes),
            Some(ImageLimit {
                max_bytes: 1_000_000,
                max_side: u32::MAX
            })
        );
        let side = ImageLimits {
            max_bytes: None,
            max_side: Some(2048),
        };
        assert_eq!(
            provider_limit(ProviderKind::OpenAiCompat, side),
            Some(ImageLimit {
                max_bytes: MAX_ATTACHMENT_BYTES,
                max_side: 2048
            })
        );
        let claude = |limits| provider_limit(ProviderKind::Claude, limits).unwrap();
        assert_eq!(claude(none).max_bytes, 3_932_160);
        assert_eq!(claude(none).max_side, CLAUDE_MAX_SIDE);
        assert_eq!(claude(bytes).max_bytes, 1_000_000);
        let higher = ImageLimits {
            max_bytes: Some(10_000_000),
            max_side: Some(10_000),
        };
        assert_eq!(claude(higher).max_bytes, 3_932_160);
        assert_eq!(claude(higher).max_side, CLAUDE_MAX_SIDE);
    }
}
