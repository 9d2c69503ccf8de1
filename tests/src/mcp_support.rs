//! MCP test support around the real `@modelcontextprotocol/server-everything` (installed under
//! `tests/node_modules` by `npm ci`): config snippets for its stdio mode, a stdio wrapper the test
//! can kill and break, its streamable HTTP mode on a free 127.0.0.1 port (ready when it says so),
//! a recording TCP proxy to see the headers that reach it, and a listener that never answers.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;

use crate::wait::poll;

/// Longest wait for the HTTP server to say it is listening.
const READY_DEADLINE: Duration = Duration::from_secs(30);

/// `server-everything`'s entry point; panics with a hint when `npm ci` has not run.
pub fn everything_js() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        path.is_file(),
        "{} is missing: run `npm ci` in tests/ (scripts/test does)",
        path.display()
    );
    path
}

/// A `[[mcp.servers]]` entry running server-everything on stdio as `name`.
pub fn stdio_toml(name: &str) -> String {
    format!(
        "[[mcp.servers]]\nname = \"{name}\"\ntype = \"stdio\"\ncommand = \"node\"\nargs = [{}, \"stdio\"]\n",
        toml_str(&everything_js().display().to_string())
    )
}

/// A `[[mcp.servers]]` entry for a streamable HTTP server at `url` with `headers` (TOML inline
/// table body, e.g. `"X-Token" = "${TOKEN}"`).
pub fn http_toml(name: &str, url: &str, headers: &str) -> String {
    format!(
        "[[mcp.servers]]\nname = \"{name}\"\ntype = \"http\"\nurl = {}\nheaders = {{ {headers} }}\n",
        toml_str(url)
    )
}

fn toml_str(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// server-everything on stdio behind a shell wrapper that records the server's pid (the wrapper
/// `exec`s node, so it is the same process) and that the test can break (exit 1) and fix.
pub struct KillableStdio {
    dir: PathBuf,
}

impl KillableStdio {
    /// Writes the wrapper under `dir` (working).
    pub fn new(dir: &Path) -> KillableStdio {
        let me = KillableStdio {
            dir: dir.to_path_buf(),
        };
        me.fix();
        me
    }

    fn script(&self) -> PathBuf {
        self.dir.join("mcp-server.sh")
    }

    fn pid_file(&self) -> PathBuf {
        self.dir.join("mcp-server.pid")
    }

    /// The `[[mcp.servers]]` entry running the wrapper as `name`.
    pub fn toml(&self, name: &str) -> String {
        format!(
            "[[mcp.servers]]\nname = \"{name}\"\ntype = \"stdio\"\ncommand = {}\n",
            toml_str(&self.script().display().to_string())
        )
    }

    /// From now on the wrapper starts the server.
    pub fn fix(&self) {
        let js = everything_js();
        let body = format!(
            "#!/bin/sh\necho $$ > '{}'\nexec node '{}' stdio\n",
            self.pid_file().display(),
            js.display()
        );
        write_script(&self.script(), &body);
    }

    /// From now on the wrapper fails at once (the server "never comes back").
    pub fn break_it(&self) {
        write_script(
            &self.script(),
            "#!/bin/sh\necho 'broken on purpose' >&2\nexit 1\n",
        );
    }

    /// The pid of the server last started.
    pub fn pid(&self) -> Option<i32> {
        std::fs::read_to_string(self.pid_file())
            .ok()
            .and_then(|s| s.trim().parse().ok())
    }

    /// SIGKILLs the server last started; returns its pid.
    pub fn kill(&self) -> i32 {
        let pid = self.pid().expect("the server was started");
        let status = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -KILL {pid}");
        pid
    }
}

fn write_script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    // Write a fresh file and rename it over the old one: a running `sh` keeps reading its own.
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, body).expect("write script");
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755)).expect("chmod script");
    std::fs::rename(&tmp, path).expect("install script");
}

/// Whether process `pid` is gone entirely (not running, not a zombie awaiting its parent).
pub fn process_gone(pid: i32) -> bool {
    !Path::new(&format!("/proc/{pid}")).exists()
}

/// server-everything in streamable HTTP mode on 127.0.0.1 (killed on drop).
pub struct HttpEverything {
    pub port: u16,
    child: Child,
    _drain: Vec<JoinHandle<()>>,
}

impl HttpEverything {
    /// Starts it on a free port and returns once it reports listening (retries on the rare
    /// port race).
    pub async fn start() -> HttpEverything {
        for _ in 0..5 {
            let port = free_port().await;
            if let Some(server) = Self::try_start(port).await {
                return server;
            }
        }
        panic!("server-everything (streamableHttp) did not start");
    }

    async fn try_start(port: u16) -> Option<HttpEverything> {
        let mut child = Command::new("node")
            .arg(everything_js())
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn node");
        let stdout = child.stdout.take().expect("stdout");
        let stderr = child.stderr.take().expect("stderr");
        let mut drain = vec![tokio::spawn(drain(BufReader::new(stdout)))];
        let mut lines = BufReader::new(stderr).lines();
        let ready = tokio::time::timeout(READY_DEADLINE, async {
            while let Ok(Some(line)) = lines.next_line().await {
                if line.contains("listening on port") {
                    return true;
                }
            }
            false
        })
        .await
        .expect("server-everything reported in time");
        if !ready {
            let _ = child.wait().await;
            return None;
        }
        drain.push(tokio::spawn(async move {
            while let Ok(Some(_)) = lines.next_line().await {}
        }));
        Some(HttpEverything {
            port,
            child,
            _drain: drain,
        })
    }

    /// `http://127.0.0.1:<port>/mcp`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// Kills it and waits for it.
    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

async fn drain(mut r: impl tokio::io::AsyncBufRead + Unpin) {
    let mut sink = Vec::new();
    loop {
        sink.clear();
        match r.read_until(b'\n', &mut sink).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

/// A port nothing listens on right now.
pub async fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    listener.local_addr().expect("addr").port()
}

/// A TCP proxy on 127.0.0.1 that records the request head (request line and headers) of each
/// connection before forwarding it to `upstream`.
pub struct RecordingProxy {
    pub port: u16,
    heads: Arc<Mutex<Vec<String>>>,
    task: JoinHandle<()>,
}

impl RecordingProxy {
    pub async fn start(upstream_port: u16) -> RecordingProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let port = listener.local_addr().expect("addr").port();
        let heads = Arc::new(Mutex::new(Vec::new()));
        let seen = heads.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(forward(client, upstream_port, seen.clone()));
            }
        });
        RecordingProxy { port, heads, task }
    }

    /// `http://127.0.0.1:<port>/mcp`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// The request heads seen so far.
    pub fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

impl Drop for RecordingProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn forward(mut client: TcpStream, upstream_port: u16, heads: Arc<Mutex<Vec<String>>>) {
    let Ok(mut upstream) = TcpStream::connect(("127.0.0.1", upstream_port)).await else {
        return;
    };
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 64 * 1024 {
        match client.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&head);
    let end = text.find("\r\n\r\n").unwrap_or(text.len());
    heads.lock().unwrap().push(text[..end].to_owned());
    if upstream.write_all(&head).await.is_err() {
        return;
    }
    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
}

/// A 127.0.0.1 listener that accepts connections and never answers (an unreachable server that
/// does not even refuse).
pub struct Blackhole {
    pub port: u16,
    task: JoinHandle<()>,
}

impl Blackhole {
    pub async fn start() -> Blackhole {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let task = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((conn, _)) = listener.accept().await {
                held.push(conn);
            }
        });
        Blackhole { port, task }
    }

    /// `http://127.0.0.1:<port>/mcp`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for Blackhole {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Polls `GetStatus` until MCP server `name` is in `state` (panics after 30 s); returns it.
pub async fn wait_for_server(
    client: &mut kernel_proto::v1::agent_client::AgentClient<tonic::transport::Channel>,
    name: &str,
    state: &str,
) -> kernel_proto::v1::McpServerStatus {
    let mut last = None;
    let found = poll(Duration::from_secs(30), async || {
        let status = client
            .get_status(kernel_proto::v1::GetStatusRequest::default())
            .await
            .expect("GetStatus")
            .into_inner();
        last = status.mcp_servers.into_iter().find(|s| s.name == name);
        last.take_if(|s| s.state == state)
    })
    .await;
    found.unwrap_or_else(|| panic!("mcp server {name} never became {state}: {last:?}"))
}
