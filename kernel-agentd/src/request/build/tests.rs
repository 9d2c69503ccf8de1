//! Tests of [`build`] on plain inputs: what the produced request holds — the system prompt, the
//! history trimmed to the rounds ceiling and the token budget (folded into the summary, which
//! leads the history), the per-turn block with the recalled memories and their origin labels,
//! slimmed results sent as stored, dangling tool calls closed, the cache-stable prefix.

use serde_json::json;

use super::*;
use crate::conversation::{Block, Role};
use crate::request::context::{RECALL_HEADING, starts_round};
use crate::request::repair::INTERRUPTED_RESULT;
use crate::request::session_summary::SUMMARY_HEADING;

const NOW: &str = "2026-02-11T21:42:00+0800 (Asia/Shanghai)";

/// Round `i`: a question, a tool call, its result (of `result_chars` characters), an answer.
fn round(i: usize, result_chars: usize) -> Vec<Message> {
    let id = format!("call_{i}");
    vec![
        Message::user_text(format!("问题 {i}：看一下 service-{i} 的日志")),
        Message {
            role: Role::Assistant,
            content: vec![Block::ToolCall {
                id: id.clone(),
                name: "read_log".into(),
                input: json!({"service": i}),
            }],
        },
        Message {
            role: Role::User,
            content: vec![Block::ToolResult {
                call_id: id,
                content: "日".repeat(result_chars),
                is_error: false,
            }],
        },
        Message::assistant_text(format!("service-{i} 正常")),
    ]
}

/// `n` stored rounds, ordinals from 0.
fn stored(n: usize, result_chars: usize) -> StoredHistory {
    StoredHistory {
        summary: SessionSummary::default(),
        messages: (0..n)
            .flat_map(|i| round(i, result_chars))
            .enumerate()
            .map(|(o, m)| (o as i64, m))
            .collect(),
    }
}

/// Builds with the given history, ceiling and budget, a fixed persona and no tools.
fn build_with(
    stored: StoredHistory,
    rounds: usize,
    token_budget: u64,
    memories: &[String],
) -> BuiltRequest {
    let user = Message::user_text("新的问题");
    build(RequestInputs {
        persona: Arc::from("你是 Kernel。"),
        skills_index: "",
        tools: &[],
        stored,
        rounds,
        token_budget,
        kind: ProviderKind::Claude,
        user: &user,
        now: NOW,
        memories,
    })
}

fn text_of(block: &Block) -> &str {
    match block {
        Block::Text { text } => text,
        other => panic!("not text: {other:?}"),
    }
}

fn newest(request: &BuiltRequest) -> &Message {
    request.messages.last().expect("a newest message")
}

#[test]
fn within_the_ceiling_and_the_budget_the_history_is_sent_as_stored_then_the_new_message() {
    let history = stored(3, 10);
    let sent: Vec<Message> = history.messages.iter().map(|(_, m)| m.clone()).collect();
    let r = build_with(history, 50, 100_000, &[]);
    assert_eq!(r.folded, None);
    assert!(r.summary.is_empty());
    assert_eq!(r.messages[..12], sent[..]);
    assert_eq!(
        r.stable_prefix, 12,
        "everything before the new message is stable"
    );
    let last = newest(&r);
    assert_eq!(last.role, Role::User);
    assert_eq!(
        last.content,
        vec![
            Block::text(format!("[当前时间: {NOW}]")),
            Block::text("新的问题")
        ]
    );
}

#[test]
fn rounds_over_the_ceiling_fold_into_the_summary_which_leads_the_history() {
    let r = build_with(stored(10, 10), 4, 1_000_000, &[]);
    // 10 rounds over a ceiling of 4: fold down to 3/4 of it (3 rounds), whole rounds only.
    let folded = r.folded.expect("rounds folded");
    assert_eq!(folded.rounds, 7);
    assert_eq!(
        folded.through_ordinal,
        7 * 4 - 1,
        "through the last message of round 7"
    );
    assert_eq!(r.summary.rounds, 7);
    let first = &r.messages[0];
    assert_eq!(first.role, Role::User);
    let summary = text_of(&first.content[0]);
    assert!(summary.starts_with(SUMMARY_HEADING), "{summary}");
    assert!(summary.contains("较早的 7 轮"), "{summary}");
    assert_eq!(
        text_of(&first.content[1]),
        "问题 7：看一下 service-7 的日志"
    );
    let rounds_sent = r.messages.iter().filter(|m| starts_round(m)).count();
    assert_eq!(
        rounds_sent,
        3 + 1,
        "three stored rounds and the new message"
    );
    assert_eq!(r.stable_prefix, r.messages.len() - 1);
}

#[test]
fn rounds_over_the_token_budget_are_trimmed_but_the_last_two_stay_whole() {
    let roomy = build_with(stored(12, 2_000), 50, 1_000_000, &[]);
    assert_eq!(roomy.folded, None);
    let tight = build_with(stored(12, 2_000), 50, 12_000, &[]);
    let folded = tight.folded.expect("over the budget, rounds fold");
    assert!(folded.rounds >= 6, "{folded:?}");
    assert!(
        crate::request::tokens::messages_tokens(&tight.messages) <= 12_000,
        "the request fits"
    );
    let tiny = build_with(stored(12, 2_000), 50, 10, &[]);
    let results = tiny
        .messages
        .iter()
        .flat_map(|m| &m.content)
        .filter(|b| matches!(b, Block::ToolResult { .. }))
        .count();
    assert_eq!(results, 2, "the last two rounds are never folded");
    assert_eq!(tiny.summary.rounds, 10);
}

#[test]
fn a_stored_summary_without_history_joins_the_new_message() {
    let mut summary = SessionSummary::default();
    summary.fold(&round(0, 10));
    let r = build_with(
        StoredHistory {
            summary,
            messages: Vec::new(),
        },
        50,
        100_000,
        &[],
    );
    assert_eq!(r.folded, None, "nothing new folded");
    assert_eq!((r.messages.len(), r.stable_prefix), (1, 0));
    let content = &r.messages[0].content;
    // The per-turn block leads the newest message; the summary follows it, then the text.
    assert_eq!(text_of(&content[0]), format!("[当前时间: {NOW}]"));
    assert!(text_of(&content[1]).starts_with(SUMMARY_HEADING));
    assert_eq!(text_of(&content[2]), "新的问题");
}

#[test]
fn recalled_memories_lead_the_new_message_one_line_each_with_their_origin_labels() {
    let memories = vec![
        "[3] (2026-02-01) 主人喜欢乌龙茶".to_owned(),
        "[9] (2026-02-10) [来源: tool mcp_docs，不是主人说的] 服务器\n在上海".to_owned(),
    ];
    let r = build_with(stored(1, 10), 50, 100_000, &memories);
    let block = text_of(&newest(&r).content[0]);
    assert_eq!(
        block,
        format!(
            "[当前时间: {NOW}]\n{RECALL_HEADING}\n- [3] (2026-02-01) 主人喜欢乌龙茶\n- [9] (2026-02-10) [来源: tool mcp_docs，不是主人说的] 服务器 在上海"
        )
    );
    assert_eq!(text_of(&newest(&r).content[1]), "新的问题");
    let earlier = r.messages[..r.stable_prefix]
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|b| match b {
            Block::Text { text } => Some(text.as_str()),
            _ => None,
        });
    for text in earlier {
        assert!(
            !text.contains(RECALL_HEADING),
            "memories only in the newest message"
        );
    }
}

#[test]
fn slimmed_results_are_sent_as_stored() {
    let slimmed = crate::request::slim::result_placeholder("read_log", &"日".repeat(9_000), false);
    let mut history = stored(2, 0);
    let Block::ToolResult { content, .. } = &mut history.messages[2].1.content[0] else {
        panic!("a result");
    };
    *content = slimmed.clone();
    let r = build_with(history, 50, 100_000, &[]);
    let Block::ToolResult { content, .. } = &r.messages[2].content[0] else {
        panic!("a result");
    };
    assert_eq!(content, &slimmed);
    assert!(content.chars().count() < 200, "{content}");
}

#[test]
fn a_dangling_tool_call_is_closed_before_the_new_message() {
    let mut history = stored(2, 10);
    // The turn ended (a crash) after the model called a tool, before its result was stored.
    history.messages.truncate(6);
    let r = build_with(history, 50, 100_000, &[]);
    let last = newest(&r);
    assert!(
        matches!(&last.content[0], Block::ToolResult { call_id, content, is_error: true }
            if call_id == "call_1" && content == INTERRUPTED_RESULT),
        "{last:?}"
    );
    assert_eq!(text_of(&last.content[1]), format!("[当前时间: {NOW}]"));
    assert_eq!(text_of(&last.content[2]), "新的问题");
    let roles: Vec<Role> = r.messages.iter().map(|m| m.role).collect();
    assert!(
        roles.windows(2).all(|w| w[0] != w[1]),
        "roles alternate: {roles:?}"
    );
}

#[test]
fn the_system_prompt_is_the_persona_then_the_skills_index_and_the_tools_count() {
    fn system_of(tools: &[ToolSpec], index: &str) -> BuiltRequest {
        build(RequestInputs {
            persona: Arc::from("你是 Kernel。"),
            skills_index: index,
            tools,
            stored: StoredHistory::default(),
            rounds: 50,
            token_budget: 100_000,
            kind: ProviderKind::OpenAiCompat,
            user: &Message::user_text("hi"),
            now: NOW,
            memories: &[],
        })
    }
    let tools = [ToolSpec {
        name: "read_log".into(),
        description: "reads a service's log".into(),
        input_schema: json!({"type": "object"}),
    }];
    let bare = system_of(&[], "");
    assert_eq!(&*bare.system, "你是 Kernel。");
    assert_eq!(
        bare.prefix_tokens,
        crate::request::tokens::text_tokens("你是 Kernel。")
    );
    let indexed = system_of(&[], "## 技能\n- weather");
    assert_eq!(&*indexed.system, "你是 Kernel。\n\n## 技能\n- weather");
    assert!(system_of(&tools, "").prefix_tokens > bare.prefix_tokens);
}
