//! `scripts/run`: it builds only the two binaries it runs (not the benchmark tool), and runs them
//! from `$CARGO_TARGET_DIR` when that is set (checked through its `--dry-run`).

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
