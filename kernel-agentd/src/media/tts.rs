//! `TtsClient`: text-to-speech through an OpenAI-compatible `POST {api_base}/audio/speech`
//! `{model, voice, input, response_format: "opus"}`, which answers Ogg/Opus — what Telegram
//! plays as a voice note — so nothing is transcoded; or, with `type = "edge"`, through
//! Microsoft Edge's read-aloud voices (`media::edge_tts`), asked for Ogg/Opus too.

use std::time::Duration;

use kernel_common::config::{TtsConfig, TtsKind};
use tokio_util::sync::CancellationToken;

use super::edge_tts::EdgeTts;
use super::speech_http::{self, Body, SpeechError};
use crate::http::Endpoint;

/// Largest audio answer read (Telegram takes voice notes up to 50 MB; 1500 characters of
/// Opus speech is well under 2 MB); kernel-tg accepts replies of this size.
const MAX_AUDIO_BYTES: usize = kernel_proto::MAX_VOICE_REPLY_BYTES;
/// How every Ogg file starts.
const OGG_MAGIC: &[u8] = b"OggS";

/// The speech service.
#[derive(Debug, Clone)]
pub(crate) enum TtsClient {
    OpenAiCompat(OpenAiTts),
    Edge(EdgeTts, usize),
}

/// The OpenAI-compatible speech endpoint.
#[derive(Debug, Clone)]
pub(crate) struct OpenAiTts {
    endpoint: Endpoint,
    model: String,
    voice: String,
    max_chars: usize,
    /// The whole request's deadline (`[tts] timeout_secs`).
    timeout: Duration,
}

impl TtsClient {
    /// A client for `[tts]`.
    pub(crate) fn new(config: &TtsConfig, client: &reqwest::Client) -> Result<Self, SpeechError> {
        match config.kind {
            TtsKind::Edge => Ok(Self::Edge(EdgeTts::new(config), config.max_chars)),
            TtsKind::OpenAiCompat => Ok(Self::OpenAiCompat(OpenAiTts {
                endpoint: speech_http::endpoint(
                    client,
                    &config.api_base,
                    config.api_key.as_ref(),
                    &config.headers,
                )?,
                model: config.model.clone(),
                voice: config.voice.clone(),
                max_chars: config.max_chars,
                timeout: config.timeout,
            })),
        }
    }

    /// The longest text to speak, in characters.
    pub(crate) fn max_chars(&self) -> usize {
        match self {
            Self::OpenAiCompat(c) => c.max_chars,
            Self::Edge(_, max_chars) => *max_chars,
        }
    }

    /// Ogg/Opus audio of `text`.
    pub(crate) async fn synthesize(
        &self,
        text: &str,
        cancel: &CancellationToken,
    ) -> Result<Vec<u8>, SpeechError> {
        match self {
            Self::OpenAiCompat(c) => c.synthesize(text, cancel).await,
            Self::Edge(c, _) => c.synthesize(text, cancel).await,
        }
    }
}

impl OpenAiTts {
    /// Ogg/Opus audio of `text`.
    async fn synthesize(
        &self,
        text: &str,
        cancel: &CancellationToken,
    ) -> Result<Vec<u8>, SpeechError> {
        let body = serde_json::json!({
            "model": self.model,
            "voice": self.voice,
            "input": text,
            "response_format": "opus",
        });
        let reply = speech_http::post(
            &self.endpoint,
            "/audio/speech",
            Body::Json(body),
            self.timeout,
            MAX_AUDIO_BYTES,
            cancel,
        )
        .await?;
        if !reply.body.starts_with(OGG_MAGIC) {
            return Err(SpeechError::BadResponse(format!(
                "the answer is not Ogg/Opus audio ({} bytes of {})",
                reply.body.len(),
                kernel_common::text::head(
                    &self.endpoint.redactor().redact(&reply.content_type),
                    64
                )
            )));
        }
        Ok(reply.body)
    }
}
