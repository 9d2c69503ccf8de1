//! Provider fail-over through the real gRPC service and both provider kinds: a 429, a 529/503,
//! a 401 and a refused connection on the first provider before any answer text make the turn
//! answer from the fallback provider (its default model), with a `FailedOver` event; the failed
//! provider then cools down (shown by `GetStatus` and `ListProviders`, skipped by the next turn,
//! kept across a restart). A stream that broke after some text, a 400 and a context-too-long
//! error never fail over. (The cooldown schedule itself is unit-tested under paused time in
//! `kernel-agentd`'s `models`.)

use kernel_proto::v1 as pb;
use kernel_proto::v1::chat_event::Event;
use tests::chat::{KINDS, completed, turn};
use tests::config::TestConfig;
use tests::fake_llm::{ErrorKind, FakeLlm, HttpError, Script};
use tests::harness::Harness;
use tests::test_tools::{Echo, with_tools};

const SPARE_MODEL: &str = "spare-model";

/// The other wire kind (the fallback speaks it, so the history crosses formats).
fn other(kind: &str) -> &'static str {
    if kind == "claude" {
        "openai_compat"
    } else {
        "claude"
    }
}

/// A config whose provider `fake` (`kind`) calls `first` (a base URL as `TestConfig` takes
/// it) and fails over to `spare` (the other kind) on `second`.
fn config(kind: &str, first: &str, second: &FakeLlm) -> TestConfig {
    let spare_kind = other(kind);
    let spare_base = if spare_kind == "claude" {
        second.url()
    } else {
        second.openai_base()
    };
    let extra = format!(
        r#"
[providers.spare]
type = "{spare_kind}"
api_base = "{spare_base}"
api_key = "sk-spare-provider-key-0123456789"
max_tokens = 1024
default_model = "{SPARE_MODEL}"
"#
    );
    let cfg = TestConfig::with_kind(kind, first, &extra);
    cfg.rewrite(|t| {
        t.replace(
            "default_provider = \"fake\"",
            "default_provider = \"fake\"\nfallback_providers = [\"spare\"]",
        )
    });
    cfg
}

fn failed_over(events: &[Event]) -> Vec<(String, String, String, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::FailedOver(f) => Some((
                f.from_provider.clone(),
                f.to_provider.clone(),
                f.to_model.clone(),
                f.reason.clone(),
            )),
            _ => None,
        })
        .collect()
}

fn failed(events: &[Event]) -> String {
    match events.last() {
        Some(Event::Failed(f)) => f.message.clone(),
        other => panic!("the turn did not fail: {other:?}"),
    }
}

async fn status(h: &mut Harness) -> pb::GetStatusResponse {
    h.client
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner()
}

async fn fake_cooldown(h: &mut Harness) -> Option<String> {
    let list = h
        .client
        .list_providers(pb::ListProvidersRequest {})
        .await
        .unwrap()
        .into_inner();
    list.providers
        .into_iter()
        .find(|p| p.name == "fake")
        .and_then(|p| p.cooldown_until)
}

/// A base URL nothing listens on.
fn closed_port() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}

#[tokio::test(flavor = "multi_thread")]
async fn provider_failures_before_any_text_answer_from_the_fallback_and_cool_down() {
    for kind in KINDS {
        let cases: [(&str, Option<HttpError>, &str); 4] = [
            (
                "429",
                Some(HttpError::new(ErrorKind::RateLimited { retry_after: 7 })),
                "rate_limited",
            ),
            (
                "overloaded",
                Some(HttpError::new(ErrorKind::Overloaded)),
                "overloaded",
            ),
            ("401", Some(HttpError::new(ErrorKind::Unauthorized)), "auth"),
            ("connection refused", None, "network"),
        ];
        for (name, error, reason) in cases {
            let (first, second) = (FakeLlm::start().await, FakeLlm::start().await);
            let base = match error {
                Some(error) => {
                    first.push(error);
                    first.url()
                }
                None => closed_port(),
            };
            let mut h = Harness::start(config(kind, &base, &second)).await;
            second.push(Script::text("备用答案"));
            let events = turn(&mut h.client, "你好").await;
            assert_eq!(completed(&events).text, "备用答案", "{kind} {name}");
            assert_eq!(
                failed_over(&events),
                vec![(
                    "fake".to_owned(),
                    "spare".to_owned(),
                    SPARE_MODEL.to_owned(),
                    reason.to_owned()
                )],
                "{kind} {name}"
            );
            let served = second.last_request().unwrap();
            assert_eq!(served.body["model"], SPARE_MODEL, "{kind} {name}");
            assert!(served.raw_body.contains("你好"), "{kind} {name}");

            let s = status(&mut h).await;
            assert_eq!(s.cooldowns.len(), 1, "{kind} {name}: {:?}", s.cooldowns);
            assert_eq!(
                (s.cooldowns[0].provider.as_str(), s.cooldowns[0].failures),
                ("fake", 1)
            );
            assert_eq!(s.provider, "fake", "the owner's choice stays");
            let until = fake_cooldown(&mut h).await.expect("listed as cooling down");
            assert_eq!(until, s.cooldowns[0].until);

            // The next turn goes straight to the fallback while `fake` cools down, also after
            // a restart.
            let mut h = h.restart().await;
            let asked = first.requests().len();
            second.push(Script::text("还是备用"));
            let events = turn(&mut h.client, "再来").await;
            assert_eq!(completed(&events).text, "还是备用", "{kind} {name}");
            assert_eq!(
                failed_over(&events),
                vec![(
                    "fake".to_owned(),
                    "spare".to_owned(),
                    SPARE_MODEL.to_owned(),
                    "cooldown".to_owned()
                )],
                "{kind} {name}"
            );
            assert_eq!(first.requests().len(), asked, "{kind} {name}: skipped");
            assert_eq!(fake_cooldown(&mut h).await, Some(until), "{kind} {name}");
            h.stop().await;
            first.shutdown();
            second.shutdown();
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failure_after_a_tool_step_fails_over_that_model_call() {
    for kind in KINDS {
        let (first, second) = (FakeLlm::start().await, FakeLlm::start().await);
        let ext = with_tools(vec![std::sync::Arc::new(Echo::default())]);
        let mut h = Harness::start_with(config(kind, &first.url(), &second), ext).await;
        first.push(Script::tool_call("echo", r#"{"text":"ping"}"#));
        first.push(HttpError::new(ErrorKind::Overloaded));
        second.push(Script::text("工具之后的答案"));
        let events = turn(&mut h.client, "用工具").await;
        assert_eq!(completed(&events).text, "工具之后的答案", "{kind}");
        assert_eq!(failed_over(&events).len(), 1, "{kind}");
        let body = second.last_request().unwrap().raw_body;
        assert!(
            body.contains("echo: ping"),
            "{kind}: the tool step goes along: {body}"
        );
        // The ledger: the first step was the owner's turn on `fake`, the failed-over one
        // `failover` on `spare`.
        let usage = h
            .client
            .get_usage(pb::GetUsageRequest {})
            .await
            .unwrap()
            .into_inner();
        let split: Vec<(String, String, u64)> = usage
            .today_by_purpose
            .iter()
            .map(|l| (l.provider.clone(), l.purpose.clone(), l.calls))
            .collect();
        assert_eq!(
            split,
            [
                ("fake".to_owned(), "owner".to_owned(), 1),
                ("spare".to_owned(), "failover".to_owned(), 1)
            ],
            "{kind}"
        );
        h.stop().await;
        first.shutdown();
        second.shutdown();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn no_fail_over_after_streamed_text_or_on_a_bad_request() {
    for kind in KINDS {
        let (first, second) = (FakeLlm::start().await, FakeLlm::start().await);
        let mut h = Harness::start(config(kind, &first.url(), &second)).await;
        let cases: [(&str, Script); 3] = [
            (
                "partial stream then overloaded",
                Script::MidStreamError {
                    text: "答案写到一半".into(),
                    error: HttpError::new(ErrorKind::Overloaded),
                },
            ),
            ("400", HttpError::new(ErrorKind::BadRequest).into()),
            (
                "context too long",
                HttpError::new(ErrorKind::PromptTooLong).into(),
            ),
        ];
        for (name, script) in cases {
            if name == "context too long" {
                // Compacted and retried, then retried with the current message only.
                first.push(script.clone());
                first.push(script.clone());
            }
            first.push(script);
            let events = turn(&mut h.client, name).await;
            let message = failed(&events);
            assert!(failed_over(&events).is_empty(), "{kind} {name}: {events:?}");
            assert!(!message.is_empty(), "{kind} {name}");
            assert!(
                second.requests().is_empty(),
                "{kind} {name}: the spare was asked"
            );
            let s = status(&mut h).await;
            assert!(s.cooldowns.is_empty(), "{kind} {name}: {:?}", s.cooldowns);
        }
        // The provider still answers (no cooldown).
        first.push(Script::text("好了"));
        assert_eq!(completed(&turn(&mut h.client, "再试").await).text, "好了");
        h.stop().await;
        first.shutdown();
        second.shutdown();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cooling_provider_chosen_with_select_provider_answers_the_next_turn() {
    let (first, second) = (FakeLlm::start().await, FakeLlm::start().await);
    let mut h = Harness::start(config("claude", &first.url(), &second)).await;
    first.push(HttpError::new(ErrorKind::Overloaded));
    second.push(Script::text("备用答案"));
    completed(&turn(&mut h.client, "你好").await);
    assert!(fake_cooldown(&mut h).await.is_some(), "fake cools down");

    h.client
        .select_provider(pb::SelectProviderRequest {
            name: "fake".into(),
        })
        .await
        .unwrap();
    assert_eq!(
        fake_cooldown(&mut h).await,
        None,
        "the owner's choice ends it"
    );
    assert!(status(&mut h).await.cooldowns.is_empty());
    first.push(Script::text("主提供方答案"));
    let events = turn(&mut h.client, "再来").await;
    assert_eq!(completed(&events).text, "主提供方答案");
    assert!(failed_over(&events).is_empty(), "{events:?}");
    h.stop().await;
}
