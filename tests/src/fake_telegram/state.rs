//! The fake Bot API's world: chats and their messages, stored files, the update queue and the
//! call log, behind one mutex in [`super::Shared`].

use std::collections::{HashMap, VecDeque};

use serde_json::{Value, json};

use super::model::{Call, SentMessage};
use super::wire::ApiError;

/// Everything the fake remembers.
#[derive(Debug, Default)]
pub(crate) struct State {
    pub bot_id: i64,
    pub chats: HashMap<i64, Chat>,
    /// Stored files by `file_id`.
    pub files: HashMap<String, StoredFile>,
    next_file: u64,
    /// Updates not yet confirmed by an offset, in `update_id` order.
    pub queue: VecDeque<Value>,
    next_update_id: i64,
    /// The update types the bot asked for (`None`: Telegram's default set).
    pub allowed_updates: Option<Vec<String>>,
    /// Bumped by each getUpdates; a held older one then ends with 409 Conflict.
    pub poll_generation: u64,
    /// getUpdates calls up to this generation answer as if their `timeout` had passed
    /// ([`super::FakeTelegram::time_out_poll`]).
    pub timed_out_generation: u64,
    /// A getUpdates that is not a drop (offset ≥ 0) arrived after the last drop.
    pub polling: bool,
    pub calls: Vec<Call>,
    /// The commands of the last successful setMyCommands.
    pub commands: Option<Value>,
    /// Button presses sent to the bot, and their answers.
    pub presses: Vec<super::buttons::Press>,
    pub next_press: u64,
    /// sendMessageDraft answers "method not found" (an older Bot API).
    pub drafts_missing: bool,
    /// The bot's own reaction emojis per `(chat, message)` (setMessageReaction).
    pub bot_reactions: HashMap<(i64, i64), Vec<String>>,
    /// getMe says `has_topics_enabled` (the owner turned on threaded mode in @BotFather).
    pub topics_enabled: bool,
    /// Topics by `(chat, message_thread_id)`.
    pub topics: HashMap<(i64, i64), super::topics::Topic>,
}

/// One chat the bot has seen.
#[derive(Debug)]
pub(crate) struct Chat {
    /// The chat as messages carry it.
    pub json: Value,
    next_message_id: i64,
    pub messages: Vec<StoredMessage>,
}

/// A message in a chat, by the bot or by a user.
#[derive(Debug, Clone)]
pub(crate) struct StoredMessage {
    pub id: i64,
    pub from_bot: bool,
    /// The message as Telegram would send it now.
    pub json: Value,
    /// Text or caption as sent (markup included).
    pub text: Option<String>,
    pub parse_mode: Option<String>,
    pub reply_to: Option<i64>,
    pub deleted: bool,
    pub edit_count: u32,
    pub voice: Option<Vec<u8>>,
    /// The topic it is in (`message_thread_id`).
    pub thread_id: Option<i64>,
}

/// A file the bot can fetch with getFile and download.
#[derive(Debug)]
pub(crate) struct StoredFile {
    pub unique_id: String,
    pub path: String,
    pub size: u64,
    /// `None` when only the size was claimed (nothing to download).
    pub data: Option<Vec<u8>>,
}

impl Chat {
    /// The next message id in this chat.
    pub(super) fn next_id(&mut self) -> i64 {
        self.next_message_id += 1;
        self.next_message_id
    }

    /// A message that exists and is not deleted.
    pub(super) fn live(&self, id: i64) -> Option<&StoredMessage> {
        self.messages.iter().find(|m| m.id == id && !m.deleted)
    }

    pub(super) fn live_mut(&mut self, id: i64) -> Option<&mut StoredMessage> {
        self.messages.iter_mut().find(|m| m.id == id && !m.deleted)
    }
}

impl State {
    pub(super) fn new(bot_id: i64) -> State {
        State {
            bot_id,
            next_update_id: 100_000,
            ..State::default()
        }
    }

    /// The chat `id`, registering it with `json` the first time.
    pub(super) fn chat_or_insert(&mut self, id: i64, json: impl FnOnce() -> Value) -> &mut Chat {
        self.chats.entry(id).or_insert_with(|| Chat {
            json: json(),
            next_message_id: 0,
            messages: Vec::new(),
        })
    }

    /// A chat the bot has seen, or 400 `chat not found`.
    pub(super) fn chat(&mut self, id: Option<i64>) -> Result<&mut Chat, ApiError> {
        id.and_then(|id| self.chats.get_mut(&id))
            .ok_or_else(ApiError::chat_not_found)
    }

    /// Stores a file; returns its `{file_id, file_unique_id, file_size}`.
    pub(super) fn add_file(
        &mut self,
        folder: &str,
        ext: &str,
        size: u64,
        data: Option<Vec<u8>>,
    ) -> Value {
        self.next_file += 1;
        let n = self.next_file;
        let file_id = format!("fake-file-id-{n}");
        let unique_id = format!("fake-unique-{n}");
        let file = StoredFile {
            unique_id: unique_id.clone(),
            path: format!("{folder}/file_{n}.{ext}"),
            size,
            data,
        };
        self.files.insert(file_id.clone(), file);
        json!({ "file_id": file_id, "file_unique_id": unique_id, "file_size": size })
    }

    /// The stored file at `path`.
    pub(super) fn file_at(&self, path: &str) -> Option<&StoredFile> {
        self.files.values().find(|f| f.path == path)
    }

    /// Queues an update `{"update_id": n, kind: payload}`; returns `n`.
    pub(super) fn push_update(&mut self, kind: &str, payload: Value) -> i64 {
        let id = self.next_update_id;
        self.next_update_id += 1;
        self.queue
            .push_back(json!({ "update_id": id, kind: payload }));
        id
    }

    /// Queues a raw update, giving it the next `update_id` when it has none.
    pub(super) fn push_raw(&mut self, mut update: Value) {
        match update.get("update_id").and_then(Value::as_i64) {
            Some(id) => self.next_update_id = self.next_update_id.max(id + 1),
            None if update.is_object() => {
                update["update_id"] = json!(self.next_update_id);
                self.next_update_id += 1;
            }
            None => {}
        }
        self.queue.push_back(update);
    }

    /// The bot's messages in `chat_id`, in send order.
    pub(super) fn sent_messages(&self, chat_id: i64) -> Vec<SentMessage> {
        let Some(chat) = self.chats.get(&chat_id) else {
            return Vec::new();
        };
        chat.messages
            .iter()
            .filter(|m| m.from_bot)
            .map(|m| SentMessage {
                message_id: m.id,
                text: m.text.clone().unwrap_or_default(),
                parse_mode: m.parse_mode.clone(),
                reply_to: m.reply_to,
                deleted: m.deleted,
                edit_count: m.edit_count,
                voice: m.voice.clone(),
                thread_id: m.thread_id,
            })
            .collect()
    }
}
