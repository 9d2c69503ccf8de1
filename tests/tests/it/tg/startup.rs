//! kernel-tg's start and stop as a process: a refused bot token stops it with a clear message
//! (and no token in it), SIGTERM stops it cleanly, and a missing agentd is explained.

use std::process::Command;

use tests::config::{TELEGRAM_TOKEN, TestConfig};
use tests::fake_telegram::{FakeTelegram, OWNER_ID};
use tests::process::bin_path;
use tests::stack::Stack;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_telegram_refuses_stops_kernel_tg_with_a_clear_message() {
    // The fake only accepts its own token: the config's is refused with 401 Unauthorized.
    let telegram = FakeTelegram::start("987654321:AnotherTokenThanTheConfigsOne_abc").await;
    let cfg = TestConfig::new("http://127.0.0.1:9", "");
    let url = telegram.api_url();
    cfg.rewrite(|t| {
        t.replace(
            "allowed_user = 42",
            &format!("allowed_user = {OWNER_ID}\napi_url = \"{url}\""),
        )
    });
    let path = cfg.path.clone();
    let out = tokio::task::spawn_blocking(move || {
        Command::new(bin_path("kernel-tg"))
            .arg("--config")
            .arg(&path)
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("Telegram refused the bot token"), "{text}");
    assert!(!text.contains(TELEGRAM_TOKEN), "{text}");
    assert!(
        !text.contains(TELEGRAM_TOKEN.split(':').nth(1).unwrap()),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_kernel_tg_cleanly() {
    let mut stack = Stack::start().await;
    assert!(!stack.command("/cancel").await.is_empty());
    let status = tokio::task::spawn_blocking(move || {
        let status = stack.stop_bot();
        (status, stack)
    })
    .await
    .unwrap();
    assert!(status.0.success(), "{:?}", status.0);
    status.1.assert_no_secrets();
}

#[tokio::test]
async fn connecting_to_a_missing_agentd_says_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let endpoint = format!("unix:{}", dir.path().join("nobody.sock").display());
    let err = kernel_common::agentd_client::connect(&endpoint, None)
        .await
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("cannot reach kernel-agentd") && msg.contains("is kernel-agentd running?"),
        "{msg}"
    );

    let err = kernel_common::agentd_client::connect("ftp://example", None)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("invalid agentd endpoint"), "{err}");
}
