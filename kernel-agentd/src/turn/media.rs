//! The media checks that depend on the turn's provider: an image larger than the provider takes
//! (Claude: 5 MB of base64) is refused before the gate, like the general 20 MB refusal, instead
//! of costing a request that the provider then fails.

use kernel_common::config::ProviderKind;

use super::input::{Accepted, Part};
use crate::media::{Refusal, image};

/// Refuses `accepted` when one of its images is larger than a provider of wire kind `kind` takes.
pub(super) fn check_for_provider(accepted: &Accepted, kind: ProviderKind) -> Result<(), Refusal> {
    let Some(max_bytes) = image::provider_max_bytes(kind) else {
        return Ok(());
    };
    for part in &accepted.parts {
        if let Part::Image { data, .. } = part
            && data.len() > max_bytes
        {
            tracing::info!(
                bytes = data.len(),
                max_bytes,
                provider_kind = kind.as_str(),
                "image refused: larger than the provider takes"
            );
            return Err(Refusal::ImageTooLargeFor {
                provider: display_name(kind),
                max_bytes,
            });
        }
    }
    Ok(())
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

    #[test]
    fn claude_refuses_images_over_its_limit_and_others_do_not() {
        let max = image::provider_max_bytes(ProviderKind::Claude).unwrap();
        assert_eq!(
            check_for_provider(&with_image(max), ProviderKind::Claude),
            Ok(())
        );
        assert_eq!(
            check_for_provider(&with_image(max + 1), ProviderKind::Claude),
            Err(Refusal::ImageTooLargeFor {
                provider: "Claude",
                max_bytes: max
            })
        );
        assert_eq!(
            check_for_provider(&with_image(6 * 1024 * 1024), ProviderKind::OpenAiCompat),
            Ok(())
        );
    }
}
