//! A misbehaving model endpoint, through the real kernel-agentd binary and both provider kinds:
//! 401 (whose body echoes the key), 429, 529/503 overloaded, a stream that stalls before any
//! data or after some text, one cut off mid-answer and one that ends without its terminator. Each
//! turn ends with `Failed` carrying a clear message within the stall timeout (never a hang),
//! status shows it and no turn is left running; afterwards the session takes a normal turn the
//! strict fake accepts; no secret is in a log or a reply. (The provider clients' own handling is
//! in provider_*.rs, 500 and mid-stream error events at the turn level in turn_errors.rs.)

use std::time::{Duration, Instant};

use kernel_proto::v1 as pb;
use kernel_proto::v1::chat_event::Event;
use tests::chat::{KINDS, session_id, turn};
use tests::config::TestConfig;
use tests::fake_llm::{ErrorKind, FakeLlm, HttpError, Script};
use tests::fault::{Agentd, Seen};

/// The configured stream idle timeout.
const STALL_SECS: u64 = 1;
/// A failed turn must end within the stall timeout plus this.
const SLACK: Duration = Duration::from_secs(4);

/// A scripted failure and how the owner's message must start.
fn cases(kind: &str) -> Vec<(&'static str, Script, String)> {
    let overloaded = if kind == "claude" { 529 } else { 503 };
    let (held, _release) = Script::hold("我先说一半");
    vec![
        (
            "401",
            HttpError::new(ErrorKind::Unauthorized).into(),
            "authentication failed (401): ".into(),
        ),
        (
            "429",
            HttpError::new(ErrorKind::RateLimited { retry_after: 7 }).into(),
            "rate limited (retry after 7s): ".into(),
        ),
        (
            "overloaded",
            HttpError::new(ErrorKind::Overloaded).into(),
            format!("provider unavailable ({overloaded}): "),
        ),
        (
            "stall before any data",
            Script::Stall { ping: false },
            format!("stream stalled: no data for {STALL_SECS}s"),
        ),
        (
            "stall after a ping",
            Script::Stall { ping: true },
            format!("stream stalled: no data for {STALL_SECS}s"),
        ),
        (
            "stall after some text",
            held,
            format!("stream stalled: no data for {STALL_SECS}s"),
        ),
        (
            "connection reset mid-answer",
            Script::AbruptClose {
                text: "答案写到一半".into(),
            },
            "stream error: ".into(),
        ),
        (
            "stream ends without its terminator",
            Script::Truncated {
                text: "没有结尾".into(),
            },
            "stream error: ".into(),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn every_provider_failure_ends_the_turn_with_a_clear_message_in_time() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        let cfg = TestConfig::with_kind(kind, &fake.url(), "");
        cfg.rewrite(|t| {
            t.replace(
                "max_tokens = 1024",
                &format!(
                    "max_tokens = 1024\nstream_idle_timeout_secs = {STALL_SECS}\nfirst_byte_timeout_secs = {STALL_SECS}"
                ),
            )
        });
        let mut agentd = Agentd::start(&cfg).await;
        let mut seen = Seen::default();
        let mut session = None;

        for (name, script, prefix) in cases(kind) {
            fake.push(script);
            let began = Instant::now();
            let limit = Duration::from_secs(STALL_SECS) + SLACK;
            let events = tokio::time::timeout(limit, turn(&mut agentd.client, name))
                .await
                .unwrap_or_else(|_| panic!("{kind} {name}: the turn hung"));
            seen.reply(&events);
            let message = match events.last() {
                Some(Event::Failed(f)) => f.message.clone(),
                other => panic!("{kind} {name}: not failed: {other:?}"),
            };
            assert!(
                message.starts_with(&prefix),
                "{kind} {name}: {message:?} should start with {prefix:?}"
            );
            assert!(message.len() < 500, "{kind} {name}: {message}");
            assert!(
                began.elapsed() < limit,
                "{kind} {name}: {:?}",
                began.elapsed()
            );
            let sid = session_id(&events);
            assert_eq!(*session.get_or_insert(sid), sid, "one session throughout");

            let status = agentd
                .client
                .get_status(pb::GetStatusRequest {})
                .await
                .unwrap()
                .into_inner();
            seen.reply(&status);
            assert_eq!(status.last_error.as_deref(), Some(message.as_str()));
            assert!(
                status.running_turn.is_none(),
                "{kind} {name}: still running"
            );
        }

        fake.push(Script::text("一切恢复正常"));
        let events = turn(&mut agentd.client, "现在呢").await;
        seen.reply(&events);
        match events.last() {
            Some(Event::Completed(c)) => assert_eq!(c.text, "一切恢复正常", "{kind}"),
            other => panic!("{kind}: the strict fake refused the history: {other:?}"),
        }
        let last = fake.last_request().unwrap().raw_body;
        assert!(
            last.contains("stall before any data") && last.contains("现在呢"),
            "{kind}: the failed turns' messages stay in the session"
        );

        fake.shutdown();
        seen.text(agentd.kill9());
        seen.assert_no_secrets(&cfg.data_dir());
    }
}
