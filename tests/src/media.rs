//! Building `Chat` requests with attachments, a config for the fake speech server, and reading
//! what landed in `data_dir/downloads/`.

use std::path::PathBuf;

use kernel_proto::v1 as pb;
use kernel_proto::v1::agent_client::AgentClient;
use kernel_proto::v1::chat_event::Event;
use tonic::transport::Channel;

use crate::chat::rest;
use crate::config::TestConfig;

/// The key the fake speech server expects (tests assert it never leaks).
pub const SPEECH_KEY: &str = "sk-speech-key-0123456789abcdef";
/// A header value configured for `[stt]` / `[tts]` (tests assert it never leaks).
pub const SPEECH_HEADER: &str = "org-speech-header-secret-42";
/// A tiny but real PNG signature followed by filler: the bytes say "PNG".
pub const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDRfake-png-body";

/// How image `data` travels inside a model request (the conversation model's own base64).
pub fn base64(data: &[u8]) -> String {
    let block = kernel_agentd::conversation::Block::Image {
        mime_type: "image/png".into(),
        data: data.to_vec(),
    };
    serde_json::to_value(block).unwrap()["data"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// `[stt]` (and `[tts]` when `tts`) pointing at a fake speech server at `base`, with `key`.
pub fn speech_toml(base: &str, key: &str, tts: bool) -> String {
    let mut toml = format!(
        r#"
[stt]
api_base = "{base}"
api_key = "{key}"
model = "whisper-test"
headers = {{ X-Speech-Org = "{SPEECH_HEADER}" }}
"#
    );
    if tts {
        toml.push_str(&format!(
            r#"
[tts]
api_base = "{base}"
api_key = "{key}"
model = "tts-test"
voice = "nova"
max_chars = 200
headers = {{ X-Speech-Org = "{SPEECH_HEADER}" }}
"#
        ));
    }
    toml
}

/// Sets `general.locale` in `cfg` (before the server starts).
pub fn set_locale(cfg: &TestConfig, locale: &str) {
    cfg.rewrite(|t| {
        t.replacen(
            "[general]\n",
            &format!("[general]\nlocale = \"{locale}\"\n"),
            1,
        )
    });
}

/// An image attachment.
pub fn image(mime: &str, data: &[u8]) -> pb::Attachment {
    pb::Attachment {
        kind: Some(pb::attachment::Kind::Image(pb::Image {
            data: data.to_vec(),
            mime_type: mime.into(),
        })),
    }
}

/// A document attachment.
pub fn document(file_name: &str, data: &[u8]) -> pb::Attachment {
    pb::Attachment {
        kind: Some(pb::attachment::Kind::Document(pb::Document {
            data: data.to_vec(),
            file_name: file_name.into(),
        })),
    }
}

/// A voice attachment (Ogg/Opus like Telegram's).
pub fn voice(data: &[u8]) -> pb::Attachment {
    pb::Attachment {
        kind: Some(pb::attachment::Kind::Voice(pb::Voice {
            data: data.to_vec(),
            mime_type: "audio/ogg".into(),
        })),
    }
}

/// A request with `text` and `attachments`.
pub fn request(text: &str, attachments: Vec<pb::Attachment>, voice: bool) -> pb::ChatRequest {
    pb::ChatRequest {
        text: text.into(),
        attachments,
        want_voice_reply: voice,
        ..Default::default()
    }
}

/// Sends `req` and collects the whole turn; panics when `Chat` refuses it.
pub async fn turn_with(client: &mut AgentClient<Channel>, req: pb::ChatRequest) -> Vec<Event> {
    let mut stream = client.chat(req).await.expect("Chat accepted").into_inner();
    rest(&mut stream).await
}

/// The files in `data_dir/downloads/`, sorted.
pub fn downloads(cfg: &TestConfig) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = match std::fs::read_dir(cfg.data_dir().join("downloads")) {
        Ok(entries) => entries.flatten().map(|e| e.path()).collect(),
        Err(_) => Vec::new(),
    };
    files.sort();
    files
}
