//! The media rules that depend on the turn's provider: an image larger than the provider takes
//! (Claude: 5 MB of base64, 8,000 px a side) is scaled down to fit (`media::image_fit`, off the
//! async runtime) before the gate; one that cannot be decoded is refused, like the general
//! 20 MB refusal, instead of costing a request that the provider then fails.

use kernel_common::config::ProviderKind;
use kernel_common::config::images::ImageLimits;

use super::input::{Accepted, Part};
use crate::media::{Refusal, image, image_fit};

/// `accepted` with every image over what a provider of wire kind `kind` (configured with
/// `configured`) takes scaled down to fit; refused when such an image cannot be decoded.
pub(super) async fn fit_for_provider(
    mut accepted: Accepted,
    kind: ProviderKind,
    configured: ImageLimits,
) -> Result<Accepted, Refusal> {
    let Some(limit) = image::provider_limit(kind, configured) else {
        return Ok(accepted);
    };
    for part in &mut accepted.parts {
        let Part::Image { mime_type, data } = part else {
            continue;
        };
        let (mime, bytes) = (*mime_type, std::mem::take(data));
        let fitted = tokio::task::spawn_blocking(move || {
            let fitted = image_fit::fit(mime, &bytes, limit);
            (bytes, fitted)
        })
        .await;
        let (bytes, fitted) = match fitted {
            Ok(done) => done,
            Err(e) => {
                tracing::error!(error = %e, "scaling an image panicked");
                return Err(too_large(kind, limit));
            }
        };
        match fitted {
            Ok(None) => *data = bytes,
            Ok(Some((new_type, scaled))) => {
                tracing::info!(
                    bytes = bytes.len(),
                    scaled = scaled.len(),
                    from = mime,
                    to = new_type,
                    provider_kind = kind.as_str(),
                    "image scaled down to the provider's limit"
                );
                *mime_type = new_type;
                *data = scaled;
            }
            Err(e) => {
                tracing::info!(
                    bytes = bytes.len(),
                    max_bytes = limit.max_bytes,
                    provider_kind = kind.as_str(),
                    error = %e,
                    "image refused: larger than the provider takes and cannot be scaled"
                );
                return Err(too_large(kind, limit));
            }
        }
    }
    Ok(accepted)
}

fn too_large(kind: ProviderKind, limit: image_fit::ImageLimit) -> Refusal {
    Refusal::ImageTooLargeFor {
        provider: display_name(kind),
        max_bytes: limit.max_bytes,
    }
}

/// How the owner knows the provider's API.
fn display_name(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Claude => "Claude",
        ProviderKind::OpenAiCompat => "the provider",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_image(len: usize) -> Accepted {
        Accepted {
            parts: vec![
                Part::Text("看看".into()),
                Part::Image {
                    mime_type: "image/png",
                    data: vec![0; len],
                },
            ],
            want_voice_reply: false,
            left_out: Vec::new(),
            outside_content: false,
            already_kept: false,
        }
    }

    #[tokio::test]
    async fn claude_refuses_undecodable_images_over_its_limit_and_others_do_not() {
        let max = image::provider_limit(ProviderKind::Claude, ImageLimits::default())
            .unwrap()
            .max_bytes;
        assert!(
            fit_for_provider(
                with_image(max),
                ProviderKind::Claude,
                ImageLimits::default()
            )
            .await
            .is_ok()
        );
        assert_eq!(
            fit_for_provider(
                with_image(max + 1),
                ProviderKind::Claude,
                ImageLimits::default()
            )
            .await
            .err(),
            Some(Refusal::ImageTooLargeFor {
                provider: "Claude",
                max_bytes: max
            })
        );
        assert!(
            fit_for_provider(
                with_image(6 * 1024 * 1024),
                ProviderKind::OpenAiCompat,
                ImageLimits::default()
            )
            .await
            .is_ok()
        );
    }
}
