//! A real headless Chromium for the web console's end-to-end tests: Debian's `chromedriver`
//! (started on a free loopback port, killed on drop) driven through the `fantoccini` WebDriver
//! client, with the flags Chromium needs as root in a container and a fresh profile; and
//! screenshots written under `target/web-screenshots/`; a viewport and a colour scheme emulated
//! through chromedriver's DevTools endpoint ([`Browser::emulate`]).

use std::io::{BufRead as _, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use fantoccini::{Client, ClientBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::json;

/// Where Debian installs the driver and the browser.
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const CHROMIUM: &str = "/usr/bin/chromium";

/// A running chromedriver and one browser session; both end on drop.
pub struct Browser {
    pub client: Client,
    driver: Child,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts chromedriver and a headless Chromium session.
    pub async fn start() -> Browser {
        let port = free_port();
        let mut driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver (apt-get install chromium chromium-driver)");
        let stdout = driver.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if line.contains("started successfully") {
                    let _ = tx.send(());
                }
            }
        });
        tokio::task::spawn_blocking(move || rx.recv_timeout(Duration::from_secs(30)))
            .await
            .expect("wait task")
            .expect("chromedriver did not start");
        let profile = tempfile::tempdir().expect("profile dir");
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".to_owned(),
            json!({
                "binary": CHROMIUM,
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    "--disable-dev-shm-usage", "--window-size=1200,900",
                    format!("--user-data-dir={}", profile.path().display()),
                ],
            }),
        );
        let client = ClientBuilder::new(HttpConnector::new())
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .expect("a WebDriver session");
        Browser {
            client,
            driver,
            _profile: profile,
        }
    }

    /// Writes a PNG screenshot of the page to `target/web-screenshots/<name>.png`.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let png = self.client.screenshot().await.expect("a screenshot");
        let dir = screenshot_dir();
        std::fs::create_dir_all(&dir).expect("screenshot dir");
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, png).expect("write the screenshot");
        path
    }

    /// Emulates a `width`×`height` viewport (a phone's, with its viewport-meta handling, when
    /// `mobile`) and the system's colour scheme (`dark` or light) for `prefers-color-scheme`.
    pub async fn emulate(&self, width: u32, height: u32, mobile: bool, dark: bool) {
        self.cdp(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile}),
        )
        .await;
        let scheme = if dark { "dark" } else { "light" };
        self.cdp(
            "Emulation.setEmulatedMedia",
            json!({"features": [{"name": "prefers-color-scheme", "value": scheme}]}),
        )
        .await;
    }

    /// Runs one Chrome DevTools Protocol command (`goog/cdp/execute`).
    pub async fn cdp(&self, cmd: &str, params: serde_json::Value) -> serde_json::Value {
        self.client
            .issue_cmd(Cdp(json!({"cmd": cmd, "params": params})))
            .await
            .unwrap_or_else(|e| panic!("{cmd}: {e}"))
    }

    /// Ends the session and the driver.
    pub async fn close(mut self) {
        let _ = self.client.clone().close().await;
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// `target/web-screenshots/` of the workspace.
pub fn screenshot_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("target")
        .join("web-screenshots")
}

/// chromedriver's `POST /session/{id}/goog/cdp/execute` with a `{cmd, params}` body.
#[derive(Debug)]
struct Cdp(serde_json::Value);

impl fantoccini::wd::WebDriverCompatibleCommand for Cdp {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/goog/cdp/execute",
            session_id.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(self.0.to_string()))
    }
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address").port()
}
