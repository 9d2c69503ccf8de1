//! Received media and voice: `Media` holds what a turn needs for them — the downloads folder,
//! the `[stt]` and `[tts]` clients and the owner's locale. The rules live in the submodules:
//! `document` (which files are read, and how the model sees them), `image`, `image_fit`
//! (scaling an image down to a provider's limit), `speakable`
//! (Markdown → spoken text), `downloads`, `stt` / `tts` over `speech_http` (or `edge_tts`), and `texts` (the
//! owner-facing refusals, zh/en).

pub(crate) mod document;
pub(crate) mod downloads;
pub(crate) mod edge_tts;
pub(crate) mod image;
pub(crate) mod image_fit;
pub(crate) mod speakable;
pub(crate) mod speech_http;
pub(crate) mod stt;
pub(crate) mod texts;
pub(crate) mod tts;

use kernel_common::Config;
use kernel_common::config::Locale;
use tokio_util::sync::CancellationToken;

pub(crate) use downloads::Downloads;
pub(crate) use speech_http::SpeechError;
pub(crate) use stt::{SttClient, VoiceClip};
pub(crate) use texts::{Refusal, What};
pub(crate) use tts::TtsClient;

/// The media side of a running agent, built once from the config.
#[derive(Debug)]
pub struct Media {
    locale: Locale,
    downloads: Downloads,
    /// `None` without `[stt]`; an error when its client could not be built (said on use).
    stt: Option<Result<SttClient, SpeechError>>,
    /// `None` without `[tts]`, or when its client could not be built (logged at start).
    tts: Option<TtsClient>,
}

impl Media {
    /// Media for `config`: downloads under `data_dir`, `[stt]` / `[tts]` (on the shared
    /// `client`) when configured.
    pub fn new(config: &Config, client: &reqwest::Client) -> Self {
        let stt = config.stt.as_ref().map(|c| {
            SttClient::new(c, client).inspect_err(|e| {
                tracing::error!(error = %e, "the [stt] client cannot be built; voice notes will fail");
            })
        });
        let tts = config
            .tts
            .as_ref()
            .and_then(|c| match TtsClient::new(c, client) {
                Ok(client) => Some(client),
                Err(e) => {
                    tracing::error!(error = %e, "the [tts] client cannot be built; replies are text only");
                    None
                }
            });
        Self {
            locale: config.general.locale,
            downloads: Downloads::new(&config.general.data_dir),
            stt,
            tts,
        }
    }

    /// The owner's language.
    pub fn locale(&self) -> Locale {
        self.locale
    }

    /// Where received attachments are kept.
    pub fn downloads(&self) -> &Downloads {
        &self.downloads
    }

    /// Whether voice notes can be transcribed (`[stt]` is configured).
    pub fn stt_configured(&self) -> bool {
        self.stt.is_some()
    }

    /// The transcript of `clip`, or the owner-facing reason it failed (localized, redacted).
    pub async fn transcribe(
        &self,
        clip: VoiceClip,
        cancel: &CancellationToken,
    ) -> Result<String, SttFailure> {
        let client = match &self.stt {
            Some(Ok(client)) => client,
            Some(Err(e)) => {
                return Err(SttFailure::Failed(texts::stt_failed(self.locale, e)));
            }
            None => {
                return Err(SttFailure::Failed(
                    Refusal::VoiceNotConfigured.message(self.locale),
                ));
            }
        };
        let bytes = clip.data.len();
        match client.transcribe(clip, cancel).await {
            Ok(text) if text.is_empty() => {
                tracing::warn!(bytes, "the transcript is empty");
                Err(SttFailure::Failed(texts::stt_heard_nothing(self.locale)))
            }
            Ok(text) => {
                tracing::info!(
                    bytes,
                    chars = text.chars().count(),
                    "voice note transcribed"
                );
                Ok(text)
            }
            Err(SpeechError::Cancelled) => Err(SttFailure::Cancelled),
            Err(e) => {
                tracing::warn!(error = %e, "speech-to-text failed");
                Err(SttFailure::Failed(texts::stt_failed(self.locale, &e)))
            }
        }
    }

    /// What a voice reply to `answer` (Markdown) would say, or `None` — without `[tts]`, or when
    /// nothing in it reads aloud.
    pub fn spoken_version(&self, answer: &str) -> Option<String> {
        let client = self.tts.as_ref()?;
        let text = speakable::speakable(answer, client.max_chars(), self.locale);
        if text.is_none() {
            tracing::info!("nothing in the answer reads aloud; no voice reply");
        }
        text
    }

    /// `text` (from [`spoken_version`](Media::spoken_version)) as Ogg/Opus, or `None` — without
    /// `[tts]`, on failure (logged at WARN) or when `cancel` fires.
    pub async fn voice_reply(
        &self,
        text: &str,
        cancel: &CancellationToken,
    ) -> Result<Option<Vec<u8>>, String> {
        let Some(client) = self.tts.as_ref() else {
            return Ok(None);
        };
        match client.synthesize(text, cancel).await {
            Ok(audio) => {
                tracing::info!(
                    chars = text.chars().count(),
                    bytes = audio.len(),
                    "voice reply synthesised"
                );
                Ok(Some(audio))
            }
            Err(SpeechError::Cancelled) => {
                tracing::warn!("voice reply cancelled; the answer goes out as text only");
                Ok(None)
            }
            Err(e) => {
                tracing::warn!(error = %e, "text-to-speech failed; the answer goes out as text only");
                Err(texts::tts_failed(self.locale(), &e))
            }
        }
    }
}

/// Why a voice note produced no transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SttFailure {
    /// The owner cancelled the turn.
    Cancelled,
    /// A message for the owner (localized, redacted).
    Failed(String),
}
