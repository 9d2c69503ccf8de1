//! The web console under test: the real `kernel-web` binary (`WebConsole`: started on
//! `127.0.0.1:0`, its address read from its ready line), one-time login links from
//! `kernel-web --login-url`, a cookie-less HTTP client that follows no redirects with the
//! suites' usual requests (a logged-in session and its CSRF token, a GET, a form POST), and
//! agentd's memories as the console's suites add and read them.

use std::path::Path;
use std::process::Stdio;

use kernel_proto::v1 as pb;
use kernel_proto::v1::agent_client::AgentClient;

use crate::config::TestConfig;
use crate::harness::unix_channel;
use crate::process::{BinProcess, bin_command};

/// The `[web]` section for a test config: an ephemeral loopback port.
pub const WEB_SECTION: &str = "[web]\nlisten = \"127.0.0.1:0\"\n";

/// A running kernel-web; killed on drop.
pub struct WebConsole {
    pub process: BinProcess,
    /// `http://127.0.0.1:<port>`.
    pub base: String,
}

impl WebConsole {
    /// Starts `kernel-web --config <config>` and waits for its ready line.
    pub fn start(config: &Path) -> WebConsole {
        let process = BinProcess::start("kernel-web", config, &[], "kernel-web ready on ");
        let output = process.output();
        let base = output
            .lines()
            .find_map(|l| l.split("kernel-web ready on ").nth(1))
            .expect("the ready line")
            .trim()
            .to_owned();
        WebConsole { process, base }
    }

    /// `base` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A fresh one-time login link for this console (its path and query: `/login?token=…`).
    pub fn login_path(config: &Path) -> String {
        let out = run(config, &["--login-url"]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "--login-url failed: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let url = text.trim();
        let at = url.find("/login?token=").expect("a login path");
        url[at..].to_owned()
    }
}

/// Runs `kernel-web --config <config> <args>` to its end.
pub fn run(config: &Path, args: &[&str]) -> std::process::Output {
    bin_command("kernel-web", config)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run kernel-web")
}

/// An HTTP client that keeps no cookies and follows no redirects (tests look at each answer).
pub fn http() -> reqwest::Client {
    kernel_agentd::http::install_crypto_provider();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("an HTTP client")
}

/// Logs in with a fresh link: the `kernel_session=…` cookie pair to send back.
pub async fn log_in(web: &WebConsole, config: &Path) -> String {
    let path = WebConsole::login_path(config);
    let res = http().get(web.url(&path)).send().await.expect("GET /login");
    assert_eq!(res.status(), 303, "login redirects to the chat");
    let set = res
        .headers()
        .get("set-cookie")
        .expect("a session cookie")
        .to_str()
        .unwrap()
        .to_owned();
    set.split(';').next().unwrap().to_owned()
}

/// The CSRF token a page embeds (its `<meta name="csrf">`).
pub fn csrf_of(page: &str) -> String {
    let at = page
        .find("name=\"csrf\" content=\"")
        .expect("the csrf meta")
        + 21;
    page[at..].split('"').next().unwrap().to_owned()
}

/// Logs in with a fresh link and reads the chat page: the cookie pair and the page's CSRF token.
pub async fn log_in_with_csrf(web: &WebConsole, config: &Path) -> (String, String) {
    let cookie = log_in(web, config).await;
    let (_, page) = get(web, "/chat", Some(&cookie)).await;
    let csrf = csrf_of(&page);
    (cookie, csrf)
}

/// `GET path`, with the session `cookie` when given: the status and the body.
pub async fn get(web: &WebConsole, path: &str, cookie: Option<&str>) -> (u16, String) {
    let mut req = http().get(web.url(path));
    if let Some(cookie) = cookie {
        req = req.header("cookie", cookie);
    }
    let res = req.send().await.expect("GET");
    let status = res.status().as_u16();
    (status, res.text().await.unwrap_or_default())
}

/// `POST path` of the form `body` with the session `cookie`: the status and the body.
pub async fn post_form(web: &WebConsole, path: &str, cookie: &str, body: String) -> (u16, String) {
    let res = http()
        .post(web.url(path))
        .header("cookie", cookie)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .expect("POST");
    let status = res.status().as_u16();
    (status, res.text().await.unwrap_or_default())
}

/// Adds the owner's memory `text` through the agentd behind `cfg`.
pub async fn add_memory(cfg: &TestConfig, text: &str) {
    let mut client = AgentClient::new(unix_channel(cfg.socket()).await);
    client
        .add_memory(pb::AddMemoryRequest {
            text: text.to_owned(),
        })
        .await
        .expect("AddMemory");
}

/// The texts of the memories of the agentd behind `cfg` (`ListMemories`).
pub async fn memories(cfg: &TestConfig) -> Vec<String> {
    let mut client = AgentClient::new(unix_channel(cfg.socket()).await);
    let request = pb::ListMemoriesRequest {};
    let reply = client.list_memories(request).await.expect("ListMemories");
    memory_texts(reply.into_inner().memories)
}

/// The texts of listed memories, in their order.
pub fn memory_texts(memories: Vec<pb::MemoryInfo>) -> Vec<String> {
    memories.into_iter().map(|m| m.text).collect()
}
