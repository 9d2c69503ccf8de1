//! What the systemd units rely on, on the real kernel-agentd binary: `READY=1` on
//! `$NOTIFY_SOCKET` only once the socket serves and the database is open, `STOPPING=1` on
//! SIGTERM; and a non-dumpable process whose `/proc/<pid>/environ` another process of the same
//! user (a delegated CLI, say) cannot read.

use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::os::unix::net::{UnixDatagram, UnixStream};
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use tests::config::TestConfig;
use tests::process::bin_path;

/// An unused nobody-like account for running agentd as another user when the test runs as root.
const NOBODY: u32 = 65534;
const SECRET_ENV: (&str, &str) = (
    "KERNEL_PROVIDER_FAKE_API_KEY",
    "sk-env-secret-only-in-agentd-environ-4242",
);

/// A bound `NOTIFY_SOCKET` in `dir`.
fn notify_socket(dir: &Path) -> (UnixDatagram, std::path::PathBuf) {
    let path = dir.join("notify.sock");
    let socket = UnixDatagram::bind(&path).expect("bind the notify socket");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    (socket, path)
}

fn recv(socket: &UnixDatagram) -> String {
    let mut buf = [0u8; 4096];
    let n = socket.recv(&mut buf).expect("a notification in time");
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

fn spawn_agentd(cfg: &TestConfig, notify: &Path, uid: Option<u32>) -> Child {
    let mut cmd = Command::new(bin_path("kernel-agentd"));
    cmd.arg("--config")
        .arg(&cfg.path)
        .env("NOTIFY_SOCKET", notify)
        .env(SECRET_ENV.0, SECRET_ENV.1)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(uid) = uid {
        cmd.uid(uid).gid(uid);
    }
    cmd.spawn().expect("spawn kernel-agentd")
}

#[test]
fn agentd_tells_systemd_when_it_serves_and_when_it_stops() {
    let cfg = TestConfig::new("http://127.0.0.1:9", "");
    let (notify, path) = notify_socket(cfg.dir.path());
    let mut agentd = spawn_agentd(&cfg, &path, None);

    assert_eq!(recv(&notify), "READY=1\n");
    // By then the socket is bound and answers, and the database is open.
    assert!(
        UnixStream::connect(cfg.socket()).is_ok(),
        "READY before the socket serves"
    );
    assert!(cfg.data_dir().join("kernel.db").is_file());

    let pid = agentd.id().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(killed.success());
    assert_eq!(recv(&notify), "STOPPING=1\n");
    let status = agentd.wait().unwrap();
    assert!(status.success(), "graceful stop: {status:?}");
}

/// The effective uid of this process.
fn my_uid() -> u32 {
    std::fs::metadata("/proc/self").unwrap().uid()
}

/// Ends `child` on drop (kill -9 and reap).
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn agentd_is_not_dumpable_so_a_same_user_process_cannot_read_its_environment() {
    let cfg = TestConfig::new("http://127.0.0.1:9", "");
    // Run agentd and the "sibling" as one ordinary user: this one, or nobody when we are root
    // (root may read anything, which would prove nothing).
    let user = if my_uid() == 0 {
        std::os::unix::fs::chown(cfg.dir.path(), Some(NOBODY), Some(NOBODY)).unwrap();
        std::os::unix::fs::chown(&cfg.path, Some(NOBODY), Some(NOBODY)).unwrap();
        Some(NOBODY)
    } else {
        None
    };
    let uid = user.unwrap_or_else(my_uid);
    let (notify, path) = notify_socket(cfg.dir.path());
    let agentd = Reaped(spawn_agentd(&cfg, &path, user));
    assert_eq!(recv(&notify), "READY=1\n");
    let pid = agentd.0.id();

    // The kernel hands a non-dumpable process's /proc entries to root.
    let owner = std::fs::metadata(format!("/proc/{pid}/environ"))
        .unwrap()
        .uid();
    assert_eq!(owner, 0, "agentd (uid {uid}) is dumpable");

    // A control: a dumpable process of the same user, whose environment the sibling can read.
    let mut control_cmd = Command::new("sleep");
    control_cmd.arg("60").env("KERNEL_TEST_PROBE", "visible");
    if let Some(uid) = user {
        control_cmd.uid(uid).gid(uid);
    }
    let control = Reaped(control_cmd.spawn().unwrap());

    let mut sibling = Command::new("sh");
    sibling
        .arg("-c")
        .arg(
            r#"tr '\0' '\n' < /proc/"$1"/environ || echo "agentd: refused"
               tr '\0' '\n' < /proc/"$2"/environ"#,
        )
        .arg("sibling")
        .arg(pid.to_string())
        .arg(control.0.id().to_string());
    if let Some(uid) = user {
        sibling.uid(uid).gid(uid);
    }
    let out = sibling.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("KERNEL_TEST_PROBE=visible"),
        "the control is readable: {stdout}{stderr}"
    );
    assert!(stdout.contains("agentd: refused"), "{stdout}{stderr}");
    assert!(stderr.contains("Permission denied"), "{stderr}");
    assert!(
        !stdout.contains(SECRET_ENV.1),
        "agentd's environment was read: {stdout}"
    );
}
