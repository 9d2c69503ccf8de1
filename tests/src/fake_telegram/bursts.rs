//! Owner messages as the Telegram apps send them in bursts and with context: albums (one
//! `media_group_id`, the caption on the first part), replies (`reply_to_message` as Telegram
//! embeds it, with an optional `quote`), and any other message fields (`forward_origin`,
//! `location`, `venue`, `contact`, `poll`, `dice`, `sticker`, `video`, …).

use serde_json::{Map, Value, json};

use super::FakeTelegram;
use super::incoming::{Content, media};
use super::state::State;

impl State {
    /// A photo of an album `group` (sizes as [`State::user_photo`] sends them).
    fn album_photo(&mut self, from: i64, data: Vec<u8>, caption: Option<&str>, group: &str) -> i64 {
        let mut sizes = Vec::new();
        let mut small = self.add_file("photos", "jpg", 9, Some(b"thumbnail".to_vec()));
        small["width"] = json!(90);
        small["height"] = json!(68);
        sizes.push(small);
        let mut largest = self.add_file("photos", "jpg", data.len() as u64, Some(data));
        largest["width"] = json!(1280);
        largest["height"] = json!(960);
        sizes.push(largest);
        let mut content = media("photo", Value::Array(sizes), caption);
        content_field(&mut content, "media_group_id", json!(group));
        self.incoming(from, from, content)
    }

    /// A document of an album `group`.
    fn album_document(&mut self, from: i64, name: &str, data: Vec<u8>, group: &str) -> i64 {
        let size = data.len() as u64;
        let document = self.document(name, size, Some(data));
        let mut content = media("document", document, None);
        content_field(&mut content, "media_group_id", json!(group));
        self.incoming(from, from, content)
    }

    /// `from`'s private message carrying `fields`.
    fn user_fields(&mut self, from: i64, fields: Value) -> i64 {
        let fields: Map<String, Value> = fields.as_object().cloned().unwrap_or_default();
        let text = fields
            .get("text")
            .or_else(|| fields.get("caption"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        self.incoming(from, from, Content::new(fields, text))
    }

    /// The message `id` of `from`'s private chat as a reply embeds it (without its own reply).
    fn embedded(&mut self, chat: i64, id: i64) -> Option<Value> {
        let chat = self.chats.get(&chat)?;
        let mut message = chat.live(id)?.json.clone();
        if let Some(fields) = message.as_object_mut() {
            fields.remove("reply_to_message");
        }
        Some(message)
    }
}

fn content_field(content: &mut Content, key: &str, value: Value) {
    content.insert(key, value);
}

impl FakeTelegram {
    /// Waits until a getUpdates answer delivered message `message_id` to the bot (it may not
    /// be confirmed yet: the bot confirms an update only once it is handled).
    pub async fn wait_delivered(&self, message_id: i64, timeout: std::time::Duration) {
        self.wait_for_call(
            "getUpdates",
            |c| {
                c.result
                    .as_ref()
                    .and_then(Value::as_array)
                    .is_some_and(|updates| {
                        updates
                            .iter()
                            .any(|u| u["message"]["message_id"].as_i64() == Some(message_id))
                    })
            },
            timeout,
        )
        .await;
    }

    /// An album of photos from `from` with one `media_group_id` (`group`), the caption on the
    /// first part, each part its own update (queued together); returns their message ids.
    pub fn user_album_photos(
        &self,
        from: i64,
        photos: Vec<Vec<u8>>,
        caption: Option<&str>,
        group: &str,
    ) -> Vec<i64> {
        self.queue(|st| {
            photos
                .into_iter()
                .enumerate()
                .map(|(i, data)| st.album_photo(from, data, caption.filter(|_| i == 0), group))
                .collect()
        })
    }

    /// An album of documents `(file name, bytes)` from `from` with one `media_group_id`.
    pub fn user_album_documents(
        &self,
        from: i64,
        documents: Vec<(&str, Vec<u8>)>,
        group: &str,
    ) -> Vec<i64> {
        self.queue(|st| {
            documents
                .into_iter()
                .map(|(name, data)| st.album_document(from, name, data, group))
                .collect()
        })
    }

    /// A private message from `from` with any Bot API `Message` fields (`text`,
    /// `forward_origin`, `location`, `venue`, `contact`, `poll`, `dice`, `sticker`, …);
    /// returns its message id.
    pub fn user_message(&self, from: i64, fields: Value) -> i64 {
        self.queue(|st| st.user_fields(from, fields))
    }

    /// `from` replies with `text` to message `replied` of their private chat (the bot's or
    /// their own), quoting `quote` of it when given; returns the reply's message id.
    pub fn user_reply(&self, from: i64, replied: i64, text: &str, quote: Option<&str>) -> i64 {
        self.queue(|st| {
            let original = st
                .embedded(from, replied)
                .unwrap_or_else(|| panic!("no message {replied} in chat {from}"));
            let mut fields = json!({ "text": text, "reply_to_message": original });
            if let Some(quote) = quote {
                fields["quote"] = json!({ "text": quote, "position": 0 });
            }
            st.user_fields(from, fields)
        })
    }
}
