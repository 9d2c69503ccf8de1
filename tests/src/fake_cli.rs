//! Fake coding CLIs for the delegation tests: small `/bin/sh` scripts written into a fresh temp
//! dir. Every run records its pid (`cli.pid`), its argv (NUL-separated, `argv`) and its working
//! directory (`cwd`) there, then runs a body built from the snippets below: print, sleep, spawn a
//! grandchild that ignores TERM (it would outlive a naive kill of the CLI alone), write the Codex
//! last-message file, exit non-zero, print the environment.
//!
//! ```text
//! let cli = FakeCli::new(&[SPAWN_GRANDCHILD, &print("working"), SLEEP_FOREVER].concat());
//! let toml = cli.toml("claude_code", &["-p"], Some(1));   // a [cli.claude_code] section
//! ```

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::wait::{eventually, poll};

/// Starts a grandchild that ignores TERM and records its pid in `grandchild.pid`.
pub const SPAWN_GRANDCHILD: &str = r#"sh -c 'trap "" TERM; echo $$ > "$D/grandchild.pid.tmp"; mv "$D/grandchild.pid.tmp" "$D/grandchild.pid"; while :; do sleep 1; done' &
while [ ! -e "$D/grandchild.pid" ]; do sleep 0.01; done
"#;
/// Starts a process that leaves the CLI's process group and session (`setsid`), ignores TERM,
/// carries [`ESCAPED_MARKER`] and the fake's dir in its command line, and records its pid in
/// `escaped.pid`.
pub const SPAWN_SETSID_CHILD: &str = r#"setsid sh -c 'trap "" TERM; echo $$ > "$D/escaped.pid.tmp"; mv "$D/escaped.pid.tmp" "$D/escaped.pid"; while :; do sleep 1; done' kernel-escaped-child "$D" &
while [ ! -e "$D/escaped.pid" ]; do sleep 0.01; done
"#;
/// The `$0` of [`SPAWN_SETSID_CHILD`]'s process.
pub const ESCAPED_MARKER: &str = "kernel-escaped-child";
/// Ignores TERM from here on.
pub const IGNORE_TERM: &str = "trap '' TERM\n";
/// Sleeps until killed.
pub const SLEEP_FOREVER: &str = "while :; do sleep 1; done\n";
/// Writes `LAST MESSAGE: <task>` to the file after `--output-last-message`, as Codex does.
pub const WRITE_LAST_MESSAGE: &str = r#"last=""; prev=""
for a in "$@"; do
  if [ "$prev" = "--output-last-message" ]; then last="$a"; fi
  prev="$a"
done
[ -n "$last" ] && printf 'LAST MESSAGE: %s' "$prev" > "$last"
"#;
/// Prints the environment, one `NAME=value` a line.
pub const PRINT_ENV: &str = "env\n";
/// Prints the file `big.txt` of the fake's dir (see [`FakeCli::write_file`]).
pub const CAT_BIG: &str = "cat \"$D/big.txt\"\n";
/// Waits until the file `go` exists in the fake's dir.
pub const WAIT_FOR_GO: &str = "while [ ! -e \"$D/go\" ]; do sleep 0.02; done\n";
/// Appends `start <pid>` and, 300 ms later, `end <pid>` to `runs.log`.
pub const LOG_RUN: &str =
    "echo \"start $$\" >> \"$D/runs.log\"; sleep 0.3; echo \"end $$\" >> \"$D/runs.log\"\n";

/// Prints `text` and a newline (`text` must not contain `'`).
pub fn print(text: &str) -> String {
    assert!(!text.contains('\''), "print() takes text without quotes");
    format!("printf '%s\\n' '{text}'\n")
}

/// Exits with `code`.
pub fn exit(code: i32) -> String {
    format!("exit {code}\n")
}

/// A fake CLI script and the dir it records into.
pub struct FakeCli {
    dir: tempfile::TempDir,
    script: PathBuf,
}

impl FakeCli {
    /// A script that records pid, argv and cwd, then runs `body` (`$D` is its dir).
    pub fn new(body: &str) -> FakeCli {
        let dir = tempfile::tempdir().expect("tempdir");
        let script = dir.path().join("fake-cli");
        let d = dir.path().display().to_string();
        assert!(!d.contains('\''), "temp dir without quotes");
        let text = format!(
            "#!/bin/sh\nD='{d}'\nexport D\necho $$ > \"$D/cli.pid\"\nprintf '%s\\0' \"$@\" > \"$D/argv\"\n\
             pwd > \"$D/cwd\"\n{body}"
        );
        std::fs::write(&script, text).expect("write the fake CLI");
        set_executable(&script);
        FakeCli { dir, script }
    }

    /// The script's path (the `command`).
    pub fn path(&self) -> &Path {
        &self.script
    }

    /// The dir the script records into.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// A `[cli.<name>]` section running this script with `args` (and a time limit).
    pub fn toml(&self, name: &str, args: &[&str], timeout_secs: Option<u64>) -> String {
        let args: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
        let timeout = timeout_secs.map_or(String::new(), |t| format!("timeout_secs = {t}\n"));
        format!(
            "[cli.{name}]\ncommand = {:?}\nargs = [{}]\n{timeout}",
            self.script.display().to_string(),
            args.join(", ")
        )
    }

    /// Writes `name` into the fake's dir (e.g. `big.txt` for [`CAT_BIG`], `go` for
    /// [`WAIT_FOR_GO`]).
    pub fn write_file(&self, name: &str, content: &str) {
        std::fs::write(self.dir().join(name), content).expect("write a fake CLI file");
    }

    /// The last run's arguments (after the command).
    pub fn argv(&self) -> Vec<String> {
        let raw = std::fs::read(self.dir().join("argv")).expect("the fake CLI ran");
        let mut args: Vec<String> = raw
            .split(|b| *b == 0)
            .map(|a| String::from_utf8(a.to_vec()).expect("UTF-8 argv"))
            .collect();
        args.pop(); // after the last NUL
        args
    }

    /// The last run's working directory.
    pub fn cwd(&self) -> PathBuf {
        let text = std::fs::read_to_string(self.dir().join("cwd")).expect("the fake CLI ran");
        PathBuf::from(text.trim_end())
    }

    /// The last run's pid, once it has started.
    pub fn pid(&self) -> Option<i32> {
        read_pid(&self.dir().join("cli.pid"))
    }

    /// The pid of [`SPAWN_SETSID_CHILD`]'s process, once it has started.
    pub fn escaped_pid(&self) -> Option<i32> {
        read_pid(&self.dir().join("escaped.pid"))
    }

    /// The processes whose command line carries [`ESCAPED_MARKER`] and this fake's dir (so
    /// other tests' fakes are not counted).
    pub fn escaped_processes(&self) -> Vec<i32> {
        let dir = self.dir().display().to_string();
        let Ok(listing) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        listing
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| {
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
                args.contains(&ESCAPED_MARKER.as_bytes()) && args.contains(&dir.as_bytes())
            })
            .filter(|pid| alive(*pid))
            .collect()
    }

    /// The grandchild's pid, once it has started.
    pub fn grandchild_pid(&self) -> Option<i32> {
        read_pid(&self.dir().join("grandchild.pid"))
    }

    /// Waits (polling, up to `deadline`) until both the CLI and its grandchild have recorded
    /// their pids.
    pub async fn wait_for_pids(&self, deadline: Duration) -> (i32, i32) {
        eventually(
            "the fake CLI to start its grandchild",
            deadline,
            async || self.pid().zip(self.grandchild_pid()),
        )
        .await
    }
}

fn read_pid(path: &Path) -> Option<i32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

#[cfg(unix)]
fn set_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[cfg(not(unix))]
fn set_executable(_: &Path) {}

/// The state letter of `pid` from `/proc/<pid>/stat` (`R`, `S`, `Z`, …); `None` when there is no
/// such process.
pub fn process_state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) S …": the comm may contain spaces and parentheses; the state follows the last ')'.
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// The parent pid of `pid`, if it exists.
pub fn parent_pid(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Whether `pid` still runs: it exists and is not a zombie (a dead process whose parent has not
/// collected it yet).
pub fn alive(pid: i32) -> bool {
    !matches!(process_state(pid), None | Some('Z') | Some('X'))
}

/// Waits (polling, up to `deadline`) until `pid` no longer runs; whether it stopped in time.
pub async fn wait_stopped(pid: i32, deadline: Duration) -> bool {
    poll(deadline, async || !alive(pid)).await.is_some()
}

/// Asserts that neither `cli` nor `grandchild` runs any more (waiting up to `deadline`), and
/// that the CLI — agentd's own child — was reaped (no zombie of ours). The grandchild belongs to
/// init once orphaned; a zombie of init's is dead and not agentd's to collect.
pub async fn assert_group_gone(cli: i32, grandchild: i32, deadline: Duration) {
    assert!(
        wait_stopped(grandchild, deadline).await,
        "the grandchild {grandchild} survived: state {:?}",
        process_state(grandchild)
    );
    assert!(wait_stopped(cli, deadline).await, "the CLI {cli} survived");
    if poll(deadline, async || process_state(cli).is_none())
        .await
        .is_none()
    {
        let me = i32::try_from(std::process::id()).expect("pid");
        assert_ne!(
            parent_pid(cli),
            Some(me),
            "the CLI {cli} was left a zombie of ours"
        );
    }
}
