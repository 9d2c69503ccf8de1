//! The Bot API methods the fake performs (all but getUpdates), each checked as strictly as
//! Telegram checks it and answered with Telegram's JSON or its real 400 descriptions.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::buttons;
use super::params;
use super::state::{Chat, State, StoredMessage};
use super::text;
use super::wire::{self, ApiError};

/// Methods the fake knows, lower case (getUpdates is served by the polling module).
const KNOWN: &[&str] = &[
    "getupdates",
    "getme",
    "getwebhookinfo",
    "deletewebhook",
    "sendmessage",
    "sendmessagedraft",
    "editmessagetext",
    "deletemessage",
    "sendchataction",
    "setmycommands",
    "getmycommands",
    "deletemycommands",
    "getfile",
    "sendvoice",
    "senddocument",
    "sendphoto",
    "editmessagereplymarkup",
    "answercallbackquery",
    "setmessagereaction",
    "createforumtopic",
    "editforumtopic",
];

/// Whether `method` (lower case) is a method the fake serves.
pub(crate) fn is_known(method: &str) -> bool {
    KNOWN.contains(&method)
}

/// Telegram's largest file a bot may download.
pub const DOWNLOAD_LIMIT: u64 = 20 * 1024 * 1024;

const CHAT_ACTIONS: &[&str] = &[
    "typing",
    "upload_photo",
    "record_video",
    "upload_video",
    "record_voice",
    "upload_voice",
    "upload_document",
    "choose_sticker",
    "find_location",
    "record_video_note",
    "upload_video_note",
];

/// Performs `method` (lower case, known, not getUpdates).
pub(crate) fn perform(
    st: &mut State,
    method: &str,
    p: &Value,
    files: &HashMap<String, Vec<u8>>,
) -> Result<Value, ApiError> {
    match method {
        "getme" => Ok(wire::me(st.bot_id, st.topics_enabled)),
        "getwebhookinfo" => Ok(json!({
            "url": "",
            "has_custom_certificate": false,
            "pending_update_count": st.queue.len(),
        })),
        "deletewebhook" => {
            if params::boolean(p, "drop_pending_updates") == Some(true) {
                st.queue.clear();
                st.polling = false;
            }
            Ok(json!(true))
        }
        "sendmessage" => send_message(st, p),
        "sendmessagedraft" => send_message_draft(st, p),
        "editmessagetext" => edit_message_text(st, p),
        "deletemessage" => delete_message(st, p),
        "sendchataction" => send_chat_action(st, p),
        "setmycommands" => set_my_commands(st, p),
        "getmycommands" => Ok(st.commands.clone().unwrap_or_else(|| json!([]))),
        "deletemycommands" => {
            st.commands = None;
            Ok(json!(true))
        }
        "getfile" => get_file(st, p),
        "sendvoice" => send_voice(st, p, files),
        "senddocument" => send_upload(st, p, files, "document"),
        "sendphoto" => send_upload(st, p, files, "photo"),
        "editmessagereplymarkup" => buttons::edit_reply_markup(st, p),
        "answercallbackquery" => buttons::answer_callback_query(st, p),
        "setmessagereaction" => super::reactions::set_message_reaction(st, p),
        "createforumtopic" => st.create_forum_topic(p),
        "editforumtopic" => st.edit_forum_topic(p),
        _ => Err(ApiError::not_found()),
    }
}

/// `chat_id` as a number; a missing one is 400, a `@username` is an unknown chat.
fn chat_id(p: &Value) -> Result<Option<i64>, ApiError> {
    if !params::has(p, "chat_id") {
        return Err(ApiError::bad_request("chat_id is empty"));
    }
    Ok(params::int(p, "chat_id"))
}

fn parse_mode(p: &Value) -> Option<String> {
    params::string(p, "parse_mode").map(str::to_owned)
}

fn send_message(st: &mut State, p: &Value) -> Result<Value, ApiError> {
    let chat_id = chat_id(p)?;
    let bot_id = st.bot_id;
    st.chat(chat_id)?;
    let thread = st.send_thread(chat_id, p)?;
    let chat = st.chat(chat_id)?;
    let text = params::string(p, "text");
    let parse_mode = parse_mode(p);
    text::message(text, parse_mode.as_deref())?;
    let markup = buttons::markup(p)?;
    let reply_to = reply_target(chat, p)?;
    let text = text.unwrap_or_default().to_owned();
    let mut message = new_message(bot_id, chat, reply_to, thread);
    message["text"] = json!(text);
    buttons::apply(&mut message, markup);
    Ok(store(chat, message, Some(text), parse_mode, reply_to, None))
}

/// `sendMessageDraft` (Bot API 9.3): private chats only, a non-zero `draft_id`, the text
/// checked like sendMessage's (1..=4096 units after entity parsing, strict HTML). A fake set
/// [`super::FakeTelegram::lack_drafts`] answers like an older Bot API: 404 method not found.
fn send_message_draft(st: &mut State, p: &Value) -> Result<Value, ApiError> {
    if st.drafts_missing {
        return Err(ApiError::new(404, "Not Found: method not found"));
    }
    let chat_id = chat_id(p)?;
    let chat = st.chat(chat_id)?;
    if chat.json.get("type").and_then(Value::as_str) != Some("private") {
        return Err(ApiError::bad_request("TEXTDRAFT_PEER_INVALID"));
    }
    st.send_thread(chat_id, p)?;
    match params::int(p, "draft_id") {
        None => return Err(ApiError::bad_request("parameter \"draft_id\" is required")),
        Some(0) => return Err(ApiError::bad_request("draft_id must be non-zero")),
        Some(_) => {}
    }
    text::message(params::string(p, "text"), parse_mode(p).as_deref())?;
    Ok(json!(true))
}

fn edit_message_text(st: &mut State, p: &Value) -> Result<Value, ApiError> {
    if params::has(p, "inline_message_id") {
        return Err(ApiError::bad_request("the fake has no inline messages"));
    }
    let chat = st.chat(chat_id(p)?)?;
    let message = params::int(p, "message_id")
        .and_then(|id| chat.live_mut(id))
        .ok_or_else(|| ApiError::bad_request("message to edit not found"))?;
    if !message.from_bot {
        return Err(ApiError::bad_request("message can't be edited"));
    }
    if message.voice.is_some() {
        return Err(ApiError::bad_request(
            "there is no text in the message to edit",
        ));
    }
    let text = params::string(p, "text");
    let parse_mode = parse_mode(p);
    text::message(text, parse_mode.as_deref())?;
    let markup = buttons::markup(p)?;
    let text = text.unwrap_or_default().to_owned();
    let same_mode = message.parse_mode.as_ref().map(|m| m.to_ascii_lowercase())
        == parse_mode.as_ref().map(|m| m.to_ascii_lowercase());
    if message.text.as_deref() == Some(text.as_str())
        && same_mode
        && !params::has(p, "reply_markup")
    {
        return Err(ApiError::bad_request(
            "message is not modified: specified new message content and reply markup are \
             exactly the same as a current content and reply markup of the message",
        ));
    }
    message.json["text"] = json!(text);
    // An edit without `reply_markup` removes the inline keyboard, as Telegram does.
    buttons::apply(&mut message.json, markup);
    message.json["edit_date"] = json!(wire::now());
    message.text = Some(text);
    message.parse_mode = parse_mode;
    message.edit_count += 1;
    Ok(message.json.clone())
}

fn delete_message(st: &mut State, p: &Value) -> Result<Value, ApiError> {
    let chat = st.chat(chat_id(p)?)?;
    let message = params::int(p, "message_id")
        .and_then(|id| chat.live_mut(id))
        .ok_or_else(|| ApiError::bad_request("message to delete not found"))?;
    message.deleted = true;
    Ok(json!(true))
}

fn send_chat_action(st: &mut State, p: &Value) -> Result<Value, ApiError> {
    let chat_id = chat_id(p)?;
    st.chat(chat_id)?;
    st.send_thread(chat_id, p)?;
    match params::string(p, "action") {
        Some(action) if CHAT_ACTIONS.contains(&action) => Ok(json!(true)),
        _ => Err(ApiError::bad_request("wrong parameter action in request")),
    }
}

fn set_my_commands(st: &mut State, p: &Value) -> Result<Value, ApiError> {
    let Some(Value::Array(commands)) = params::structured(p, "commands") else {
        return Err(ApiError::bad_request("parameter \"commands\" is required"));
    };
    if commands.len() > 100 {
        return Err(ApiError::bad_request("too many commands"));
    }
    for command in &commands {
        let name = command.get("command").and_then(Value::as_str).unwrap_or("");
        let valid_name = (1..=32).contains(&name.chars().count())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !valid_name {
            return Err(ApiError::bad_request("BOT_COMMAND_INVALID"));
        }
        let description = command.get("description").and_then(Value::as_str);
        let description_len = description.map_or(0, |d| d.trim().chars().count());
        if !(1..=256).contains(&description_len) {
            return Err(ApiError::bad_request("BOT_COMMAND_DESCRIPTION_INVALID"));
        }
    }
    st.commands = Some(Value::Array(commands));
    Ok(json!(true))
}

fn get_file(st: &mut State, p: &Value) -> Result<Value, ApiError> {
    let file_id = params::string(p, "file_id").unwrap_or_default();
    let file = st
        .files
        .get(file_id)
        .ok_or_else(|| ApiError::bad_request("invalid file_id"))?;
    if file.size > DOWNLOAD_LIMIT {
        return Err(ApiError::bad_request("file is too big"));
    }
    Ok(json!({
        "file_id": file_id,
        "file_unique_id": file.unique_id,
        "file_size": file.size,
        "file_path": file.path,
    }))
}

fn send_voice(
    st: &mut State,
    p: &Value,
    files: &HashMap<String, Vec<u8>>,
) -> Result<Value, ApiError> {
    let chat_id = chat_id(p)?;
    let reply_to = reply_target(st.chat(chat_id)?, p)?;
    let thread = st.send_thread(chat_id, p)?;
    let bytes = voice_bytes(st, p, files)?;
    let caption = params::string(p, "caption");
    let parse_mode = params::string(p, "parse_mode").map(str::to_owned);
    if let Some(caption) = caption {
        text::caption(caption, parse_mode.as_deref())?;
    }
    let size = bytes.len() as u64;
    let mut voice = st.add_file("voice", "oga", size, Some(bytes.clone()));
    let duration = params::int(p, "duration").unwrap_or((size / 2_000).max(1) as i64);
    voice["duration"] = json!(duration);
    voice["mime_type"] = json!("audio/ogg");
    let bot_id = st.bot_id;
    let chat = st.chat(chat_id)?;
    let mut message = new_message(bot_id, chat, reply_to, thread);
    message["voice"] = voice;
    if let Some(caption) = caption {
        message["caption"] = json!(caption);
    }
    let caption = caption.map(str::to_owned);
    Ok(store(
        chat,
        message,
        caption,
        parse_mode,
        reply_to,
        Some(bytes),
    ))
}

/// Telegram's upload limits for a bot: photos 10 MB, other files 50 MB.
const PHOTO_LIMIT: usize = 10 * 1024 * 1024;
const DOCUMENT_LIMIT: usize = 50 * 1024 * 1024;

/// sendDocument / sendPhoto: the file under `field` (uploaded in the multipart body or an
/// existing `file_id`), an optional caption (checked like a message's text), within Telegram's
/// size limits.
fn send_upload(
    st: &mut State,
    p: &Value,
    files: &HashMap<String, Vec<u8>>,
    field: &str,
) -> Result<Value, ApiError> {
    let chat_id = chat_id(p)?;
    let reply_to = reply_target(st.chat(chat_id)?, p)?;
    let thread = st.send_thread(chat_id, p)?;
    let bytes = upload_bytes(st, p, files, field)?;
    let limit = if field == "photo" {
        PHOTO_LIMIT
    } else {
        DOCUMENT_LIMIT
    };
    if bytes.len() > limit {
        return Err(ApiError::bad_request("file is too big"));
    }
    let caption = params::string(p, "caption");
    let parse_mode = params::string(p, "parse_mode").map(str::to_owned);
    if let Some(caption) = caption {
        text::caption(caption, parse_mode.as_deref())?;
    }
    let size = bytes.len() as u64;
    let (folder, ext) = if field == "photo" {
        ("photos", "jpg")
    } else {
        ("documents", "bin")
    };
    let file = st.add_file(folder, ext, size, Some(bytes.clone()));
    let bot_id = st.bot_id;
    let chat = st.chat(chat_id)?;
    let mut message = new_message(bot_id, chat, reply_to, thread);
    message[field] = if field == "photo" {
        json!([file])
    } else {
        file
    };
    if let Some(caption) = caption {
        message["caption"] = json!(caption);
    }
    let caption = caption.map(str::to_owned);
    Ok(store(
        chat,
        message,
        caption,
        parse_mode,
        reply_to,
        Some(bytes),
    ))
}

/// The uploaded voice, or the bytes of an existing file sent by `file_id`.
fn voice_bytes(
    st: &State,
    p: &Value,
    files: &HashMap<String, Vec<u8>>,
) -> Result<Vec<u8>, ApiError> {
    upload_bytes(st, p, files, "voice")
}

/// The file uploaded under `field`, or the bytes of an existing file sent by `file_id`.
fn upload_bytes(
    st: &State,
    p: &Value,
    files: &HashMap<String, Vec<u8>>,
    field: &str,
) -> Result<Vec<u8>, ApiError> {
    let bytes = match (files.get(field), params::string(p, field)) {
        (Some(bytes), _) => bytes.clone(),
        (None, Some(file_id)) => st
            .files
            .get(file_id)
            .and_then(|f| f.data.clone())
            .ok_or_else(|| ApiError::bad_request("wrong file identifier/HTTP URL specified"))?,
        (None, None) => {
            return Err(ApiError::bad_request(&format!(
                "there is no {field} in the request"
            )));
        }
    };
    if bytes.is_empty() {
        return Err(ApiError::bad_request("file must be non-empty"));
    }
    Ok(bytes)
}

/// The message a send replies to: `reply_parameters` or the legacy `reply_to_message_id`.
fn reply_target(chat: &Chat, p: &Value) -> Result<Option<i64>, ApiError> {
    let reply = params::structured(p, "reply_parameters");
    let (target, allow_missing) = match &reply {
        Some(reply) => (
            params::int(reply, "message_id"),
            params::boolean(reply, "allow_sending_without_reply"),
        ),
        None => (
            params::int(p, "reply_to_message_id"),
            params::boolean(p, "allow_sending_without_reply"),
        ),
    };
    match target {
        None => Ok(None),
        Some(id) if chat.live(id).is_some() => Ok(Some(id)),
        Some(_) if allow_missing == Some(true) => Ok(None),
        Some(_) => Err(ApiError::bad_request("message to be replied not found")),
    }
}

/// A new message from the bot in `chat` (its id taken), replying to `reply_to`, in topic
/// `thread`.
fn new_message(bot_id: i64, chat: &mut Chat, reply_to: Option<i64>, thread: Option<i64>) -> Value {
    let id = chat.next_id();
    let mut message = json!({
        "message_id": id,
        "from": wire::bot_user(bot_id),
        "chat": chat.json.clone(),
        "date": wire::now(),
    });
    if let Some(thread) = thread {
        message["message_thread_id"] = json!(thread);
        message["is_topic_message"] = json!(true);
    }
    if let Some(original) = reply_to.and_then(|r| chat.live(r)) {
        let mut original = original.json.clone();
        if let Some(fields) = original.as_object_mut() {
            fields.remove("reply_to_message");
        }
        message["reply_to_message"] = original;
    }
    message
}

/// Stores the bot's new message in `chat`; returns its JSON.
fn store(
    chat: &mut Chat,
    message: Value,
    text: Option<String>,
    parse_mode: Option<String>,
    reply_to: Option<i64>,
    voice: Option<Vec<u8>>,
) -> Value {
    let id = message["message_id"].as_i64().unwrap_or_default();
    let thread_id = message.get("message_thread_id").and_then(Value::as_i64);
    chat.messages.push(StoredMessage {
        id,
        from_bot: true,
        json: message.clone(),
        text,
        parse_mode,
        reply_to,
        deleted: false,
        edit_count: 0,
        voice,
        thread_id,
    });
    message
}

/// Stores a service message the bot's action produced (a topic it opened).
pub(super) fn store_service(chat: &mut Chat, message: Value) {
    store(chat, message, None, None, None, None);
}
