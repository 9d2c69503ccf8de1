//! `SttClient`: speech-to-text through an OpenAI-compatible
//! `POST {api_base}/audio/transcriptions` (multipart: `file`, `model`), answering
//! `{"text": "…"}` (or plain text).

use std::time::Duration;

use kernel_common::config::SttConfig;
use reqwest::multipart::{Form, Part};
use tokio_util::sync::CancellationToken;

use super::speech_http::{self, Body, SpeechError};
use crate::http::Endpoint;

/// Largest transcript answer read.
const MAX_ANSWER_BYTES: usize = 1024 * 1024;

/// A voice note to transcribe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VoiceClip {
    /// One of the types [`audio_format`] knows, normalised.
    pub mime_type: &'static str,
    pub data: Vec<u8>,
}

impl VoiceClip {
    /// The extension of its format (`ogg`, `mp3`, …).
    pub fn extension(&self) -> &'static str {
        audio_format(self.mime_type).map_or("bin", |(ext, _)| ext)
    }
}

/// The extension and normalised MIME type of an audio type the transcription endpoints take
/// (OpenAI: flac, m4a, mp3, mp4, mpeg, mpga, oga, ogg, wav, webm). An empty type is a Telegram
/// voice note: Ogg/Opus.
pub(crate) fn audio_format(mime_type: &str) -> Option<(&'static str, &'static str)> {
    let mime = mime_type.trim().to_ascii_lowercase();
    let mime = mime.split(';').next().unwrap_or_default().trim();
    Some(match mime {
        "" | "audio/ogg" | "audio/opus" | "application/ogg" | "audio/x-opus+ogg" => {
            ("ogg", "audio/ogg")
        }
        "audio/mpeg" | "audio/mp3" | "audio/mpga" => ("mp3", "audio/mpeg"),
        "audio/mp4" | "audio/m4a" | "audio/x-m4a" => ("m4a", "audio/mp4"),
        "audio/wav" | "audio/x-wav" | "audio/wave" | "audio/vnd.wave" => ("wav", "audio/wav"),
        "audio/webm" => ("webm", "audio/webm"),
        "audio/flac" | "audio/x-flac" => ("flac", "audio/flac"),
        _ => return None,
    })
}

/// The transcription endpoint.
#[derive(Debug, Clone)]
pub(crate) struct SttClient {
    endpoint: Endpoint,
    model: String,
    /// The whole request's deadline (`[stt] timeout_secs`).
    timeout: Duration,
}

impl SttClient {
    /// A client for `[stt]`.
    pub(crate) fn new(config: &SttConfig, client: &reqwest::Client) -> Result<Self, SpeechError> {
        Ok(Self {
            endpoint: speech_http::endpoint(
                client,
                &config.api_base,
                config.api_key.as_ref(),
                &config.headers,
            )?,
            model: config.model.clone(),
            timeout: config.timeout,
        })
    }

    /// The transcript of `clip` (trimmed; may be empty when nothing was heard).
    pub(crate) async fn transcribe(
        &self,
        clip: VoiceClip,
        cancel: &CancellationToken,
    ) -> Result<String, SpeechError> {
        let file_name = format!("voice.{}", clip.extension());
        let part = Part::bytes(clip.data)
            .file_name(file_name)
            .mime_str(clip.mime_type)
            .map_err(|_| SpeechError::Config(format!("bad audio type {}", clip.mime_type)))?;
        let form = Form::new()
            .part("file", part)
            .text("model", self.model.clone());
        let reply = speech_http::post(
            &self.endpoint,
            "/audio/transcriptions",
            Body::Multipart(form),
            self.timeout,
            MAX_ANSWER_BYTES,
            cancel,
        )
        .await?;
        let body = String::from_utf8_lossy(&reply.body);
        if reply.content_type.starts_with("application/json") || body.trim_start().starts_with('{')
        {
            let value: serde_json::Value = serde_json::from_str(&body)
                .map_err(|_| SpeechError::BadResponse("the answer is not valid JSON".to_owned()))?;
            let text = value.get("text").and_then(|t| t.as_str()).ok_or_else(|| {
                SpeechError::BadResponse("the answer has no \"text\" field".to_owned())
            })?;
            return Ok(text.trim().to_owned());
        }
        Ok(body.trim().to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audio_types_map_to_extensions() {
        assert_eq!(audio_format(""), Some(("ogg", "audio/ogg")));
        assert_eq!(
            audio_format("Audio/OGG; codecs=opus"),
            Some(("ogg", "audio/ogg"))
        );
        assert_eq!(audio_format("audio/x-m4a"), Some(("m4a", "audio/mp4")));
        assert_eq!(audio_format("audio/mpeg"), Some(("mp3", "audio/mpeg")));
        assert_eq!(audio_format("audio/aac"), None);
        assert_eq!(audio_format("video/mp4"), None);
    }
}
