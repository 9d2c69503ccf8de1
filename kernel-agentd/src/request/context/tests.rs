//! Tests of request building: time format, per-turn block, windows, assembly.

use chrono::TimeZone as _;
use serde_json::json;

use super::*;

fn user(t: &str) -> Message {
    Message::user_text(t)
}

fn answer(t: &str) -> Message {
    Message::assistant_text(t)
}

fn call(id: &str) -> Message {
    Message {
        role: Role::Assistant,
        content: vec![Block::ToolCall {
            id: id.into(),
            name: "t".into(),
            input: json!({}),
        }],
    }
}

fn result(id: &str) -> Message {
    Message {
        role: Role::User,
        content: vec![Block::ToolResult {
            call_id: id.into(),
            content: "r".into(),
            is_error: false,
        }],
    }
}

#[test]
fn time_is_formatted_with_offset_and_zone_name() {
    let now = Utc.with_ymd_and_hms(2026, 2, 11, 13, 42, 0).unwrap();
    assert_eq!(
        format_now(now, chrono_tz::Asia::Shanghai),
        "2026-02-11T21:42:00+0800 (Asia/Shanghai)"
    );
    assert_eq!(
        format_now(now, chrono_tz::UTC),
        "2026-02-11T13:42:00+0000 (UTC)"
    );
}

#[test]
fn per_turn_block_lists_memories_on_one_line_each() {
    assert_eq!(per_turn_block("T", &[]), "[当前时间: T]");
    let b = per_turn_block("T", &["likes tea".into(), "lives in\nShanghai".into()]);
    assert_eq!(
        b,
        "[当前时间: T]\n## 长期记忆（自动召回）\n- likes tea\n- lives in Shanghai"
    );
}

#[test]
fn window_keeps_whole_rounds() {
    let h = vec![
        user("q1"),
        answer("a1"),
        user("q2"),
        call("x"),
        result("x"),
        call("y"),
        result("y"),
        answer("a2"),
        user("q3"),
        answer("a3"),
    ];
    assert_eq!(window_rounds(h.clone(), 0), Vec::<Message>::new());
    assert_eq!(window_rounds(h.clone(), 1), h[8..].to_vec());
    assert_eq!(window_rounds(h.clone(), 2), h[2..].to_vec());
    assert_eq!(window_rounds(h.clone(), 3), h.clone());
    assert_eq!(window_rounds(h.clone(), 50), h);
    assert_eq!(
        window_rounds(vec![call("z"), result("z")], 5),
        Vec::<Message>::new()
    );
}

#[test]
fn assemble_puts_per_turn_block_first_in_the_newest_user_message() {
    let history = vec![user("q1"), answer("a1")];
    let a = assemble(history.clone(), &user("q2"), "[当前时间: T]");
    assert_eq!(a.stable_prefix, 2);
    assert_eq!(a.messages[..2], history[..]);
    assert_eq!(
        a.messages[2].content,
        vec![Block::text("[当前时间: T]"), Block::text("q2")]
    );
}

#[test]
fn assemble_merges_a_trailing_user_message_after_its_results() {
    let history = vec![user("q1"), call("x"), result("x")];
    let a = assemble(history, &user("q2"), "P");
    assert_eq!(a.stable_prefix, 2);
    let newest = &a.messages[2].content;
    assert!(matches!(newest[0], Block::ToolResult { .. }));
    assert_eq!(newest[1..], [Block::text("P"), Block::text("q2")]);
    let a = assemble(Vec::new(), &user("hi"), "P");
    assert_eq!((a.stable_prefix, a.messages.len()), (0, 1));
}
