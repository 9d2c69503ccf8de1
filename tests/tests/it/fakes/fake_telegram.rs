//! The fake Telegram Bot API's updates side, driven by teloxide's real `Bot` (so every answer
//! must deserialize as teloxide expects): getMe/webhooks, update shapes, long polling, offsets,
//! 409 conflicts, dropping pending updates and `allowed_updates`.

use std::pin::pin;
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use serde_json::json;
use teloxide::ApiError;
use teloxide::prelude::*;
use teloxide::types::{AllowedUpdate, MessageEntityKind, MessageId, UpdateKind};
use teloxide::update_listeners::{AsUpdateStream as _, Polling};
use tests::fake_telegram::OWNER_ID;

use crate::telegram_bot::*;

#[tokio::test]
async fn get_me_webhook_info_and_delete_webhook_deserialize() {
    let (fake, bot) = setup().await;
    let me = bot.get_me().await.unwrap();
    assert_eq!(me.id.0 as i64, fake.bot_id());
    assert_eq!(fake.bot_id(), 123_456_789);
    assert!(me.is_bot);
    assert_eq!(me.username(), tests::fake_telegram::BOT_USERNAME);
    let info = bot.get_webhook_info().await.unwrap();
    assert_eq!(info.url, None);
    bot.delete_webhook().await.unwrap();
    let methods: Vec<String> = fake.calls().into_iter().map(|c| c.method).collect();
    assert_eq!(methods, ["getme", "getwebhookinfo", "deletewebhook"]);
}

#[tokio::test]
async fn updates_deserialize_as_the_messages_teloxide_expects() {
    let (fake, bot) = setup().await;
    let text = fake.user_text(OWNER_ID, "hello");
    let command = fake.user_text(OWNER_ID, "/resume #3");
    fake.group_text(7, -55, "in a group");
    fake.group_text(7, -1_001_234_567_890, "in a supergroup");
    fake.user_photo(OWNER_ID, b"the photo".to_vec(), Some("look"));
    fake.user_document(OWNER_ID, "notes.pdf", b"%PDF".to_vec(), None);
    fake.user_voice(OWNER_ID, b"OggS voice".to_vec());
    fake.user_document_claiming_size(OWNER_ID, "huge.zip", 25 * 1024 * 1024);
    fake.edited_text(OWNER_ID, text, "hello again");
    assert_ne!(text, command);

    let updates = next_updates(&bot).await;
    assert_eq!(updates.len(), 9);
    let ids: Vec<u32> = updates.iter().map(|u| u.id.0).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    let messages: Vec<&Message> = updates[..8].iter().map(message).collect();

    let hello = messages[0];
    assert_eq!(hello.id, MessageId(text as i32));
    assert_eq!(hello.text(), Some("hello"));
    assert_eq!(hello.from.as_ref().unwrap().id.0 as i64, OWNER_ID);
    assert!(hello.chat.is_private());
    assert_eq!(hello.chat.id.0, OWNER_ID);
    let entities = messages[1].entities().unwrap();
    assert_eq!(entities[0].kind, MessageEntityKind::BotCommand);
    assert_eq!(entities[0].length, "/resume".len());
    assert!(messages[2].chat.is_group());
    assert_eq!(messages[2].from.as_ref().unwrap().id.0, 7);
    assert!(messages[3].chat.is_supergroup());

    let photo = messages[4].photo().unwrap();
    assert_eq!(photo.len(), 3);
    assert!(photo.windows(2).all(|w| w[0].width < w[1].width));
    assert_eq!(photo[2].file.size, 9);
    assert_eq!(messages[4].caption(), Some("look"));
    let document = messages[5].document().unwrap();
    assert_eq!(document.file_name.as_deref(), Some("notes.pdf"));
    assert_eq!(
        document.mime_type.as_ref().unwrap().as_ref(),
        "application/pdf"
    );
    let voice = messages[6].voice().unwrap();
    assert_eq!(voice.mime_type.as_ref().unwrap().as_ref(), "audio/ogg");
    assert_eq!(voice.file.size, 10);
    assert_eq!(messages[7].document().unwrap().file.size, 25 * 1024 * 1024);

    let UpdateKind::EditedMessage(edited) = &updates[8].kind else {
        panic!("expected an edited message: {:?}", updates[8]);
    };
    assert_eq!(edited.id, MessageId(text as i32));
    assert_eq!(edited.text(), Some("hello again"));
    assert!(edited.edit_date().is_some());
}

#[tokio::test]
async fn a_long_poll_waits_for_an_update_and_offsets_confirm_it() {
    let (fake, bot) = setup().await;
    let started = Instant::now();
    let held = tokio::spawn({
        let bot = bot.clone();
        async move { bot.get_updates().timeout(5).await }
    });
    fake.wait_polling(T).await;
    let asked = fake.user_text(OWNER_ID, "wake up");
    let updates = held.await.unwrap().unwrap();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(updates.len(), 1);
    let m = message(&updates[0]);
    assert_eq!((m.id.0 as i64, m.text()), (asked, Some("wake up")));

    // Not confirmed yet: delivered again, until an offset past it arrives.
    assert_eq!(next_updates(&bot).await.len(), 1);
    let offset = updates[0].id.as_offset();
    let after = bot.get_updates().offset(offset).timeout(0).await.unwrap();
    assert!(after.is_empty());
    assert_eq!(fake.pending_updates(), 0);
    assert!(next_updates(&bot).await.is_empty());
}

#[tokio::test]
async fn an_empty_long_poll_answers_nothing_after_its_timeout() {
    let (_fake, bot) = setup().await;
    let started = Instant::now();
    let updates = bot.get_updates().timeout(1).await.unwrap();
    assert!(updates.is_empty());
    assert!(started.elapsed() >= Duration::from_millis(900));
}

#[tokio::test]
async fn a_newer_poll_ends_a_held_one_with_409_conflict() {
    let (fake, bot) = setup().await;
    let held = tokio::spawn({
        let bot = bot.clone();
        async move { bot.get_updates().timeout(5).await }
    });
    fake.wait_polling(T).await;
    assert!(next_updates(&bot).await.is_empty());
    let first = held.await.unwrap();
    assert!(
        matches!(api_error(first), ApiError::TerminatedByOtherGetUpdates),
        "{}",
        fake.call_log()
    );
}

#[tokio::test]
async fn teloxide_polling_drops_pending_updates_then_delivers_new_ones() {
    let (fake, bot) = setup().await;
    fake.user_text(OWNER_ID, "old 1");
    fake.user_text(OWNER_ID, "old 2");
    let mut polling = Polling::builder(bot.clone())
        .timeout(Duration::from_secs(1))
        .drop_pending_updates()
        .build();
    let mut stream = pin!(polling.as_stream());
    let (update, ()) = tokio::join!(stream.next(), async {
        fake.wait_polling(T).await;
        fake.user_text(OWNER_ID, "new");
    });
    assert_eq!(message(&update.unwrap().unwrap()).text(), Some("new"));
    let polls = fake.calls_of("getUpdates");
    assert_eq!(polls[0].int_param("offset"), Some(-1));
    assert_eq!(polls[0].int_param("timeout"), Some(0));

    // polling_default looks at the webhook first and deletes none (there is none).
    let _ = teloxide::update_listeners::polling_default(bot.clone()).await;
    assert_eq!(fake.calls_of("getWebhookInfo").len(), 1);
    assert!(fake.calls_of("deleteWebhook").is_empty());
    // After a restart the bot polls again; reset_polling makes wait_polling wait for it.
    fake.reset_polling();
    assert_eq!(
        next_updates(&bot).await.len(),
        1,
        "\"new\" is not confirmed yet"
    );
    fake.wait_polling(T).await;

    // deleteWebhook with drop_pending_updates empties the queue too.
    fake.user_text(OWNER_ID, "dropped");
    bot.delete_webhook()
        .drop_pending_updates(true)
        .await
        .unwrap();
    assert_eq!(fake.pending_updates(), 0);
}

#[tokio::test]
async fn allowed_updates_filter_known_types_only() {
    let (fake, bot) = setup().await;
    let asked = fake.user_text(OWNER_ID, "kept");
    fake.edited_text(OWNER_ID, asked, "edited away");
    fake.push_raw_update(json!({ "something_new": { "x": 1 } }));
    let updates = bot
        .get_updates()
        .allowed_updates([AllowedUpdate::Message])
        .timeout(0)
        .await
        .unwrap();
    assert_eq!(updates.len(), 2, "{updates:?}");
    assert!(matches!(updates[0].kind, UpdateKind::Message(_)));
    assert!(matches!(updates[1].kind, UpdateKind::Error(_)));
}
