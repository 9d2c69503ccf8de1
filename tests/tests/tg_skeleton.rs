//! kernel-tg's skeleton: it loads the shared config, reaches kernel-agentd over the Unix socket,
//! and says clearly when it cannot.

use std::process::Command;

use tests::config::{TELEGRAM_TOKEN, TestConfig};
use tests::process::{AgentdProcess, bin_path};

#[test]
fn kernel_tg_reaches_a_running_agentd() {
    let cfg = TestConfig::new("http://127.0.0.1:9", "");
    let _agentd = AgentdProcess::start(&cfg.path, &[]);
    let out = Command::new(bin_path("kernel-tg"))
        .arg("--config")
        .arg(&cfg.path)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("connected to kernel-agentd"), "{text}");
    assert!(!text.contains(TELEGRAM_TOKEN), "{text}");
}

#[tokio::test]
async fn connecting_to_a_missing_agentd_says_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let endpoint = format!("unix:{}", dir.path().join("nobody.sock").display());
    let err = kernel_tg::agentd::connect(&endpoint, None)
        .await
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("cannot reach kernel-agentd") && msg.contains("is kernel-agentd running?"),
        "{msg}"
    );

    let err = kernel_tg::agentd::connect("ftp://example", None)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("invalid agentd endpoint"), "{err}");
}
