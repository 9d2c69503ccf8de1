//! The Bot API's topic calls in the owner's private chat (Bot API 9.3/9.4): `getMe` with
//! `has_topics_enabled` (teloxide 0.17's `Me` lacks it, so it is a payload of our own),
//! `createForumTopic` and `editForumTopic`; and whether the bot has topics, as last learnt.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use teloxide::RequestError;
use teloxide::prelude::Requester;
use teloxide::requests::{JsonRequest, Payload};
use teloxide::types::{MessageId, ThreadId};

use teloxide::payloads::EditForumTopicSetters;

use super::{SendError, Telegram, describe, retry};

/// Least time between two `getMe` re-reads while topics seem off.
const REREAD_AFTER: Duration = Duration::from_secs(30);

/// Whether the bot has topics enabled (Bot API `getMe.has_topics_enabled`), as last learnt.
#[derive(Debug, Default)]
pub(crate) struct Availability {
    on: AtomicBool,
    /// When `getMe` was last read.
    read_at: Mutex<Option<Instant>>,
}

impl Availability {
    /// What `getMe` said at start.
    pub(crate) fn new(on: bool) -> Self {
        Self {
            on: AtomicBool::new(on),
            read_at: Mutex::new(Some(Instant::now())),
        }
    }

    /// Whether topics are on, as last learnt.
    pub(crate) fn on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    /// Sets what was learnt; logs a change.
    pub(crate) fn learn(&self, on: bool, how: &'static str) {
        if self.on.swap(on, Ordering::Relaxed) != on {
            tracing::info!(topics = on, how, "the bot's topics changed");
        }
    }

    /// A message arrived in a topic: topics are on (no request needed).
    pub(crate) fn saw_topic_message(&self) {
        self.learn(true, "a topic message");
    }

    /// Whether it is time to read `getMe` again (and marks it read now).
    pub(crate) fn due(&self) -> bool {
        let mut read_at = self.read_at.lock().unwrap_or_else(|e| e.into_inner());
        let due = read_at.is_none_or(|at| at.elapsed() >= REREAD_AFTER);
        if due {
            *read_at = Some(Instant::now());
        }
        due
    }
}

/// `getMe`, read for the two fields kernel-tg needs.
#[derive(Debug, Clone, Serialize)]
struct GetMe {}

impl Payload for GetMe {
    type Output = BotMe;
    const NAME: &'static str = "getMe";
}

/// Who the bot is, as far as kernel-tg cares.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct BotMe {
    /// For `/cmd@bot` mentions.
    #[serde(default)]
    pub username: Option<String>,
    /// The owner turned on topics (threaded mode) for the bot in @BotFather.
    #[serde(default)]
    pub has_topics_enabled: bool,
}

impl Telegram {
    /// `getMe`: the bot's username and whether it has topics.
    pub(crate) async fn me(&self) -> Result<BotMe, RequestError> {
        retry(true, || JsonRequest::new(self.bot.clone(), GetMe {})).await
    }

    /// Opens topic `name` in the owner's chat; its thread id. Not retried after a network
    /// error that may have reached Telegram (that could open two topics).
    pub(crate) async fn create_topic(&self, name: &str) -> Result<i64, SendError> {
        retry(false, || self.bot.create_forum_topic(self.chat, name))
            .await
            .map(|topic| i64::from(topic.thread_id.0.0))
            .map_err(describe)
    }

    /// Renames topic `thread` of the owner's chat to `name`.
    pub(crate) async fn rename_topic(&self, thread: i64, name: &str) -> Result<(), SendError> {
        let thread = i32::try_from(thread).map_err(|_| SendError {
            text: format!("thread id {thread} is out of range"),
            permanent: true,
        })?;
        retry(true, || {
            self.bot
                .edit_forum_topic(self.chat, ThreadId(MessageId(thread)))
                .name(name)
        })
        .await
        .map(|_| ())
        .map_err(describe)
    }
}

/// Whether Telegram refused a topic call because the chat has no topics (the owner turned
/// them off): "Bad Request: the chat is not a forum" and its relatives.
pub(crate) fn is_not_forum(e: &SendError) -> bool {
    let text = e.to_string().to_ascii_lowercase();
    text.contains("not a forum") || text.contains("topics") && text.contains("disabled")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_me_reads_has_topics_enabled_and_defaults_it_to_false() {
        let me: BotMe = serde_json::from_value(serde_json::json!({
            "id": 1, "is_bot": true, "first_name": "K", "username": "kbot",
            "has_topics_enabled": true, "can_join_groups": false
        }))
        .unwrap();
        assert!(me.has_topics_enabled);
        assert_eq!(me.username.as_deref(), Some("kbot"));
        let old: BotMe =
            serde_json::from_value(serde_json::json!({"id": 1, "is_bot": true, "first_name": "K"}))
                .unwrap();
        assert!(!old.has_topics_enabled);
        assert_eq!(
            serde_json::to_value(GetMe {}).unwrap(),
            serde_json::json!({})
        );
    }

    #[test]
    fn a_chat_without_topics_is_recognised() {
        let refused = |text: &str| SendError {
            text: text.into(),
            permanent: true,
        };
        assert!(is_not_forum(&refused(
            "Bad Request: the chat is not a forum"
        )));
        assert!(!is_not_forum(&refused("Bad Request: TOPIC_TITLE_EMPTY")));
    }
}
