//! The web console under test: the real `kernel-web` binary (`WebConsole`: started on
//! `127.0.0.1:0`, its address read from its ready line), one-time login links from
//! `kernel-web --login-url`, and a cookie-less HTTP client that follows no redirects.

use std::path::Path;
use std::process::Stdio;

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
