//! Context budgets end to end, against the fake LLM's context limit (it refuses any request over
//! N estimated tokens with the provider's real error): a long conversation with big tool outputs
//! in mixed Chinese/English stays under the limit, keeps every tool pair and keeps the facts
//! planted early in its summary; `/usage` adds up what the fake reported; `/compact` and the
//! context fill of `GetStatus`.

use std::collections::BTreeSet;
use std::sync::Arc;

use kernel_proto::v1 as pb;
use kernel_proto::v1::chat_event::Event;
use serde_json::Value;
use tests::chat::{completed, turn, wire_messages};
use tests::config::TestConfig;
use tests::fake_llm::{FakeLlm, FakeUsage, Reply, Script};
use tests::harness::Harness;
use tests::test_tools::{Fixed, with_tools};

/// The fake's context window, in its tokens (body bytes / 4).
const LIMIT: u64 = 20_000;
/// The provider's `max_tokens` in test configs (the output reserve).
const MAX_TOKENS: u64 = 1_024;

/// A config whose provider declares the fake's window (`context_tokens` = limit + reserve).
fn config(fake: &FakeLlm, kind: &str) -> TestConfig {
    config_with_window(fake, kind, LIMIT + MAX_TOKENS)
}

fn config_with_window(fake: &FakeLlm, kind: &str, window: u64) -> TestConfig {
    let cfg = TestConfig::with_kind(kind, &fake.url(), "");
    cfg.rewrite(|s| {
        s.replace(
            "max_tokens = 1024",
            &format!("max_tokens = {MAX_TOKENS}\ncontext_tokens = {window}"),
        )
    });
    cfg
}

/// About 50 KB of tool output, Chinese and English lines.
fn big_output(seed: usize) -> String {
    let mut out = String::new();
    let mut n = 0;
    while out.len() < 50_000 {
        out.push_str(&format!(
            "第 {n} 行数据：service-{seed} latency 12ms，状态正常 status ok, 吞吐量 throughput {n}\n"
        ));
        n += 1;
    }
    out
}

fn user_text(i: usize) -> String {
    format!(
        "第 {i} 轮：请看一下 the deployment logs for service-{i}，顺便说说 what changed since round {}. 今天的天气和咖啡也可以聊两句，nothing special here，只是闲聊 {i}。",
        i.saturating_sub(1)
    )
}

fn answer_text(i: usize) -> String {
    format!(
        "关于第 {i} 轮：日志里没有异常，the service looks healthy; 延迟稳定在 12ms 左右，throughput is steady. 我会继续关注 service-{i} 的情况，也欢迎随时再问。"
    )
}

/// Every `tool_use`/`tool_calls` id in `body` has its result and vice versa.
fn pairs_are_whole(body: &Value) -> bool {
    let (mut calls, mut results) = (BTreeSet::new(), BTreeSet::new());
    for m in wire_messages(body) {
        if let Some(blocks) = m["content"].as_array() {
            for b in blocks {
                match b["type"].as_str() {
                    Some("tool_use") => {
                        calls.insert(b["id"].as_str().unwrap_or_default().to_owned())
                    }
                    Some("tool_result") => {
                        results.insert(b["tool_use_id"].as_str().unwrap_or_default().to_owned())
                    }
                    _ => false,
                };
            }
        }
        for c in m["tool_calls"].as_array().into_iter().flatten() {
            calls.insert(c["id"].as_str().unwrap_or_default().to_owned());
        }
        if m["role"] == "tool" {
            results.insert(m["tool_call_id"].as_str().unwrap_or_default().to_owned());
        }
    }
    calls == results
}

/// The text of the first message of a request (where the session summary sits).
fn first_message_text(body: &Value) -> String {
    let first = &wire_messages(body)[0];
    match &first["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// `rounds` rounds against the fake limited to [`LIMIT`], the provider declaring `window`.
async fn long_conversation(kind: &str, rounds: usize, window: u64) -> usize {
    let fake = FakeLlm::start().await;
    fake.limit_context(LIMIT);
    let plan = format!(
        r#"{{"ok":true,"output_path":"data/cli_outputs/plan-42.md","output":{}}}"#,
        serde_json::to_string(&big_output(0)).unwrap()
    );
    let tools = with_tools(vec![
        Arc::new(Fixed {
            name: "make_plan",
            content: plan,
        }),
        Arc::new(Fixed {
            name: "fetch_report",
            content: big_output(1),
        }),
    ]);
    let mut h = Harness::start_with(config_with_window(&fake, kind, window), tools).await;
    for i in 0..rounds {
        let text = match i {
            0 => {
                fake.push(Script::text("好的。我们决定采用 Hugo 0.120 作为生成器。"));
                "目标：把博客迁移到 Hugo。必须保留所有旧链接。".to_owned()
            }
            1 => {
                fake.push(Script::tool_call("make_plan", "{}"));
                fake.push(Script::text("迁移计划已生成 the plan is ready."));
                "请生成迁移计划 please write the migration plan".to_owned()
            }
            i if i % 3 == 2 => {
                fake.push(Script::tool_call("fetch_report", "{}"));
                fake.push(Script::text(answer_text(i)));
                user_text(i)
            }
            i => {
                fake.push(Script::text(answer_text(i)));
                user_text(i)
            }
        };
        let events = turn(&mut h.client, &text).await;
        assert!(
            matches!(events.last(), Some(Event::Completed(_))),
            "{kind} round {i}: {events:?}"
        );
    }
    let sizes = fake.request_sizes();
    let over: Vec<usize> = sizes
        .iter()
        .enumerate()
        .filter(|(_, (_, over))| *over)
        .map(|(i, _)| i)
        .collect();
    let largest = sizes.iter().map(|(s, _)| *s).max().unwrap_or(0);
    eprintln!(
        "{kind}: {} requests, {} over the limit, largest {largest} of {LIMIT}",
        sizes.len(),
        over.len()
    );
    assert!(
        over.len() <= 1,
        "{kind}: over-limit requests after the first: {over:?}"
    );
    if let Some(&first) = over.first() {
        assert!(!sizes[first + 1].1, "{kind}: the retry fits");
    }
    let requests = fake.requests();
    let models: Vec<&Value> = requests
        .iter()
        .map(|r| &r.body)
        .filter(|b| b.get("messages").is_some())
        .collect();
    assert!(
        models.iter().all(|b| pairs_are_whole(b)),
        "{kind}: a request split a tool pair"
    );
    let summary = first_message_text(models.last().unwrap());
    for fact in [
        "目标：把博客迁移到 Hugo",
        "必须保留所有旧链接",
        "Hugo 0.120",
        "data/cli_outputs/plan-42.md",
    ] {
        assert!(
            summary.contains(fact),
            "{kind}: {fact:?} missing from {summary}"
        );
    }
    let status = h
        .client
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    assert!(status.has_summary);
    assert!(status.context_tokens > 0);
    assert_eq!(status.context_budget_tokens, window - MAX_TOKENS);
    h.stop().await;
    over.len()
}

#[tokio::test]
async fn a_300_round_conversation_never_goes_over_the_limit_after_the_first_refusal() {
    let over = long_conversation("claude", 300, LIMIT + MAX_TOKENS).await;
    assert_eq!(
        over, 0,
        "the declared window is the real one: no refusal at all"
    );
}

#[tokio::test]
async fn a_window_declared_too_large_is_learnt_from_the_first_refusal() {
    for kind in ["claude", "openai_compat"] {
        let over = long_conversation(kind, 60, 2 * LIMIT).await;
        assert_eq!(
            over, 1,
            "{kind}: refused once, compacted, retried, then learnt"
        );
    }
}

#[tokio::test]
async fn usage_equals_the_sum_of_what_the_fake_reported_and_compact_says_what_it_saved() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start_with(config(&fake, "claude"), with_tools(vec![])).await;
    let usages = [
        FakeUsage {
            input: 1_200,
            output: 80,
            cache_read: 3_000,
            cache_write: 400,
        },
        FakeUsage {
            input: 90,
            output: 15,
            cache_read: 4_100,
            cache_write: 0,
        },
        FakeUsage {
            input: 33,
            output: 7,
            cache_read: 0,
            cache_write: 5_000,
        },
    ];
    for (i, u) in usages.iter().enumerate() {
        fake.push(Script::Reply(Reply::text(format!("answer {i}")).usage(*u)));
        let question = format!("question {i}: {}", "some long detail ".repeat(200));
        let events = turn(&mut h.client, &question).await;
        completed(&events);
    }
    let sum = |f: fn(&FakeUsage) -> u64| usages.iter().map(f).sum::<u64>();
    let report = h
        .client
        .get_usage(pb::GetUsageRequest {})
        .await
        .unwrap()
        .into_inner();
    for totals in [&report.today, &report.session, &report.last_30_days] {
        let t = totals.as_ref().unwrap();
        assert_eq!(t.calls, 3);
        assert_eq!(t.input_tokens, sum(|u| u.input));
        assert_eq!(t.output_tokens, sum(|u| u.output));
        assert_eq!(t.cache_read_tokens, sum(|u| u.cache_read));
        assert_eq!(t.cache_write_tokens, sum(|u| u.cache_write));
        assert_eq!(t.cost_usd, None, "no prices configured");
    }
    let compacted = h
        .client
        .compact(pb::CompactRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        compacted.summary_rounds, 1,
        "three rounds, the last two kept"
    );
    assert!(
        compacted.tokens_after < compacted.tokens_before,
        "{compacted:?}"
    );
    h.client
        .new_session(pb::NewSessionRequest::default())
        .await
        .unwrap();
    let report = h
        .client
        .get_usage(pb::GetUsageRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        report.session.unwrap().calls,
        0,
        "a new session has used nothing"
    );
    assert_eq!(report.today.unwrap().calls, 3);
    h.stop().await;
}

#[tokio::test]
async fn usage_has_a_cost_when_the_model_has_prices() {
    let fake = FakeLlm::start().await;
    let cfg = config(&fake, "claude");
    cfg.rewrite(|s| {
        s.replace(
            "models = [\"fake-model\", \"fake-model-2\"]",
            "models = [\"fake-model\", \"fake-model-2\"]\n\n[providers.fake.prices.\"fake-model\"]\ninput = 3.0\noutput = 15.0\ncache_read = 0.3\ncache_write = 3.75",
        )
    });
    let mut h = Harness::start_with(cfg, with_tools(vec![])).await;
    fake.push(Script::Reply(Reply::text("ok").usage(FakeUsage {
        input: 1_000_000,
        output: 100_000,
        cache_read: 1_000_000,
        cache_write: 0,
    })));
    completed(&turn(&mut h.client, "hi").await);
    let report = h
        .client
        .get_usage(pb::GetUsageRequest {})
        .await
        .unwrap()
        .into_inner();
    let cost = report.today.unwrap().cost_usd.unwrap();
    assert!((cost - (3.0 + 1.5 + 0.3)).abs() < 1e-9, "{cost}");
    h.stop().await;
}
