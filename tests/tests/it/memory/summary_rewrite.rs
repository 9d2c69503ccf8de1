//! The `[summary]` rewrite end to end (in-process agentd, the fake LLM for chat and a second one
//! as the cheap model): off by default a session that folds makes no call to it; on, each fold
//! sends it the rule-based summary once, its rewrite is stored and carried by the next request in
//! the summary position, and a turn completes while the call is held open; garbage, a dropped
//! artifact path or a stall leave the rule-based summary (logged) and turns still answer; a
//! summary that changed while the model wrote is not overwritten.

use std::sync::Arc;
use std::time::Duration;

use kernel_agentd::store::Store;
use kernel_agentd::turn::SessionSummary;
use kernel_proto::v1::chat_event::Event;
use tests::chat::{completed, session_id, turn, wire_messages};
use tests::config::TestConfig;
use tests::fake_llm::{FakeLlm, FakeToolCall, LogCapture, Reply, Script};
use tests::harness::Harness;
use tests::test_tools::{Fixed, with_tools};
use tests::wait::eventually;
use tracing::Level;

const DEADLINE: Duration = Duration::from_secs(20);
const CHEAP_MODEL: &str = "fake-summary-model";
const PATH: &str = "data/cli_outputs/plan-42.md";
const GOAL: &str = "目标：把博客迁移到 Hugo";

/// A config with a rounds ceiling of 6 (turn 8 folds rounds 1–3, turns 9 and 10 fold nothing,
/// turn 11 folds again) and `[providers.cheap]` at `cheap`, with `summary` as the `[summary]`
/// section (none when empty).
fn config(main: &FakeLlm, cheap: &FakeLlm, summary: &str) -> TestConfig {
    let extra = format!(
        r#"
[providers.cheap]
type = "claude"
api_base = "{}"
api_key = "sk-test-summary-key-0123456789abcdef"
max_tokens = 1024
default_model = "{CHEAP_MODEL}"

{summary}
"#,
        cheap.url()
    );
    let cfg = TestConfig::new(&main.url(), &extra);
    cfg.rewrite(|t| {
        t.replace(
            "data_dir = \"data\"",
            "data_dir = \"data\"\ncontext_rounds = 6",
        )
    });
    cfg
}

const ON: &str = "[summary]\nenabled = true\nprovider = \"cheap\"\ntimeout_secs = 1\n";

async fn start(cfg: TestConfig) -> Harness {
    let plan = Fixed {
        name: "plan",
        content: format!("计划已写好，详见 {PATH}"),
    };
    Harness::start_with(cfg, with_tools(vec![Arc::new(plan)])).await
}

/// Round 1 (the goal, a constraint, a tool call leaving an artifact path); returns the session.
async fn first_round(h: &mut Harness, main: &FakeLlm) -> i64 {
    main.push(Reply::default().tool(FakeToolCall::new("plan", "{}")));
    main.push(Script::text("好的，计划已写好。"));
    let events = turn(&mut h.client, &format!("{GOAL}。必须保留所有旧链接")).await;
    completed(&events);
    session_id(&events)
}

/// Plain rounds `from..=to`; the events of the last.
async fn rounds(h: &mut Harness, main: &FakeLlm, from: usize, to: usize) -> Vec<Event> {
    let mut last = Vec::new();
    for i in from..=to {
        main.push(Script::text(format!("第 {i} 轮的回答")));
        last = turn(&mut h.client, &format!("第 {i} 个问题")).await;
        completed(&last);
    }
    last
}

/// The stored summary of `session` (through a second store handle).
async fn summary(cfg: &TestConfig, session: i64) -> SessionSummary {
    let store = Store::open(&cfg.data_dir().join("kernel.db"))
        .await
        .expect("open the database");
    let stored = store.load_summary(session).await.expect("read the summary");
    store.close().await;
    SessionSummary::from_json(&stored.expect("a summary").summary)
}

/// The first message of the last chat request (where the summary sits).
fn summary_position(main: &FakeLlm) -> String {
    let body = main.last_request().expect("a chat request").body;
    wire_messages(&body)[0].to_string()
}

/// The text of the cheap model's `i`-th request (its one user message).
fn cheap_prompt(cheap: &FakeLlm, i: usize) -> String {
    let req = &cheap.requests()[i];
    assert_eq!(req.body["model"], CHEAP_MODEL);
    assert!(!req.is_stream(), "the rewrite is a non-streaming call");
    req.body["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// A rewrite whose goal carries `marker`, keeping [`PATH`] unless `facts` say otherwise.
fn rewrite(marker: &str, facts: &[&str]) -> String {
    serde_json::json!({
        "goal": format!("迁移博客到 Hugo（{marker}）"),
        "constraints": ["保留全部旧链接"],
        "decisions": [],
        "open_items": [],
        "facts": facts,
    })
    .to_string()
}

#[tokio::test]
async fn off_by_default_a_folding_session_makes_no_summary_call() {
    let (main, cheap) = (FakeLlm::start().await, FakeLlm::start().await);
    let disabled = "[summary]\nprovider = \"cheap\"\n";
    for section in ["", disabled] {
        let cfg = config(&main, &cheap, section);
        let mut h = start(cfg).await;
        first_round(&mut h, &main).await;
        rounds(&mut h, &main, 2, 12).await;
        let first = summary_position(&main);
        assert!(
            first.contains("[会话摘要]") && first.contains(GOAL),
            "the session folded: {first}"
        );
        h.stop().await;
    }
    assert!(
        cheap.requests().is_empty(),
        "no call to the summary endpoint"
    );
}

#[tokio::test]
async fn a_fold_is_rewritten_in_the_background_and_the_next_request_carries_it() {
    let (main, cheap) = (FakeLlm::start().await, FakeLlm::start().await);
    let cfg = config(&main, &cheap, ON);
    let mut h = start(cfg).await;
    let session = first_round(&mut h, &main).await;
    rounds(&mut h, &main, 2, 7).await;
    assert!(cheap.requests().is_empty(), "nothing folded yet");
    let (held, release) = Script::hold(rewrite("已改写", &[&format!("计划文件 {PATH}")]));
    cheap.push(held);
    rounds(&mut h, &main, 8, 8).await;
    cheap.wait_requests(1, DEADLINE).await;
    let prompt = cheap_prompt(&cheap, 0);
    for part in [
        "[会话摘要]",
        GOAL,
        "必须保留所有旧链接",
        PATH,
        "## 工具结果与文件",
    ] {
        assert!(prompt.contains(part), "{part} in {prompt}");
    }
    let rule_based = summary(&h.cfg, session).await;
    assert_eq!((rule_based.rounds, rule_based.rewritten_at), (3, None));

    rounds(&mut h, &main, 9, 9).await;
    assert!(
        cheap.served()[0].finished.is_none(),
        "turn 9 was answered while the rewrite call was held open"
    );
    assert!(summary_position(&main).contains(GOAL), "still rule-based");
    release.release();
    let cfg = &h.cfg;
    let stored = eventually("the rewrite to be stored", DEADLINE, async || {
        let s = summary(cfg, session).await;
        s.rewritten_at.is_some().then_some(s)
    })
    .await;
    assert_eq!(stored.goal.as_deref(), Some("迁移博客到 Hugo（已改写）"));
    assert_eq!((stored.rounds, stored.rewritten_at), (3, Some(3)));
    assert_eq!(stored.artifact_paths(), [PATH]);

    rounds(&mut h, &main, 10, 10).await;
    let first = summary_position(&main);
    assert!(
        first.contains("[会话摘要]") && first.contains("迁移博客到 Hugo（已改写）"),
        "the next request carries the rewrite: {first}"
    );
    assert!(!first.contains(GOAL), "{first}");
    assert!(
        first.find("已改写") < first.find("第 4 个问题"),
        "in the summary position, before the rounds: {first}"
    );
    assert_eq!(cheap.requests().len(), 1, "one call per fold");

    // The next fold starts from the rewrite.
    cheap.push(Script::text(rewrite("再次改写", &[PATH])));
    rounds(&mut h, &main, 11, 11).await;
    cheap.wait_requests(2, DEADLINE).await;
    let prompt = cheap_prompt(&cheap, 1);
    assert!(
        prompt.contains("迁移博客到 Hugo（已改写）") && prompt.contains("较早的 6 轮"),
        "{prompt}"
    );
    h.stop().await;
}

#[tokio::test]
async fn garbage_a_dropped_path_or_a_stall_leave_the_rule_based_summary() {
    let (logs, _guard) = LogCapture::install();
    let (main, cheap) = (FakeLlm::start().await, FakeLlm::start().await);
    let mut h = start(config(&main, &cheap, ON)).await;
    let session = first_round(&mut h, &main).await;
    rounds(&mut h, &main, 2, 7).await;
    let refused = |needle: &str| {
        logs.lines()
            .iter()
            .filter(|l| l.contains("summary rewrite: the answer was refused") && l.contains(needle))
            .count()
    };

    cheap.push(Script::text("好的，以下是改写后的摘要：迁移博客。"));
    rounds(&mut h, &main, 8, 8).await;
    eventually("the garbage to be refused", DEADLINE, async || {
        refused("not a JSON object") == 1
    })
    .await;
    rounds(&mut h, &main, 9, 10).await;
    let s = summary(&h.cfg, session).await;
    assert_eq!((s.goal.as_deref(), s.rewritten_at), (Some(GOAL), None));

    cheap.push(Script::text(rewrite("丢了路径", &["计划已写好"])));
    rounds(&mut h, &main, 11, 11).await;
    eventually("the dropped path to be refused", DEADLINE, async || {
        refused("artifact path") == 1
    })
    .await;
    rounds(&mut h, &main, 12, 13).await;
    let s = summary(&h.cfg, session).await;
    assert_eq!((s.goal.as_deref(), s.rewritten_at), (Some(GOAL), None));
    assert!(summary_position(&main).contains(GOAL));

    cheap.push(Script::stall());
    rounds(&mut h, &main, 14, 14).await;
    cheap.wait_requests(3, DEADLINE).await;
    rounds(&mut h, &main, 15, 15).await;
    eventually("the stall to be logged", DEADLINE, async || {
        logs.lines()
            .iter()
            .any(|l| l.contains("summary rewrite: the call failed; the rule-based summary stays"))
    })
    .await;
    rounds(&mut h, &main, 16, 16).await;
    let s = summary(&h.cfg, session).await;
    assert_eq!((s.goal.as_deref(), s.rewritten_at), (Some(GOAL), None));
    assert!(summary_position(&main).contains(GOAL));
    assert_eq!(cheap.requests().len(), 3);
    let lines = logs.lines();
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("sk-test-summary-key-0123456789abcdef")),
        "no key in the logs"
    );
    for level in [Level::INFO, Level::WARN, Level::ERROR] {
        let lines = logs.lines_at(level);
        assert!(
            !lines
                .iter()
                .any(|l| l.contains("丢了路径") || l.contains("以下是改写后的摘要")),
            "no answer above DEBUG: {lines:#?}"
        );
    }
    h.stop().await;
}

#[tokio::test]
async fn a_summary_that_changed_meanwhile_is_not_overwritten() {
    let (logs, _guard) = LogCapture::install();
    let (main, cheap) = (FakeLlm::start().await, FakeLlm::start().await);
    let mut h = start(config(&main, &cheap, ON)).await;
    let session = first_round(&mut h, &main).await;
    rounds(&mut h, &main, 2, 7).await;
    let (held, release) = Script::hold(rewrite("过时的改写", &[PATH]));
    cheap.push(held);
    cheap.push(Script::text(rewrite("新的改写", &[PATH])));
    rounds(&mut h, &main, 8, 8).await;
    cheap.wait_requests(1, DEADLINE).await;
    // Turn 11 folds rounds 4–6 while the first rewrite is still being written.
    rounds(&mut h, &main, 9, 11).await;
    assert_eq!(summary(&h.cfg, session).await.rounds, 6);
    release.release();
    eventually("the stale rewrite to be dropped", DEADLINE, async || {
        logs.lines()
            .iter()
            .any(|l| l.contains("the summary changed meanwhile; the rewrite was dropped"))
    })
    .await;
    let cfg = &h.cfg;
    let stored = eventually("the rewrite of the new summary", DEADLINE, async || {
        let s = summary(cfg, session).await;
        s.rewritten_at.is_some().then_some(s)
    })
    .await;
    assert_eq!(stored.goal.as_deref(), Some("迁移博客到 Hugo（新的改写）"));
    assert_eq!((stored.rounds, stored.rewritten_at), (6, Some(6)));
    let prompt = cheap_prompt(&cheap, 1);
    assert!(
        prompt.contains("较早的 6 轮") && prompt.contains(GOAL),
        "{prompt}"
    );
    assert_eq!(cheap.requests().len(), 2);
    h.stop().await;
}
