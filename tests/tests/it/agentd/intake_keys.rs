//! Exactly-once intake over the real grpcurl: a `Chat` whose idempotency key a turn took starts
//! no second turn (the model is called once) and gets a single `alreadyTaken`; a bad key is
//! refused with INVALID_ARGUMENT and starts nothing.

use tests::config::TestConfig;
use tests::fake_llm::{FakeLlm, Script};
use tests::process::{AgentdProcess, grpcurl};

/// `kernel.v1.Agent/Chat` with `body` over agentd's socket: (success, stdout + stderr).
fn chat(cfg: &TestConfig, body: &str) -> (bool, String) {
    let socket = cfg.socket().display().to_string();
    let out = grpcurl(&[
        "-plaintext",
        "-unix",
        "-authority",
        "localhost",
        "-d",
        body,
        &socket,
        "kernel.v1.Agent/Chat",
    ]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// Model calls whose request carries `text` (the turn's user message).
fn calls_with(llm: &FakeLlm, text: &str) -> usize {
    llm.requests()
        .iter()
        .filter(|r| r.raw_body.contains(text))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_key_starts_no_second_turn() {
    let llm = FakeLlm::start().await;
    let cfg = TestConfig::new(&llm.url(), "");
    let path = cfg.path.clone();
    let _agentd = tokio::task::spawn_blocking(move || AgentdProcess::start(&path, &[]))
        .await
        .unwrap();
    llm.push(Script::text("the one answer"));
    let body = r#"{"text": "hello exactly once", "idempotencyKeys": ["tg:42:7"]}"#;
    let cfg = std::sync::Arc::new(cfg);
    let c = cfg.clone();
    let (ok, first) = tokio::task::spawn_blocking(move || chat(&c, body))
        .await
        .unwrap();
    assert!(ok, "{first}");
    assert!(
        first.contains("\"completed\"") && first.contains("the one answer"),
        "{first}"
    );
    let turn_id = serde_json::from_str::<serde_json::Value>(
        first
            .split("\n}\n")
            .next()
            .map(|s| format!("{s}\n}}"))
            .as_deref()
            .unwrap(),
    )
    .ok()
    .and_then(|v| v["started"]["turnId"].as_str().map(str::to_owned))
    .expect("the first event names the turn");

    // The same message again, and once more with a new message beside it: no turn starts.
    for body in [
        body,
        r#"{"text": "hello exactly once", "idempotencyKeys": ["tg:42:8", "tg:42:7"]}"#,
    ] {
        let c = cfg.clone();
        let (ok, again) = tokio::task::spawn_blocking(move || chat(&c, body))
            .await
            .unwrap();
        assert!(ok, "{again}");
        assert!(again.contains("\"alreadyTaken\""), "{again}");
        assert!(again.contains(&turn_id), "{again}");
        assert!(again.contains("\"tg:42:7\""), "{again}");
        assert!(
            !again.contains("\"tg:42:8\""),
            "only the taken key: {again}"
        );
        assert!(
            !again.contains("\"started\"") && !again.contains("\"completed\""),
            "{again}"
        );
    }
    assert_eq!(calls_with(&llm, "hello exactly once"), 1);

    // The fresh key of the refused request stayed free: it runs a turn of its own.
    llm.push(Script::text("the second answer"));
    let c = cfg.clone();
    let (ok, fresh) = tokio::task::spawn_blocking(move || {
        chat(
            &c,
            r#"{"text": "a new message", "idempotencyKeys": ["tg:42:8"]}"#,
        )
    })
    .await
    .unwrap();
    assert!(ok && fresh.contains("the second answer"), "{fresh}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_key_is_refused_with_invalid_argument_and_starts_nothing() {
    let llm = FakeLlm::start().await;
    let cfg = TestConfig::new(&llm.url(), "");
    let path = cfg.path.clone();
    let _agentd = tokio::task::spawn_blocking(move || AgentdProcess::start(&path, &[]))
        .await
        .unwrap();
    let long = format!(
        r#"{{"text": "bad key", "idempotencyKeys": ["{}"]}}"#,
        "k".repeat(129)
    );
    let many = format!(
        r#"{{"text": "bad key", "idempotencyKeys": [{}]}}"#,
        (0..65)
            .map(|i| format!("\"k{i}\""))
            .collect::<Vec<_>>()
            .join(",")
    );
    let cfg = std::sync::Arc::new(cfg);
    for body in [
        r#"{"text": "bad key", "idempotencyKeys": ["tg:1:1", "has space"]}"#.to_owned(),
        r#"{"text": "bad key", "idempotencyKeys": [""]}"#.to_owned(),
        r#"{"text": "bad key", "idempotencyKeys": ["ключ"]}"#.to_owned(),
        long,
        many,
    ] {
        let c = cfg.clone();
        let (ok, out) = tokio::task::spawn_blocking(move || chat(&c, &body))
            .await
            .unwrap();
        assert!(!ok, "{out}");
        assert!(out.contains("InvalidArgument"), "{out}");
        assert!(out.contains("idempotency key"), "{out}");
        assert!(!out.contains("internal"), "{out}");
    }
    assert_eq!(calls_with(&llm, "bad key"), 0);
}
