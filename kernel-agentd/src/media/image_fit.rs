//! Fitting an image into a provider's limit: an image over the bytes or the pixels a side the
//! provider takes (Claude: 3.75 MB decoded, 8,000 px a side) is decoded, scaled down keeping its
//! aspect ratio and re-encoded until it fits — PNG kept when it fits (screenshots with text),
//! else JPEG (photos). Only an image that cannot be decoded stays as it was (and is refused).
//! CPU work: callers run [`fit`] off the async runtime (`spawn_blocking`).

use std::io::Cursor;

use image::codecs::jpeg::JpegEncoder;
use image::imageops::FilterType;
use image::{DynamicImage, ImageFormat, ImageReader};

/// What a provider takes for one image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ImageLimit {
    /// The most decoded bytes.
    pub max_bytes: usize,
    /// The most pixels on either side.
    pub max_side: u32,
}

/// The JPEG quality a re-encoded photo gets.
const JPEG_QUALITY: u8 = 85;

/// How many times the image is scaled down further before giving up.
const ATTEMPTS: usize = 8;

/// The image could not be decoded (or could not be made to fit).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the image cannot be decoded to scale it down: {0}")]
pub(crate) struct Undecodable(pub String);

/// `data` (of type `mime_type`) as it fits `limit`: `None` when it fits as it is, else the new
/// type and bytes.
pub(crate) fn fit(
    mime_type: &str,
    data: &[u8],
    limit: ImageLimit,
) -> Result<Option<(&'static str, Vec<u8>)>, Undecodable> {
    let reader = || {
        ImageReader::new(Cursor::new(data))
            .with_guessed_format()
            .map_err(|e| Undecodable(e.to_string()))
    };
    let side_fits = |(w, h): (u32, u32)| w <= limit.max_side && h <= limit.max_side;
    if data.len() <= limit.max_bytes {
        // Small enough; a side too long is only known from the header (an unreadable header
        // leaves it to the provider, as before).
        match reader()?.into_dimensions() {
            Ok(dims) if !side_fits(dims) => {}
            _ => return Ok(None),
        }
    }
    let decoded = reader()?.decode().map_err(|e| Undecodable(e.to_string()))?;
    let mut image = if side_fits((decoded.width(), decoded.height())) {
        decoded
    } else {
        decoded.resize(limit.max_side, limit.max_side, FilterType::Triangle)
    };
    let keep_png = mime_type == "image/png";
    for _ in 0..ATTEMPTS {
        if keep_png && let Some(png) = encode_png(&image).filter(|b| b.len() <= limit.max_bytes) {
            return Ok(Some(("image/png", png)));
        }
        let jpeg = encode_jpeg(&image).ok_or_else(|| Undecodable("JPEG encoding".into()))?;
        if jpeg.len() <= limit.max_bytes {
            return Ok(Some(("image/jpeg", jpeg)));
        }
        // Bytes go roughly with the area: scale the sides by the root of the ratio, a bit more.
        let ratio = (limit.max_bytes as f64 / jpeg.len() as f64).sqrt() * 0.9;
        let w = ((f64::from(image.width()) * ratio) as u32).max(1);
        let h = ((f64::from(image.height()) * ratio) as u32).max(1);
        image = image.resize(w, h, FilterType::Triangle);
    }
    Err(Undecodable("it does not fit even scaled down".into()))
}

fn encode_png(image: &DynamicImage) -> Option<Vec<u8>> {
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, ImageFormat::Png).ok()?;
    Some(out.into_inner())
}

/// JPEG has no alpha: transparent pixels are laid on white first.
fn encode_jpeg(image: &DynamicImage) -> Option<Vec<u8>> {
    let rgb = if image.color().has_alpha() {
        let mut rgba = image.to_rgba8();
        for p in rgba.pixels_mut() {
            let a = u16::from(p[3]);
            for c in 0..3 {
                p[c] = ((u16::from(p[c]) * a + 255 * (255 - a)) / 255) as u8;
            }
        }
        DynamicImage::ImageRgba8(rgba).to_rgb8()
    } else {
        image.to_rgb8()
    };
    let mut out = Vec::new();
    JpegEncoder::new_with_quality(&mut out, JPEG_QUALITY)
        .encode_image(&rgb)
        .ok()?;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `w`×`h` PNG of noise (incompressible, so large) or of flat colour (tiny).
    fn png(w: u32, h: u32, noise: bool) -> Vec<u8> {
        let mut seed = 0x2545_f491_u32;
        let img = image::RgbImage::from_fn(w, h, |x, y| {
            if noise {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                let b = seed.to_le_bytes();
                image::Rgb([b[0], b[1], b[2]])
            } else {
                image::Rgb([(x % 256) as u8, (y % 256) as u8, 40])
            }
        });
        encode_png(&DynamicImage::ImageRgb8(img)).unwrap()
    }

    fn dims(data: &[u8]) -> (u32, u32) {
        ImageReader::new(Cursor::new(data))
            .with_guessed_format()
            .unwrap()
            .into_dimensions()
            .unwrap()
    }

    const CLAUDE: ImageLimit = ImageLimit {
        max_bytes: 3_932_160,
        max_side: 8000,
    };

    #[test]
    fn an_image_within_the_limit_is_left_as_it_is() {
        assert_eq!(fit("image/png", &png(64, 48, true), CLAUDE), Ok(None));
        // Not an image at all, but small: the provider decides, as before.
        assert_eq!(fit("image/png", b"\x89PNG\r\n\x1a\n", CLAUDE), Ok(None));
    }

    #[test]
    fn a_photo_over_the_bytes_becomes_a_jpeg_within_them_keeping_the_aspect_ratio() {
        let big = png(1400, 1000, true);
        assert!(big.len() > CLAUDE.max_bytes, "{}", big.len());
        let (mime, data) = fit("image/png", &big, CLAUDE).unwrap().unwrap();
        assert_eq!(mime, "image/jpeg");
        assert!(data.len() <= CLAUDE.max_bytes, "{}", data.len());
        let (w, h) = dims(&data);
        assert!((f64::from(w) / f64::from(h) - 1.4).abs() < 0.01, "{w}x{h}");
    }

    #[test]
    fn a_screenshot_too_wide_stays_a_png_scaled_to_the_side_limit() {
        let limit = ImageLimit {
            max_bytes: 3_932_160,
            max_side: 500,
        };
        let wide = png(1000, 200, false);
        let (mime, data) = fit("image/png", &wide, limit).unwrap().unwrap();
        assert_eq!(mime, "image/png");
        assert_eq!(dims(&data), (500, 100));
    }

    #[test]
    fn a_tight_limit_scales_further_and_only_undecodable_images_fail() {
        let limit = ImageLimit {
            max_bytes: 20_000,
            max_side: 8000,
        };
        let (_, data) = fit("image/png", &png(600, 400, true), limit)
            .unwrap()
            .unwrap();
        assert!(data.len() <= limit.max_bytes);
        let mut broken = b"\x89PNG\r\n\x1a\n".to_vec();
        broken.resize(30_000, 0);
        assert!(fit("image/png", &broken, limit).is_err());
    }
}
