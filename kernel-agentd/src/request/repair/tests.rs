//! Tests of transcript repair: examples and properties over arbitrary transcripts.

use std::collections::HashSet;

use proptest::prelude::*;
use serde_json::json;

use super::*;

const KIND: ProviderKind = ProviderKind::Claude;

fn call(id: &str, name: &str) -> Block {
    Block::ToolCall {
        id: id.into(),
        name: name.into(),
        input: json!({"q": 1}),
    }
}

fn result(id: &str, content: &str) -> Block {
    Block::ToolResult {
        call_id: id.into(),
        content: content.into(),
        is_error: false,
    }
}

fn user(content: Vec<Block>) -> Message {
    Message {
        role: Role::User,
        content,
    }
}

fn assistant(content: Vec<Block>) -> Message {
    Message {
        role: Role::Assistant,
        content,
    }
}

fn interrupted(id: &str) -> Block {
    Block::ToolResult {
        call_id: id.into(),
        content: INTERRUPTED_RESULT.into(),
        is_error: true,
    }
}

/// Everything `repair` promises; `Err` names the first broken rule.
fn check_valid(messages: &[Message], kind: ProviderKind) -> Result<(), String> {
    let mut ids = HashSet::new();
    for (i, m) in messages.iter().enumerate() {
        let want = if i % 2 == 0 {
            Role::User
        } else {
            Role::Assistant
        };
        if m.role != want {
            return Err(format!("message {i} has role {:?}", m.role));
        }
        if m.content.is_empty() {
            return Err(format!("message {i} is empty"));
        }
        for b in &m.content {
            match (m.role, b) {
                (_, Block::Text { text }) if text.trim().is_empty() => {
                    return Err(format!("blank text in {i}"));
                }
                (Role::User, Block::ToolCall { .. } | Block::Reasoning { .. }) => {
                    return Err(format!("call/reasoning in user message {i}"));
                }
                (Role::Assistant, Block::ToolResult { .. } | Block::Image { .. }) => {
                    return Err(format!("result/image in assistant message {i}"));
                }
                (Role::Assistant, Block::Reasoning { provider, .. })
                    if provider != kind.as_str() =>
                {
                    return Err(format!("foreign reasoning in {i}"));
                }
                (Role::Assistant, Block::ToolCall { id, name, input }) => {
                    let name_ok = !name.is_empty()
                        && name.len() <= 64
                        && name
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                    let id_ok = !id.is_empty()
                        && id
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                    if !name_ok || !id_ok || !input.is_object() || !ids.insert(id.clone()) {
                        return Err(format!("bad or duplicate tool call {id:?}/{name:?} in {i}"));
                    }
                }
                _ => {}
            }
        }
        if m.role == Role::Assistant
            && !m
                .content
                .iter()
                .any(|b| matches!(b, Block::Text { .. } | Block::ToolCall { .. }))
        {
            return Err(format!("assistant message {i} says nothing"));
        }
        let results: Vec<&str> = m
            .content
            .iter()
            .filter_map(|b| {
                if let Block::ToolResult { call_id, .. } = b {
                    Some(call_id.as_str())
                } else {
                    None
                }
            })
            .collect();
        let leading = m
            .content
            .iter()
            .take_while(|b| matches!(b, Block::ToolResult { .. }))
            .count();
        if leading != results.len() {
            return Err(format!("tool results of {i} are not leading"));
        }
        let calls: Vec<&str> = match i.checked_sub(1).map(|p| &messages[p]) {
            Some(prev) if m.role == Role::User => prev.tool_calls().map(|c| c.id).collect(),
            _ => Vec::new(),
        };
        if m.role == Role::User && results != calls {
            return Err(format!(
                "results of {i} {results:?} do not answer calls {calls:?}"
            ));
        }
    }
    if messages
        .last()
        .is_some_and(|m| m.tool_calls().next().is_some())
    {
        return Err("the last message has unanswered calls".into());
    }
    Ok(())
}

#[test]
fn valid_transcript_is_unchanged() {
    let t = vec![
        user(vec![Block::text("hi")]),
        assistant(vec![
            Block::text("let me look"),
            call("a", "t"),
            call("b", "t"),
        ]),
        user(vec![result("a", "1"), result("b", "2")]),
        assistant(vec![Block::text("done")]),
        user(vec![Block::text("thanks")]),
    ];
    assert_eq!(repair(t.clone(), KIND), t);
}

#[test]
fn dangling_call_gets_an_interrupted_result() {
    let t = vec![
        user(vec![Block::text("hi")]),
        assistant(vec![call("a", "t")]),
        user(vec![Block::text("again")]),
    ];
    let r = repair(t, KIND);
    assert_eq!(
        r,
        vec![
            user(vec![Block::text("hi")]),
            assistant(vec![call("a", "t")]),
            user(vec![interrupted("a"), Block::text("again")]),
        ]
    );
    let r = repair(
        vec![
            user(vec![Block::text("hi")]),
            assistant(vec![call("a", "t")]),
        ],
        KIND,
    );
    assert_eq!(r[2], user(vec![interrupted("a")]));
}

#[test]
fn orphan_and_duplicate_results_are_dropped() {
    let t = vec![
        user(vec![result("zz", "orphan"), Block::text("hi")]),
        assistant(vec![call("a", "t")]),
        user(vec![
            result("a", "1"),
            result("a", "dup"),
            result("b", "orphan"),
        ]),
        user(vec![result("a", "late dup"), Block::text("next")]),
    ];
    let r = repair(t, KIND);
    assert_eq!(
        r,
        vec![
            user(vec![Block::text("hi")]),
            assistant(vec![call("a", "t")]),
            user(vec![result("a", "1"), Block::text("next")]),
        ]
    );
}

#[test]
fn results_are_put_in_call_order_and_split_results_are_joined() {
    let t = vec![
        user(vec![Block::text("hi")]),
        assistant(vec![call("a", "t"), call("b", "t")]),
        user(vec![result("b", "2")]),
        user(vec![Block::text("x"), result("a", "1")]),
    ];
    let r = repair(t, KIND);
    assert_eq!(
        r[2],
        user(vec![result("a", "1"), result("b", "2"), Block::text("x")])
    );
}

#[test]
fn merges_roles_drops_empties_and_leading_assistant() {
    let t = vec![
        assistant(vec![Block::text("stray greeting")]),
        user(vec![Block::text("  ")]),
        user(vec![Block::text("a")]),
        user(vec![Block::text("b")]),
        assistant(vec![]),
        assistant(vec![Block::text("c")]),
        assistant(vec![Block::text("d")]),
    ];
    let r = repair(t, KIND);
    assert_eq!(
        r,
        vec![
            user(vec![Block::text("a"), Block::text("b")]),
            assistant(vec![Block::text("c"), Block::text("d")])
        ]
    );
}

#[test]
fn foreign_reasoning_is_dropped_and_own_kept() {
    let own = Block::Reasoning {
        provider: "claude".into(),
        data: json!({"thinking": "x", "signature": "s"}),
    };
    let foreign = Block::Reasoning {
        provider: "openai_compat".into(),
        data: json!("r"),
    };
    let t = vec![
        user(vec![Block::text("hi")]),
        assistant(vec![foreign.clone(), own.clone(), Block::text("answer")]),
        user(vec![Block::text("q")]),
        assistant(vec![foreign]),
    ];
    let r = repair(t, KIND);
    assert_eq!(
        r,
        vec![
            user(vec![Block::text("hi")]),
            assistant(vec![own, Block::text("answer")]),
            user(vec![Block::text("q")])
        ]
    );
}

#[test]
fn duplicate_ids_across_messages_are_renamed_with_their_results() {
    let t = vec![
        user(vec![Block::text("hi")]),
        assistant(vec![call("a", "t")]),
        user(vec![result("a", "1")]),
        assistant(vec![call("a", "t"), call("a", "t")]),
        user(vec![result("a", "2")]),
    ];
    let r = repair(t, KIND);
    assert_eq!(r[3], assistant(vec![call("a_2", "t")]));
    assert_eq!(r[4], user(vec![result("a_2", "2")]));
    check_valid(&r, KIND).unwrap();
}

#[test]
fn names_ids_and_inputs_are_normalised() {
    let t = vec![
        user(vec![Block::text("hi")]),
        assistant(vec![Block::ToolCall {
            id: "call 1".into(),
            name: "mcp.web search".into(),
            input: json!("oops"),
        }]),
        user(vec![result("call 1", "r")]),
    ];
    let r = repair(t, KIND);
    assert_eq!(
        r[1],
        assistant(vec![Block::ToolCall {
            id: "call_1".into(),
            name: "mcp_web_search".into(),
            input: json!({})
        }])
    );
    assert_eq!(r[2], user(vec![result("call_1", "r")]));
}

fn arb_block() -> impl Strategy<Value = Block> {
    let id = prop::sample::select(vec!["a", "b", "c", "a b", ""]);
    prop_oneof![
        prop::sample::select(vec!["hi", "", "  ", "x"]).prop_map(Block::text),
        Just(Block::Image {
            mime_type: "image/png".into(),
            data: vec![1, 2, 3]
        }),
        (
            id.clone(),
            prop::sample::select(vec!["t", "bad.name", ""]),
            prop::bool::ANY
        )
            .prop_map(|(id, name, obj)| {
                Block::ToolCall {
                    id: id.into(),
                    name: name.into(),
                    input: if obj { json!({"k": 1}) } else { json!("s") },
                }
            }),
        (id, prop::bool::ANY).prop_map(|(id, is_error)| Block::ToolResult {
            call_id: id.into(),
            content: "r".into(),
            is_error
        }),
        prop::sample::select(vec!["claude", "openai_compat"]).prop_map(|p| Block::Reasoning {
            provider: p.into(),
            data: json!("d")
        }),
    ]
}

fn arb_transcript() -> impl Strategy<Value = Vec<Message>> {
    let message =
        (prop::bool::ANY, prop::collection::vec(arb_block(), 0..5)).prop_map(|(u, content)| {
            Message {
                role: if u { Role::User } else { Role::Assistant },
                content,
            }
        });
    prop::collection::vec(message, 0..12)
}

/// A valid transcript: rounds of a user text, some tool steps, and a final answer (or not).
fn arb_valid_transcript() -> impl Strategy<Value = Vec<Message>> {
    let round = (prop::collection::vec(1usize..4, 0..3), prop::bool::ANY);
    prop::collection::vec(round, 0..5).prop_map(|rounds| {
        let mut out = Vec::new();
        let mut next_id = 0;
        for (steps, answered) in rounds {
            out.push(user(vec![Block::text("question")]));
            for calls in steps {
                let ids: Vec<String> = (0..calls)
                    .map(|_| {
                        next_id += 1;
                        format!("toolu_{next_id}")
                    })
                    .collect();
                out.push(assistant(ids.iter().map(|id| call(id, "tool")).collect()));
                out.push(user(ids.iter().map(|id| result(id, "ok")).collect()));
            }
            if answered || out.last().is_some_and(|m| m.role == Role::User) {
                out.push(assistant(vec![Block::text("answer")]));
            }
        }
        out
    })
}

proptest! {
    #[test]
    fn repaired_transcripts_are_valid_for_both_kinds(t in arb_transcript()) {
        for kind in [ProviderKind::Claude, ProviderKind::OpenAiCompat] {
            let r = repair(t.clone(), kind);
            prop_assert!(check_valid(&r, kind).is_ok(), "{:?}\n→ {:?}: {:?}", t, r, check_valid(&r, kind));
        }
    }

    #[test]
    fn repair_is_idempotent(t in arb_transcript()) {
        let once = repair(t, KIND);
        prop_assert_eq!(repair(once.clone(), KIND), once);
    }

    #[test]
    fn valid_transcripts_pass_unchanged(t in arb_valid_transcript()) {
        prop_assert!(check_valid(&t, KIND).is_ok(), "{:?}", check_valid(&t, KIND));
        prop_assert_eq!(repair(t.clone(), KIND), t);
    }
}
