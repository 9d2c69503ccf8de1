//! `send_file` through the real binaries: a workspace file arrives as a document (an image as a
//! photo) through the outbox; `../`, an absolute path outside and a symlink pointing out are
//! refused, and nothing of theirs is sent.

use kernel_common::config::Locale;
use serde_json::json;
use tests::fake_llm::{FakeToolCall, Reply, Script};
use tests::stack::{PROMPT, Stack, text_of};
use tests::told::Told;

/// The smallest valid PNG (1×1).
const PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
    0x89, 0x00, 0x00, 0x00, 0x0A, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
    0x42, 0x60, 0x82,
];

fn send(path: &str, caption: Option<&str>) -> FakeToolCall {
    let input = match caption {
        Some(c) => json!({"path": path, "caption": c}),
        None => json!({"path": path}),
    };
    FakeToolCall::new("send_file", input.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_file_delivers_workspace_files_and_refuses_escapes() {
    let stack = Stack::start().await;
    // The owner opens the chat (a bot cannot write first).
    let zh = Told::new(Locale::Zh);
    assert_eq!(stack.command("/tasks").await, zh.no_schedules());

    let workspace = stack.cfg.load().general.default_workspace;
    std::fs::write(workspace.join("report.md"), "# weekly\n").unwrap();
    std::fs::write(workspace.join("chart.png"), PNG).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let key = outside.path().join("key.txt");
    std::fs::write(&key, "not for the owner's chat").unwrap();
    std::os::unix::fs::symlink(&key, workspace.join("link.txt")).unwrap();
    let dotdot = format!(
        "../{}/key.txt",
        outside.path().file_name().unwrap().to_string_lossy()
    );
    // `..` from the workspace really reaches the outside file.
    assert!(workspace.join(&dotdot).exists());

    stack.llm.push(Script::Reply(
        Reply::default()
            .tool(send("report.md", Some("本周周报")))
            .tool(send("chart.png", None))
            .tool(send(&dotdot, None))
            .tool(send(key.to_str().unwrap(), None))
            .tool(send("link.txt", None)),
    ));
    stack.llm.push(Script::text("文件已发送"));
    stack.owner_says("把周报和图表发给我");

    let document = stack
        .telegram
        .wait_for_call("sendDocument", |c| c.ok, PROMPT)
        .await;
    assert_eq!(document.params["document"]["file_name"], "report.md");
    assert_eq!(document.params["document"]["len"], 9);
    assert_eq!(document.params["caption"], "本周周报");
    let photo = stack
        .telegram
        .wait_for_call("sendPhoto", |c| c.ok, PROMPT)
        .await;
    assert_eq!(photo.params["photo"]["file_name"], "chart.png");
    stack
        .telegram
        .wait_for_call(
            "sendMessage",
            |c| c.ok && text_of(c) == "文件已发送",
            PROMPT,
        )
        .await;

    // Only the two workspace files went out; the model was told why the others did not.
    let uploads =
        stack.telegram.calls_of("sendDocument").len() + stack.telegram.calls_of("sendPhoto").len();
    assert_eq!(uploads, 2, "{}", stack.telegram.call_log());
    let results = stack.llm.requests()[1].raw_body.clone();
    assert_eq!(
        results.matches("is outside the workspace").count(),
        3,
        "{results}"
    );
    assert!(
        results.contains("report.md") && results.contains("\\\"bytes\\\":9"),
        "{results}"
    );
    let sent: String = stack
        .telegram
        .calls()
        .iter()
        .map(|c| c.params.to_string())
        .collect();
    assert!(!sent.contains("not for the owner"), "{sent}");
    stack.assert_no_secrets();
}
