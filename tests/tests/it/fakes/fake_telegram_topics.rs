//! The fake Bot API's topics in the bot's private chat (Bot API 9.3/9.4), driven by teloxide's
//! real `Bot`: getMe's `has_topics_enabled`, topic messages and their service messages, sends
//! into a topic recorded per message, createForumTopic / editForumTopic, and a deleted topic.

use serde_json::json;
use teloxide::prelude::*;
use teloxide::types::{ChatAction, MessageId, ThreadId};
use tests::config::TELEGRAM_TOKEN;
use tests::fake_telegram::OWNER_ID;

use crate::telegram_bot::*;

fn thread(id: i64) -> ThreadId {
    ThreadId(MessageId(id as i32))
}

#[tokio::test]
async fn get_me_tells_whether_topics_are_enabled() {
    let (fake, _bot) = setup().await;
    let path = format!("/bot{TELEGRAM_TOKEN}/getMe");
    let (status, me) = fake.post_raw(&path, "{}").await;
    assert_eq!(status, 200);
    assert_eq!(me["result"]["has_topics_enabled"], json!(false));
    fake.enable_topics();
    let (_, me) = fake.post_raw(&path, "{}").await;
    assert_eq!(me["result"]["has_topics_enabled"], json!(true));
}

#[tokio::test]
async fn topic_messages_carry_their_thread_and_sends_land_in_it() {
    let (fake, bot) = setup().await;
    fake.enable_topics();
    let topic = fake.user_opens_topic(OWNER_ID, "Trip");
    let asked = fake.user_text_in_topic(OWNER_ID, topic, "hello there");
    fake.user_topic_service(OWNER_ID, topic, "forum_topic_closed", json!({}));
    let updates = next_updates(&bot).await;
    assert_eq!(updates.len(), 3);
    let created = message(&updates[0]);
    assert_eq!(created.thread_id, Some(thread(topic)));
    assert!(created.forum_topic_created().is_some(), "{created:?}");
    let text = message(&updates[1]);
    assert_eq!(text.id.0 as i64, asked);
    assert_eq!(text.thread_id, Some(thread(topic)));
    assert!(text.is_topic_message);
    assert_eq!(text.text(), Some("hello there"));
    assert!(message(&updates[2]).forum_topic_closed().is_some());

    let sent = bot
        .send_message(ChatId(OWNER_ID), "in the topic")
        .message_thread_id(thread(topic))
        .await
        .unwrap();
    assert_eq!(sent.thread_id, Some(thread(topic)));
    bot.send_message(ChatId(OWNER_ID), "main chat")
        .await
        .unwrap();
    bot.send_chat_action(ChatId(OWNER_ID), ChatAction::Typing)
        .message_thread_id(thread(topic))
        .await
        .unwrap();
    let draft =
        json!({"chat_id": OWNER_ID, "draft_id": 5, "text": "typing…", "message_thread_id": topic});
    let (status, _) = fake
        .post_raw(
            &format!("/bot{TELEGRAM_TOKEN}/sendMessageDraft"),
            &draft.to_string(),
        )
        .await;
    assert_eq!(status, 200);

    let in_topic = fake.messages_in_topic(OWNER_ID, topic);
    assert_eq!(in_topic.len(), 1);
    assert_eq!(in_topic[0].text, "in the topic");
    let main: Vec<_> = fake
        .messages(OWNER_ID)
        .into_iter()
        .filter(|m| m.thread_id.is_none())
        .collect();
    assert_eq!(main.len(), 1);
    assert_eq!(main[0].text, "main chat");
}

#[tokio::test]
async fn the_bot_opens_and_renames_topics_and_a_deleted_topic_is_not_found() {
    let (fake, bot) = setup().await;
    fake.user_text(OWNER_ID, "hi");
    let refused = bot.create_forum_topic(ChatId(OWNER_ID), "New").await;
    assert!(format!("{:?}", api_error(refused)).contains("the chat is not a forum"));
    fake.enable_topics();
    let topic = bot
        .create_forum_topic(ChatId(OWNER_ID), "New chat")
        .await
        .unwrap();
    let id = topic.thread_id.0.0 as i64;
    assert_eq!(topic.name, "New chat");
    assert_eq!(fake.topic_name(OWNER_ID, id).as_deref(), Some("New chat"));
    bot.edit_forum_topic(ChatId(OWNER_ID), topic.thread_id)
        .name("Paris trip")
        .await
        .unwrap();
    assert_eq!(fake.topic_name(OWNER_ID, id).as_deref(), Some("Paris trip"));
    let first = bot
        .send_message(ChatId(OWNER_ID), "first")
        .message_thread_id(topic.thread_id)
        .await
        .unwrap();

    fake.delete_topic(OWNER_ID, id);
    for result in [
        bot.send_message(ChatId(OWNER_ID), "again")
            .message_thread_id(topic.thread_id)
            .await
            .map(drop),
        bot.send_message(ChatId(OWNER_ID), "never")
            .message_thread_id(thread(9_999))
            .await
            .map(drop),
        bot.send_chat_action(ChatId(OWNER_ID), ChatAction::Typing)
            .message_thread_id(topic.thread_id)
            .await
            .map(drop),
    ] {
        let e = format!("{:?}", api_error(result));
        assert!(e.contains("message thread not found"), "{e}");
    }
    let edited = bot
        .edit_message_text(ChatId(OWNER_ID), first.id, "edit")
        .await;
    assert_api!(edited, teloxide::ApiError::MessageToEditNotFound);
    assert!(fake.messages_in_topic(OWNER_ID, id).is_empty());
}
