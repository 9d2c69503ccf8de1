//! The chat page's approval buttons and attachments in a real headless Chromium, with the real
//! kernel-agentd and kernel-web against the fake LLM: a risky action (`schedule_add` of a task
//! with `approvals.mode = "always"`) shows Allow once / Allow for this session / Deny, Deny ends
//! in its outcome and the model reads the denial; a text file uploaded with a message reaches
//! the model; a file of a kind agentd does not take is refused clearly and starts no model call.
//! The status page shows its sections and the doctor's checks.
//! (Sending with the streamed answer, Stop and `ask_user` buttons are `web::browser`.)

use fantoccini::Locator;
use serde_json::json;
use tests::fake_llm::Script;
use tests::web_browser::{
    WebStack, answer_in_state, click, eventually_text, fill, send, text_of, wait_for,
};

#[tokio::test]
async fn an_approval_shows_its_buttons_and_deny_reaches_the_model() {
    let stack = WebStack::logged_in("[approvals]\nmode = \"always\"\n").await;
    let (llm, browser) = (&stack.llm, &stack.browser);
    llm.push(Script::tool_call(
        "schedule_add",
        json!({"when": "0 8 * * *", "message": "check <the> weather", "mode": "task"}).to_string(),
    ));
    llm.push(Script::text("Not scheduled, as you wish"));
    send(browser, "schedule the weather").await;
    let approval = wait_for(browser, Locator::Css(".approval"), "the approval").await;
    let text = approval.text().await.unwrap();
    assert!(text.contains("需要你的批准：schedule_add"), "{text}");
    assert!(
        text.contains("check <the> weather"),
        "shown as text: {text}"
    );
    for label in ["允许一次", "本会话内允许", "拒绝"] {
        assert!(text.contains(label), "{label} in {text}");
    }
    browser.screenshot("chat-approval").await;
    click(browser, ".approval button[data-value=\"deny\"]").await;
    let outcome = wait_for(
        browser,
        Locator::Css(".approval .outcome"),
        "the outcome in place of the buttons",
    )
    .await;
    assert_eq!(outcome.text().await.unwrap(), "❌ 已拒绝");
    eventually_text(browser, "Not scheduled, as you wish").await;
    let last = llm.requests().last().unwrap().body.to_string();
    assert!(last.contains("denied by the owner"), "{last}");
    assert!(
        browser
            .client
            .find_all(Locator::Css(".approval button"))
            .await
            .unwrap()
            .is_empty()
    );
    stack.close().await;
}

#[tokio::test]
async fn an_uploaded_text_file_reaches_the_model_and_a_bad_one_is_refused() {
    let stack = WebStack::logged_in("").await;
    let (llm, browser) = (&stack.llm, &stack.browser);
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "the secret word is MANGO\n").unwrap();
    llm.push(Script::text("The word is MANGO"));
    fill(browser, "#chat-files", &notes.display().to_string()).await;
    send(browser, "what does the file say?").await;
    let answer = answer_in_state(browser, "done").await;
    assert!(answer.contains("The word is MANGO"), "{answer}");
    let body = llm.requests().last().unwrap().body.to_string();
    assert!(body.contains("the secret word is MANGO"), "{body}");
    assert!(body.contains("notes.txt"), "{body}");
    browser.screenshot("chat-upload").await;

    // A kind of file agentd does not read: refused in the page, no model call.
    let calls = llm.requests().len();
    let bad = dir.path().join("tool.exe");
    std::fs::write(&bad, b"MZ\x90\x00binary").unwrap();
    fill(browser, "#chat-files", &bad.display().to_string()).await;
    send(browser, "run this").await;
    let refused = answer_in_state(browser, "refused").await;
    assert!(refused.contains("exe"), "{refused}");
    assert!(!refused.contains("MZ"), "{refused}");
    assert_eq!(llm.requests().len(), calls, "no model call");
    stack.close().await;
}

#[tokio::test]
async fn the_status_page_shows_agentd_outbox_providers_mcp_clis_and_the_doctor() {
    let stack = WebStack::logged_in("").await;
    let browser = &stack.browser;
    stack.goto("/status").await;
    let agentd = text_of(browser, "#status").await;
    for part in ["版本", "已运行", "fake-model", "空闲"] {
        assert!(agentd.contains(part), "{part} in {agentd}");
    }
    let outbox = text_of(browser, "#outbox").await;
    assert!(outbox.contains("未送达 0"), "{outbox}");
    assert_eq!(text_of(browser, "#cooldowns").await, "无");
    assert_eq!(text_of(browser, "#mcp").await, "无");
    let doctor = text_of(browser, "#doctor").await;
    assert!(doctor.contains("OK"), "{doctor}");
    assert!(doctor.contains("数据库"), "{doctor}");
    let checks = browser
        .client
        .find_all(Locator::Css("#doctor tr.check"))
        .await
        .unwrap();
    assert!(checks.len() >= 4, "{} checks", checks.len());
    browser.screenshot("status-sections").await;
    stack.close().await;
}
