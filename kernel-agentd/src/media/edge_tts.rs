//! `[tts] type = "edge"`: Microsoft Edge's read-aloud voices over its WebSocket, no key. One
//! connection per synthesis: `{api_base}?TrustedClientToken=…&Sec-MS-GEC=…&ConnectionId=…`, a
//! `speech.config` text frame asking for `ogg-24khz-16bit-mono-opus` (what Telegram plays as a
//! voice note, so nothing is transcoded), an `ssml` text frame with the voice, rate and pitch,
//! then binary frames (a 2-byte header length, headers with `Path:audio`, the audio) until a
//! `Path:turn.end` text frame. `Sec-MS-GEC` is the SHA-256 of the Windows file time rounded
//! down to 5 minutes followed by the token, upper-case hex, as the Edge browser sends it.

use std::time::Duration;

use futures::{SinkExt as _, StreamExt as _};
use kernel_common::config::TtsConfig;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::{Message, http::HeaderValue};
use tokio_util::sync::CancellationToken;

use super::speech_http::SpeechError;

/// The public token every Edge browser sends.
const TRUSTED_CLIENT_TOKEN: &str = "6A5AA1D4EAFF4E9FB37E23D68491D6F4";
/// The Edge version `Sec-MS-GEC-Version` names.
const GEC_VERSION: &str = "1-130.0.2849.68";
/// Seconds between 1601-01-01 (Windows file time) and 1970-01-01.
const WINDOWS_EPOCH_OFFSET: u64 = 11_644_473_600;
/// The audio Telegram wants for a voice note.
const OUTPUT_FORMAT: &str = "ogg-24khz-16bit-mono-opus";
/// Largest audio read (as for the OpenAI-compatible client).
const MAX_AUDIO_BYTES: usize = kernel_proto::MAX_VOICE_REPLY_BYTES;

/// The Edge read-aloud client.
#[derive(Debug, Clone)]
pub(crate) struct EdgeTts {
    base: String,
    voice: String,
    rate: String,
    pitch: String,
    timeout: Duration,
}

impl EdgeTts {
    pub(crate) fn new(config: &TtsConfig) -> Self {
        Self {
            base: config.api_base.clone(),
            voice: config.voice.clone(),
            rate: config.rate.clone(),
            pitch: config.pitch.clone(),
            timeout: config.timeout,
        }
    }

    /// Ogg/Opus audio of `text`.
    pub(crate) async fn synthesize(
        &self,
        text: &str,
        cancel: &CancellationToken,
    ) -> Result<Vec<u8>, SpeechError> {
        tokio::select! {
            () = cancel.cancelled() => Err(SpeechError::Cancelled),
            done = tokio::time::timeout(self.timeout, self.exchange(text)) => {
                done.unwrap_or(Err(SpeechError::TimedOut(self.timeout)))
            }
        }
    }

    async fn exchange(&self, text: &str) -> Result<Vec<u8>, SpeechError> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let url = format!(
            "{}?TrustedClientToken={TRUSTED_CLIENT_TOKEN}&Sec-MS-GEC={}\
             &Sec-MS-GEC-Version={GEC_VERSION}&ConnectionId={}",
            self.base,
            sec_ms_gec(now.as_secs()),
            random_id()
        );
        let mut request = url
            .into_client_request()
            .map_err(|e| SpeechError::Config(format!("tts.api_base: {e}")))?;
        let headers = request.headers_mut();
        headers.insert(
            "Origin",
            HeaderValue::from_static("chrome-extension://jdiccldimpdaibmpdkjnbmckianbfold"),
        );
        headers.insert(
            "User-Agent",
            HeaderValue::from_static(
                "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like \
                 Gecko) Chrome/130.0.0.0 Safari/537.36 Edg/130.0.0.0",
            ),
        );
        let (mut ws, _) = tokio_tungstenite::connect_async(request)
            .await
            .map_err(|e| match e {
                tokio_tungstenite::tungstenite::Error::Http(r) => SpeechError::Status {
                    status: r.status().as_u16(),
                    message: "the Edge read-aloud service refused the connection".into(),
                },
                e => SpeechError::Network(short(&e.to_string())),
            })?;
        let stamp = timestamp();
        let config = format!(
            "X-Timestamp:{stamp}\r\nContent-Type:application/json; charset=utf-8\r\n\
             Path:speech.config\r\n\r\n{{\"context\":{{\"synthesis\":{{\"audio\":{{\
             \"metadataoptions\":{{\"sentenceBoundaryEnabled\":\"false\",\
             \"wordBoundaryEnabled\":\"false\"}},\"outputFormat\":\"{OUTPUT_FORMAT}\"}}}}}}}}"
        );
        let ssml = format!(
            "X-RequestId:{}\r\nContent-Type:application/ssml+xml\r\nX-Timestamp:{stamp}Z\r\n\
             Path:ssml\r\n\r\n{}",
            random_id(),
            ssml(&self.voice, &self.rate, &self.pitch, text)
        );
        for frame in [config, ssml] {
            ws.send(Message::text(frame))
                .await
                .map_err(|e| SpeechError::Network(short(&e.to_string())))?;
        }
        let mut audio = Vec::new();
        while let Some(message) = ws.next().await {
            match message.map_err(|e| SpeechError::Network(short(&e.to_string())))? {
                Message::Binary(frame) => {
                    if let Some(chunk) = audio_of(&frame) {
                        audio.extend_from_slice(chunk);
                        if audio.len() > MAX_AUDIO_BYTES {
                            return Err(SpeechError::BadResponse(format!(
                                "the audio is larger than {MAX_AUDIO_BYTES} bytes"
                            )));
                        }
                    }
                }
                Message::Text(frame) if frame.contains("Path:turn.end") => {
                    let _ = ws.close(None).await;
                    return ogg(audio);
                }
                Message::Close(_) => break,
                _ => {}
            }
        }
        Err(SpeechError::BadResponse(
            "the Edge read-aloud service closed before the end of the audio".into(),
        ))
    }
}

/// `audio` when it is Ogg (what was asked for).
fn ogg(audio: Vec<u8>) -> Result<Vec<u8>, SpeechError> {
    if audio.starts_with(b"OggS") {
        Ok(audio)
    } else {
        Err(SpeechError::BadResponse(format!(
            "the answer is not Ogg/Opus audio ({} bytes)",
            audio.len()
        )))
    }
}

/// The audio of a binary frame: a big-endian 2-byte header length, the headers, the data; only
/// frames whose headers say `Path:audio`.
fn audio_of(frame: &[u8]) -> Option<&[u8]> {
    let len = usize::from(u16::from_be_bytes([*frame.first()?, *frame.get(1)?]));
    let headers = frame.get(2..2 + len)?;
    let is_audio = std::str::from_utf8(headers)
        .ok()?
        .lines()
        .any(|l| l.trim() == "Path:audio");
    is_audio.then(|| &frame[2 + len..])
}

/// `Sec-MS-GEC` at `unix_secs`: SHA-256 of the Windows file time (100 ns ticks) rounded down to
/// 5 minutes, followed by the token; upper-case hex.
fn sec_ms_gec(unix_secs: u64) -> String {
    let secs = unix_secs + WINDOWS_EPOCH_OFFSET;
    let ticks = (secs - secs % 300) * 10_000_000;
    let digest = ring::digest::digest(
        &ring::digest::SHA256,
        format!("{ticks}{TRUSTED_CLIENT_TOKEN}").as_bytes(),
    );
    digest.as_ref().iter().map(|b| format!("{b:02X}")).collect()
}

/// 32 random hex digits (a connection or request id).
fn random_id() -> String {
    let mut bytes = [0u8; 16];
    let _ = getrandom::fill(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The time as the service expects it in `X-Timestamp`.
fn timestamp() -> String {
    chrono::Utc::now()
        .format("%a %b %d %Y %H:%M:%S GMT+0000 (Coordinated Universal Time)")
        .to_string()
}

/// The SSML document for `text` in `voice` at `rate` and `pitch`.
fn ssml(voice: &str, rate: &str, pitch: &str, text: &str) -> String {
    let lang: String = voice.split('-').take(2).collect::<Vec<_>>().join("-");
    format!(
        "<speak version='1.0' xmlns='http://www.w3.org/2001/10/synthesis' xml:lang='{lang}'>\
         <voice name='{voice}'><prosody pitch='{pitch}' rate='{rate}' volume='+0%'>{}\
         </prosody></voice></speak>",
        escape(text)
    )
}

/// `text` safe inside XML (and without control characters the service refuses).
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if c.is_control() && c != '\n' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// An error's text cut to one short line (no URL query is in it: the token is public anyway).
fn short(text: &str) -> String {
    kernel_common::text::head(text, 200).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sec_ms_gec_is_the_hash_of_the_rounded_file_time_and_the_token() {
        // Within one 5-minute window the value is the same; the next window changes it.
        let t = 1_764_000_000;
        let start = t - (t + WINDOWS_EPOCH_OFFSET) % 300;
        assert_eq!(sec_ms_gec(start), sec_ms_gec(start + 299));
        assert_ne!(sec_ms_gec(start), sec_ms_gec(start + 300));
        let v = sec_ms_gec(t);
        assert_eq!(v.len(), 64);
        assert!(
            v.chars()
                .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
        );
    }

    #[test]
    fn audio_frames_are_cut_after_their_headers() {
        let headers = b"X-RequestId:1\r\nContent-Type:audio/ogg\r\nPath:audio\r\n";
        let mut frame = (headers.len() as u16).to_be_bytes().to_vec();
        frame.extend_from_slice(headers);
        frame.extend_from_slice(b"OggS-data");
        assert_eq!(audio_of(&frame), Some(&b"OggS-data"[..]));
        let other = b"Path:audio.metadata\r\n";
        let mut frame = (other.len() as u16).to_be_bytes().to_vec();
        frame.extend_from_slice(other);
        frame.extend_from_slice(b"{}");
        assert_eq!(audio_of(&frame), None);
        assert_eq!(audio_of(&[0, 9, 1]), None);
    }

    #[test]
    fn ssml_names_the_voice_its_language_rate_and_pitch_and_escapes_the_text() {
        let s = ssml("zh-CN-XiaoxiaoNeural", "+10%", "-5Hz", "a < b & 'c'");
        assert!(s.contains("xml:lang='zh-CN'"), "{s}");
        assert!(s.contains("<voice name='zh-CN-XiaoxiaoNeural'>"), "{s}");
        assert!(s.contains("pitch='-5Hz' rate='+10%'"), "{s}");
        assert!(s.contains("a &lt; b &amp; &apos;c&apos;"), "{s}");
    }
}
