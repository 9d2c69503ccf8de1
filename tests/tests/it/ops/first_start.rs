//! A first start as a new owner makes it: the real kernel-agentd on `config.example.toml` as
//! shipped (only the values the owner must fill in supplied by the environment, the data in a
//! fresh folder) opens no connection beyond loopback — local-first: no remote MCP server, no
//! provider call, nothing until the owner writes.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use tests::process::AgentdProcess;

/// The repository's example config, its `data_dir`, `soul_file` and `skills_dir` pointed at
/// `dir` and the repository (so the test leaves nothing in the work tree).
fn example_in(dir: &Path) -> PathBuf {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let text = std::fs::read_to_string(repo.join("config.example.toml")).unwrap();
    let data = dir.join("data");
    let text = text
        .replace(
            "data_dir = \"data\"",
            &format!("data_dir = {:?}", data.display().to_string()),
        )
        .replace(
            "soul_file = \"SOUL.md\"",
            &format!(
                "soul_file = {:?}",
                repo.join("SOUL.md").display().to_string()
            ),
        )
        .replace(
            "skills_dir = \"skills\"",
            &format!(
                "skills_dir = {:?}",
                repo.join("skills").display().to_string()
            ),
        );
    assert!(text.contains(&data.display().to_string()), "data_dir moved");
    let path = dir.join("config.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// The socket inodes process `pid` holds open.
fn socket_inodes(pid: u32) -> HashSet<String> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter_map(|target| {
            let t = target.display().to_string();
            Some(t.strip_prefix("socket:[")?.strip_suffix(']')?.to_owned())
        })
        .collect()
}

/// Whether a `/proc/net/{tcp,udp}{,6}` remote address (hex `ADDR:PORT`) is unset or loopback.
fn unset_or_loopback(remote: &str) -> bool {
    let addr = remote.split(':').next().unwrap_or("");
    addr.chars().all(|c| c == '0')
        || addr == "0100007F"
        || addr == "00000000000000000000000001000000"
        || addr == "0000000000000000FFFF00000100007F"
}

/// The inet sockets of `pid` whose peer is neither unset nor loopback, as table lines.
fn outbound(pid: u32) -> Vec<String> {
    let mine = socket_inodes(pid);
    let mut found = Vec::new();
    for table in ["tcp", "tcp6", "udp", "udp6"] {
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/net/{table}")) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (Some(remote), Some(inode)) = (fields.get(2), fields.get(9)) else {
                continue;
            };
            if mine.contains(*inode) && !unset_or_loopback(remote) {
                found.push(format!("{table}: {line}"));
            }
        }
    }
    found
}

#[test]
fn a_fresh_agentd_on_the_example_config_opens_no_outbound_connection() {
    let dir = tempfile::tempdir().unwrap();
    let config = example_in(dir.path());
    let agentd = AgentdProcess::start(
        &config,
        &[(
            "KERNEL_PROVIDER_ANTHROPIC_API_KEY",
            "sk-ant-first-start-0123456789",
        )],
    );
    let pid = agentd.pid();
    // Ready means every startup step ran (store, MCP servers, schedules, the listener).
    let sockets = socket_inodes(pid);
    assert!(!sockets.is_empty(), "agentd listens on a socket");
    let seen = outbound(pid);
    assert!(seen.is_empty(), "outbound sockets at start: {seen:?}");
    agentd.terminate();
}

#[test]
fn the_outbound_check_sees_a_connection_to_a_non_loopback_address_and_not_loopback() {
    // This machine's own non-loopback address (a UDP "connect" sends nothing).
    let probe = std::net::UdpSocket::bind("0.0.0.0:0").unwrap();
    probe.connect("10.255.255.255:9").unwrap();
    let own = probe.local_addr().unwrap().ip();
    assert!(!own.is_loopback(), "{own}");
    let listener = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let pid = std::process::id();
    let _local = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let local_only = outbound(pid);
    let _remote = std::net::TcpStream::connect((own, port)).unwrap();
    let seen = outbound(pid);
    assert!(
        seen.len() > local_only.len(),
        "a connection to {own} is seen: {seen:?}"
    );
    assert!(unset_or_loopback("0100007F:1F90"));
    assert!(!unset_or_loopback("0A00020F:01BB"));
}
