//! The web console end to end in a real headless Chromium (chromedriver + fantoccini), with the
//! real kernel-agentd and kernel-web against the fake LLM: log in with a one-time link (a second
//! use is refused); send a message and see the streamed answer; press Stop on a stalling turn;
//! answer an `ask_user` question with its button; search memory and forget one entry (gone from
//! /memory and from agentd); the sessions and status pages. A screenshot of each page is written
//! under `target/web-screenshots/`.

use std::time::Duration;

use fantoccini::Locator;
use kernel_proto::v1 as pb;
use kernel_proto::v1::agent_client::AgentClient;
use tests::browser::Browser;
use tests::config::TestConfig;
use tests::fake_llm::{FakeLlm, Reply, Script};
use tests::harness::unix_channel;
use tests::process::AgentdProcess;
use tests::web::{WEB_SECTION, WebConsole};
use tests::web_browser::{WAIT, answer_in_state, eventually_text, memories, send};

#[tokio::test]
async fn in_a_real_browser_log_in_chat_stop_answer_and_forget() {
    let llm = FakeLlm::start().await;
    let cfg = TestConfig::new(&llm.url(), WEB_SECTION);
    let _agentd = AgentdProcess::start(&cfg.path, &[]);
    let web = WebConsole::start(&cfg.path);
    let browser = Browser::start().await;
    let c = &browser.client;

    // Without the cookie: the login page (401), nothing else.
    c.goto(&web.url("/memory")).await.unwrap();
    let body = c
        .find(Locator::Css("body"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(body.contains("--login-url"), "{body}");
    browser.screenshot("login-needed").await;

    // The one-time link logs in and lands on the chat; a second use is refused.
    let link = web.url(&WebConsole::login_path(&cfg.path));
    c.goto(&link).await.unwrap();
    c.wait()
        .at_most(WAIT)
        .for_element(Locator::Id("chat-form"))
        .await
        .expect("the chat page after login");
    assert!(c.current_url().await.unwrap().path().ends_with("/chat"));
    c.goto(&link).await.unwrap();
    let again = c
        .find(Locator::Css("body"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(again.contains("已经用过"), "a second use refused: {again}");
    c.goto(&web.url("/chat")).await.unwrap();
    assert!(
        c.find(Locator::Id("chat-form")).await.is_ok(),
        "still logged in"
    );

    // A message, its answer streamed in and rendered from Markdown.
    llm.push(
        Reply::text("Hello from **Kernel**, streamed in pieces.")
            .slow(6, Duration::from_millis(40)),
    );
    send(&browser, "hello").await;
    let answer = answer_in_state(&browser, "done").await;
    assert!(
        answer.contains("Hello from Kernel, streamed in pieces."),
        "{answer}"
    );
    let bold = c
        .find(Locator::Css(".answer b"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(bold, "Kernel");
    browser.screenshot("chat").await;

    // Stop on a stalling turn.
    llm.push(Script::stall());
    send(&browser, "take your time").await;
    llm.wait_requests(2, WAIT).await;
    c.find(Locator::Id("chat-stop"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let stopped = answer_in_state(&browser, "cancelled").await;
    assert!(stopped.contains("已停止"), "{stopped}");

    // ask_user: the question's buttons; pressing one answers it and the turn goes on.
    llm.push(Script::tool_call(
        "ask_user",
        r#"{"question": "Tea or coffee?", "options": ["tea", "coffee"]}"#,
    ));
    llm.push(Script::text("Coffee it is"));
    send(&browser, "make me a drink").await;
    let button = c
        .wait()
        .at_most(WAIT)
        .for_element(Locator::XPath(
            "//div[contains(@class,'question')]//button[text()='coffee']",
        ))
        .await
        .expect("the question's buttons");
    browser.screenshot("chat-question").await;
    button.click().await.unwrap();
    eventually_text(&browser, "Coffee it is").await;
    let requests = llm.requests();
    let last = requests.last().unwrap().body.to_string();
    assert!(last.contains("coffee"), "the model read the answer: {last}");

    // Memory: search, forget one; gone from the page and from agentd.
    let mut client = AgentClient::new(unix_channel(cfg.socket()).await);
    for text in [
        "the owner likes green tea",
        "the owner's cat is called Miso",
    ] {
        client
            .add_memory(pb::AddMemoryRequest {
                text: text.to_owned(),
            })
            .await
            .unwrap();
    }
    c.goto(&web.url("/memory")).await.unwrap();
    c.find(Locator::Id("memory-q"))
        .await
        .unwrap()
        .send_keys("green tea")
        .await
        .unwrap();
    c.find(Locator::Id("memory-search"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    c.wait()
        .at_most(WAIT)
        .for_element(Locator::Css("button.forget"))
        .await
        .unwrap();
    let rows = c.find_all(Locator::Css("tr.memory")).await.unwrap();
    assert_eq!(rows.len(), 1, "the search finds one");
    browser.screenshot("memory-search").await;
    c.find(Locator::Css("button.forget"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    c.goto(&web.url("/memory")).await.unwrap();
    let page = c
        .find(Locator::Css("main"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!page.contains("green tea"), "{page}");
    assert!(page.contains("Miso"), "{page}");
    assert_eq!(memories(&cfg).await, vec!["the owner's cat is called Miso"]);
    browser.screenshot("memory").await;

    // Sessions and status render.
    c.goto(&web.url("/sessions")).await.unwrap();
    assert!(c.find(Locator::Css("tr.session")).await.is_ok());
    browser.screenshot("sessions").await;
    c.goto(&web.url("/status")).await.unwrap();
    let status = c
        .find(Locator::Id("status"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(status.contains("fake-model"), "{status}");
    browser.screenshot("status").await;
    browser.close().await;
}
