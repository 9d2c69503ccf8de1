//! The allow-list: which Telegram updates kernel-tg handles at all.
//!
//! Only a new message in the owner's private chat, sent by the owner, passes — and a button
//! press (callback query) by the owner on a message of the owner's private chat
//! ([`admit_press`]), the owner's edit of a message there ([`admit_edit`]; the owner's
//! reactions pass `reactions::admit`). Everything else — other users, groups, channels, updates
//! teloxide could not parse — is dropped here, before any RPC, with a debug line that never
//! includes content.

use teloxide::types::{CallbackQuery, Message, Update, UpdateKind, UserId};

/// Returns the owner's button press when `update` is one kernel-tg must handle: pressed by the
/// owner on a message in the owner's private chat.
pub(crate) fn admit_press(update: &Update, owner: UserId) -> Option<&CallbackQuery> {
    let UpdateKind::CallbackQuery(press) = &update.kind else {
        return None;
    };
    let from_owner = press.from.id == owner;
    let owners_chat = press
        .message
        .as_ref()
        .map(|m| m.chat())
        .is_some_and(|chat| chat.is_private() && chat.id.0 == owner.0 as i64);
    if from_owner && owners_chat {
        Some(press)
    } else {
        tracing::debug!(
            update_id = update.id.0,
            from = press.from.id.0,
            "dropped: a button press not by the owner in the owner's chat"
        );
        None
    }
}

/// Returns the owner's edited message when `update` is an edit by the owner in the owner's
/// private chat (`edits` handles it).
pub(crate) fn admit_edit(update: &Update, owner: UserId) -> Option<&Message> {
    let UpdateKind::EditedMessage(message) = &update.kind else {
        return None;
    };
    let from_owner = message.from.as_ref().is_some_and(|user| user.id == owner);
    let owners_chat = message.chat.is_private() && message.chat.id.0 == owner.0 as i64;
    if from_owner && owners_chat {
        Some(message)
    } else {
        tracing::debug!(
            update_id = update.id.0,
            "dropped: an edit not by the owner in the owner's chat"
        );
        None
    }
}

/// Returns the owner's message when `update` is one kernel-tg must handle.
pub(crate) fn admit(update: &Update, owner: UserId) -> Option<&Message> {
    let UpdateKind::Message(message) = &update.kind else {
        tracing::debug!(
            update_id = update.id.0,
            kind = kind_name(&update.kind),
            "dropped: not a new message"
        );
        return None;
    };
    let from_owner = message.from.as_ref().is_some_and(|user| user.id == owner);
    let owners_chat = message.chat.is_private() && message.chat.id.0 == owner.0 as i64;
    if from_owner && owners_chat {
        Some(message)
    } else {
        tracing::debug!(
            update_id = update.id.0,
            from = message.from.as_ref().map(|u| u.id.0),
            chat = message.chat.id.0,
            "dropped: not the owner's private chat"
        );
        None
    }
}

fn kind_name(kind: &UpdateKind) -> &'static str {
    match kind {
        UpdateKind::Message(_) => "message",
        UpdateKind::EditedMessage(_) => "edited_message",
        UpdateKind::ChannelPost(_) => "channel_post",
        UpdateKind::EditedChannelPost(_) => "edited_channel_post",
        UpdateKind::CallbackQuery(_) => "callback_query",
        UpdateKind::Error(_) => "unparsed",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    const OWNER: u64 = 4242;

    fn update(kind: &str, message: Value) -> Update {
        let mut update = json!({ "update_id": 7 });
        update[kind] = message;
        // From text, as teloxide does: `UpdateKind` wants borrowed keys.
        serde_json::from_str(&update.to_string()).unwrap()
    }

    fn message(from: i64, chat: Value) -> Value {
        json!({
            "message_id": 1,
            "date": 1_700_000_000,
            "chat": chat,
            "from": { "id": from, "is_bot": false, "first_name": "x" },
            "text": "hello"
        })
    }

    fn private(id: i64) -> Value {
        json!({ "id": id, "type": "private", "first_name": "x" })
    }

    #[test]
    fn the_owners_private_message_passes() {
        let u = update("message", message(OWNER as i64, private(OWNER as i64)));
        assert!(matches!(u.kind, UpdateKind::Message(_)), "{u:?}");
        assert_eq!(
            admit(&u, UserId(OWNER)).and_then(|m| m.text()),
            Some("hello")
        );
    }

    #[test]
    fn other_users_groups_channels_and_edits_are_dropped() {
        let group = json!({ "id": -1_005, "type": "supergroup", "title": "g" });
        let cases = [
            update("message", message(1, private(1))),
            update("message", message(OWNER as i64, group.clone())),
            update("message", message(1, private(OWNER as i64))),
            update(
                "edited_message",
                message(OWNER as i64, private(OWNER as i64)),
            ),
            update(
                "channel_post",
                message(
                    OWNER as i64,
                    json!({ "id": -1_006, "type": "channel", "title": "c" }),
                ),
            ),
        ];
        for u in &cases {
            assert!(admit(u, UserId(OWNER)).is_none(), "{u:?}");
        }
    }

    fn press(from: i64, chat: Value) -> Update {
        update(
            "callback_query",
            json!({
                "id": "77",
                "from": { "id": from, "is_bot": false, "first_name": "x" },
                "chat_instance": "1",
                "data": "stop",
                "message": message(OWNER as i64, chat),
            }),
        )
    }

    #[test]
    fn only_the_owners_presses_in_the_owners_chat_pass() {
        let owner = UserId(OWNER);
        let pressed = press(OWNER as i64, private(OWNER as i64));
        assert_eq!(
            admit_press(&pressed, owner).and_then(|p| p.data.as_deref()),
            Some("stop")
        );
        assert!(admit(&pressed, owner).is_none());
        let group = json!({ "id": -1_005, "type": "supergroup", "title": "g" });
        for u in [press(1, private(OWNER as i64)), press(OWNER as i64, group)] {
            assert!(admit_press(&u, owner).is_none(), "{u:?}");
        }
    }

    #[test]
    fn a_message_without_sender_or_malformed_update_is_dropped() {
        let mut anonymous = message(OWNER as i64, private(OWNER as i64));
        anonymous.as_object_mut().unwrap().remove("from");
        assert!(admit(&update("message", anonymous), UserId(OWNER)).is_none());
        let garbage = json!({ "update_id": 9, "message": { "nonsense": true } });
        let garbage: Update = serde_json::from_str(&garbage.to_string()).unwrap();
        assert!(admit(&garbage, UserId(OWNER)).is_none());
    }
}
