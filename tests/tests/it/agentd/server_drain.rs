//! A listener that fails still shuts the agent down: `run_with` returns the error only after the
//! MCP children are closed (reaped), background work is drained and SQLite is closed.
//!
//! The failure is the TCP listener's TLS setup: its certificate is a FIFO that the MCP server's
//! own start-up script writes only after deleting the key, so the listener fails (no key to read)
//! exactly while that child runs (no timing, no polling).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use kernel_agentd::turn::Extensions;
use tests::config::{AGENTD_TOKEN, TestConfig};
use tests::mcp_support::{everything_js, process_gone};
use tests::wait::eventually;

/// A TOML basic string for `path`.
fn toml_path(path: &Path) -> String {
    format!("{:?}", path.display().to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_listener_still_closes_mcp_children_and_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("cert.pem");
    let key = dir.path().join("key.pem");
    let pid_file = dir.path().join("mcp.pid");
    let script = dir.path().join("mcp.sh");
    std::fs::write(&cert, "not a certificate").unwrap();
    std::fs::write(&key, "not a key").unwrap();
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho $$ > {}\nrm -f {}\nprintf 'not a certificate' > {}\nexec node {} stdio\n",
            toml_path(&pid_file),
            toml_path(&key),
            toml_path(&cert),
            toml_path(&everything_js()),
        ),
    )
    .unwrap();
    let chmod = Command::new("chmod").arg("755").arg(&script).status();
    assert!(chmod.unwrap().success());
    let cfg = TestConfig::new(
        "http://127.0.0.1:9",
        &format!(
            "[agentd]\nlisten = \"127.0.0.1:0\"\ntoken = \"{AGENTD_TOKEN}\"\ntls_cert = {}\n\
             tls_key = {}\n\n[[mcp.servers]]\nname = \"everything\"\ntype = \"stdio\"\ncommand = {}\n",
            toml_path(&cert),
            toml_path(&key),
            toml_path(&script),
        ),
    );
    let config = cfg.load();
    // Validation wants a regular file; from now on reading the certificate waits for the child.
    std::fs::remove_file(&cert).unwrap();
    let mkfifo = Command::new("mkfifo").arg(&cert).status();
    assert!(mkfifo.unwrap().success());

    let unix_path = cfg.dir.path().join("t.sock");
    let listeners = kernel_agentd::Listeners {
        unix: kernel_agentd::listen::bind_unix(&unix_path).await.unwrap(),
        unix_path,
        tcp: Some(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap()),
    };
    let served = kernel_agentd::server::run_with(
        config,
        listeners,
        std::future::pending(),
        Extensions::default(),
    )
    .await;

    let error = served.expect_err("the TCP listener cannot start without its key");
    let io = error
        .downcast_ref::<std::io::Error>()
        .expect("an I/O error");
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound, "{error:#}");
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .expect("the MCP child started before the listener failed")
        .trim()
        .parse()
        .unwrap();
    // Closed before `run_with` returned; on a loaded machine the kernel may show the exiting
    // child in /proc a moment longer, until its parent has reaped it.
    eventually(
        "the MCP child closed and reaped",
        Duration::from_secs(10),
        async || process_gone(pid),
    )
    .await;
    // SQLite removes the WAL file when its last connection closes.
    let db = cfg.data_dir().join("kernel.db");
    assert!(db.is_file());
    assert!(
        !cfg.data_dir().join("kernel.db-wal").exists(),
        "the database was closed"
    );
}
