//! Topics in the bot's private chat (Bot API 9.3/9.4): `getMe.has_topics_enabled`,
//! `message_thread_id` on messages and sends, `createForumTopic` / `editForumTopic`, a topic the
//! owner deleted (sends into it are 400 `message thread not found`) and the forum topic
//! service messages a user's topic actions produce.

use serde_json::{Value, json};

use super::incoming::Content;
use super::params;
use super::state::State;
use super::wire::ApiError;

/// One topic of a private chat.
#[derive(Debug, Clone)]
pub(crate) struct Topic {
    pub name: String,
    pub deleted: bool,
}

/// Telegram's default topic icon color (one of its six allowed values).
const ICON_COLOR: i64 = 7_322_096;
const ICON_COLORS: &[i64] = &[
    7_322_096, 16_766_590, 13_338_331, 9_367_192, 16_749_490, 16_478_047,
];

impl State {
    /// The topic `message_thread_id` of a send names, checked: none without the parameter; 400
    /// `message thread not found` for a topic the chat does not have (or no longer has).
    pub(super) fn send_thread(
        &self,
        chat_id: Option<i64>,
        p: &Value,
    ) -> Result<Option<i64>, ApiError> {
        if !params::has(p, "message_thread_id") {
            return Ok(None);
        }
        let thread = params::int(p, "message_thread_id");
        let live = thread.zip(chat_id).and_then(|(thread, chat)| {
            self.topics
                .get(&(chat, thread))
                .filter(|t| !t.deleted)
                .map(|_| thread)
        });
        match live {
            Some(thread) => Ok(Some(thread)),
            None => Err(ApiError::bad_request("message thread not found")),
        }
    }

    /// A new topic `name` in private chat `chat_id` (its thread id is the id of the service
    /// message that opened it); `by_bot` tells who opened it.
    pub(super) fn open_topic(&mut self, chat_id: i64, name: &str, by_bot: bool) -> (i64, Value) {
        let bot_id = self.bot_id;
        let chat = self.chat_or_insert(chat_id, || super::wire::private_chat(chat_id));
        let id = chat.next_id();
        let from = if by_bot {
            super::wire::bot_user(bot_id)
        } else {
            super::wire::user(chat_id)
        };
        let created = json!({ "name": name, "icon_color": ICON_COLOR });
        let message = json!({
            "message_id": id,
            "message_thread_id": id,
            "is_topic_message": true,
            "from": from,
            "chat": chat.json.clone(),
            "date": super::wire::now(),
            "forum_topic_created": created,
        });
        self.topics.insert(
            (chat_id, id),
            Topic {
                name: name.to_owned(),
                deleted: false,
            },
        );
        (id, message)
    }

    /// `createForumTopic` in a private chat with topics enabled.
    pub(super) fn create_forum_topic(&mut self, p: &Value) -> Result<Value, ApiError> {
        let chat_id = params::int(p, "chat_id");
        let private = chat_id
            .and_then(|id| self.chats.get(&id))
            .map(|c| c.json.get("type").and_then(Value::as_str) == Some("private"));
        match private {
            None => return Err(ApiError::chat_not_found()),
            Some(false) => return Err(ApiError::bad_request("the chat is not a forum")),
            Some(true) if !self.topics_enabled => {
                return Err(ApiError::bad_request("the chat is not a forum"));
            }
            Some(true) => {}
        }
        let name = params::string(p, "name").unwrap_or_default();
        if !(1..=128).contains(&name.chars().count()) {
            return Err(ApiError::bad_request("TOPIC_TITLE_EMPTY"));
        }
        let color = params::int(p, "icon_color").unwrap_or(ICON_COLOR);
        if !ICON_COLORS.contains(&color) {
            return Err(ApiError::bad_request("TOPIC_ICON_COLOR_INVALID"));
        }
        let chat_id = chat_id.unwrap_or_default();
        let (thread, message) = self.open_topic(chat_id, name, true);
        let chat = self.chat(Some(chat_id))?;
        super::methods::store_service(chat, message);
        Ok(json!({ "message_thread_id": thread, "name": name, "icon_color": color }))
    }

    /// `editForumTopic`: a new name for a live topic.
    pub(super) fn edit_forum_topic(&mut self, p: &Value) -> Result<Value, ApiError> {
        let chat_id = params::int(p, "chat_id");
        self.chat(chat_id)?;
        let thread = self
            .send_thread(chat_id, p)?
            .ok_or_else(|| ApiError::bad_request("parameter \"message_thread_id\" is required"))?;
        if let Some(name) = params::string(p, "name") {
            if !(1..=128).contains(&name.chars().count()) {
                return Err(ApiError::bad_request("TOPIC_TITLE_EMPTY"));
            }
            let key = (chat_id.unwrap_or_default(), thread);
            let topic = self.topics.get_mut(&key).expect("a live topic");
            if topic.name == name {
                return Err(ApiError::bad_request("TOPIC_NOT_MODIFIED"));
            }
            topic.name = name.to_owned();
        }
        Ok(json!(true))
    }

    /// The owner deletes topic `thread` of chat `chat_id`: it and its messages are gone.
    pub(super) fn delete_topic(&mut self, chat_id: i64, thread: i64) {
        if let Some(topic) = self.topics.get_mut(&(chat_id, thread)) {
            topic.deleted = true;
        }
        if let Some(chat) = self.chats.get_mut(&chat_id) {
            for message in &mut chat.messages {
                if message.thread_id == Some(thread) {
                    message.deleted = true;
                }
            }
        }
    }

    /// A private text message from `from` in topic `thread` of their chat with the bot.
    pub(super) fn user_text_in_topic(&mut self, from: i64, thread: i64, text: &str) -> i64 {
        let mut content = super::incoming::text_content(text);
        content.insert("message_thread_id", json!(thread));
        content.insert("is_topic_message", json!(true));
        self.incoming(from, from, content)
    }

    /// The owner opens topic `name` in their chat with the bot: a `forum_topic_created` service
    /// message update. Returns the thread id.
    pub(super) fn user_opens_topic(&mut self, from: i64, name: &str) -> i64 {
        let (thread, message) = self.open_topic(from, name, false);
        if let Some(chat) = self.chats.get_mut(&from) {
            super::methods::store_service(chat, message.clone());
            if let Some(stored) = chat.messages.last_mut() {
                stored.from_bot = false;
            }
        }
        self.push_update("message", message);
        thread
    }

    /// A service message `kind` (`forum_topic_edited`, `forum_topic_closed`, …) with `payload`
    /// from `from` in topic `thread`, queued as a `message` update.
    pub(super) fn user_topic_service(
        &mut self,
        from: i64,
        thread: i64,
        kind: &str,
        payload: Value,
    ) -> i64 {
        let mut fields = serde_json::Map::new();
        fields.insert("message_thread_id".into(), json!(thread));
        fields.insert("is_topic_message".into(), json!(true));
        fields.insert(kind.into(), payload);
        self.incoming(from, from, Content::new(fields, None))
    }

    /// The name topic `thread` of chat `chat_id` has now, if it exists.
    pub(crate) fn topic_name(&self, chat_id: i64, thread: i64) -> Option<String> {
        self.topics.get(&(chat_id, thread)).map(|t| t.name.clone())
    }
}
