//! Retries on the same provider through the real gRPC service, with no fallback configured: a
//! 529/503, a 429 with `retry-after: 2`, a refused connection is not here (one fake per test),
//! a stream cut before any text and a stall before any text, each followed by a normal answer,
//! are answered from the same provider with one `RetryScheduled` event; two failures then an
//! answer are answered; failures beyond the budget fail the turn; `/cancel` ends a backoff
//! within a second; a failure after answer text is never retried; `GetStatus` counts retries.
//! (Backoff, jitter, the budget and `retry-after` capping are unit-tested under paused time in
//! `kernel_agentd::llm::retry`.)

use std::time::{Duration, Instant};

use kernel_proto::v1 as pb;
use kernel_proto::v1::chat_event::Event;
use tests::chat::{self, KINDS, completed, turn};
use tests::config::{NO_RETRY, TestConfig};
use tests::fake_llm::{ErrorKind, FakeLlm, HttpError, Script};
use tests::harness::Harness;

/// Retries on (`retry` in the provider's section), a 2 s stall timeout.
fn config(kind: &str, fake: &FakeLlm, retry: &str) -> TestConfig {
    let cfg = TestConfig::with_kind(kind, &fake.url(), "");
    cfg.rewrite(|t| {
        t.replace(
            NO_RETRY,
            &format!("retry = {{ {retry} }}\nstream_idle_timeout_secs = 2"),
        )
    });
    cfg
}

const FAST: &str = "max_retries = 3, base_delay_ms = 200";

fn retries(events: &[Event]) -> Vec<pb::RetryScheduled> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::RetryScheduled(r) => Some(r.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn one_transient_failure_before_text_is_retried_and_answered_by_the_same_provider() {
    for kind in KINDS {
        let cases: [(&str, Script, &str); 5] = [
            (
                "overloaded (529 / 503)",
                HttpError::new(ErrorKind::Overloaded).into(),
                "overloaded",
            ),
            (
                "503",
                Script::raw_error(503, r#"{"error":{"message":"Service Unavailable"}}"#),
                "overloaded",
            ),
            (
                "429 retry-after 2",
                HttpError::new(ErrorKind::RateLimited { retry_after: 2 }).into(),
                "rate_limited",
            ),
            (
                "cut before text",
                Script::AbruptClose {
                    text: String::new(),
                },
                "stream_cut",
            ),
            ("stall before text", Script::stall(), "stalled"),
        ];
        let fake = FakeLlm::start().await;
        let mut h = Harness::start(config(kind, &fake, FAST)).await;
        let mut answered = 0;
        for (name, failure, reason) in cases {
            let before = fake.requests().len();
            fake.push(failure);
            fake.push(Script::text(format!("answer after {name}")));
            let started = Instant::now();
            let events = turn(&mut h.client, "hi").await;
            let elapsed = started.elapsed();
            assert_eq!(
                completed(&events).text,
                format!("answer after {name}"),
                "{kind} {name}"
            );
            answered += 1;
            let r = retries(&events);
            assert_eq!(r.len(), 1, "{kind} {name}: one progress line: {events:?}");
            assert_eq!(
                (r[0].provider.as_str(), r[0].reason.as_str()),
                ("fake", reason),
                "{kind} {name}"
            );
            assert_eq!((r[0].attempt, r[0].max_attempts), (1, 3), "{kind} {name}");
            assert_eq!(fake.requests().len() - before, 2, "{kind} {name}");
            assert!(
                !events.iter().any(|e| matches!(e, Event::FailedOver(_))),
                "{kind} {name}"
            );
            if name.starts_with("429") {
                assert_eq!(r[0].wait_ms, 2_000, "retry-after is honoured");
                assert!(elapsed >= Duration::from_secs(2), "{elapsed:?}");
            } else {
                assert!(r[0].wait_ms <= 240, "{kind} {name}: {}", r[0].wait_ms);
            }
        }
        assert_eq!(answered, 5, "{kind}: 5 of 5 answered");
        let status = h
            .client
            .get_status(pb::GetStatusRequest {})
            .await
            .unwrap()
            .into_inner();
        let counted = status.model_retries.unwrap();
        assert_eq!(counted.count, 5, "{kind}");
        assert_eq!(
            (counted.last_provider.as_str(), counted.last_reason.as_str()),
            ("fake", "stalled")
        );
        assert!(counted.last_at.is_some());
        h.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn two_failures_are_retried_and_failures_beyond_the_budget_fail_the_turn() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(config("claude", &fake, FAST)).await;
    fake.push(HttpError::new(ErrorKind::Overloaded));
    fake.push(HttpError::new(ErrorKind::Internal));
    fake.push(Script::text("third time lucky"));
    let events = turn(&mut h.client, "hi").await;
    assert_eq!(completed(&events).text, "third time lucky");
    let r = retries(&events);
    assert_eq!(
        r.iter().map(|r| r.attempt).collect::<Vec<_>>(),
        vec![1, 2],
        "{events:?}"
    );
    assert!(r[1].wait_ms > r[0].wait_ms, "the backoff grows: {r:?}");

    for _ in 0..4 {
        fake.push(HttpError::new(ErrorKind::Overloaded));
    }
    let before = fake.requests().len();
    let events = turn(&mut h.client, "again").await;
    assert_eq!(retries(&events).len(), 3, "{events:?}");
    assert_eq!(fake.requests().len() - before, 4, "1 call + 3 retries");
    match events.last() {
        Some(Event::Failed(f)) => assert_eq!(f.reason, "MODEL_OVERLOADED", "{f:?}"),
        other => panic!("the turn did not fail: {other:?}"),
    }
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_retry_after_beyond_the_budget_fails_at_once_with_the_wait() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(config("claude", &fake, "max_wait_secs = 5")).await;
    fake.push(HttpError::new(ErrorKind::RateLimited { retry_after: 60 }));
    let started = Instant::now();
    let events = turn(&mut h.client, "hi").await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(retries(&events).is_empty(), "{events:?}");
    match events.last() {
        Some(Event::Failed(f)) => {
            assert_eq!(f.reason, "MODEL_RATE_LIMITED");
            assert_eq!(
                f.args.get("retry_after_secs").map(String::as_str),
                Some("60")
            );
        }
        other => panic!("the turn did not fail: {other:?}"),
    }
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn cancel_during_a_backoff_ends_the_turn_within_a_second() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(config("claude", &fake, "base_delay_ms = 20000")).await;
    fake.push(HttpError::new(ErrorKind::Overloaded));
    let mut stream = chat::send(&mut h.client, "hi").await;
    chat::until(&mut stream, |e| matches!(e, Event::RetryScheduled(_))).await;
    let started = Instant::now();
    h.client.cancel(pb::CancelRequest::default()).await.unwrap();
    let rest = chat::rest(&mut stream).await;
    assert!(matches!(rest.last(), Some(Event::Cancelled(_))), "{rest:?}");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(fake.requests().len(), 1, "no retry after the cancel");
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failure_after_answer_text_is_not_retried() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(config("claude", &fake, FAST)).await;
    fake.push(Script::MidStreamError {
        text: "partial answer".into(),
        error: HttpError::new(ErrorKind::Overloaded),
    });
    let events = turn(&mut h.client, "hi").await;
    assert!(retries(&events).is_empty(), "{events:?}");
    assert!(
        matches!(events.last(), Some(Event::Failed(_))),
        "{events:?}"
    );
    assert_eq!(fake.requests().len(), 1);
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn no_first_byte_within_the_first_byte_timeout_is_a_stall_and_retried() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        let cfg = config(kind, &fake, FAST);
        // Silence between bytes may last a minute; the first bytes are due within 1 s.
        cfg.rewrite(|t| {
            t.replace(
                "stream_idle_timeout_secs = 2",
                "stream_idle_timeout_secs = 60\nfirst_byte_timeout_secs = 1",
            )
        });
        let mut h = Harness::start(cfg).await;
        fake.push(Script::Stall { ping: false });
        fake.push(Script::text("after the silence"));
        let started = Instant::now();
        let events = turn(&mut h.client, "hi").await;
        assert_eq!(completed(&events).text, "after the silence", "{kind}");
        let r = retries(&events);
        assert_eq!(r.len(), 1, "{kind}: {events:?}");
        assert_eq!(r[0].reason, "stalled", "{kind}");
        assert!(started.elapsed() < Duration::from_secs(10), "{kind}");
        h.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn servers_as_they_are_answer_and_an_error_inside_a_200_stream_is_retried() {
    use tests::quirk_streams::quirk;
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(config("openai_compat", &fake, FAST)).await;
    for (fixture, answer) in [
        ("deepseek_reasoning.sse", "Green tea."),
        ("qwen_dashscope.sse", "绿茶"),
        ("vllm_usage.sse", "Hello"),
        ("openrouter_ok.sse", "Hi there"),
        ("azure_filters.sse", "Hello"),
    ] {
        fake.push(quirk(fixture));
        let events = turn(&mut h.client, "hi").await;
        assert_eq!(completed(&events).text, answer, "{fixture}");
        assert!(retries(&events).is_empty(), "{fixture}");
    }
    fake.push(quirk("openrouter_error.sse"));
    fake.push(Script::text("after the provider error"));
    let events = turn(&mut h.client, "hi").await;
    assert_eq!(completed(&events).text, "after the provider error");
    assert_eq!(retries(&events)[0].reason, "overloaded");
    h.stop().await;
}
