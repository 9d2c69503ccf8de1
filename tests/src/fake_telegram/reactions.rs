//! Reactions as the Bot API has them: `setMessageReaction` (the bot's own reaction on a
//! message: `reaction` a JSON array of `ReactionType`, at most one for a bot, empty to clear;
//! 400 `message to react not found` / `REACTION_INVALID` as Telegram answers) and the
//! `message_reaction` update (`MessageReactionUpdated`: chat, message_id, user, date,
//! old_reaction, new_reaction of `{type: "emoji", emoji}`).

use serde_json::{Value, json};

use super::params;
use super::state::State;
use super::wire::{self, ApiError};

/// Emojis Telegram accepts as a reaction (the Bot API's list).
const EMOJIS: &[&str] = &[
    "👍",
    "👎",
    "❤",
    "🔥",
    "🥰",
    "👏",
    "😁",
    "🤔",
    "🤯",
    "😱",
    "🤬",
    "😢",
    "🎉",
    "🤩",
    "🤮",
    "💩",
    "🙏",
    "👌",
    "🕊",
    "🤡",
    "🥱",
    "🥴",
    "😍",
    "🐳",
    "❤‍🔥",
    "🌚",
    "🌭",
    "💯",
    "🤣",
    "⚡",
    "🍌",
    "🏆",
    "💔",
    "🤨",
    "😐",
    "🍓",
    "🍾",
    "💋",
    "🖕",
    "😈",
    "😴",
    "😭",
    "🤓",
    "👻",
    "👨‍💻",
    "👀",
    "🎃",
    "🙈",
    "😇",
    "😨",
    "🤝",
    "✍",
    "🤗",
    "🫡",
    "🎅",
    "🎄",
    "☃",
    "💅",
    "🤪",
    "🗿",
    "🆒",
    "💘",
    "🙉",
    "🦄",
    "😘",
    "💊",
    "🙊",
    "😎",
    "👾",
    "🤷‍♂",
    "🤷",
    "🤷‍♀",
    "😡",
];

fn reaction_list(emojis: &[&str]) -> Value {
    Value::Array(
        emojis
            .iter()
            .map(|e| json!({"type": "emoji", "emoji": e}))
            .collect(),
    )
}

/// `setMessageReaction`.
pub(super) fn set_message_reaction(st: &mut State, p: &Value) -> Result<Value, ApiError> {
    if !params::has(p, "chat_id") {
        return Err(ApiError::bad_request("chat_id is empty"));
    }
    let chat_id = params::int(p, "chat_id");
    let chat = st.chat(chat_id)?;
    let chat_id = chat_id.unwrap_or_default();
    let message_id = params::int(p, "message_id")
        .filter(|id| chat.live_mut(*id).is_some())
        .ok_or_else(|| ApiError::bad_request("message to react not found"))?;
    let reaction = match params::structured(p, "reaction") {
        None => Vec::new(),
        Some(Value::Array(items)) => items,
        Some(_) => {
            return Err(ApiError::bad_request(
                "can't parse reaction types JSON object",
            ));
        }
    };
    if reaction.len() > 1 {
        return Err(ApiError::bad_request("REACTIONS_TOO_MANY"));
    }
    let mut emojis = Vec::new();
    for item in &reaction {
        let emoji = item.get("emoji").and_then(Value::as_str);
        match (item.get("type").and_then(Value::as_str), emoji) {
            (Some("emoji"), Some(e)) if EMOJIS.contains(&e) => emojis.push(e.to_owned()),
            _ => return Err(ApiError::bad_request("REACTION_INVALID")),
        }
    }
    st.bot_reactions.insert((chat_id, message_id), emojis);
    Ok(json!(true))
}

/// Queues `from`'s reaction change on message `message_id` of chat `chat_id`.
pub(super) fn user_reaction(
    st: &mut State,
    from: i64,
    chat_id: i64,
    message_id: i64,
    old: &[&str],
    new: &[&str],
) {
    let chat = st
        .chat_or_insert(chat_id, || wire::private_chat(chat_id))
        .json
        .clone();
    st.push_update(
        "message_reaction",
        json!({
            "chat": chat,
            "message_id": message_id,
            "user": wire::user(from),
            "date": wire::now(),
            "old_reaction": reaction_list(old),
            "new_reaction": reaction_list(new),
        }),
    );
}
