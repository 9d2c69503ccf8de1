//! HTTPS for the web console (`[web] tls_cert`/`tls_key`), with a self-signed certificate made
//! in the test: kernel-web serves the login page and a one-time login over https (the cookie is
//! `Secure`) and refuses plain HTTP on that port; a non-loopback `listen` passes `--check` with
//! TLS (and is refused without it, `web::http`); a certificate file that holds no PEM
//! certificate stops kernel-web at start with the key named.

use std::path::{Path, PathBuf};

use tests::config::TestConfig;
use tests::process::AgentdProcess;
use tests::web::{WebConsole, run};

/// A self-signed certificate for `localhost`/`127.0.0.1` written next to the config: its PEM and
/// the two paths.
fn self_signed(dir: &Path) -> (String, PathBuf, PathBuf) {
    let made = rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()])
        .expect("a self-signed certificate");
    let cert_pem = made.cert.pem();
    let cert = dir.join("web-cert.pem");
    let key = dir.join("web-key.pem");
    std::fs::write(&cert, &cert_pem).unwrap();
    std::fs::write(&key, made.signing_key.serialize_pem()).unwrap();
    (cert_pem, cert, key)
}

fn web_section(listen: &str, cert: &Path, key: &Path) -> String {
    format!(
        "[web]\nlisten = \"{listen}\"\ntls_cert = {:?}\ntls_key = {:?}\n",
        cert.display().to_string(),
        key.display().to_string()
    )
}

#[tokio::test]
async fn with_tls_the_console_serves_https_and_a_login_sets_a_secure_cookie() {
    let dir = tempfile::tempdir().unwrap();
    let (pem, cert, key) = self_signed(dir.path());
    let cfg = TestConfig::new(
        "http://127.0.0.1:9",
        &web_section("127.0.0.1:0", &cert, &key),
    );
    let _agentd = AgentdProcess::start(&cfg.path, &[]);
    let web = WebConsole::start(&cfg.path);
    assert!(web.base.starts_with("https://127.0.0.1:"), "{}", web.base);

    kernel_agentd::http::install_crypto_provider();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .tls_certs_only([reqwest::Certificate::from_pem(pem.as_bytes()).unwrap()])
        .build()
        .unwrap();
    let login = client.get(web.url("/chat")).send().await.expect("https");
    assert_eq!(login.status(), 401);
    assert!(login.text().await.unwrap().contains("--login-url"));

    let path = WebConsole::login_path(&cfg.path);
    let res = client.get(web.url(&path)).send().await.unwrap();
    assert_eq!(res.status(), 303);
    let cookie = res.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(cookie.contains("; Secure"), "{cookie}");
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    let pair = cookie.split(';').next().unwrap();
    let chat = client
        .get(web.url("/chat"))
        .header("cookie", pair)
        .send()
        .await
        .unwrap();
    assert_eq!(chat.status(), 200);

    // Plain HTTP on the same port gets no page.
    let plain = web.base.replacen("https://", "http://", 1);
    let answer = tests::web::http().get(format!("{plain}/chat")).send().await;
    assert!(
        answer.is_err() || !answer.unwrap().status().is_success(),
        "plain HTTP is not served"
    );
}

#[test]
fn a_non_loopback_listen_with_tls_passes_the_check() {
    let dir = tempfile::tempdir().unwrap();
    let (_, cert, key) = self_signed(dir.path());
    let cfg = TestConfig::new(
        "http://127.0.0.1:9",
        &web_section("0.0.0.0:8787", &cert, &key),
    );
    let out = run(&cfg.path, &["--check"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_certificate_file_without_a_certificate_stops_kernel_web_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let (_, _, key) = self_signed(dir.path());
    let bogus = dir.path().join("not-a-cert.pem");
    std::fs::write(&bogus, "hello\n").unwrap();
    let cfg = TestConfig::new(
        "http://127.0.0.1:9",
        &web_section("127.0.0.1:0", &bogus, &key),
    );
    let out = run(&cfg.path, &[]);
    assert!(!out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("web.tls_cert"), "{text}");
    assert!(text.contains("no PEM certificate"), "{text}");
    assert!(!text.contains("PRIVATE KEY"), "{text}");
}
