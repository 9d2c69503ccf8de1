//! Inline keyboards in the fake Bot API: `reply_markup` on sendMessage/editMessageText checked
//! with Telegram's rules (button text non-empty, exactly one action, `callback_data` 1–64
//! bytes), `editMessageReplyMarkup`, `answerCallbackQuery` (each query answered once, toast
//! ≤ 200 characters), and `callback_query` updates as Telegram sends them when a user presses a
//! button.

use serde_json::{Value, json};

use super::params;
use super::state::{Chat, State};
use super::wire::{self, ApiError};

/// Longest `callback_data`, in bytes.
pub const CALLBACK_DATA_LIMIT: usize = 64;
/// Longest `answerCallbackQuery` text, in characters.
const TOAST_LIMIT: usize = 200;
/// Button actions Telegram knows (exactly one per button).
const ACTIONS: &[&str] = &[
    "url",
    "callback_data",
    "web_app",
    "login_url",
    "switch_inline_query",
    "switch_inline_query_current_chat",
    "switch_inline_query_chosen_chat",
    "copy_text",
    "callback_game",
    "pay",
];

/// A button press the fake sent, and how the bot answered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Press {
    pub id: String,
    /// `None` until answered; then the toast text (`None` inside: no text).
    pub answer: Option<Option<String>>,
}

/// The checked `reply_markup` of a call, if it has one.
pub(crate) fn markup(p: &Value) -> Result<Option<Value>, ApiError> {
    if !params::has(p, "reply_markup") {
        return Ok(None);
    }
    let Some(markup) = params::structured(p, "reply_markup").filter(Value::is_object) else {
        return Err(ApiError::bad_request(
            "can't parse reply keyboard markup JSON object",
        ));
    };
    let Some(rows) = markup.get("inline_keyboard") else {
        return Ok(Some(markup)); // reply keyboards are not used by kernel-tg
    };
    let Some(rows) = rows.as_array() else {
        return Err(ApiError::bad_request(
            "field \"inline_keyboard\" of the InlineKeyboardMarkup must be an Array",
        ));
    };
    for row in rows {
        let Some(buttons) = row.as_array() else {
            return Err(ApiError::bad_request(
                "field \"inline_keyboard\" of the InlineKeyboardMarkup must be an Array of Arrays",
            ));
        };
        for button in buttons {
            check_button(button)?;
        }
    }
    Ok(Some(markup))
}

fn check_button(button: &Value) -> Result<(), ApiError> {
    let text = button.get("text").and_then(Value::as_str).unwrap_or("");
    if text.trim().is_empty() {
        return Err(ApiError::bad_request("BUTTON_TEXT_INVALID"));
    }
    let actions = ACTIONS.iter().filter(|a| button.get(**a).is_some()).count();
    if actions != 1 {
        return Err(ApiError::bad_request(
            "can't parse inline keyboard button: exactly one of the optional fields must be used",
        ));
    }
    if let Some(data) = button.get("callback_data") {
        let len = data.as_str().map_or(0, str::len);
        if !(1..=CALLBACK_DATA_LIMIT).contains(&len) {
            return Err(ApiError::bad_request("BUTTON_DATA_INVALID"));
        }
    }
    Ok(())
}

/// Puts `markup` on a stored message's JSON (`None` removes it, as an edit without one does).
pub(crate) fn apply(json: &mut Value, markup: Option<Value>) {
    match (markup, json.as_object_mut()) {
        (Some(markup), _) => json["reply_markup"] = markup,
        (None, Some(fields)) => {
            fields.remove("reply_markup");
        }
        (None, None) => {}
    }
}

/// `editMessageReplyMarkup`.
pub(crate) fn edit_reply_markup(st: &mut State, p: &Value) -> Result<Value, ApiError> {
    if params::has(p, "inline_message_id") {
        return Err(ApiError::bad_request("the fake has no inline messages"));
    }
    if !params::has(p, "chat_id") {
        return Err(ApiError::bad_request("chat_id is empty"));
    }
    let markup = markup(p)?;
    let chat = st.chat(params::int(p, "chat_id"))?;
    let message = params::int(p, "message_id")
        .and_then(|id| chat.live_mut(id))
        .ok_or_else(|| ApiError::bad_request("message to edit not found"))?;
    if !message.from_bot {
        return Err(ApiError::bad_request("message can't be edited"));
    }
    if message.json.get("reply_markup") == markup.as_ref() {
        return Err(ApiError::bad_request(
            "message is not modified: specified new message content and reply markup are \
             exactly the same as a current content and reply markup of the message",
        ));
    }
    apply(&mut message.json, markup);
    message.json["edit_date"] = json!(wire::now());
    Ok(message.json.clone())
}

/// `answerCallbackQuery`.
pub(crate) fn answer_callback_query(st: &mut State, p: &Value) -> Result<Value, ApiError> {
    let id = params::string(p, "callback_query_id").unwrap_or_default();
    let text = params::string(p, "text").map(str::to_owned);
    if text
        .as_ref()
        .is_some_and(|t| t.chars().count() > TOAST_LIMIT)
    {
        return Err(ApiError::bad_request("MESSAGE_TOO_LONG"));
    }
    let press = st
        .presses
        .iter_mut()
        .find(|press| press.id == id && press.answer.is_none())
        .ok_or_else(|| {
            ApiError::bad_request(
                "query is too old and response timeout expired or query ID is invalid",
            )
        })?;
    press.answer = Some(text);
    Ok(json!(true))
}

impl State {
    /// `from` presses the button carrying `data` on message `message_id` of chat `chat_id`;
    /// queues the `callback_query` update and returns the query id. Panics when that message
    /// has no such button (Telegram sends only the data of buttons that exist).
    pub(super) fn press(&mut self, from: i64, chat_id: i64, message_id: i64, data: &str) -> String {
        let chat = self
            .chats
            .get(&chat_id)
            .unwrap_or_else(|| panic!("no chat {chat_id}"));
        let message = pressable(chat, message_id, data);
        self.next_press += 1;
        let id = format!("{}", 4_000_000_000_000_000_000u64 + self.next_press);
        self.presses.push(Press {
            id: id.clone(),
            answer: None,
        });
        let query = json!({
            "id": id,
            "from": wire::user(from),
            "message": message,
            "chat_instance": format!("{}", -7_000_000 - chat_id),
            "data": data,
        });
        self.push_update("callback_query", query);
        id
    }
}

/// The message JSON of `message_id` when it shows a button with `data`.
fn pressable(chat: &Chat, message_id: i64, data: &str) -> Value {
    let message = chat
        .live(message_id)
        .unwrap_or_else(|| panic!("no live message {message_id}"));
    let has_button = message.json["reply_markup"]["inline_keyboard"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_array)
        .flatten()
        .any(|b| b["callback_data"].as_str() == Some(data));
    assert!(
        has_button,
        "message {message_id} has no button {data:?}: {}",
        message.json
    );
    message.json.clone()
}

impl super::FakeTelegram {
    /// Makes the button carrying `data` on message `message_id` of chat `chat_id` carry `older`
    /// instead, as an older kernel-tg (or a longer id) made it. Panics when there is no such
    /// button.
    pub fn age_button(&self, chat_id: i64, message_id: i64, data: &str, older: &str) {
        let mut st = self.shared.lock();
        let message = st
            .chats
            .get_mut(&chat_id)
            .and_then(|c| c.live_mut(message_id))
            .unwrap_or_else(|| panic!("no live message {message_id}"));
        let button = message.json["reply_markup"]["inline_keyboard"]
            .as_array_mut()
            .into_iter()
            .flatten()
            .filter_map(Value::as_array_mut)
            .flatten()
            .find(|b| b["callback_data"].as_str() == Some(data))
            .unwrap_or_else(|| panic!("message {message_id} has no button {data:?}"));
        button["callback_data"] = json!(older);
    }
}
