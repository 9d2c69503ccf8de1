//! The doctor's offline checks: config and secrets (masked), data_dir and socket permissions,
//! free disk, clock and time zone, the last backup, each CLI and each MCP server (the
//! database's in `doctor::database`). None opens a network connection.

use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, Utc};
use kernel_common::Config;
use kernel_common::config::McpTransport;
use kernel_common::config::sandbox::{CliSandbox, SandboxState};
use kernel_common::redact::{mask, redact_url};

use super::Check;
use super::texts::Texts;

/// Free space under which the disk check fails / warns.
const DISK_FAIL_KIB: u64 = 100 * 1024;
const DISK_WARN_KIB: u64 = 1024 * 1024;
/// How long `<cli> --version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

/// Every offline check, in table order.
pub async fn checks(config: &Config, t: &Texts) -> Vec<Check> {
    let mut out = vec![
        config_check(config, t),
        data_dir(config, t),
        socket(config, t),
    ];
    out.extend(super::database::checks(config, t).await);
    out.push(disk(config, t).await);
    out.push(clock(config, t));
    out.push(last_backup(config, t));
    for cli in config.cli.values() {
        out.push(cli_check(cli, t).await);
    }
    out.extend(mcp(config, t));
    out
}

fn config_check(config: &Config, t: &Texts) -> Check {
    let name = t.pick("配置与密钥", "config and secrets");
    let mut found = vec![config.path.display().to_string()];
    for p in config.providers.values() {
        found.push(match &p.api_key {
            Some(k) => format!("{} {}", p.name, mask(k.expose())),
            None => format!(
                "{} {}",
                p.name,
                t.pick("（无密钥，不可用）", "(no key, unavailable)")
            ),
        });
    }
    match &config.telegram.token {
        Some(token) => {
            found.push(format!("telegram {}", mask(token.expose())));
            Check::ok(name, found.join("; "))
        }
        None => Check::fail(
            name,
            format!("{}; {}", found.join("; "), t.pick("缺少 telegram.token", "telegram.token is missing")),
            t.pick(
                "在 config.toml 设置 telegram.token 或环境变量 KERNEL_TELEGRAM_TOKEN（来自 @BotFather）",
                "set telegram.token in config.toml or KERNEL_TELEGRAM_TOKEN (from @BotFather)",
            ),
        ),
    }
}

fn data_dir(config: &Config, t: &Texts) -> Check {
    let dir = &config.general.data_dir;
    let name = t.pick("数据目录", "data_dir");
    let shown = dir.display().to_string();
    let fix = t.pick(
        format!("让运行 Kernel 的用户拥有它：chown -R <用户> {shown} && chmod 700 {shown}"),
        format!("make it the Kernel user's own: chown -R <user> {shown} && chmod 700 {shown}"),
    );
    let meta = match std::fs::metadata(dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Check::warn(
                name,
                t.pick(
                    format!("{shown} 尚不存在"),
                    format!("{shown} does not exist yet"),
                ),
                t.pick(
                    "启动一次 kernel-agentd（它会创建该目录，权限 0700）",
                    "start kernel-agentd once (it creates it, 0700)",
                ),
            );
        }
        Err(e) => return Check::fail(name, format!("{shown}: {e}"), fix),
    };
    if !meta.is_dir() {
        return Check::fail(
            name,
            t.pick(
                format!("{shown} 不是目录"),
                format!("{shown} is not a directory"),
            ),
            fix,
        );
    }
    if let Err(e) = std::fs::read_dir(dir) {
        return Check::fail(
            name,
            t.pick(
                format!("{shown} 无法读取：{e}"),
                format!("{shown} is unreadable: {e}"),
            ),
            fix,
        );
    }
    let probe = dir.join(".doctor-write-probe");
    if let Err(e) = std::fs::write(&probe, b"") {
        return Check::fail(
            name,
            t.pick(
                format!("{shown} 无法写入：{e}"),
                format!("{shown} is not writable: {e}"),
            ),
            fix,
        );
    }
    let _ = std::fs::remove_file(&probe);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Check::warn(
                name,
                t.pick(
                    format!("{shown} 权限 {mode:o}，其他用户可访问"),
                    format!("{shown} is mode {mode:o}: others can reach it"),
                ),
                format!("chmod 700 {shown}"),
            );
        }
    }
    Check::ok(
        name,
        t.pick(
            format!("{shown}，可读写，仅所有者"),
            format!("{shown}, readable, writable, owner only"),
        ),
    )
}

fn socket(config: &Config, t: &Texts) -> Check {
    let name = t.pick("套接字与进程", "socket and process");
    let path = &config.agentd.socket;
    let shown = path.display().to_string();
    let running = agentd_running(&config.general.data_dir);
    let state = if running {
        t.pick("kernel-agentd 正在运行", "kernel-agentd is running")
    } else {
        t.pick("kernel-agentd 未运行", "kernel-agentd is not running")
    };
    #[cfg(unix)]
    if let Ok(meta) = std::fs::metadata(path) {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Check::fail(
                name,
                t.pick(
                    format!("{shown} 权限 {mode:o}"),
                    format!("{shown} is mode {mode:o}"),
                ),
                t.pick(
                    "重启 kernel-agentd（它以 0600 重建套接字）",
                    "restart kernel-agentd (it binds the socket 0600)",
                ),
            );
        }
        return Check::ok(name, format!("{shown} 0600; {state}"));
    }
    Check::ok(name, format!("{shown}; {state}"))
}

/// Whether a kernel-agentd holds the data-dir lock (checked without creating anything).
fn agentd_running(data_dir: &Path) -> bool {
    let Ok(file) = std::fs::File::open(data_dir.join("agentd.lock")) else {
        return false;
    };
    matches!(file.try_lock(), Err(std::fs::TryLockError::WouldBlock))
}

async fn disk(config: &Config, t: &Texts) -> Check {
    let name = t.pick("磁盘空间", "free disk");
    let mut dir: PathBuf = config.general.data_dir.clone();
    while !dir.exists() {
        match dir.parent() {
            Some(parent) => dir = parent.to_path_buf(),
            None => break,
        }
    }
    let out = tokio::process::Command::new("df")
        .arg("-Pk")
        .arg(&dir)
        .output()
        .await;
    let free_kib = out.ok().and_then(|o| {
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        text.lines()
            .nth(1)?
            .split_whitespace()
            .nth(3)?
            .parse::<u64>()
            .ok()
    });
    let Some(kib) = free_kib else {
        return Check::warn(
            name,
            t.pick("无法读取（df）", "unknown (df failed)"),
            t.pick("用 df -h 手动检查", "check with df -h"),
        );
    };
    let shown = format!("{:.1} GiB", kib as f64 / 1024.0 / 1024.0);
    let fix = t.pick(
        "清理磁盘，或删除旧备份（backup.keep）",
        "free some space, or keep fewer backups (backup.keep)",
    );
    if kib < DISK_FAIL_KIB {
        Check::fail(name, shown, fix)
    } else if kib < DISK_WARN_KIB {
        Check::warn(name, shown, fix)
    } else {
        Check::ok(
            name,
            t.pick(format!("可用 {shown}"), format!("{shown} free")),
        )
    }
}

fn clock(config: &Config, t: &Texts) -> Check {
    let name = t.pick("时钟与时区", "clock and time zone");
    let now = Utc::now();
    let tz = config.general.timezone;
    let detail = format!(
        "{} ({tz}) / {} UTC",
        now.with_timezone(&tz).format("%Y-%m-%d %H:%M"),
        now.format("%H:%M")
    );
    if now.timestamp() < 1_735_689_600 {
        return Check::fail(
            name,
            detail,
            t.pick(
                "系统时钟不对：启用 NTP（timedatectl set-ntp true）",
                "the system clock is wrong: enable NTP (timedatectl set-ntp true)",
            ),
        );
    }
    Check::ok(name, detail)
}

fn last_backup(config: &Config, t: &Texts) -> Check {
    let name = t.pick("最近备份", "last backup");
    let fix = t.pick("运行 kernel-agentd backup", "run kernel-agentd backup");
    let Some((dir, manifest)) = crate::backup::last(&config.backup.dir) else {
        return Check::warn(
            name,
            t.pick(
                format!("{} 中没有备份", config.backup.dir.display()),
                format!("none in {}", config.backup.dir.display()),
            ),
            fix,
        );
    };
    let made = DateTime::parse_from_rfc3339(&manifest.created_at).map(|d| d.with_timezone(&Utc));
    let detail = format!("{} ({})", dir.display(), manifest.created_at);
    match made {
        Ok(made) if Utc::now().signed_duration_since(made) <= chrono::Duration::hours(48) => {
            Check::ok(name, detail)
        }
        _ => Check::warn(
            name,
            t.pick(
                format!("{detail}，已超过两天"),
                format!("{detail}, over two days old"),
            ),
            fix,
        ),
    }
}

/// `command` as found: an existing path, or the first match on `PATH`.
pub fn find_command(command: &str) -> Option<PathBuf> {
    let path = Path::new(command);
    if path.components().count() > 1 {
        return path.is_file().then(|| path.to_path_buf());
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(command))
        .find(|p| p.is_file())
}

async fn cli_check(cli: &kernel_common::config::CliConfig, t: &Texts) -> Check {
    let name = format!("cli {}", cli.name);
    let Some(found) = find_command(&cli.command) else {
        return Check::fail(
            name,
            t.pick(
                format!("找不到命令 {}", cli.command),
                format!("command {} not found", cli.command),
            ),
            t.pick(
                format!(
                    "安装它（或在 [cli.{}] command 写完整路径），不用就删掉这一节",
                    cli.name
                ),
                format!(
                    "install it (or give its full path as [cli.{}] command), or remove the section",
                    cli.name
                ),
            ),
        );
    };
    let mut command = tokio::process::Command::new(&found);
    command
        .arg("--version")
        .kill_on_drop(true)
        .stdin(std::process::Stdio::null());
    let version = match tokio::time::timeout(VERSION_TIMEOUT, command.output()).await {
        Ok(Ok(out)) => String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_owned(),
        _ => String::new(),
    };
    let version = if version.is_empty() {
        t.pick("版本未知", "version unknown")
    } else {
        version
    };
    let sandbox = CliSandbox::of(cli);
    let detail = format!("{}, {version}; {sandbox}", found.display());
    match sandbox.state() {
        SandboxState::Unavailable => Check::fail(
            name,
            detail,
            t.pick(
                "安装沙箱所需的软件包（如 apt install bubblewrap socat）",
                "install what its sandbox needs (e.g. apt install bubblewrap socat)",
            ),
        ),
        SandboxState::Off => Check::warn(
            name,
            detail,
            t.pick(
                "它的命令不受沙箱限制：见 docs/deploy.md 的 Delegated CLIs",
                "its commands run unconfined: see docs/deploy.md, Delegated CLIs",
            ),
        ),
        _ => Check::ok(name, detail),
    }
}

fn mcp(config: &Config, t: &Texts) -> Vec<Check> {
    let mut out = Vec::new();
    for server in &config.mcp_servers {
        let name = format!("mcp {}", server.name);
        out.push(match &server.transport {
            McpTransport::Http { url, .. } => Check::ok(
                name,
                t.pick(
                    format!("{}（离线时不连接）", redact_url(url)),
                    format!("{} (not contacted offline)", redact_url(url)),
                ),
            ),
            McpTransport::Stdio { command, .. } => match find_command(command) {
                Some(found) => Check::ok(name, found.display().to_string()),
                None => Check::fail(
                    name,
                    t.pick(
                        format!("找不到命令 {command}"),
                        format!("command {command} not found"),
                    ),
                    t.pick(
                        "安装它，或删掉这个 [[mcp.servers]]",
                        "install it, or remove this [[mcp.servers]] entry",
                    ),
                ),
            },
        });
    }
    for skipped in &config.skipped_mcp {
        out.push(Check::warn(
            format!("mcp {}", skipped.name),
            skipped.reason.clone(),
            t.pick(
                "设置它用到的环境变量",
                "set the environment variable it uses",
            ),
        ));
    }
    out
}
