//! `kernel-agentd doctor` through the real binary: all green on a healthy setup (exit 0); a
//! wrong Bot API token, an unreadable data_dir, a missing CLI and a stale outbox item each named
//! with its fix (exit non-zero); without `--online` no network connection is opened.

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tests::config::TestConfig;
use tests::fake_telegram::FakeTelegram;
use tests::process::{AgentdProcess, bin_path};

fn agentd(config: &Path, args: &[&str]) -> Output {
    Command::new(bin_path("kernel-agentd"))
        .arg("--config")
        .arg(config)
        .args(args)
        .output()
        .expect("run kernel-agentd")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A config in English whose data_dir agentd has created (started and stopped once).
fn started_once(llm_url: &str, extra: &str) -> TestConfig {
    let cfg = TestConfig::new(llm_url, &format!("{extra}\n"));
    cfg.rewrite(|s| {
        s.replace(
            "data_dir = \"data\"",
            "data_dir = \"data\"\nlocale = \"en\"",
        )
    });
    AgentdProcess::start(&cfg.path, &[]).terminate();
    cfg
}

/// The line of the check called `name` and the line after it (the fix).
fn check<'a>(report: &'a str, name: &str) -> (&'a str, &'a str) {
    let lines: Vec<&str> = report.lines().collect();
    let i = lines
        .iter()
        .position(|l| {
            l.starts_with('[')
                && l.split_once(']').is_some_and(|(_, rest)| {
                    rest.trim_start()
                        .strip_prefix(name)
                        .is_some_and(|after| after.starts_with(' '))
                })
        })
        .unwrap_or_else(|| panic!("no check {name} in {report}"));
    (lines[i], lines.get(i + 1).copied().unwrap_or(""))
}

#[test]
fn a_healthy_setup_is_all_green_and_exits_zero() {
    let cfg = started_once("http://127.0.0.1:9", "");
    let out = agentd(&cfg.path, &["backup"]);
    assert!(out.status.success(), "{}", text(&out));
    let out = agentd(&cfg.path, &["doctor"]);
    let report = text(&out);
    assert!(out.status.success(), "{report}");
    for name in [
        "config and secrets",
        "data_dir",
        "socket and process",
        "database",
        "outbox",
        "schedules",
        "clock and time zone",
        "last backup",
    ] {
        let (line, _) = check(&report, name);
        assert!(line.starts_with("[OK]"), "{line}\n{report}");
    }
    assert!(!report.contains("[FAIL]"), "{report}");
    assert!(report.contains("none failed"), "{report}");
    assert!(
        !report.contains(tests::config::PROVIDER_KEY)
            && !report.contains(tests::config::TELEGRAM_TOKEN),
        "secrets are masked: {report}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_problem_is_named_with_its_fix_and_the_exit_is_non_zero() {
    let tg = FakeTelegram::start("999:SomeOtherBotsToken_abcdefghij").await;
    let cfg = started_once(
        "http://127.0.0.1:9",
        "[cli.ghost]\ncommand = \"kernel-no-such-cli\"\nargs = []\n",
    );
    cfg.rewrite(|s| {
        s.replace(
            "allowed_user = 42",
            &format!(
                "allowed_user = 42\napi_url = \"{}\"",
                tg.api_url().trim_end_matches('/')
            ),
        )
    });
    let db = cfg.data_dir().join("kernel.db");
    let pool =
        sqlx::SqlitePool::connect_with(sqlx::sqlite::SqliteConnectOptions::new().filename(&db))
            .await
            .unwrap();
    let two_hours_ago = chrono::Utc::now().timestamp_millis() - 2 * 3600 * 1000;
    sqlx::query("INSERT INTO outbox (turn_id, kind, text, created_at) VALUES ('t-stale', 'answer', 'stuck', ?1)")
        .bind(two_hours_ago)
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;

    let path = cfg.path.clone();
    let out = tokio::task::spawn_blocking(move || agentd(&path, &["doctor", "--online"]))
        .await
        .unwrap();
    let report = text(&out);
    assert!(!out.status.success(), "{report}");
    let (line, fix) = check(&report, "telegram");
    assert!(
        line.starts_with("[FAIL]") && line.contains("refused the token"),
        "{line}"
    );
    assert!(fix.contains("@BotFather"), "{fix}");
    let (line, fix) = check(&report, "cli ghost");
    assert!(
        line.starts_with("[FAIL]") && line.contains("kernel-no-such-cli not found"),
        "{line}"
    );
    assert!(fix.contains("fix: install it"), "{fix}");
    let (line, fix) = check(&report, "outbox");
    assert!(
        line.starts_with("[FAIL]") && line.contains("1 undelivered"),
        "{line}"
    );
    assert!(fix.contains("kernel-tg"), "{fix}");
    assert!(!report.contains(tests::config::TELEGRAM_TOKEN), "{report}");

    // An unreadable data_dir (a file where the folder should be: root reads any folder).
    let broken = TestConfig::new("http://127.0.0.1:9", "");
    broken.rewrite(|s| {
        s.replace(
            "data_dir = \"data\"",
            "data_dir = \"data\"\nlocale = \"en\"",
        )
    });
    std::fs::write(broken.data_dir(), "not a folder").unwrap();
    let out = agentd(&broken.path, &["doctor"]);
    let report = text(&out);
    assert!(!out.status.success(), "{report}");
    let (line, fix) = check(&report, "data_dir");
    assert!(
        line.starts_with("[FAIL]") && line.contains("not a directory"),
        "{line}"
    );
    assert!(fix.contains("chmod 700"), "{fix}");
}

/// A TCP listener on 127.0.0.1 counting the connections it accepts (and closing them).
fn counting_listener() -> (String, Arc<AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            seen.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    (url, count)
}

#[test]
fn without_online_the_doctor_opens_no_connection() {
    let (llm, llm_accepts) = counting_listener();
    let (tg, tg_accepts) = counting_listener();
    let (mcp, mcp_accepts) = counting_listener();
    let cfg = TestConfig::new(
        &llm,
        &format!("[[mcp.servers]]\nname = \"remote\"\ntype = \"http\"\nurl = \"{mcp}/mcp\"\n"),
    );
    cfg.rewrite(|s| {
        s.replace(
            "allowed_user = 42",
            &format!("allowed_user = 42\napi_url = \"{tg}\""),
        )
        .replace(
            "data_dir = \"data\"",
            "data_dir = \"data\"\nlocale = \"en\"",
        )
    });
    let out = agentd(&cfg.path, &["doctor"]);
    assert!(
        text(&out).contains("not contacted offline"),
        "{}",
        text(&out)
    );
    assert_eq!(llm_accepts.load(Ordering::SeqCst), 0, "provider contacted");
    assert_eq!(tg_accepts.load(Ordering::SeqCst), 0, "Telegram contacted");
    assert_eq!(
        mcp_accepts.load(Ordering::SeqCst),
        0,
        "MCP server contacted"
    );

    // The listeners do count: --online reaches the provider and Telegram.
    let out = agentd(&cfg.path, &["doctor", "--online"]);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(llm_accepts.load(Ordering::SeqCst) > 0);
    assert!(tg_accepts.load(Ordering::SeqCst) > 0);
}
