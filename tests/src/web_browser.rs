//! Shared steps of the web console's browser suites: a whole stack (`WebStack`: fake LLM, real
//! agentd, real kernel-web, headless Chromium) optionally already logged in, and the chat page's
//! usual gestures (type and send, wait for an answer in a state or with a text, read an element).

use std::time::Duration;

use fantoccini::Locator;
use kernel_proto::v1 as pb;
use kernel_proto::v1::agent_client::AgentClient;

use crate::browser::Browser;
use crate::config::TestConfig;
use crate::fake_llm::FakeLlm;
use crate::harness::unix_channel;
use crate::process::AgentdProcess;
use crate::web::{WEB_SECTION, WebConsole};

/// How long a browser step may take.
pub const WAIT: Duration = Duration::from_secs(30);

/// Fake LLM + agentd + kernel-web + a browser, on one test config.
pub struct WebStack {
    pub llm: FakeLlm,
    pub cfg: TestConfig,
    pub agentd: AgentdProcess,
    pub web: WebConsole,
    pub browser: Browser,
}

impl WebStack {
    /// Starts everything with `WEB_SECTION` plus `extra` config; not logged in yet.
    pub async fn start(extra: &str) -> WebStack {
        let llm = FakeLlm::start().await;
        let cfg = TestConfig::new(&llm.url(), &format!("{WEB_SECTION}{extra}"));
        let agentd = AgentdProcess::start(&cfg.path, &[]);
        let web = WebConsole::start(&cfg.path);
        let browser = Browser::start().await;
        WebStack {
            llm,
            cfg,
            agentd,
            web,
            browser,
        }
    }

    /// Starts everything and logs the browser in with a one-time link (lands on the chat page).
    pub async fn logged_in(extra: &str) -> WebStack {
        let stack = WebStack::start(extra).await;
        stack.log_in().await;
        stack
    }

    /// Opens a fresh one-time link and waits for the chat page.
    pub async fn log_in(&self) {
        let link = self.web.url(&WebConsole::login_path(&self.cfg.path));
        self.browser.client.goto(&link).await.unwrap();
        self.browser
            .client
            .wait()
            .at_most(WAIT)
            .for_element(Locator::Id("chat-form"))
            .await
            .expect("the chat page after login");
    }

    /// Navigates to `path` of the console.
    pub async fn goto(&self, path: &str) {
        self.browser.client.goto(&self.web.url(path)).await.unwrap();
    }

    /// A gRPC client of this stack's agentd.
    pub async fn agent(&self) -> AgentClient<tonic::transport::Channel> {
        AgentClient::new(unix_channel(self.cfg.socket()).await)
    }

    /// The texts of agentd's memories.
    pub async fn memories(&self) -> Vec<String> {
        memories(&self.cfg).await
    }

    /// Ends the browser session.
    pub async fn close(self) {
        self.browser.close().await;
    }
}

/// The texts of the memories of the agentd behind `cfg`.
pub async fn memories(cfg: &TestConfig) -> Vec<String> {
    let mut client = AgentClient::new(unix_channel(cfg.socket()).await);
    let reply = client
        .list_memories(pb::ListMemoriesRequest {})
        .await
        .expect("ListMemories");
    reply
        .into_inner()
        .memories
        .into_iter()
        .map(|m| m.text)
        .collect()
}

/// Types `text` into the chat and sends it.
pub async fn send(browser: &Browser, text: &str) {
    let c = &browser.client;
    c.find(Locator::Id("chat-text"))
        .await
        .unwrap()
        .send_keys(text)
        .await
        .unwrap();
    c.find(Locator::Id("chat-send"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

/// Waits until an answer bubble ends in `state` (`done`, `cancelled`, `failed`); its text.
pub async fn answer_in_state(browser: &Browser, state: &str) -> String {
    let selector = format!(".answer[data-state=\"{state}\"]");
    let found = browser
        .client
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css(&selector))
        .await
        .unwrap_or_else(|e| panic!("no answer in state {state}: {e}"));
    found.text().await.unwrap()
}

/// Waits until an answer bubble contains `needle`.
pub async fn eventually_text(browser: &Browser, needle: &str) {
    let xpath = format!("//div[contains(@class,'answer') and contains(., '{needle}')]");
    browser
        .client
        .wait()
        .at_most(WAIT)
        .for_element(Locator::XPath(&xpath))
        .await
        .unwrap_or_else(|e| panic!("no answer with {needle:?}: {e}"));
}

/// The visible text of the first element matching the CSS `selector`.
pub async fn text_of(browser: &Browser, selector: &str) -> String {
    browser
        .client
        .find(Locator::Css(selector))
        .await
        .unwrap_or_else(|e| panic!("no {selector}: {e}"))
        .text()
        .await
        .unwrap()
}

/// Waits for an element matching the CSS `selector` and clicks it.
pub async fn click(browser: &Browser, selector: &str) {
    browser
        .client
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css(selector))
        .await
        .unwrap_or_else(|e| panic!("no {selector}: {e}"))
        .click()
        .await
        .unwrap();
}
