//! The fake Telegram Bot API's methods, driven by teloxide's real `Bot` and by raw HTTP where the
//! wire itself is the point: sending, editing, deleting, files, voice, injected failures, tokens
//! and the call log.

use std::time::Duration;

use serde_json::json;
use teloxide::net::Download as _;
use teloxide::prelude::*;
use teloxide::types::{BotCommand, ChatAction, InputFile, MessageId, ParseMode, ReplyParameters};
use teloxide::{ApiError, RequestError};
use tests::config::TELEGRAM_TOKEN;
use tests::fake_telegram::{DOWNLOAD, Failure, OWNER_ID};

use crate::telegram_bot::*;

#[tokio::test]
async fn send_message_returns_the_message_and_records_the_reply() {
    let (fake, bot) = setup().await;
    let asked = fake.user_text(OWNER_ID, "hi");
    let sent = bot
        .send_message(ChatId(OWNER_ID), "<b>Hello</b> &amp; <i>welcome</i>")
        .parse_mode(ParseMode::Html)
        .reply_parameters(ReplyParameters::new(MessageId(asked as i32)))
        .await
        .unwrap();
    assert!(sent.id.0 as i64 > asked);
    assert_eq!(sent.text(), Some("<b>Hello</b> &amp; <i>welcome</i>"));
    assert!(sent.from.as_ref().unwrap().is_bot);
    assert_eq!(sent.chat.id.0, OWNER_ID);
    assert_eq!(sent.reply_to_message().unwrap().id.0 as i64, asked);

    let plain = bot.send_message(ChatId(OWNER_ID), "plain").await.unwrap();
    assert_eq!(plain.id.0, sent.id.0 + 1);

    let chat = fake.messages(OWNER_ID);
    assert_eq!(chat.len(), 2);
    assert_eq!(chat[0].message_id, sent.id.0 as i64);
    assert_eq!(chat[0].parse_mode.as_deref(), Some("HTML"));
    assert_eq!(chat[0].reply_to, Some(asked));
    assert_eq!((chat[1].text.as_str(), chat[1].reply_to), ("plain", None));
    let call = &fake.calls_of("sendmessage")[0];
    assert_eq!(call.chat_id(), Some(OWNER_ID));
    assert_eq!(call.sent_message_id(), Some(sent.id.0 as i64));
}

#[tokio::test]
async fn send_message_rejections_use_telegram_texts() {
    let (fake, bot) = setup().await;
    fake.user_text(OWNER_ID, "hi");
    let html = |text: String| {
        bot.send_message(ChatId(OWNER_ID), text)
            .parse_mode(ParseMode::Html)
    };

    let e = api_error(html("<b>unclosed".into()).await);
    let ApiError::CantParseEntities(description) = e else {
        panic!("{e:?}");
    };
    assert!(description.starts_with("Bad Request: can't parse entities: "));
    assert_api!(
        html("<script>x</script>".into()).await,
        ApiError::CantParseEntities(_)
    );
    assert_api!(html("1 < 2".into()).await, ApiError::CantParseEntities(_));

    // 4096 visible UTF-16 units pass however long the markup; one more is too long.
    let max = format!("<b>{}</b>", "a".repeat(4096));
    html(max).await.unwrap();
    assert_api!(
        html(format!("<b>{}</b>", "a".repeat(4097))).await,
        ApiError::MessageIsTooLong
    );
    let emoji = "😀".repeat(2049); // 4098 UTF-16 units, 2049 chars
    assert_api!(
        bot.send_message(ChatId(OWNER_ID), emoji).await,
        ApiError::MessageIsTooLong
    );

    for empty in ["", "  \n ", "<b> </b>"] {
        let e = api_error(html(empty.into()).await);
        assert!(
            matches!(e, ApiError::MessageTextIsEmpty),
            "{empty:?}: {e:?}"
        );
    }
    assert_api!(
        bot.send_message(ChatId(OWNER_ID), " ").await,
        ApiError::MessageTextIsEmpty
    );

    assert_api!(
        bot.send_message(ChatId(999), "hello?").await,
        ApiError::ChatNotFound
    );
    assert_api!(
        bot.send_message(ChatId(OWNER_ID), "hi")
            .reply_parameters(ReplyParameters::new(MessageId(9_999)))
            .await,
        ApiError::MessageToReplyNotFound
    );

    assert_eq!(fake.messages(OWNER_ID).len(), 1, "only the valid one");
    let failed = fake.calls_of("sendMessage");
    assert_eq!(failed[0].error_code, Some(400));
    assert!(!failed[0].ok && !failed[0].injected);
}

#[tokio::test]
async fn edit_and_delete_follow_telegram() {
    let (fake, bot) = setup().await;
    let asked = fake.user_text(OWNER_ID, "hi");
    let chat = ChatId(OWNER_ID);
    let sent = bot.send_message(chat, "working…").await.unwrap();

    let edited = bot
        .edit_message_text(chat, sent.id, "<b>done</b>")
        .parse_mode(ParseMode::Html)
        .await
        .unwrap();
    assert_eq!(edited.text(), Some("<b>done</b>"));
    assert!(edited.edit_date().is_some());
    let same = bot
        .edit_message_text(chat, sent.id, "<b>done</b>")
        .parse_mode(ParseMode::Html)
        .await;
    assert_api!(same, ApiError::MessageNotModified);
    // The same text in another parse mode is a change.
    bot.edit_message_text(chat, sent.id, "<b>done</b>")
        .await
        .unwrap();
    let bad = bot
        .edit_message_text(chat, sent.id, "<i>oops")
        .parse_mode(ParseMode::Html)
        .await;
    assert_api!(bad, ApiError::CantParseEntities(_));
    let missing = bot.edit_message_text(chat, MessageId(777), "x").await;
    assert_api!(missing, ApiError::MessageToEditNotFound);
    let theirs = bot
        .edit_message_text(chat, MessageId(asked as i32), "x")
        .await;
    assert_api!(theirs, ApiError::MessageCantBeEdited);

    bot.delete_message(chat, sent.id).await.unwrap();
    let again = bot.delete_message(chat, sent.id).await;
    assert_api!(again, ApiError::MessageToDeleteNotFound);
    let gone = bot.edit_message_text(chat, sent.id, "late").await;
    assert_api!(gone, ApiError::MessageToEditNotFound);

    let shown = fake.messages(OWNER_ID);
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0].text, "<b>done</b>");
    assert_eq!(shown[0].parse_mode, None);
    assert_eq!(shown[0].edit_count, 2);
    assert!(shown[0].deleted);
}

#[tokio::test]
async fn chat_actions_and_commands() {
    let (fake, bot) = setup().await;
    fake.user_text(OWNER_ID, "hi");
    bot.send_chat_action(ChatId(OWNER_ID), ChatAction::Typing)
        .await
        .unwrap();
    assert_api!(
        bot.send_chat_action(ChatId(5), ChatAction::Typing).await,
        ApiError::ChatNotFound
    );

    let commands = vec![
        BotCommand::new("help", "帮助"),
        BotCommand::new("del_history", "删除会话"),
    ];
    bot.set_my_commands(commands.clone()).await.unwrap();
    assert_eq!(bot.get_my_commands().await.unwrap(), commands);
    assert_eq!(
        fake.commands().unwrap(),
        json!([
            { "command": "help", "description": "帮助" },
            { "command": "del_history", "description": "删除会话" },
        ])
    );
    let bad = bot.set_my_commands([BotCommand::new("Help", "x")]).await;
    assert_eq!(
        api_error(bad).to_string(),
        "Unknown error: \"Bad Request: BOT_COMMAND_INVALID\""
    );
}

#[tokio::test]
async fn get_file_and_download_round_trip() {
    let (fake, bot) = setup().await;
    let data: Vec<u8> = (0..=255u8).cycle().take(5_000).collect();
    fake.user_document(OWNER_ID, "data.bin", data.clone(), Some("caption"));
    fake.user_photo(OWNER_ID, b"largest photo".to_vec(), None);
    fake.user_document_claiming_size(OWNER_ID, "huge.zip", 25 * 1024 * 1024);
    let updates = next_updates(&bot).await;
    let document = message(&updates[0]).document().unwrap().clone();
    let file = bot.get_file(document.file.id.clone()).await.unwrap();
    assert!(file.path.contains('/'), "{}", file.path);
    assert_eq!(file.size, 5_000);
    let mut downloaded = Vec::new();
    bot.download_file(&file.path, &mut downloaded)
        .await
        .unwrap();
    assert_eq!(downloaded, data);

    let photo = message(&updates[1]).photo().unwrap().to_vec();
    let largest = bot.get_file(photo[2].file.id.clone()).await.unwrap();
    let mut bytes = Vec::new();
    bot.download_file(&largest.path, &mut bytes).await.unwrap();
    assert_eq!(bytes, b"largest photo");
    let thumb = bot.get_file(photo[0].file.id.clone()).await.unwrap();
    let mut bytes = Vec::new();
    bot.download_file(&thumb.path, &mut bytes).await.unwrap();
    assert_ne!(bytes, b"largest photo");

    let huge = message(&updates[2]).document().unwrap().file.id.clone();
    let e = api_error(bot.get_file(huge).await);
    assert_eq!(
        e.to_string(),
        "Unknown error: \"Bad Request: file is too big\""
    );
    let e = api_error(bot.get_file("nope".to_owned().into()).await);
    assert_eq!(
        e.to_string(),
        "Unknown error: \"Bad Request: invalid file_id\""
    );
    assert!(
        bot.download_file("documents/none.bin", &mut Vec::<u8>::new())
            .await
            .is_err()
    );

    let downloads = fake.calls_of(DOWNLOAD);
    assert_eq!(downloads.len(), 4);
    assert_eq!(
        downloads[0].str_param("file_path"),
        Some(file.path.as_str())
    );
    assert!(downloads[0].ok && !downloads[3].ok);
}

#[tokio::test]
async fn send_voice_uploads_are_stored() {
    let (fake, bot) = setup().await;
    let asked = fake.user_text(OWNER_ID, "say it");
    let audio: Vec<u8> = b"OggS\0\x02".iter().copied().cycle().take(40_000).collect();
    let sent = bot
        .send_voice(
            ChatId(OWNER_ID),
            InputFile::memory(audio.clone()).file_name("reply.ogg"),
        )
        .caption("<b>spoken</b>")
        .parse_mode(ParseMode::Html)
        .reply_parameters(ReplyParameters::new(MessageId(asked as i32)))
        .await
        .unwrap();
    let voice = sent.voice().unwrap();
    assert_eq!(voice.file.size as usize, audio.len());
    assert_eq!(voice.mime_type.as_ref().unwrap().as_ref(), "audio/ogg");
    assert_eq!(sent.caption(), Some("<b>spoken</b>"));
    assert_eq!(sent.reply_to_message().unwrap().id.0 as i64, asked);

    let shown = fake.messages(OWNER_ID);
    assert_eq!(shown[0].voice.as_deref(), Some(audio.as_slice()));
    assert_eq!(shown[0].reply_to, Some(asked));
    let call = &fake.calls_of("SendVoice")[0];
    assert_eq!(call.str_param("chat_id"), Some("4242"));
    assert_eq!(call.chat_id(), Some(OWNER_ID));
    assert_eq!(
        call.params["voice"],
        json!({ "file_name": "reply.ogg", "len": 40_000 })
    );

    let edit = bot.edit_message_text(ChatId(OWNER_ID), sent.id, "x").await;
    assert_eq!(
        api_error(edit).to_string(),
        "Unknown error: \"Bad Request: there is no text in the message to edit\""
    );
    let empty = bot
        .send_voice(ChatId(OWNER_ID), InputFile::memory(Vec::new()))
        .await;
    assert!(
        api_error(empty)
            .to_string()
            .contains("file must be non-empty")
    );
}

#[tokio::test]
async fn an_injected_429_is_retry_after_and_performs_nothing() {
    let (fake, bot) = setup().await;
    fake.user_text(OWNER_ID, "hi");
    fake.inject("SendMessage", Failure::RetryAfter(3), 1);
    let first = bot.send_message(ChatId(OWNER_ID), "chunk").await;
    assert!(
        matches!(first, Err(RequestError::RetryAfter(s)) if s.seconds() == 3),
        "{first:?}"
    );
    bot.send_message(ChatId(OWNER_ID), "chunk").await.unwrap();
    assert_eq!(fake.messages(OWNER_ID).len(), 1);
    let calls = fake.calls_of("sendMessage");
    assert_eq!(calls.len(), 2);
    assert!(calls[0].injected && calls[0].error_code == Some(429));
    assert!(calls[1].ok && !calls[1].injected);

    let (status, body) = {
        fake.inject("getMe", Failure::RetryAfter(7), 1);
        fake.post_raw(&format!("/bot{TELEGRAM_TOKEN}/getMe"), "{}")
            .await
    };
    assert_eq!(status, 429);
    assert_eq!(
        body,
        json!({
            "ok": false,
            "error_code": 429,
            "description": "Too Many Requests: retry after 7",
            "parameters": { "retry_after": 7 },
        })
    );
}

#[tokio::test]
async fn inject_when_picks_calls_by_their_parameters() {
    let (fake, bot) = setup().await;
    fake.user_text(OWNER_ID, "hi");
    fake.inject_when(
        "sendMessage",
        |p| p["text"].as_str().is_some_and(|t| t.contains("chunk 2")),
        Failure::BadRequest("can't parse entities: injected".into()),
        1,
    );
    fake.inject("sendChatAction", Failure::Disconnect, 1);
    fake.inject(
        "deleteMessage",
        Failure::Api {
            code: 403,
            description: "Forbidden: bot was blocked by the user".into(),
        },
        1,
    );
    let chat = ChatId(OWNER_ID);
    let one = bot.send_message(chat, "chunk 1").await.unwrap();
    let two = bot.send_message(chat, "chunk 2").await;
    assert_api!(two, ApiError::CantParseEntities(_));
    bot.send_message(chat, "chunk 2").await.unwrap();
    let action = bot.send_chat_action(chat, ChatAction::Typing).await;
    assert!(
        matches!(action, Err(RequestError::Network(_))),
        "{action:?}"
    );
    let delete = bot.delete_message(chat, one.id).await;
    assert_api!(delete, ApiError::BotBlocked);
    assert!(!fake.messages(OWNER_ID)[0].deleted);

    fake.inject(DOWNLOAD, Failure::ServerError, 1);
    let download = bot
        .download_file("voice/file_1.oga", &mut Vec::<u8>::new())
        .await;
    assert!(download.is_err());
    fake.inject("getMe", Failure::ServerError, 1);
    let (status, body) = fake
        .post_raw(&format!("/bot{TELEGRAM_TOKEN}/getme"), "")
        .await;
    assert_eq!(status, 500);
    assert_eq!(body["description"], "Internal Server Error");
    let injected: Vec<String> = fake
        .calls()
        .into_iter()
        .filter(|c| c.injected)
        .map(|c| c.method)
        .collect();
    assert_eq!(
        injected,
        [
            "sendmessage",
            "sendchataction",
            "deletemessage",
            DOWNLOAD,
            "getme"
        ]
    );
}

#[tokio::test]
async fn wrong_tokens_and_unknown_methods_answer_like_telegram() {
    let (fake, bot) = setup().await;
    let (status, body) = fake.post_raw("/bot123:wrong/getMe", "{}").await;
    assert_eq!(status, 401);
    assert_eq!(
        body,
        json!({ "ok": false, "error_code": 401, "description": "Unauthorized" })
    );
    let (status, body) = fake
        .post_raw(&format!("/bot{TELEGRAM_TOKEN}/sendPigeon"), "{}")
        .await;
    assert_eq!(status, 404);
    assert_eq!(
        body,
        json!({ "ok": false, "error_code": 404, "description": "Not Found" })
    );
    let (status, body) = fake
        .post_raw(&format!("/bot{TELEGRAM_TOKEN}/getMe"), "[1]")
        .await;
    assert_eq!((status, body["ok"].clone()), (400, json!(false)));

    let wrong = Bot::new("123:wrong").set_api_url(fake.api_url().parse().unwrap());
    assert!(matches!(
        api_error(wrong.get_me().await),
        ApiError::InvalidToken
    ));

    // Method names are matched case-insensitively and logged in lower case.
    fake.user_text(OWNER_ID, "hi");
    let path = format!("/bot{TELEGRAM_TOKEN}/SENDMESSAGE");
    let (status, body) = fake
        .post_raw(&path, r#"{"chat_id":4242,"text":"hey"}"#)
        .await;
    assert_eq!(
        (status, body["result"]["text"].clone()),
        (200, json!("hey"))
    );
    assert_eq!(fake.calls_of("sendMessage").len(), 1);
    bot.get_me().await.unwrap();
    let methods: Vec<String> = fake.calls().into_iter().map(|c| c.method).collect();
    assert_eq!(
        methods,
        [
            "getme",
            "sendpigeon",
            "getme",
            "getme",
            "sendmessage",
            "getme"
        ]
    );
}

#[tokio::test]
async fn wait_for_call_wakes_on_a_later_call() {
    let (fake, bot) = setup().await;
    fake.user_text(OWNER_ID, "hi");
    let since = fake.call_count();
    let sender = tokio::spawn({
        let bot = bot.clone();
        async move {
            tokio::task::yield_now().await;
            bot.send_message(ChatId(OWNER_ID), "first").await.unwrap();
            bot.send_message(ChatId(OWNER_ID), "second").await.unwrap();
        }
    });
    let call = fake
        .wait_for_call_since(since, "SendMessage", |c| c.text() == Some("second"), T)
        .await;
    assert!(call.ok);
    sender.await.unwrap();
    // Earlier calls count too.
    let first = fake
        .wait_for_call("sendmessage", |c| c.text() == Some("first"), T)
        .await;
    assert_eq!(
        first.sent_message_id(),
        Some(call.sent_message_id().unwrap() - 1)
    );
}

#[tokio::test]
#[should_panic(expected = "no matching sendmessage call")]
async fn wait_for_call_panics_with_the_log_on_timeout() {
    let (fake, bot) = setup().await;
    bot.get_me().await.unwrap();
    fake.wait_for_call("sendMessage", |_| true, Duration::from_millis(50))
        .await;
}
