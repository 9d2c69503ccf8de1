//! The web console over HTTP, with the real kernel-agentd and kernel-web: a login link works
//! once; without the cookie every page and API answers 401; a POST without the CSRF token is
//! refused (403) and changes nothing; a memory holding `<script>` shows as text; a non-loopback
//! `web.listen` is refused at start; the session survives a kernel-web restart and an agentd
//! restart under it (kernel-web reconnects); strict security headers on every answer.

use tests::config::TestConfig;
use tests::process::AgentdProcess;
use tests::wait::eventually;
use tests::web::{WEB_SECTION, WebConsole, add_memory, csrf_of, get, http, log_in, memories};

#[tokio::test]
async fn a_login_link_works_once_and_without_the_cookie_everything_is_401() {
    let cfg = TestConfig::new("http://127.0.0.1:9", WEB_SECTION);
    let _agentd = AgentdProcess::start(&cfg.path, &[]);
    let web = WebConsole::start(&cfg.path);

    for path in [
        "/",
        "/chat",
        "/memory",
        "/sessions",
        "/status",
        "/usage",
        "/sessions/1",
        "/notes",
        "/schedules",
        "/skills",
    ] {
        let (status, body) = get(&web, path, None).await;
        assert_eq!(status, 401, "{path}: {body}");
        assert!(
            body.contains("--login-url"),
            "{path} says how to log in: {body}"
        );
    }
    for path in [
        "/api/chat",
        "/api/stop",
        "/memory/forget",
        "/sessions/delete",
        "/sessions/rename",
        "/schedules/delete",
        "/jobs/cancel",
        "/memory/edit",
    ] {
        let res = http().post(web.url(path)).send().await.unwrap();
        assert_eq!(res.status(), 401, "POST {path}");
    }
    let (status, _) = get(&web, "/chat", Some("kernel_session=1.2.3")).await;
    assert_eq!(status, 401, "a forged cookie");

    let link = WebConsole::login_path(&cfg.path);
    let res = http().get(web.url(&link)).send().await.unwrap();
    assert_eq!(res.status(), 303);
    let set = res.headers()["set-cookie"].to_str().unwrap().to_owned();
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(set.contains(attribute), "{set}");
    }
    let cookie = set.split(';').next().unwrap().to_owned();
    let (status, page) = get(&web, "/chat", Some(&cookie)).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("chat-form"), "{page}");

    // The same link a second time: refused, no cookie.
    let again = http().get(web.url(&link)).send().await.unwrap();
    assert_eq!(again.status(), 401);
    assert!(again.headers().get("set-cookie").is_none());
    let (status, _) = get(&web, "/login?token=0000", None).await;
    assert_eq!(status, 401, "an unknown token");
}

#[tokio::test]
async fn every_answer_carries_a_strict_content_security_policy() {
    let cfg = TestConfig::new("http://127.0.0.1:9", WEB_SECTION);
    let _agentd = AgentdProcess::start(&cfg.path, &[]);
    let web = WebConsole::start(&cfg.path);
    let cookie = log_in(&web, &cfg.path).await;
    for (path, cookie) in [
        ("/chat", Some(cookie.as_str())),
        ("/chat", None),
        ("/login", None),
    ] {
        let mut req = http().get(web.url(path));
        if let Some(cookie) = cookie {
            req = req.header("cookie", cookie);
        }
        let res = req.send().await.unwrap();
        let csp = res.headers()["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("default-src 'none'"), "{csp}");
        assert!(csp.contains("script-src 'self'"), "{csp}");
        assert!(!csp.contains("unsafe-inline"), "{csp}");
        assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
        assert_eq!(res.headers()["x-content-type-options"], "nosniff");
    }
}

#[tokio::test]
async fn a_post_without_the_csrf_token_is_refused_and_a_script_memory_shows_as_text() {
    let cfg = TestConfig::new("http://127.0.0.1:9", WEB_SECTION);
    let _agentd = AgentdProcess::start(&cfg.path, &[]);
    let web = WebConsole::start(&cfg.path);
    let hostile = "<script>alert('owned')</script> & \"quotes\"";
    add_memory(&cfg, hostile).await;
    add_memory(&cfg, "the owner likes green tea").await;
    let cookie = log_in(&web, &cfg.path).await;

    let (status, page) = get(&web, "/memory", Some(&cookie)).await;
    assert_eq!(status, 200);
    assert!(
        !page.contains("<script>alert"),
        "raw markup in the page: {page}"
    );
    assert!(
        page.contains(
            "&lt;script&gt;alert(&#39;owned&#39;)&lt;/script&gt; &amp; &quot;quotes&quot;"
        ),
        "{page}"
    );

    // A cross-site form post: the cookie (as a browser without SameSite would send it) but no
    // CSRF token, or a wrong one. Refused; nothing forgotten.
    for body in ["id=1", "id=1&csrf=forged"] {
        let res = http()
            .post(web.url("/memory/forget"))
            .header("cookie", &cookie)
            .header("content-type", "application/x-www-form-urlencoded")
            .header("origin", "https://evil.example")
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 403, "{body}");
    }
    let res = http()
        .post(web.url("/api/stop"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403, "an API call without the header");
    assert_eq!(memories(&cfg).await.len(), 2, "nothing forgotten");

    // With the page's token the same form works.
    let csrf = csrf_of(&page);
    let (_, searched) = get(&web, "/memory?q=green%20tea", Some(&cookie)).await;
    assert!(searched.contains("green tea"), "{searched}");
    let id = searched
        .split("name=\"id\" value=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap()
        .to_owned();
    let res = http()
        .post(web.url("/memory/forget"))
        .header("cookie", &cookie)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("id={id}&csrf={csrf}&q=green+tea"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 303);
    assert_eq!(memories(&cfg).await, vec![hostile.to_owned()]);
}

#[test]
fn a_non_loopback_listen_address_is_refused_at_start() {
    let cfg = TestConfig::new("http://127.0.0.1:9", "[web]\nlisten = \"0.0.0.0:8787\"\n");
    let out = tests::web::run(&cfg.path, &[]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("web.listen"), "{text}");
    assert!(text.contains("loopback"), "{text}");
    let check = tests::web::run(&cfg.path, &["--check"]);
    assert_eq!(check.status.code(), Some(2), "--check refuses it too");
}

#[tokio::test]
async fn the_session_survives_a_kernel_web_restart_and_an_agentd_restart_under_it() {
    let cfg = TestConfig::new("http://127.0.0.1:9", WEB_SECTION);
    let agentd = AgentdProcess::start(&cfg.path, &[]);
    add_memory(&cfg, "kept across restarts").await;
    let web = WebConsole::start(&cfg.path);
    let cookie = log_in(&web, &cfg.path).await;
    let (status, _) = get(&web, "/memory", Some(&cookie)).await;
    assert_eq!(status, 200);

    // kernel-web restarts: it kept nothing, the same cookie still works.
    web.process.terminate();
    let web = WebConsole::start(&cfg.path);
    let (status, page) = get(&web, "/memory", Some(&cookie)).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("kept across restarts"), "{page}");

    // agentd restarts under it: while it is down the console says so (503), then it
    // reconnects and the same cookie works (agentd's key is on disk).
    agentd.terminate();
    let (status, _) = get(&web, "/memory", Some(&cookie)).await;
    assert_eq!(status, 503);
    let _agentd = AgentdProcess::start(&cfg.path, &[]);
    eventually(
        "kernel-web reconnected",
        std::time::Duration::from_secs(20),
        async || {
            let (status, page) = get(&web, "/memory", Some(&cookie)).await;
            (status == 200 && page.contains("kept across restarts")).then_some(())
        },
    )
    .await;
}
