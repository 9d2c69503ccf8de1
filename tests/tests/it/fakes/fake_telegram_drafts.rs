//! The fake Bot API's `sendMessageDraft`, on the wire: Telegram's checks (private chats only, a
//! non-zero `draft_id`, the text like sendMessage's: strict HTML, 1..=4096 units after entity
//! parsing), timestamps in the call log, and a fake that lacks the method like an older Bot API.

use serde_json::{Value, json};
use tests::config::TELEGRAM_TOKEN;
use tests::fake_telegram::{FakeTelegram, OWNER_ID};

async fn draft(fake: &FakeTelegram, body: Value) -> (u16, Value) {
    fake.post_raw(
        &format!("/bot{TELEGRAM_TOKEN}/sendMessageDraft"),
        &body.to_string(),
    )
    .await
}

fn description(answer: &Value) -> &str {
    answer["description"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn drafts_are_checked_like_telegram_checks_them() {
    let fake = FakeTelegram::start(TELEGRAM_TOKEN).await;
    fake.user_text(OWNER_ID, "hi");
    fake.group_text(OWNER_ID, -1001, "hi all");
    let ok =
        json!({"chat_id": OWNER_ID, "draft_id": 5, "text": "<b>so far</b>", "parse_mode": "HTML"});
    assert_eq!(
        draft(&fake, ok.clone()).await,
        (200, json!({"ok": true, "result": true}))
    );

    let mut group = ok.clone();
    group["chat_id"] = json!(-1001);
    let (status, answer) = draft(&fake, group).await;
    assert_eq!(status, 400, "{answer}");
    let mut zero = ok.clone();
    zero["draft_id"] = json!(0);
    let (status, answer) = draft(&fake, zero).await;
    assert_eq!(
        (status, description(&answer)),
        (400, "Bad Request: draft_id must be non-zero")
    );
    let mut broken = ok.clone();
    broken["text"] = json!("<b>open");
    let (status, answer) = draft(&fake, broken).await;
    assert_eq!(status, 400);
    assert!(
        description(&answer).contains("can't parse entities"),
        "{answer}"
    );
    let mut long = ok.clone();
    long["text"] = json!(format!("<b>{}</b>", "x".repeat(4097)));
    let (status, answer) = draft(&fake, long).await;
    assert_eq!(
        (status, description(&answer)),
        (400, "Bad Request: message is too long")
    );
    let mut empty = ok.clone();
    empty["text"] = json!("<b> </b>");
    assert_eq!(draft(&fake, empty).await.0, 400);

    let calls = fake.calls_of("sendMessageDraft");
    assert_eq!(calls.len(), 6);
    assert!(calls[0].ok && calls[1..].iter().all(|c| !c.ok));
    assert!(calls.windows(2).all(|w| w[0].at <= w[1].at));
    assert!(
        fake.messages(OWNER_ID).is_empty(),
        "a draft is not a message"
    );
}

#[tokio::test]
async fn a_fake_lacking_drafts_answers_method_not_found() {
    let fake = FakeTelegram::start(TELEGRAM_TOKEN).await;
    fake.user_text(OWNER_ID, "hi");
    fake.lack_drafts();
    let body = json!({"chat_id": OWNER_ID, "draft_id": 1, "text": "x"});
    let (status, answer) = draft(&fake, body).await;
    assert_eq!(
        (status, description(&answer)),
        (404, "Not Found: method not found")
    );
}
