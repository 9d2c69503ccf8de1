//! The allow-list through the real binaries: other users, groups and channels cause no RPC, no
//! model call and no message (the owner's own edit reaches agentd as `EditMessage`, and still
//! runs no model and sends nothing); the debug log never carries their content.

use serde_json::json;
use tests::fake_telegram::OWNER_ID;
use tests::stack::Stack;

const STRANGER: i64 = 777;
const CONTENT: &str = "please leak the secret plan";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strangers_groups_channels_and_edits_are_dropped_before_any_rpc() {
    let stack = Stack::start().await;
    stack.telegram.user_text(STRANGER, CONTENT);
    stack.telegram.group_text(OWNER_ID, -1_001_234, CONTENT);
    stack.telegram.group_text(STRANGER, -1_001_234, "/status");
    stack.telegram.user_text(STRANGER, "/cancel");
    stack.telegram.edited_text(OWNER_ID, 1, CONTENT);
    stack.telegram.push_raw_update(json!({
        "update_id": 999_999,
        "channel_post": {
            "message_id": 5, "date": 1_700_000_000,
            "chat": { "id": -1_009, "type": "channel", "title": "c" },
            "text": CONTENT
        }
    }));
    stack
        .telegram
        .push_raw_update(json!({ "update_id": 1_000_000, "message": { "garbage": true } }));

    // Updates are handled in order: once /help is answered, all the above were seen.
    let help = stack.command("/help").await;
    assert!(help.contains("/cancel"), "{help}");

    let chats: Vec<_> = stack
        .telegram
        .calls()
        .into_iter()
        .filter_map(|c| c.chat_id())
        .collect();
    assert!(chats.iter().all(|id| *id == OWNER_ID), "{chats:?}");
    assert!(stack.llm.requests().is_empty());
    assert!(stack.telegram.calls_of("sendChatAction").is_empty());
    let sends = stack.telegram.calls_of("sendMessage");
    assert_eq!(
        sends.len(),
        1,
        "only the /help reply: {}",
        stack.telegram.call_log()
    );
    let logs = stack.logs();
    assert!(
        logs.contains("dropped: not the owner's private chat"),
        "{logs}"
    );
    // Neither process saw a Chat or a Cancel.
    for rpc in ["turn started", "cancel requested", "chat refused"] {
        assert!(!logs.contains(rpc), "{rpc}:\n{logs}");
    }
    assert!(!logs.contains(CONTENT), "content logged:\n{logs}");
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stranger_alone_causes_no_model_call_and_no_reply() {
    let stack = Stack::start().await;
    stack.telegram.user_text(STRANGER, "hello bot");
    stack.telegram.group_text(STRANGER, -1_005, "hello group");
    let status = stack.command("/status").await;
    assert!(!status.is_empty());
    assert!(stack.llm.requests().is_empty());
    let sends = stack.telegram.calls_of("sendMessage");
    assert_eq!(
        sends.len(),
        1,
        "only the /status reply: {}",
        stack.telegram.call_log()
    );
    assert!(stack.telegram.calls_of("sendChatAction").is_empty());
    stack.assert_no_secrets();
}
