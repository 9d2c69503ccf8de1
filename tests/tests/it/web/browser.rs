//! The web console end to end in a real headless Chromium (chromedriver + fantoccini), with the
//! real kernel-agentd and kernel-web against the fake LLM: log in with a one-time link (a second
//! use is refused); send a message and see the streamed answer; press Stop on a stalling turn;
//! answer an `ask_user` question with its button; search memory and forget one entry (gone from
//! /memory and from agentd); the sessions and status pages. A screenshot of each page is written
//! under `target/web-screenshots/`.

use std::time::Duration;

use fantoccini::Locator;
use tests::fake_llm::{Reply, Script};
use tests::web::{WebConsole, add_memory};
use tests::web_browser::{
    WAIT, WebStack, answer_in_state, click, eventually_text, fill, send, text_of, wait_for,
};

#[tokio::test]
async fn in_a_real_browser_log_in_chat_stop_answer_and_forget() {
    let stack = WebStack::start("").await;
    let (llm, cfg, web, browser) = (&stack.llm, &stack.cfg, &stack.web, &stack.browser);
    let c = &browser.client;

    // Without the cookie: the login page (401), nothing else.
    stack.goto("/memory").await;
    let body = text_of(browser, "body").await;
    assert!(body.contains("--login-url"), "{body}");
    browser.screenshot("login-needed").await;

    // The one-time link logs in and lands on the chat; a second use is refused.
    let link = web.url(&WebConsole::login_path(&cfg.path));
    c.goto(&link).await.unwrap();
    wait_for(
        browser,
        Locator::Id("chat-form"),
        "the chat page after login",
    )
    .await;
    assert!(c.current_url().await.unwrap().path().ends_with("/chat"));
    c.goto(&link).await.unwrap();
    let again = text_of(browser, "body").await;
    assert!(again.contains("已经用过"), "a second use refused: {again}");
    stack.goto("/chat").await;
    assert!(
        c.find(Locator::Id("chat-form")).await.is_ok(),
        "still logged in"
    );

    // A message, its answer streamed in and rendered from Markdown.
    llm.push(
        Reply::text("Hello from **Kernel**, streamed in pieces.")
            .slow(6, Duration::from_millis(40)),
    );
    send(browser, "hello").await;
    let answer = answer_in_state(browser, "done").await;
    assert!(
        answer.contains("Hello from Kernel, streamed in pieces."),
        "{answer}"
    );
    let bold = text_of(browser, ".answer strong").await;
    assert_eq!(bold, "Kernel");
    browser.screenshot("chat").await;

    // Stop on a stalling turn.
    llm.push(Script::stall());
    send(browser, "take your time").await;
    llm.wait_requests(2, WAIT).await;
    click(browser, "#chat-stop").await;
    let stopped = answer_in_state(browser, "cancelled").await;
    assert!(stopped.contains("已停止"), "{stopped}");

    // ask_user: the question's buttons; pressing one answers it and the turn goes on.
    llm.push(Script::tool_call(
        "ask_user",
        r#"{"question": "Tea or coffee?", "options": ["tea", "coffee"]}"#,
    ));
    llm.push(Script::text("Coffee it is"));
    send(browser, "make me a drink").await;
    let button = wait_for(
        browser,
        Locator::XPath("//div[contains(@class,'question')]//button[text()='coffee']"),
        "the question's buttons",
    )
    .await;
    browser.screenshot("chat-question").await;
    button.click().await.unwrap();
    eventually_text(browser, "Coffee it is").await;
    let requests = llm.requests();
    let last = requests.last().unwrap().body.to_string();
    assert!(last.contains("coffee"), "the model read the answer: {last}");

    // Memory: search, forget one; gone from the page and from agentd.
    for text in [
        "the owner likes green tea",
        "the owner's cat is called Miso",
    ] {
        add_memory(cfg, text).await;
    }
    stack.goto("/memory").await;
    fill(browser, "#memory-q", "green tea").await;
    click(browser, "#memory-search").await;
    wait_for(browser, Locator::Css("button.forget"), "the memory found").await;
    let rows = c.find_all(Locator::Css("tr.memory")).await.unwrap();
    assert_eq!(rows.len(), 1, "the search finds one");
    browser.screenshot("memory-search").await;
    click(browser, "button.forget").await;
    // The forget is a form post: its answer page must be in before another page is opened
    // (under load the next navigation raced it and showed the post's page).
    tests::wait::eventually("the memory forgotten", tests::stack::PROMPT, async || {
        stack.memories().await.len() == 1
    })
    .await;
    stack.goto("/memory").await;
    let page = text_of(browser, "main").await;
    assert!(!page.contains("green tea"), "{page}");
    assert!(page.contains("Miso"), "{page}");
    assert_eq!(
        stack.memories().await,
        vec!["the owner's cat is called Miso"]
    );
    browser.screenshot("memory").await;

    // Sessions and status render.
    stack.goto("/sessions").await;
    assert!(c.find(Locator::Css("tr.session")).await.is_ok());
    browser.screenshot("sessions").await;
    stack.goto("/status").await;
    let status = text_of(browser, "#status").await;
    assert!(status.contains("fake-model"), "{status}");
    browser.screenshot("status").await;
    stack.close().await;
}
