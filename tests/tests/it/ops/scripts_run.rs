//! `scripts/run`: it builds only the two binaries it runs (not the benchmark tool), and runs them
//! from `$CARGO_TARGET_DIR` when that is set (checked through its `--dry-run`); a first start
//! creates an owner-only config and an unfilled config fails in seconds, before any build.

use std::path::PathBuf;
use std::process::Command;

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/run")
}

fn dry_run(target_dir: Option<&str>) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "").unwrap();
    let mut command = Command::new("bash");
    command
        .arg(script())
        .arg("--dry-run")
        .env("KERNEL_CONFIG", &config)
        .env_remove("CARGO_TARGET_DIR");
    if let Some(target_dir) = target_dir {
        command.env("CARGO_TARGET_DIR", target_dir);
    }
    let out = command.output().expect("run bash");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_script_is_valid_bash() {
    let status = Command::new("bash")
        .arg("-n")
        .arg(script())
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn it_builds_only_the_two_binaries_it_runs() {
    let lines = dry_run(None);
    let build: Vec<_> = lines.iter().filter(|l| l.starts_with("cargo ")).collect();
    assert_eq!(build.len(), 1, "{lines:?}");
    let build = build[0];
    assert!(build.contains("--release"), "{build}");
    assert!(
        !build.contains("--bins") && !build.contains("--workspace"),
        "{build}"
    );
    assert!(!build.contains("bench"), "{build}");
    for binary in ["kernel-agentd", "kernel-tg"] {
        assert!(build.contains(&format!("--bin {binary}")), "{build}");
    }
    assert!(
        lines.contains(&"target/release/kernel-agentd &".to_owned()),
        "{lines:?}"
    );
    assert!(
        lines.contains(&"target/release/kernel-tg".to_owned()),
        "{lines:?}"
    );
}

#[test]
fn it_runs_the_binaries_from_cargo_target_dir() {
    let lines = dry_run(Some("/tmp/elsewhere"));
    for line in [
        "/tmp/elsewhere/release/kernel-agentd --check",
        "/tmp/elsewhere/release/kernel-tg --check",
        "/tmp/elsewhere/release/kernel-agentd &",
        "/tmp/elsewhere/release/kernel-tg",
    ] {
        assert!(lines.contains(&line.to_owned()), "{line} not in {lines:?}");
    }
}

/// Runs `scripts/run` for real (no dry run) with `cargo` on PATH replaced by a stand-in that only
/// leaves a marker, so a test sees whether the script got as far as building.
struct FirstStart {
    dir: tempfile::TempDir,
}

impl FirstStart {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let cargo = bin.join("cargo");
        std::fs::write(
            &cargo,
            format!(
                "#!/bin/sh\ntouch '{}'\nexit 3\n",
                dir.path().join("built").display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
        FirstStart { dir }
    }

    fn config(&self) -> PathBuf {
        self.dir.path().join("config.toml")
    }

    fn built(&self) -> bool {
        self.dir.path().join("built").exists()
    }

    /// Runs the script; returns (exit code, stdout + stderr, how long it took).
    fn run(&self, env: &[(&str, &str)]) -> (Option<i32>, String, std::time::Duration) {
        let path = format!(
            "{}:{}",
            self.dir.path().join("bin").display(),
            std::env::var("PATH").unwrap()
        );
        let mut command = Command::new("bash");
        command
            .arg(script())
            .env("KERNEL_CONFIG", self.config())
            .env("PATH", path)
            .env_remove("KERNEL_TELEGRAM_TOKEN")
            .env_remove("KERNEL_PROVIDER_ANTHROPIC_API_KEY");
        for (k, v) in env {
            command.env(k, v);
        }
        let started = std::time::Instant::now();
        let out = command.output().expect("run bash");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code(), text, started.elapsed())
    }
}

#[test]
fn a_first_start_creates_an_owner_only_config_and_stops_before_building() {
    use std::os::unix::fs::PermissionsExt;
    let start = FirstStart::new();
    let (code, text, took) = start.run(&[]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("Created"), "{text}");
    let mode = std::fs::metadata(start.config())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "config.toml is about to hold secrets");
    assert!(!start.built(), "{text}");
    assert!(took < std::time::Duration::from_secs(5), "{took:?}");
}

#[test]
fn an_unfilled_config_fails_in_seconds_naming_each_value_without_building() {
    let start = FirstStart::new();
    start.run(&[]);
    let (code, text, took) = start.run(&[]);
    assert_eq!(code, Some(1), "{text}");
    for key in [
        "telegram.token",
        "telegram.allowed_user",
        "providers.anthropic.api_key",
        "KERNEL_PROVIDER_ANTHROPIC_API_KEY",
    ] {
        assert!(text.contains(key), "{key} not in {text}");
    }
    assert!(
        !start.built(),
        "it must not build before the config is filled in"
    );
    assert!(took < std::time::Duration::from_secs(5), "{took:?}");
}

#[test]
fn a_filled_config_goes_on_to_build() {
    let start = FirstStart::new();
    start.run(&[]);
    let filled = std::fs::read_to_string(start.config())
        .unwrap()
        .replace("allowed_user = 123456789", "allowed_user = 4242");
    std::fs::write(start.config(), filled).unwrap();
    let (code, text, _) = start.run(&[
        ("KERNEL_TELEGRAM_TOKEN", "123456:RealLookingToken_abcdef"),
        (
            "KERNEL_PROVIDER_ANTHROPIC_API_KEY",
            "sk-ant-real-0123456789",
        ),
    ]);
    assert_eq!(code, Some(3), "the stand-in cargo ran: {text}");
    assert!(start.built(), "{text}");
    assert!(!text.contains("not filled in"), "{text}");
}
