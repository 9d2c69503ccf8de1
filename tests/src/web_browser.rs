//! Shared steps of the web console's browser suites: a whole stack (`WebStack`: fake LLM, real
//! agentd, real kernel-web, headless Chromium) optionally already logged in, on a config a
//! suite may first seed (`seed_store`, `seed_pool`: the database before agentd starts), and the
//! pages' usual gestures (type and send, wait for an element or an answer in a state or with a
//! text, click, read an element's text or several elements' texts).

use std::time::Duration;

use fantoccini::Locator;
use fantoccini::elements::Element;
use kernel_agentd::store::Store;
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
        WebStack::start_on(llm, cfg).await
    }

    /// Starts agentd, kernel-web and a browser on `cfg` (written, and perhaps seeded, for
    /// `llm`); not logged in yet.
    pub async fn start_on(llm: FakeLlm, cfg: TestConfig) -> WebStack {
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

    /// [`WebStack::start_on`], then logged in like [`WebStack::logged_in`].
    pub async fn logged_in_on(llm: FakeLlm, cfg: TestConfig) -> WebStack {
        let stack = WebStack::start_on(llm, cfg).await;
        stack.log_in().await;
        stack
    }

    /// Opens a fresh one-time link and waits for the chat page.
    pub async fn log_in(&self) {
        let link = self.web.url(&WebConsole::login_path(&self.cfg.path));
        self.browser.client.goto(&link).await.unwrap();
        wait_for(
            &self.browser,
            Locator::Id("chat-form"),
            "the chat page after login",
        )
        .await;
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
        crate::web::memories(&self.cfg).await
    }

    /// Ends the browser session.
    pub async fn close(self) {
        self.browser.close().await;
    }
}

/// The database of `cfg`, created and migrated, to seed before agentd starts (close it then).
pub async fn seed_store(cfg: &TestConfig) -> Store {
    std::fs::create_dir_all(cfg.data_dir()).expect("the data dir");
    Store::open(&cfg.data_dir().join("kernel.db"))
        .await
        .expect("open the database")
}

/// [`seed_store`]'s database as a plain pool, for rows no store call writes (close it before
/// agentd starts).
pub async fn seed_pool(cfg: &TestConfig) -> sqlx::SqlitePool {
    seed_store(cfg).await.close().await;
    let path = cfg.data_dir().join("kernel.db");
    sqlx::SqlitePool::connect(&format!("sqlite://{}", path.display()))
        .await
        .expect("open the database")
}

/// Types `text` into the chat and sends it.
pub async fn send(browser: &Browser, text: &str) {
    fill(browser, "#chat-text", text).await;
    click(browser, "#chat-send").await;
}

/// Types `text` into the first element matching the CSS `selector`.
pub async fn fill(browser: &Browser, selector: &str, text: &str) {
    browser
        .client
        .find(Locator::Css(selector))
        .await
        .unwrap_or_else(|e| panic!("no {selector}: {e}"))
        .send_keys(text)
        .await
        .unwrap();
}

/// Waits (up to [`WAIT`]) for an element at `locator`; panics with `what` when none comes.
pub async fn wait_for(browser: &Browser, locator: Locator<'_>, what: &str) -> Element {
    browser
        .client
        .wait()
        .at_most(WAIT)
        .for_element(locator)
        .await
        .unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// Waits until an answer bubble ends in `state` (`done`, `cancelled`, `failed`); its text.
pub async fn answer_in_state(browser: &Browser, state: &str) -> String {
    let selector = format!(".answer[data-state=\"{state}\"]");
    let what = format!("no answer in state {state}");
    let found = wait_for(browser, Locator::Css(&selector), &what).await;
    found.text().await.unwrap()
}

/// Waits until an answer bubble contains `needle`.
pub async fn eventually_text(browser: &Browser, needle: &str) {
    let xpath = format!("//div[contains(@class,'answer') and contains(., '{needle}')]");
    let what = format!("no answer with {needle:?}");
    wait_for(browser, Locator::XPath(&xpath), &what).await;
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

/// The visible texts of every element matching the CSS `selector`, in page order.
pub async fn texts_of(browser: &Browser, selector: &str) -> Vec<String> {
    let mut out = Vec::new();
    for found in browser
        .client
        .find_all(Locator::Css(selector))
        .await
        .unwrap()
    {
        out.push(found.text().await.unwrap());
    }
    out
}

/// Waits for an element matching the CSS `selector` and clicks it.
pub async fn click(browser: &Browser, selector: &str) {
    let what = format!("no {selector}");
    let found = wait_for(browser, Locator::Css(selector), &what).await;
    found.click().await.unwrap();
}
