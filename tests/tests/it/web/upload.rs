//! Uploads to `POST /api/chat/upload` over HTTP, with the real kernel-agentd and kernel-web: a
//! file over 20 MB is refused with 413 and a clear text, eleven files with 413, a body that is
//! not multipart with 422 or 4xx, an upload without the CSRF token with 403; none of them
//! starts a model call.

use tests::config::TestConfig;
use tests::fake_llm::FakeLlm;
use tests::process::AgentdProcess;
use tests::web::{WEB_SECTION, WebConsole, http, log_in_with_csrf};

const BOUNDARY: &str = "kernelboundary7";

/// A multipart body with a `text` field and one `file` field per `(name, bytes)`.
fn multipart(text: &str, files: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut body =
        format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"text\"\r\n\r\n{text}\r\n")
            .into_bytes();
    for (name, data) in files {
        body.extend_from_slice(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; \
                 filename=\"{name}\"\r\nContent-Type: text/plain\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(data);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    body
}

#[tokio::test]
async fn oversized_excessive_malformed_and_forged_uploads_are_refused() {
    let llm = FakeLlm::start().await;
    let cfg = TestConfig::new(&llm.url(), WEB_SECTION);
    let _agentd = AgentdProcess::start(&cfg.path, &[]);
    let web = WebConsole::start(&cfg.path);
    let (cookie, csrf) = log_in_with_csrf(&web, &cfg.path).await;
    let post = |body: Vec<u8>, content_type: &str, csrf: Option<&str>| {
        let mut req = http()
            .post(web.url("/api/chat/upload"))
            .header("cookie", &cookie)
            .header("content-type", content_type.to_owned())
            .body(body);
        if let Some(csrf) = csrf {
            req = req.header("x-csrf-token", csrf.to_owned());
        }
        req.send()
    };
    let form = format!("multipart/form-data; boundary={BOUNDARY}");

    let big = multipart(
        "read this",
        &[("big.txt", vec![b'a'; 20 * 1024 * 1024 + 1])],
    );
    let res = post(big, &form, Some(&csrf)).await.unwrap();
    assert_eq!(res.status(), 413);
    assert!(res.text().await.unwrap().contains("20 MB"));

    let files: Vec<_> = (0..11).map(|_| ("a.txt", b"hello".to_vec())).collect();
    let res = post(multipart("many", &files), &form, Some(&csrf))
        .await
        .unwrap();
    assert_eq!(res.status(), 413);
    assert!(res.text().await.unwrap().contains("10"));

    let res = post(b"garbage".to_vec(), &form, Some(&csrf)).await.unwrap();
    assert!(res.status().is_client_error(), "{}", res.status());
    let res = post(multipart("", &[]), &form, Some(&csrf)).await.unwrap();
    assert_eq!(res.status(), 422, "nothing to send");

    let ok = multipart("hi", &[("a.txt", b"hello".to_vec())]);
    let res = post(ok, &form, None).await.unwrap();
    assert_eq!(res.status(), 403, "no CSRF token");

    assert!(llm.requests().is_empty(), "no model call");
}
