//! Updates from users, built as Telegram sends them: text (with `bot_command` entities), photos
//! (several sizes), documents, voice notes, audio files and edits; media bytes become
//! downloadable files.

use serde_json::{Map, Value, json};

use super::state::{State, StoredMessage};
use super::wire;

/// What a new user message carries besides the common fields.
pub(crate) struct Content {
    fields: Map<String, Value>,
    text: Option<String>,
}

impl State {
    /// A private text message from `from`.
    pub(super) fn user_text(&mut self, from: i64, text: &str) -> i64 {
        self.incoming(from, from, text_content(text))
    }

    /// A text message from `from` in group `chat_id`.
    pub(super) fn group_text(&mut self, from: i64, chat_id: i64, text: &str) -> i64 {
        self.chat_or_insert(chat_id, || wire::group_chat(chat_id));
        self.incoming(from, chat_id, text_content(text))
    }

    /// A private photo: two small thumbnails, then the real file as the largest size.
    pub(super) fn user_photo(&mut self, from: i64, data: Vec<u8>, caption: Option<&str>) -> i64 {
        let mut sizes = Vec::new();
        for (w, h) in [(90, 68), (320, 240)] {
            let thumb = format!("fake thumbnail {w}x{h}").into_bytes();
            let mut size = self.add_file("photos", "jpg", thumb.len() as u64, Some(thumb));
            size["width"] = json!(w);
            size["height"] = json!(h);
            sizes.push(size);
        }
        let mut largest = self.add_file("photos", "jpg", data.len() as u64, Some(data));
        largest["width"] = json!(1280);
        largest["height"] = json!(960);
        sizes.push(largest);
        let content = media("photo", Value::Array(sizes), caption);
        self.incoming(from, from, content)
    }

    /// A private document holding `data`.
    pub(super) fn user_document(
        &mut self,
        from: i64,
        file_name: &str,
        data: Vec<u8>,
        caption: Option<&str>,
    ) -> i64 {
        let size = data.len() as u64;
        let document = self.document(file_name, size, Some(data));
        self.incoming(from, from, media("document", document, caption))
    }

    /// A private document whose update claims `file_size`, with no bytes behind it.
    pub(super) fn user_document_claiming_size(
        &mut self,
        from: i64,
        file_name: &str,
        size: u64,
    ) -> i64 {
        let document = self.document(file_name, size, None);
        self.incoming(from, from, media("document", document, None))
    }

    /// A private voice note (`audio/ogg`).
    pub(super) fn user_voice(&mut self, from: i64, data: Vec<u8>) -> i64 {
        let size = data.len() as u64;
        let mut voice = self.add_file("voice", "oga", size, Some(data));
        voice["duration"] = json!((size / 2_000).max(1));
        voice["mime_type"] = json!("audio/ogg");
        self.incoming(from, from, media("voice", voice, None))
    }

    /// A private audio file (sent as music) of type `mime_type`.
    pub(super) fn user_audio(
        &mut self,
        from: i64,
        file_name: &str,
        mime_type: &str,
        data: Vec<u8>,
        caption: Option<&str>,
    ) -> i64 {
        let size = data.len() as u64;
        let ext = file_name.rsplit_once('.').map_or("mp3", |(_, ext)| ext);
        let mut audio = self.add_file("music", ext, size, Some(data));
        audio["duration"] = json!((size / 16_000).max(1));
        audio["file_name"] = json!(file_name);
        audio["mime_type"] = json!(mime_type);
        self.incoming(from, from, media("audio", audio, caption))
    }

    /// An `edited_message` update: `from`'s private message `message_id` now reads `text`.
    pub(super) fn edited_text(&mut self, from: i64, message_id: i64, text: &str) {
        let chat = self.chat_or_insert(from, || wire::private_chat(from));
        let edited = match chat.live_mut(message_id) {
            Some(message) => {
                message.json["text"] = json!(text);
                message.json["edit_date"] = json!(wire::now());
                message.text = Some(text.to_owned());
                message.edit_count += 1;
                message.json.clone()
            }
            None => json!({
                "message_id": message_id,
                "from": wire::user(from),
                "chat": chat.json.clone(),
                "date": wire::now() - 60,
                "edit_date": wire::now(),
                "text": text,
            }),
        };
        self.push_update("edited_message", edited);
    }

    /// Stores a document's file; returns its `Document` JSON.
    pub(super) fn document(&mut self, file_name: &str, size: u64, data: Option<Vec<u8>>) -> Value {
        let ext = file_name
            .rsplit_once('.')
            .map_or("bin", |(_, ext)| ext)
            .to_ascii_lowercase();
        let mut document = self.add_file("documents", &ext, size, data);
        document["file_name"] = json!(file_name);
        document["mime_type"] = json!(mime_type(&ext));
        document
    }

    /// Records a user's message in `chat_id` and queues it as a `message` update.
    pub(super) fn incoming(&mut self, from: i64, chat_id: i64, content: Content) -> i64 {
        let chat = self.chat_or_insert(chat_id, || wire::private_chat(chat_id));
        let id = chat.next_id();
        let mut message = json!({
            "message_id": id,
            "from": wire::user(from),
            "chat": chat.json.clone(),
            "date": wire::now(),
        });
        let thread_id = content
            .fields
            .get("message_thread_id")
            .and_then(Value::as_i64);
        for (key, value) in content.fields {
            message[key] = value;
        }
        chat.messages.push(StoredMessage {
            id,
            from_bot: false,
            json: message.clone(),
            text: content.text,
            parse_mode: None,
            reply_to: None,
            deleted: false,
            edit_count: 0,
            voice: None,
            thread_id,
        });
        self.push_update("message", message);
        id
    }
}

pub(super) fn text_content(text: &str) -> Content {
    let mut fields = Map::new();
    fields.insert("text".into(), json!(text));
    if text.starts_with('/') {
        let command = text.split_whitespace().next().unwrap_or(text);
        let length = command.encode_utf16().count();
        fields.insert(
            "entities".into(),
            json!([{ "type": "bot_command", "offset": 0, "length": length }]),
        );
    }
    Content {
        fields,
        text: Some(text.to_owned()),
    }
}

impl Content {
    /// Adds a message field.
    pub(super) fn insert(&mut self, key: &str, value: Value) {
        self.fields.insert(key.to_owned(), value);
    }

    /// Any message fields (`text`, `location`, `media_group_id`, …); `text` is what the chat
    /// shows of it.
    pub(super) fn new(fields: Map<String, Value>, text: Option<String>) -> Content {
        Content { fields, text }
    }
}

pub(super) fn media(kind: &str, value: Value, caption: Option<&str>) -> Content {
    let mut fields = Map::new();
    fields.insert(kind.into(), value);
    if let Some(caption) = caption {
        fields.insert("caption".into(), json!(caption));
    }
    Content {
        fields,
        text: caption.map(str::to_owned),
    }
}

fn mime_type(ext: &str) -> &'static str {
    match ext {
        "pdf" => "application/pdf",
        "txt" => "text/plain",
        "md" => "text/markdown",
        "json" => "application/json",
        "csv" => "text/csv",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "zip" => "application/zip",
        "ogg" | "oga" => "audio/ogg",
        "mp3" => "audio/mpeg",
        _ => "application/octet-stream",
    }
}
