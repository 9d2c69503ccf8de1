//! Restarts under a chat, over HTTP with the real kernel-agentd and kernel-web against the fake
//! LLM: agentd stopping mid-turn ends the page's stream with an `end` line (cancelled or failed) (the page does not
//! hang), and once agentd is back kernel-web reconnects and the next message streams its answer
//! with the same cookie; a kernel-web restart loses nothing (the session history is agentd's).

use std::time::Duration;

use kernel_proto::v1 as pb;
use tests::config::TestConfig;
use tests::fake_llm::{FakeLlm, Script};
use tests::process::AgentdProcess;
use tests::wait::eventually;
use tests::web::{WEB_SECTION, WebConsole, http, log_in_with_csrf};

/// Sends `text` to `/api/chat`; its status and the NDJSON lines.
async fn chat(
    web: &WebConsole,
    cookie: &str,
    csrf: &str,
    text: &str,
) -> (u16, Vec<serde_json::Value>) {
    let res = http()
        .post(web.url("/api/chat"))
        .header("cookie", cookie)
        .header("x-csrf-token", csrf)
        .json(&serde_json::json!({ "text": text }))
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    let body = res.text().await.unwrap_or_default();
    let lines = body
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (status, lines)
}

#[tokio::test]
async fn agentd_dying_mid_turn_ends_the_stream_and_the_next_message_works_after_it_returns() {
    let llm = FakeLlm::start().await;
    let cfg = TestConfig::new(&llm.url(), WEB_SECTION);
    let agentd = AgentdProcess::start(&cfg.path, &[]);
    let web = WebConsole::start(&cfg.path);
    let (cookie, csrf) = log_in_with_csrf(&web, &cfg.path).await;

    llm.push(Script::stall());
    let turn = {
        let (web_url, cookie, csrf) = (web.url(""), cookie.clone(), csrf.clone());
        tokio::spawn(async move {
            let res = http()
                .post(format!("{web_url}/api/chat"))
                .header("cookie", cookie)
                .header("x-csrf-token", csrf)
                .json(&serde_json::json!({ "text": "take your time" }))
                .send()
                .await
                .unwrap();
            res.text().await.unwrap_or_default()
        })
    };
    llm.wait_requests(1, Duration::from_secs(20)).await;
    agentd.terminate();
    let body = tokio::time::timeout(Duration::from_secs(20), turn)
        .await
        .expect("the stream ends when agentd goes away")
        .unwrap();
    let last: serde_json::Value =
        serde_json::from_str(body.lines().last().expect("a line")).unwrap();
    assert_eq!(last["t"], "end", "{body}");
    // A graceful stop cancels the turn; a lost connection fails it: either way the page is told.
    assert!(
        last["state"] == "cancelled" || last["state"] == "failed",
        "{body}"
    );

    let _agentd = AgentdProcess::start(&cfg.path, &[]);
    llm.push(Script::text("Back again"));
    let lines = eventually(
        "kernel-web reconnected and the turn ran",
        Duration::from_secs(20),
        async || {
            let (status, lines) = chat(&web, &cookie, &csrf, "are you back?").await;
            (status == 200 && !lines.is_empty()).then_some(lines)
        },
    )
    .await;
    let done = lines.last().unwrap();
    assert_eq!(done["t"], "done", "{lines:?}");
    assert!(done["html"].as_str().unwrap().contains("Back again"));

    // kernel-web restarts: the history stays with agentd.
    web.process.terminate();
    let _web = WebConsole::start(&cfg.path);
    let mut client = kernel_proto::v1::agent_client::AgentClient::new(
        tests::harness::unix_channel(cfg.socket()).await,
    );
    let sessions = client
        .list_sessions(pb::ListSessionsRequest {})
        .await
        .unwrap()
        .into_inner()
        .sessions;
    assert!(!sessions.is_empty());
}
