//! `deploy/`: the systemd units (kernel-web's optional third one; required settings, and `systemd-analyze verify` where it
//! exists) and `install.sh` (`bash -n`, shellcheck where it exists, `--help`, `--dry-run`, and a
//! real install staged under `--destdir`, run twice).

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tests::config::{PROVIDER_KEY, TELEGRAM_TOKEN};
use tests::process::bin_path;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
        .to_path_buf()
}

fn deploy(name: &str) -> PathBuf {
    repo().join("deploy").join(name)
}

/// A unit file: section → (key, value) pairs in order (a key may repeat).
type Unit = BTreeMap<String, Vec<(String, String)>>;

fn parse_unit(text: &str) -> Unit {
    let mut unit = Unit::new();
    let mut section = String::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.to_owned();
            continue;
        }
        let (key, value) = line.split_once('=').expect("key=value");
        unit.entry(section.clone())
            .or_default()
            .push((key.trim().to_owned(), value.trim().to_owned()));
    }
    unit
}

fn read_unit(name: &str) -> Unit {
    parse_unit(&std::fs::read_to_string(deploy(name)).expect("read the unit"))
}

/// Every value of `key` in `section`.
fn values<'a>(unit: &'a Unit, section: &str, key: &str) -> Vec<&'a str> {
    unit.get(section)
        .into_iter()
        .flatten()
        .filter(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .collect()
}

fn one<'a>(unit: &'a Unit, section: &str, key: &str) -> &'a str {
    match values(unit, section, key).as_slice() {
        [v] => v,
        other => panic!("{section}.{key}: expected one value, got {other:?}"),
    }
}

/// The space-separated words of every value of `key`.
fn words<'a>(unit: &'a Unit, section: &str, key: &str) -> Vec<&'a str> {
    values(unit, section, key)
        .into_iter()
        .flat_map(str::split_whitespace)
        .collect()
}

fn assert_common(name: &str, unit: &Unit, binary: &str) {
    let s = "Service";
    let expect = [
        ("Type", "notify"),
        ("NotifyAccess", "main"),
        ("Restart", "on-failure"),
        ("User", "kernel"),
        ("Group", "kernel"),
        ("UMask", "0077"),
        ("EnvironmentFile", "-/etc/kernel/secrets.env"),
        ("StandardOutput", "journal"),
        ("StateDirectory", "kernel"),
        ("StateDirectoryMode", "0700"),
        ("NoNewPrivileges", "yes"),
        ("ProtectSystem", "strict"),
        ("PrivateTmp", "yes"),
        ("PrivateDevices", "yes"),
        ("ProtectKernelTunables", "yes"),
        ("ProtectKernelModules", "yes"),
        ("ProtectKernelLogs", "yes"),
        ("ProtectControlGroups", "yes"),
        ("RestrictAddressFamilies", "AF_UNIX AF_INET AF_INET6"),
        ("RestrictSUIDSGID", "yes"),
        ("LockPersonality", "yes"),
        ("CapabilityBoundingSet", ""),
    ];
    for (key, value) in expect {
        assert_eq!(one(unit, s, key), value, "{name}: {key}");
    }
    assert_eq!(
        one(unit, s, "ExecStart"),
        format!("/usr/local/bin/{binary} --config /etc/kernel/config.toml"),
        "{name}"
    );
    assert!(
        words(unit, s, "ReadWritePaths").contains(&"/var/lib/kernel"),
        "{name}: the data dir is writable"
    );
    assert_eq!(
        one(unit, "Install", "WantedBy"),
        "multi-user.target",
        "{name}"
    );
}

#[test]
fn the_units_have_the_settings_the_deployment_relies_on() {
    let agentd = read_unit("kernel-agentd.service");
    assert_common("kernel-agentd.service", &agentd, "kernel-agentd");
    // Delegated CLIs are node programs that may work under /home: no W^X, home not hidden.
    let s = "Service";
    assert!(values(&agentd, s, "MemoryDenyWriteExecute").is_empty());
    assert_eq!(one(&agentd, s, "ProtectHome"), "read-only");
    assert_eq!(one(&agentd, s, "KillMode"), "control-group");

    let tg = read_unit("kernel-tg.service");
    assert_common("kernel-tg.service", &tg, "kernel-tg");
    for key in ["Wants", "After"] {
        assert!(
            words(&tg, "Unit", key).contains(&"kernel-agentd.service"),
            "kernel-tg {key}= agentd"
        );
    }
    // kernel-tg survives agentd's restarts: nothing ties its life to agentd's.
    for key in ["Requires", "Requisite", "BindsTo", "PartOf", "Upholds"] {
        assert!(
            values(&tg, "Unit", key).is_empty(),
            "kernel-tg must not have {key}="
        );
    }
    assert_eq!(one(&tg, s, "ProtectHome"), "yes");

    // The optional web console: the same strict unit, also independent of agentd's restarts.
    let web = read_unit("kernel-web.service");
    assert_common("kernel-web.service", &web, "kernel-web");
    for key in ["Requires", "Requisite", "BindsTo", "PartOf", "Upholds"] {
        assert!(
            values(&web, "Unit", key).is_empty(),
            "kernel-web must not have {key}="
        );
    }
    assert_eq!(one(&web, s, "ProtectHome"), "yes");
}

/// The units as installed, with `ExecStart` pointing at the binaries this test run built (the
/// verifier insists that the command exists).
fn units_for_verify(dir: &Path) -> Vec<PathBuf> {
    ["kernel-agentd", "kernel-tg", "kernel-web"]
        .iter()
        .map(|bin| {
            let text = std::fs::read_to_string(deploy(&format!("{bin}.service"))).unwrap();
            let built = bin_path(bin).display().to_string();
            let text = text.replace(&format!("/usr/local/bin/{bin}"), &built);
            let path = dir.join(format!("{bin}.service"));
            std::fs::write(&path, text).unwrap();
            path
        })
        .collect()
}

#[test]
fn systemd_analyze_verify_accepts_the_units() {
    let dir = tempfile::tempdir().unwrap();
    let units = units_for_verify(dir.path());
    let Some(out) = run_if_present("systemd-analyze", |cmd| {
        cmd.arg("verify").arg("--man=no").args(&units);
    }) else {
        // No systemd here: the settings test above still checks every key the deployment needs,
        // and here at least every line must be a section header, a comment or key=value.
        eprintln!("systemd-analyze is not installed: checking the unit syntax only");
        for unit in &units {
            let parsed = parse_unit(&std::fs::read_to_string(unit).unwrap());
            assert!(parsed.contains_key("Service"), "{}", unit.display());
        }
        return;
    };
    let text = output_text(&out);
    assert!(
        out.status.success(),
        "systemd-analyze verify failed:\n{text}"
    );
    // Unknown keys and bad values are only warnings (exit 0): none is allowed.
    assert!(
        text.trim().is_empty(),
        "systemd-analyze verify warns:\n{text}"
    );
}

/// Runs `program` (configured by `args`) if it is installed; `None` if it is not.
fn run_if_present(program: &str, args: impl FnOnce(&mut Command)) -> Option<Output> {
    let mut cmd = Command::new(program);
    args(&mut cmd);
    match cmd.output() {
        Ok(out) => Some(out),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => panic!("cannot run {program}: {e}"),
    }
}

fn output_text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn install(args: &[&str]) -> Output {
    Command::new("bash")
        .arg(deploy("install.sh"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run install.sh")
}

#[test]
fn install_sh_is_valid_shell_and_shellcheck_clean() {
    let out = Command::new("bash")
        .arg("-n")
        .arg(deploy("install.sh"))
        .output()
        .unwrap();
    assert!(out.status.success(), "bash -n: {}", output_text(&out));
    let mode = std::fs::metadata(deploy("install.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o111, 0o111, "install.sh is executable");
    match run_if_present("shellcheck", |cmd| {
        cmd.arg(deploy("install.sh"));
    }) {
        Some(out) => assert!(out.status.success(), "shellcheck:\n{}", output_text(&out)),
        None => eprintln!("shellcheck is not installed: only `bash -n` was checked"),
    }
}

#[test]
fn install_sh_explains_itself_and_refuses_unknown_options() {
    let out = install(&["--help"]);
    let text = output_text(&out);
    assert!(out.status.success(), "{text}");
    for option in [
        "--prebuilt",
        "--workspace",
        "--bindir",
        "--destdir",
        "--dry-run",
    ] {
        assert!(text.contains(option), "--help lists {option}: {text}");
    }
    let out = install(&["--frobnicate"]);
    assert_eq!(out.status.code(), Some(2), "{}", output_text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--frobnicate"));
    let out = install(&["--workspace", "relative/dir", "--dry-run"]);
    assert_eq!(out.status.code(), Some(2), "{}", output_text(&out));
}

#[test]
fn a_dry_run_prints_every_action_and_changes_nothing() {
    let scratch = tempfile::tempdir().unwrap();
    let stage = scratch.path().join("stage");
    let bins = bin_path("kernel-agentd").parent().unwrap().to_path_buf();
    let out = install(&[
        "--dry-run",
        "--destdir",
        stage.to_str().unwrap(),
        "--prebuilt",
        bins.to_str().unwrap(),
    ]);
    let text = output_text(&out);
    assert!(out.status.success(), "{text}");
    assert!(!stage.exists(), "a dry run created {}", stage.display());
    let stage = stage.display().to_string();
    for action in [
        format!(
            "+ install -m 0755 {}/kernel-agentd {stage}/usr/local/bin/",
            bins.display()
        ),
        format!("+ write {stage}/etc/kernel/config.toml (mode 0600, owner kernel:kernel"),
        format!("+ write {stage}/etc/kernel/secrets.env (mode 0600, owner root:root"),
        format!("+ chmod 0700 {stage}/var/lib/kernel"),
        format!("+ write {stage}/etc/systemd/system/kernel-agentd.service (mode 0644"),
        format!("+ write {stage}/etc/systemd/system/kernel-tg.service (mode 0644"),
        "ReadWritePaths=-/srv/kernel".to_owned(),
        "systemctl enable kernel-agentd.service kernel-tg.service".to_owned(),
    ] {
        assert!(text.contains(&action), "missing `{action}` in:\n{text}");
    }
    assert!(
        text.contains("useradd --system") || text.contains("user kernel exists"),
        "{text}"
    );

    // --with-web adds the third binary and unit; without it there is none.
    assert!(!text.contains("kernel-web"), "{text}");
    let with_web = install(&[
        "--dry-run",
        "--with-web",
        "--destdir",
        &stage,
        "--prebuilt",
        bins.to_str().unwrap(),
    ]);
    let web_text = output_text(&with_web);
    assert!(with_web.status.success(), "{web_text}");
    for action in [
        format!("/kernel-web {stage}/usr/local/bin/"),
        format!("+ write {stage}/etc/systemd/system/kernel-web.service (mode 0644"),
        "systemctl enable kernel-agentd.service kernel-tg.service kernel-web.service".to_owned(),
    ] {
        assert!(
            web_text.contains(&action),
            "missing `{action}` in:\n{web_text}"
        );
    }

    // Without --destdir (the real paths) a dry run needs no root and still touches nothing.
    let out = install(&["--dry-run", "--prebuilt", bins.to_str().unwrap()]);
    let text = output_text(&out);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("/etc/kernel/config.toml") && text.contains("+ install -m 0755"),
        "{text}"
    );
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o7777
}

#[test]
fn a_staged_install_lays_out_files_privately_and_is_idempotent() {
    let scratch = tempfile::tempdir().unwrap();
    let stage = scratch.path().join("stage");
    let bins = bin_path("kernel-agentd").parent().unwrap().to_path_buf();
    let args = [
        "--destdir",
        stage.to_str().unwrap(),
        "--prebuilt",
        bins.to_str().unwrap(),
        "--bindir",
        "/opt/kernel/bin",
    ];
    let out = install(&args);
    assert!(out.status.success(), "{}", output_text(&out));

    let at = |p: &str| stage.join(p.trim_start_matches('/'));
    assert_eq!(mode(&at("/var/lib/kernel")), 0o700);
    assert_eq!(mode(&at("/etc/kernel")), 0o750);
    assert_eq!(mode(&at("/etc/kernel/config.toml")), 0o600);
    assert_eq!(mode(&at("/etc/kernel/secrets.env")), 0o600);
    assert_eq!(mode(&at("/srv/kernel")), 0o750);
    for bin in ["kernel-agentd", "kernel-tg"] {
        let installed = at(&format!("/opt/kernel/bin/{bin}"));
        assert_eq!(mode(&installed), 0o755);
        let unit =
            std::fs::read_to_string(at(&format!("/etc/systemd/system/{bin}.service"))).unwrap();
        assert!(
            unit.contains(&format!(
                "ExecStart=/opt/kernel/bin/{bin} --config /etc/kernel/config.toml"
            )),
            "{unit}"
        );
    }
    let dropin = std::fs::read_to_string(at(
        "/etc/systemd/system/kernel-agentd.service.d/workspace.conf",
    ))
    .unwrap();
    assert!(
        dropin.contains("[Service]\nReadWritePaths=-/srv/kernel\n"),
        "{dropin}"
    );
    let secrets = std::fs::read_to_string(at("/etc/kernel/secrets.env")).unwrap();
    assert!(
        secrets
            .lines()
            .all(|l| l.trim().is_empty() || l.starts_with('#')),
        "the template sets nothing: {secrets}"
    );

    // The config made from the example: absolute paths; refused until the secrets are there,
    // accepted with them in the environment (as systemd passes secrets.env).
    let config = at("/etc/kernel/config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.contains("data_dir = \"/var/lib/kernel\""), "{text}");
    assert!(
        text.contains("default_workspace = \"/srv/kernel\""),
        "{text}"
    );
    assert!(at("/etc/kernel/SOUL.md").is_file());
    let check = |env: &[(&str, &str)]| {
        let mut cmd = Command::new(bin_path("kernel-agentd"));
        cmd.arg("--config")
            .arg(&config)
            .arg("--check")
            .env_remove("KERNEL_TELEGRAM_TOKEN")
            .env_remove("KERNEL_PROVIDER_ANTHROPIC_API_KEY");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    };
    assert!(!check(&[]).status.success(), "placeholders are refused");
    let out = check(&[
        ("KERNEL_TELEGRAM_TOKEN", TELEGRAM_TOKEN),
        ("KERNEL_PROVIDER_ANTHROPIC_API_KEY", PROVIDER_KEY),
    ]);
    let summary = output_text(&out);
    assert!(out.status.success(), "{summary}");
    assert!(summary.contains("data dir: /var/lib/kernel"), "{summary}");
    assert!(!summary.contains(PROVIDER_KEY) && !summary.contains(TELEGRAM_TOKEN));

    // Again, after the owner edited the config and loosened secrets.env: the config is kept,
    // secrets.env is private again, everything else is as before.
    let edited = text.replace("allowed_user = 123456789", "allowed_user = 42");
    std::fs::write(&config, &edited).unwrap();
    let secrets_path = at("/etc/kernel/secrets.env");
    std::fs::write(&secrets_path, "KERNEL_TELEGRAM_TOKEN=x\n").unwrap();
    std::fs::set_permissions(&secrets_path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = install(&args);
    let log = output_text(&out);
    assert!(out.status.success(), "{log}");
    assert!(
        log.contains("/etc/kernel/config.toml exists: kept"),
        "{log}"
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), edited);
    assert_eq!(
        std::fs::read_to_string(&secrets_path).unwrap(),
        "KERNEL_TELEGRAM_TOKEN=x\n"
    );
    assert_eq!(
        mode(&secrets_path),
        0o600,
        "secrets.env is made private again"
    );
    assert_eq!(mode(&config), 0o600);
}
