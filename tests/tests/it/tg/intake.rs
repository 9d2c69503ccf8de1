//! Intake through both real binaries, with a model that takes 3 s to answer: bursts become one
//! turn (a text split by the Telegram app, albums of photos and of documents), the context the
//! owner gave reaches the model (a reply's quoted text in a new session, a forward's origin, a
//! location's coordinates), kinds Kernel cannot take are named, messages sent while kernel-tg
//! was down are answered as one late turn (a stale command in them is not run), and another
//! user's album part is never merged.

use std::time::Duration;

use kernel_common::config::Locale;
use serde_json::json;
use tests::fake_llm::{Reply, Script};
use tests::fake_telegram::OWNER_ID;
use tests::media::{PNG, base64};
use tests::stack::{PROMPT, Stack, reply_target, text_of};
use tests::told::{Told, Unsupported};

fn zh() -> Told {
    Told::new(Locale::Zh)
}

/// An answer that takes about 3 s to stream.
fn slow(text: &str) -> Script {
    let chunk = text.chars().count().div_ceil(3).max(1);
    Reply::text(text).slow(chunk, Duration::from_secs(1)).into()
}

/// What the bot sent that says the owner is busy.
fn busy_replies(stack: &Stack) -> usize {
    stack
        .telegram
        .calls_of("sendMessage")
        .iter()
        .filter(|c| text_of(c) == zh().busy())
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_split_by_the_telegram_app_is_one_model_call_with_both_parts() {
    let stack = Stack::start().await;
    stack.llm.push(slow("got both parts"));
    let first = format!("{}END1", "a".repeat(4_092));
    assert_eq!(first.chars().count(), 4_096);
    stack.owner_says(&first);
    stack.owner_says("and the rest of it END2");
    assert_eq!(stack.only_answer().await, "got both parts");
    let requests = stack.llm.requests();
    assert_eq!(requests.len(), 1, "one model call");
    let body = &requests[0].raw_body;
    assert!(body.contains("END1") && body.contains("END2"), "{body}");
    assert_eq!(busy_replies(&stack), 0);
    stack.updates_confirmed().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_album_of_three_photos_is_one_call_with_every_photo() {
    let stack = Stack::start().await;
    stack.llm.push(slow("three photos"));
    let photos: Vec<Vec<u8>> = (1..=3)
        .map(|i| [PNG, format!("photo-{i}").as_bytes()].concat())
        .collect();
    stack
        .telegram
        .user_album_photos(OWNER_ID, photos.clone(), Some("这三张"), "album-1");
    assert_eq!(stack.only_answer().await, "three photos");
    let requests = stack.llm.requests();
    assert_eq!(requests.len(), 1, "one model call");
    let body = &requests[0].raw_body;
    for photo in &photos {
        assert!(body.contains(&base64(photo)), "a photo is missing");
    }
    assert!(body.contains("这三张"), "the caption");
    assert_eq!(busy_replies(&stack), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_album_of_two_documents_is_one_call_with_both() {
    let stack = Stack::start().await;
    stack.llm.push(slow("two files"));
    stack.telegram.user_album_documents(
        OWNER_ID,
        vec![
            ("alpha.txt", b"alpha inside".to_vec()),
            ("beta.txt", b"beta inside".to_vec()),
        ],
        "album-2",
    );
    assert_eq!(stack.only_answer().await, "two files");
    let requests = stack.llm.requests();
    assert_eq!(requests.len(), 1, "one model call");
    let body = &requests[0].raw_body;
    for needle in [
        "[文件: alpha.txt]",
        "alpha inside",
        "[文件: beta.txt]",
        "beta inside",
    ] {
        assert!(body.contains(needle), "{needle}: {body}");
    }
    assert_eq!(busy_replies(&stack), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_album_with_a_document_agentd_cannot_read_runs_the_rest_and_names_it() {
    let stack = Stack::start().await;
    stack.llm.push(slow("one file read"));
    stack.telegram.user_album_documents(
        OWNER_ID,
        vec![
            ("alpha.txt", b"alpha inside".to_vec()),
            ("report.pdf", b"%PDF-1.7 not text".to_vec()),
        ],
        "album-pdf",
    );
    let visible = stack.turn_done().await;
    let texts: Vec<&str> = visible.iter().map(|m| m.text.as_str()).collect();
    assert!(texts.contains(&"one file read"), "{texts:#?}");
    let notice = texts
        .iter()
        .find(|t| t.contains("未处理") && t.contains("pdf"))
        .unwrap_or_else(|| panic!("a reply naming the left-out PDF: {texts:#?}"));
    assert!(!notice.contains("alpha"), "{notice}");
    let requests = stack.llm.requests();
    assert_eq!(requests.len(), 1, "one model call");
    let body = &requests[0].raw_body;
    assert!(body.contains("alpha inside"), "{body}");
    assert!(
        body.contains("未处理的附件"),
        "the model reads a note: {body}"
    );
    assert!(!body.contains("not text"), "{body}");
    assert_eq!(busy_replies(&stack), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_users_part_with_the_owners_media_group_is_not_merged() {
    const STRANGER: i64 = 777;
    let stack = Stack::start().await;
    stack.llm.push(slow("two photos"));
    let mine: Vec<Vec<u8>> = (1..=2)
        .map(|i| [PNG, format!("mine-{i}").as_bytes()].concat())
        .collect();
    let theirs = [PNG, b"theirs".as_slice()].concat();
    stack
        .telegram
        .user_album_photos(OWNER_ID, vec![mine[0].clone()], Some("mine"), "shared");
    stack.telegram.user_album_photos(
        STRANGER,
        vec![theirs.clone()],
        Some("stranger caption"),
        "shared",
    );
    stack
        .telegram
        .user_album_photos(OWNER_ID, vec![mine[1].clone()], None, "shared");
    assert_eq!(stack.only_answer().await, "two photos");
    let requests = stack.llm.requests();
    assert_eq!(requests.len(), 1);
    let body = &requests[0].raw_body;
    assert!(body.contains(&base64(&mine[0])) && body.contains(&base64(&mine[1])));
    assert!(
        !body.contains(&base64(&theirs)),
        "the stranger's photo was merged"
    );
    assert!(!body.contains("stranger caption"));
    assert!(
        stack
            .telegram
            .calls()
            .iter()
            .filter_map(|c| c.chat_id())
            .all(|id| id == OWNER_ID)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_in_a_new_session_carries_what_it_replies_to_and_a_quote_wins() {
    let stack = Stack::start().await;
    stack
        .llm
        .push(Script::text("Bonjour tout le monde, voici la réponse"));
    stack.owner_says("say hello in French");
    stack.only_answer().await;
    let answer = stack.visible()[0].message_id;
    stack.command("/new").await;

    stack.llm.push(slow("Hello everyone"));
    let asked = stack
        .telegram
        .user_reply(OWNER_ID, answer, "translate that", None);
    stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c) == "Hello everyone" && reply_target(c) == Some(asked),
            PROMPT,
        )
        .await;
    let body = stack.llm.last_request().unwrap().raw_body;
    assert!(
        body.contains("[回复你的消息: \\\"Bonjour tout le monde, voici la réponse\\\"]"),
        "{body}"
    );
    assert!(
        !body.contains("say hello in French"),
        "a new session: {body}"
    );

    stack.llm.push(Script::text("the world"));
    stack
        .telegram
        .user_reply(OWNER_ID, answer, "just this part", Some("le monde"));
    stack.llm.wait_requests(3, PROMPT).await;
    let body = stack.llm.last_request().unwrap().raw_body;
    assert!(
        body.contains("[引用: \\\"le monde\\\"]\\njust this part"),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forward_says_from_whom_and_a_location_gives_its_coordinates() {
    let stack = Stack::start().await;
    stack.llm.push(slow("noted the forward"));
    stack.telegram.user_message(
        OWNER_ID,
        json!({
            "text": "what do you think",
            "forward_origin": {
                "type": "user", "date": 1_700_000_000,
                "sender_user": { "id": 5, "is_bot": false, "first_name": "Alice", "username": "alice" }
            }
        }),
    );
    assert_eq!(stack.only_answer().await, "noted the forward");
    let body = stack.llm.last_request().unwrap().raw_body;
    assert!(
        body.contains("[转发自 Alice (@alice)，2023-11-15 06:13]"),
        "{body}"
    );
    assert!(body.contains("what do you think"), "{body}");

    stack.llm.push(Script::text("nice place"));
    let before = stack.telegram.call_count();
    stack.telegram.user_message(
        OWNER_ID,
        json!({ "location": { "latitude": 31.2304, "longitude": 121.4737 } }),
    );
    stack
        .telegram
        .wait_for_call_since(
            before,
            "sendMessage",
            |c| text_of(c) == "nice place",
            PROMPT,
        )
        .await;
    let body = stack.llm.last_request().unwrap().raw_body;
    assert!(body.contains("31.230400, 121.473700"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sticker_and_a_video_get_one_reply_each_saying_so() {
    let stack = Stack::start().await;
    let sticker = stack.telegram.user_message(
        OWNER_ID,
        json!({ "sticker": {
            "file_id": "s1", "file_unique_id": "us1", "width": 1, "height": 1,
            "is_animated": false, "is_video": false, "type": "regular"
        }}),
    );
    let reply = stack.reply_to(sticker).await;
    assert_eq!(text_of(&reply), zh().unsupported_kind(Unsupported::Sticker));
    let video = stack.telegram.user_message(
        OWNER_ID,
        json!({ "video": {
            "file_id": "v1", "file_unique_id": "uv1", "file_size": 10, "width": 1, "height": 1,
            "duration": 1, "mime_type": "video/mp4"
        }}),
    );
    let reply = stack.reply_to(video).await;
    assert_eq!(text_of(&reply), zh().unsupported_kind(Unsupported::Video));
    assert_eq!(stack.telegram.calls_of("sendMessage").len(), 2);
    assert!(stack.llm.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_sent_while_kernel_tg_was_down_are_one_late_turn_and_a_stale_command_is_not_run() {
    let mut stack = Stack::start().await;
    stack.llm.push(Script::text("noted: apple"));
    stack.owner_says("remember the word apple");
    stack.only_answer().await;
    stack.updates_confirmed().await;

    stack.kill_bot();
    // Two days old: not run, only counted.
    let old = chrono::Utc::now().timestamp() - 2 * 86_400;
    stack.telegram.user_message(
        OWNER_ID,
        json!({ "text": "an ancient message", "date": old }),
    );
    stack.owner_says("first while you were away");
    stack.owner_says("/del_history #1");
    stack.owner_says("second while you were away");
    stack.llm.push(slow("both answered"));
    stack.start_bot().await;

    stack
        .telegram
        .wait_for_call("sendMessage", |c| text_of(c) == "both answered", PROMPT)
        .await;
    let requests = stack.llm.requests();
    assert_eq!(requests.len(), 2, "one turn for the backlog");
    let body = &requests[1].raw_body;
    let first = body.find("first while you were away").expect("the first");
    let second = body.find("second while you were away").expect("the second");
    assert!(first < second, "in order");
    assert_eq!(
        body.matches("[离线期间 ").count(),
        2,
        "each marked late: {body}"
    );
    assert!(
        body.contains("remember the word apple"),
        "the stale /del_history was run: {body}"
    );
    let notice = stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| text_of(c).contains("/del_history"),
            PROMPT,
        )
        .await;
    assert!(text_of(&notice).contains("未执行"), "{}", text_of(&notice));
    assert!(
        text_of(&notice).contains("1 条消息超过 24 小时"),
        "{}",
        text_of(&notice)
    );
    assert!(!body.contains("an ancient message"), "{body}");
    stack.updates_confirmed().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_album_over_ten_parts_or_with_a_video_names_what_was_left_out_and_the_rest_runs() {
    let stack = Stack::start().await;
    stack.llm.push(slow("ten photos"));
    let photos: Vec<Vec<u8>> = (1..=11)
        .map(|i| [PNG, format!("album-part-{i:02}").as_bytes()].concat())
        .collect();
    let ids = stack
        .telegram
        .user_album_photos(OWNER_ID, photos.clone(), Some("eleven"), "big");
    stack.telegram.user_message(
        OWNER_ID,
        json!({
            "media_group_id": "big",
            "video": {
                "file_id": "v9", "file_unique_id": "uv9", "file_size": 10, "width": 1,
                "height": 1, "duration": 1, "mime_type": "video/mp4"
            }
        }),
    );
    let told = stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| text_of(c).contains(&zh().left_over_limit(1, 10)),
            PROMPT,
        )
        .await;
    assert!(
        text_of(&told).contains(&zh().left_unsupported(Unsupported::Video)),
        "one reply names both: {}",
        text_of(&told)
    );
    stack
        .telegram
        .wait_for_call("sendMessage", |c| text_of(c) == "ten photos", PROMPT)
        .await;
    let requests = stack.llm.requests();
    assert_eq!(requests.len(), 1, "one model call");
    let body = &requests[0].raw_body;
    let carried = photos.iter().filter(|p| body.contains(&base64(p))).count();
    assert_eq!(carried, 10, "the first ten photos");
    assert!(!body.contains(&base64(&photos[10])));
    assert_eq!(ids.len(), 11);
    stack.updates_confirmed().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backlog_of_hundreds_is_one_bounded_turn_saying_what_was_cut() {
    let mut stack = Stack::start().await;
    stack.kill_bot();
    for i in 1..=250 {
        stack.owner_says(&format!("backlog message {i:03}"));
    }
    stack.llm.push(Script::text("caught up"));
    stack.start_bot().await;
    stack
        .telegram
        .wait_for_call("sendMessage", |c| text_of(c) == "caught up", PROMPT)
        .await;
    let told = stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| text_of(c).contains(&zh().left_cut(200)),
            PROMPT,
        )
        .await;
    assert!(text_of(&told).starts_with("⚠️"), "{}", text_of(&told));
    let requests = stack.llm.requests();
    assert_eq!(
        requests.len(),
        1,
        "one model call for three pages of backlog"
    );
    let body = &requests[0].raw_body;
    assert!(body.contains("backlog message 250"), "the latest are kept");
    assert!(body.contains("backlog message 201"));
    assert!(!body.contains("backlog message 200"), "cut");
    stack.updates_confirmed().await;
}
