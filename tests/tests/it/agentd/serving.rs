//! kernel-agentd serving: the real binary behind the real grpcurl on its Unix socket, the 0600
//! socket, the data-dir lock, TCP with a bearer token, and `--check`.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use kernel_proto::v1::GetStatusRequest;
use kernel_proto::v1::agent_client::AgentClient;
use tests::config::{AGENTD_TOKEN, PROVIDER_KEY, TELEGRAM_TOKEN, TestConfig};
use tests::process::{AgentdProcess, bin_path, grpcurl};

fn unix_args(socket: &std::path::Path) -> Vec<String> {
    // grpcurl ≤ 1.8.6 needs an explicit authority over a Unix socket.
    vec![
        "-plaintext".into(),
        "-unix".into(),
        "-authority".into(),
        "localhost".into(),
        socket.display().to_string(),
    ]
}

fn run_grpcurl(pre: &[&str], socket: &std::path::Path, post: &[&str]) -> (bool, String) {
    let mut args: Vec<String> = pre.iter().map(|s| s.to_string()).collect();
    args.extend(unix_args(socket));
    args.extend(post.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = grpcurl(&refs);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn grpcurl_lists_describes_checks_health_and_gets_status() {
    let cfg = TestConfig::new("http://127.0.0.1:9", "");
    let agentd = AgentdProcess::start(&cfg.path, &[]);
    let socket = cfg.socket();

    let mode = std::fs::metadata(&socket).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "socket mode");
    let data_mode = std::fs::metadata(cfg.data_dir())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(data_mode, 0o700, "data dir mode");

    let (ok, out) = run_grpcurl(&[], &socket, &["list"]);
    assert!(ok, "{out}");
    assert!(out.contains("kernel.v1.Agent"), "{out}");
    assert!(out.contains("grpc.health.v1.Health"), "{out}");

    let (ok, out) = run_grpcurl(&[], &socket, &["describe", "kernel.v1.Agent"]);
    assert!(ok, "{out}");
    for rpc in [
        "rpc Chat",
        "rpc Cancel",
        "rpc GetStatus",
        "rpc ListSessions",
        "rpc SearchMemories",
    ] {
        assert!(out.contains(rpc), "missing {rpc}: {out}");
    }

    let (ok, out) = run_grpcurl(&[], &socket, &["grpc.health.v1.Health/Check"]);
    assert!(ok, "{out}");
    assert!(out.contains("SERVING"), "{out}");

    let (ok, out) = run_grpcurl(&[], &socket, &["kernel.v1.Agent/GetStatus"]);
    assert!(ok, "{out}");
    let status: serde_json::Value = serde_json::from_str(&out).expect("GetStatus JSON");
    assert_eq!(status["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(status["fts5Available"], true);
    assert!(
        status["databasePath"]
            .as_str()
            .unwrap()
            .starts_with(cfg.data_dir().to_str().unwrap())
    );

    // A second agentd on the same data dir refuses and leaves the first one serving.
    let second = Command::new(bin_path("kernel-agentd"))
        .arg("--config")
        .arg(&cfg.path)
        .output()
        .unwrap();
    assert!(!second.status.success());
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(err.contains("already"), "{err}");
    let (ok, out) = run_grpcurl(&[], &socket, &["grpc.health.v1.Health/Check"]);
    assert!(ok && out.contains("SERVING"), "{out}");

    let log = agentd.output();
    assert!(
        !log.contains(PROVIDER_KEY) && !log.contains(TELEGRAM_TOKEN),
        "secret in log: {log}"
    );
    let status = agentd.terminate();
    assert!(status.success(), "graceful shutdown on SIGTERM: {status:?}");
    assert!(!socket.exists() || std::os::unix::net::UnixStream::connect(&socket).is_err());
}

#[test]
fn memory_rpcs_answer_over_grpcurl() {
    let cfg = TestConfig::new("http://127.0.0.1:9", "");
    let _agentd = AgentdProcess::start(&cfg.path, &[]);
    let (ok, out) = run_grpcurl(&[], &cfg.socket(), &["kernel.v1.Agent/ListMemories"]);
    assert!(ok && !out.contains("Unimplemented"), "{out}");
}

#[test]
fn check_prints_a_redacted_summary() {
    let cfg = TestConfig::new("http://127.0.0.1:9", "");
    for bin in ["kernel-agentd", "kernel-tg"] {
        let out = Command::new(bin_path(bin))
            .arg("--config")
            .arg(&cfg.path)
            .arg("--check")
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{bin}: {text}");
        assert!(
            text.contains("fake"),
            "{bin} summary names the provider: {text}"
        );
        assert!(!text.contains(PROVIDER_KEY), "{bin} leaked the key: {text}");
        assert!(
            !text.contains(TELEGRAM_TOKEN),
            "{bin} leaked the token: {text}"
        );
    }
}

#[test]
fn check_reports_problems_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, "[general]\ndefault_provider = \"nope\"\n").unwrap();
    for bin in ["kernel-agentd", "kernel-tg"] {
        let out = Command::new(bin_path(bin))
            .arg("--config")
            .arg(&path)
            .arg("--check")
            .env_remove("KERNEL_TELEGRAM_TOKEN")
            .output()
            .unwrap();
        assert!(!out.status.success(), "{bin} must refuse");
        assert!(!out.stderr.is_empty(), "{bin} says why");
    }
}

#[tokio::test]
async fn tcp_requires_the_bearer_token() {
    let cfg = TestConfig::new(
        "http://127.0.0.1:9",
        &format!("[agentd]\nlisten = \"127.0.0.1:0\"\ntoken = \"{AGENTD_TOKEN}\"\n"),
    );
    let config =
        kernel_common::Config::load(&cfg.path, kernel_common::config::Component::Agentd, &|_| {
            None
        })
        .expect("config");
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = tcp.local_addr().unwrap();
    let unix_path = cfg.dir.path().join("t.sock");
    let unix = kernel_agentd::listen::bind_unix(&unix_path).await.unwrap();
    let listeners = kernel_agentd::Listeners {
        unix,
        unix_path,
        tcp: Some(tcp),
    };
    let stop = tokio_util::sync::CancellationToken::new();
    let server = tokio::spawn(kernel_agentd::run(
        config,
        listeners,
        stop.clone().cancelled_owned(),
    ));

    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut client = AgentClient::new(channel.clone());
    let err = client.get_status(GetStatusRequest {}).await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::Unauthenticated);

    let mut req = tonic::Request::new(GetStatusRequest {});
    req.metadata_mut()
        .insert("authorization", "Bearer wrong-token".parse().unwrap());
    assert_eq!(
        client.get_status(req).await.unwrap_err().code(),
        tonic::Code::Unauthenticated
    );

    let mut req = tonic::Request::new(GetStatusRequest {});
    req.metadata_mut().insert(
        "authorization",
        format!("Bearer {AGENTD_TOKEN}").parse().unwrap(),
    );
    let status = client
        .get_status(req)
        .await
        .expect("authorized")
        .into_inner();
    assert_eq!(status.version, env!("CARGO_PKG_VERSION"));

    // The real grpcurl over TCP, with and without the token.
    let target = addr.to_string();
    let no_token = tokio::task::spawn_blocking({
        let target = target.clone();
        move || grpcurl(&["-plaintext", &target, "kernel.v1.Agent/GetStatus"])
    })
    .await
    .unwrap();
    assert!(!no_token.status.success());
    assert!(String::from_utf8_lossy(&no_token.stderr).contains("Unauthenticated"));
    let header = format!("authorization: Bearer {AGENTD_TOKEN}");
    let with_token = tokio::task::spawn_blocking(move || {
        grpcurl(&[
            "-plaintext",
            "-H",
            &header,
            &target,
            "kernel.v1.Agent/GetStatus",
        ])
    })
    .await
    .unwrap();
    assert!(
        with_token.status.success(),
        "{}",
        String::from_utf8_lossy(&with_token.stderr)
    );

    stop.cancel();
    server.await.unwrap().expect("clean shutdown");
}
