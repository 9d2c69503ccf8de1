//! Images: the types both providers accept, and recognising them by their bytes (a client's MIME
//! type may be wrong, and the providers refuse an image whose declared type does not match).

/// Image types both providers accept.
pub const IMAGE_TYPES: &[&str] = &["image/jpeg", "image/png", "image/gif", "image/webp"];

/// The type `data` actually is, by its signature, if it is one of [`IMAGE_TYPES`].
pub fn sniff(data: &[u8]) -> Option<&'static str> {
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
pub fn image_type(declared: &str, data: &[u8]) -> Option<&'static str> {
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
pub fn extension(mime_type: &str) -> &'static str {
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
}
