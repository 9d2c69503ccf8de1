//! `/web` in Telegram through both real binaries and the real kernel-web: the owner gets a
//! one-time login link built by agentd from `[web]` (`public_url`, else the listen address); it
//! logs in once and a second use is refused; without `[web]` the bot says the console is not
//! configured. (The ten-minute expiry is `web_auth`'s unit test on a moved clock.)

use tests::stack::Stack;
use tests::web::{WEB_SECTION, WebConsole, http};

/// The `href` of the first link in a reply's HTML.
fn href(html: &str) -> String {
    let at = html.find("href=\"").expect("a link in the reply") + 6;
    html[at..].split('"').next().unwrap().replace("&amp;", "&")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_web_sends_a_link_that_logs_in_once() {
    let public = "https://kernel.example.net:8443";
    let stack = Stack::start_with(
        "claude",
        &format!("{WEB_SECTION}public_url = \"{public}/\"\n"),
    )
    .await;
    let web = WebConsole::start(&stack.cfg.path);
    let reply = stack.command("/web").await;
    assert!(reply.contains("一次性登录链接"), "{reply}");
    assert!(reply.contains("10 分钟"), "{reply}");
    let link = href(&reply);
    assert!(
        link.starts_with(&format!("{public}/login?token=")),
        "the link starts with web.public_url: {link}"
    );
    let token = link.split("token=").nth(1).unwrap();
    assert_eq!(token.len(), 64, "{link}");

    // The same path on the console that is actually running: works once.
    let path = &link[public.len()..];
    let first = http().get(web.url(path)).send().await.unwrap();
    assert_eq!(first.status(), 303, "the first use logs in");
    assert!(first.headers().get("set-cookie").is_some());
    let second = http().get(web.url(path)).send().await.unwrap();
    assert_eq!(second.status(), 401, "a second use is refused");
    assert!(second.text().await.unwrap().contains("已经用过"));

    // Each /web makes a fresh link.
    let again = href(&stack.command("/web").await);
    assert_ne!(again, link);
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_web_links_to_the_listen_address_without_public_url() {
    let stack = Stack::start_with("claude", WEB_SECTION).await;
    let link = href(&stack.command("/web").await);
    assert!(
        link.starts_with("http://127.0.0.1:0/login?token="),
        "http://<web.listen>: {link}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_web_without_a_web_section_says_it_is_not_configured() {
    let stack = Stack::start().await;
    let reply = stack.command("/web").await;
    assert!(reply.contains("网页控制台还没有配置"), "{reply}");
    assert!(reply.contains("[web]"), "{reply}");
    assert!(!reply.contains("login?token"), "{reply}");
}
