//! What `Config::load` produces: defaults, env overrides, `${VAR}` in MCP servers, paths, the
//! summary and the redactor.

use crate::support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use kernel_common::config::{Component, Locale, McpTransport, ProviderKind};
use support::{ANTHROPIC_KEY, TG_TOKEN, VALID, load, load_text, write};

#[test]
fn defaults_fill_what_is_left_out() {
    let cfg = write(VALID);
    let config = load(&cfg, Component::Agentd, &[]).unwrap();
    let base = cfg.dir.path();
    assert_eq!(config.path, cfg.path);
    assert_eq!(config.base_dir, base);
    let g = &config.general;
    assert_eq!(g.timezone, chrono_tz::Asia::Shanghai);
    assert_eq!(g.context_rounds, 50);
    assert_eq!(g.memory_recall_k, 5);
    assert_eq!(g.data_dir, base.join("data"));
    assert_eq!(g.default_workspace, base);
    assert_eq!(g.soul_file, base.join("SOUL.md"));
    assert_eq!(g.skills_dir, base.join("skills"));
    assert_eq!(g.locale, Locale::Zh);
    assert_eq!(config.telegram.api_url, "https://api.telegram.org");
    #[cfg(unix)]
    {
        assert_eq!(config.agentd.socket, base.join("data/agentd.sock"));
        assert_eq!(
            config.agentd.endpoint,
            format!("unix:{}", base.join("data/agentd.sock").display())
        );
    }
    // Windows: a named pipe named after the data dir, dialled as `pipe:<name>`.
    #[cfg(windows)]
    {
        let pipe = config.agentd.socket.display().to_string();
        assert!(pipe.starts_with(r"\\.\pipe\kernel-agentd-"), "{pipe}");
        assert_eq!(config.agentd.endpoint, format!("pipe:{pipe}"));
    }
    assert!(
        config.agentd.listen.is_none()
            && config.agentd.token.is_none()
            && config.agentd.tls.is_none()
    );
    let p = &config.providers["anthropic"];
    assert_eq!(p.kind, ProviderKind::Claude);
    assert_eq!(p.api_base, "https://api.anthropic.com");
    assert_eq!(p.models, ["claude-test"]);
    assert_eq!(p.stream_idle_timeout, Duration::from_secs(120));
    assert!(config.titles.is_none() && config.stt.is_none() && config.tts.is_none());
    assert!(config.cli.is_empty() && config.mcp_servers.is_empty());
}

#[test]
fn api_bases_default_per_kind_without_trailing_slash() {
    let text = format!(
        "{VALID}\n[providers.o]\ntype = \"openai_compat\"\ndefault_model = \"m\"\n\
         [providers.d]\ntype = \"openai_compat\"\napi_base = \"https://api.deepseek.com/v1/\"\n\
         default_model = \"deepseek-chat\"\nmodels = [\"deepseek-reasoner\", \"deepseek-chat\", \"deepseek-reasoner\"]\n\
         stream_idle_timeout_secs = 7\n"
    );
    let config = load_text(&text, Component::Agentd).unwrap();
    assert_eq!(config.providers["o"].api_base, "https://api.openai.com/v1");
    let d = &config.providers["d"];
    assert_eq!(d.api_base, "https://api.deepseek.com/v1");
    assert_eq!(d.models, ["deepseek-reasoner", "deepseek-chat"]);
    assert_eq!(d.stream_idle_timeout, Duration::from_secs(7));
    // default_model is prepended when the list lacks it.
    let text = VALID.replace(
        "default_model = \"claude-test\"",
        "default_model = \"claude-test\"\nmodels = [\"other\"]",
    );
    assert_eq!(
        load_text(&text, Component::Agentd).unwrap().providers["anthropic"].models,
        ["claude-test", "other"]
    );
}

#[test]
fn env_overrides_win_over_file_values() {
    let text = format!(
        "{VALID}\n[titles]\ntype = \"openai_compat\"\napi_key = \"sk-file-titles-0123\"\nmodel = \"mini\"\n\
         [agentd]\nlisten = \"127.0.0.1:50051\"\ntoken = \"file-agentd-token-0123\"\n"
    );
    let cfg = write(&text);
    let env = [
        ("KERNEL_TELEGRAM_TOKEN", "999:EnvTelegramToken_0123456789"),
        (
            "KERNEL_PROVIDER_ANTHROPIC_API_KEY",
            "sk-ant-env-key-0123456789",
        ),
        ("KERNEL_TITLES_API_KEY", "sk-env-titles-0123"),
        ("KERNEL_AGENTD_TOKEN", "env-agentd-token-0123"),
    ];
    for c in [Component::Agentd, Component::Tg] {
        let config = load(&cfg, c, &env).unwrap();
        assert_eq!(
            config.telegram.token.as_ref().unwrap().expose(),
            "999:EnvTelegramToken_0123456789"
        );
        assert_eq!(
            config.providers["anthropic"]
                .api_key
                .as_ref()
                .unwrap()
                .expose(),
            "sk-ant-env-key-0123456789"
        );
        assert_eq!(
            config
                .titles
                .as_ref()
                .unwrap()
                .api_key
                .as_ref()
                .unwrap()
                .expose(),
            "sk-env-titles-0123"
        );
        assert_eq!(
            config.agentd.token.as_ref().unwrap().expose(),
            "env-agentd-token-0123"
        );
    }
    // Without env the file values hold; an empty variable counts as unset.
    let empty = [
        ("KERNEL_TELEGRAM_TOKEN", ""),
        ("KERNEL_PROVIDER_ANTHROPIC_API_KEY", "  "),
    ];
    let config = load(&cfg, Component::Agentd, &empty).unwrap();
    assert_eq!(config.telegram.token.as_ref().unwrap().expose(), TG_TOKEN);
    assert_eq!(
        config.providers["anthropic"]
            .api_key
            .as_ref()
            .unwrap()
            .expose(),
        ANTHROPIC_KEY
    );
    assert_eq!(
        config.agentd.token.as_ref().unwrap().expose(),
        "file-agentd-token-0123"
    );
}

#[test]
fn env_supplies_secrets_missing_from_the_file() {
    let text = VALID
        .replace("token = \"123456789:AAFileTelegramToken_abcdefXYZ\"", "")
        .replace(
            "api_key = \"sk-ant-file-key-0123456789abcdef\"",
            "api_key = \"sk-ant-...\"",
        );
    let cfg = write(&text);
    let env = [
        ("KERNEL_TELEGRAM_TOKEN", "999:EnvTelegramToken_0123456789"),
        (
            "KERNEL_PROVIDER_ANTHROPIC_API_KEY",
            "sk-ant-env-key-0123456789",
        ),
    ];
    load(&cfg, Component::Tg, &env).unwrap();
    let config = load(&cfg, Component::Agentd, &env).unwrap();
    assert!(config.providers["anthropic"].available());
}

#[test]
fn a_non_default_provider_without_key_loads_but_is_unavailable() {
    let text = format!(
        "{VALID}\n[providers.deep-seek]\ntype = \"openai_compat\"\ndefault_model = \"deepseek-chat\"\n"
    );
    let config = load_text(&text, Component::Agentd).unwrap();
    let p = &config.providers["deep-seek"];
    assert!(!p.available());
    assert!(config.providers["anthropic"].available());
    assert_eq!(config.warnings.len(), 1, "{:?}", config.warnings);
    assert!(config.warnings[0].contains("providers.deep-seek"));
    assert!(config.warnings[0].contains("KERNEL_PROVIDER_DEEP_SEEK_API_KEY"));
}

const MCP: &str = r#"
[[mcp.servers]]
name = "exa"
type = "http"
url = "https://mcp.exa.ai/mcp"

[[mcp.servers]]
name = "context7"
type = "http"
url = "https://mcp.context7.com/mcp"
headers = { CONTEXT7_API_KEY = "${CONTEXT7_API_KEY}", Authorization = "Bearer ${CTX_TOKEN}" }

[[mcp.servers]]
name = "files"
type = "stdio"
command = "npx"
args = ["-y", "server-filesystem", "/tmp"]
env = { GITHUB_TOKEN = "${GH_TOKEN}", MODE = "plain" }
"#;

#[test]
fn mcp_servers_with_an_unset_variable_are_skipped_with_a_warning() {
    let cfg = write(&format!("{VALID}{MCP}"));
    let config = load(
        &cfg,
        Component::Agentd,
        &[
            ("CONTEXT7_API_KEY", "ctx7-secret-value-0123"),
            ("CTX_TOKEN", ""),
        ],
    )
    .unwrap();
    let names: Vec<&str> = config.mcp_servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["exa"]);
    let all = config.warnings.join("\n");
    assert_eq!(config.warnings.len(), 2, "{all}");
    assert!(
        config.warnings[0].contains("\"context7\"") && config.warnings[0].contains("CTX_TOKEN"),
        "{all}"
    );
    assert!(
        config.warnings[1].contains("\"files\"") && config.warnings[1].contains("GH_TOKEN"),
        "{all}"
    );
    assert!(!all.contains("ctx7-secret-value-0123"), "{all}");
}

#[test]
fn mcp_variables_are_substituted() {
    let cfg = write(&format!("{VALID}{MCP}"));
    let env = [
        ("CONTEXT7_API_KEY", "ctx7-secret-value-0123"),
        ("CTX_TOKEN", "tok-0123456789"),
        ("GH_TOKEN", "ghp_0123456789"),
    ];
    let config = load(&cfg, Component::Agentd, &env).unwrap();
    assert!(config.warnings.is_empty(), "{:?}", config.warnings);
    let McpTransport::Http { url, headers } = &config.mcp_servers[1].transport else {
        panic!()
    };
    assert_eq!(url, "https://mcp.context7.com/mcp");
    assert_eq!(
        headers["CONTEXT7_API_KEY"].expose(),
        "ctx7-secret-value-0123"
    );
    assert_eq!(headers["Authorization"].expose(), "Bearer tok-0123456789");
    let McpTransport::Stdio { command, args, env } = &config.mcp_servers[2].transport else {
        panic!()
    };
    assert_eq!(command, "npx");
    assert_eq!(args, &["-y", "server-filesystem", "/tmp"]);
    assert_eq!(env["GITHUB_TOKEN"].expose(), "ghp_0123456789");
    assert_eq!(env["MODE"].expose(), "plain");
}

const PATHS: &str = r#"
[general]
default_provider = "anthropic"
data_dir = "state"
default_workspace = "../work"
soul_file = "persona/SOUL.md"
skills_dir = "persona/skills"

[agentd]
socket = "run/a.sock"
endpoint = "unix:run/a.sock"
"#;

#[test]
fn relative_paths_resolve_against_the_config_folder() {
    let text = VALID.replace("[general]\ndefault_provider = \"anthropic\"\n", PATHS);
    // Windows: no Unix socket; a pipe's name is not a path.
    #[cfg(windows)]
    let text = text.replace(
        "socket = \"run/a.sock\"\nendpoint = \"unix:run/a.sock\"\n",
        "socket = \"kernel-test\"\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("etc");
    std::fs::create_dir(&sub).unwrap();
    let path = sub.join("kernel.toml");
    std::fs::write(&path, &text).unwrap();
    let config = kernel_common::Config::load(&path, Component::Agentd, &|_| None).unwrap();
    assert_eq!(config.general.data_dir, sub.join("state"));
    assert_eq!(config.general.default_workspace, sub.join("../work"));
    assert_eq!(config.general.soul_file, sub.join("persona/SOUL.md"));
    assert_eq!(config.general.skills_dir, sub.join("persona/skills"));
    #[cfg(unix)]
    {
        assert_eq!(config.agentd.socket, sub.join("run/a.sock"));
        assert_eq!(
            config.agentd.endpoint,
            format!("unix:{}", sub.join("run/a.sock").display())
        );
    }
    #[cfg(windows)]
    {
        assert_eq!(config.agentd.socket, PathBuf::from(r"\\.\pipe\kernel-test"));
        assert_eq!(config.agentd.endpoint, r"pipe:\\.\pipe\kernel-test");
    }
}

/// `to` relative to `from` (both absolute), with `..` steps.
fn relative(from: &Path, to: &Path) -> PathBuf {
    let common = from
        .components()
        .zip(to.components())
        .take_while(|(a, b)| a == b)
        .count();
    let ups = from.components().count() - common;
    let mut out: PathBuf = std::iter::repeat_n("..", ups).collect();
    out.extend(to.components().skip(common));
    out
}

#[test]
fn a_relative_config_path_is_made_absolute_first() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, VALID).unwrap();
    let cwd = std::env::current_dir().unwrap();
    let rel = relative(&cwd, &path);
    assert!(rel.is_relative());
    let config = kernel_common::Config::load(&rel, Component::Agentd, &|_| None).unwrap();
    assert!(config.path.is_absolute());
    assert!(config.general.data_dir.is_absolute());
    assert_eq!(
        config.general.data_dir.canonicalize().ok(),
        None,
        "not created by loading"
    );
    assert!(config.general.data_dir.ends_with("data"));
    assert_eq!(
        config.base_dir.canonicalize().unwrap(),
        dir.path().canonicalize().unwrap()
    );
}

/// Secrets in every place a config can hold one.
const SECRETS: [&str; 12] = [
    TG_TOKEN,
    ANTHROPIC_KEY,
    "sk-openai-secret-0123456789",
    "ua-header-secret-0123456789",
    "sk-titles-secret-0123456789",
    "titles-header-secret-0123",
    "ctx7-env-secret-0123456789",
    "agentd-token-secret-0123456789",
    "sk-stt-secret-0123456789",
    "sk-tts-secret-0123456789",
    "ghp_stdio-env-secret-0123456789",
    "tts-header-secret-0123",
];

fn everything() -> String {
    let s = SECRETS;
    format!(
        r#"{VALID}
[providers.openai]
type = "openai_compat"
api_key = "{}"
default_model = "gpt-4o"
headers = {{ User-Agent = "{}" }}

[titles]
type = "openai_compat"
api_key = "{}"
model = "mini"
headers = {{ X-Title = "{}" }}

[cli.claude_code]
command = "claude"
args = ["-p"]

[[mcp.servers]]
name = "context7"
type = "http"
url = "https://mcp.context7.com/mcp"
headers = {{ CONTEXT7_API_KEY = "${{CTX7}}" }}

[[mcp.servers]]
name = "files"
type = "stdio"
command = "npx"
env = {{ GITHUB_TOKEN = "{}" }}

[agentd]
listen = "127.0.0.1:50051"
token = "{}"

[stt]
api_key = "{}"

[tts]
api_key = "{}"
headers = {{ X-Org = "{}" }}
"#,
        s[2], s[3], s[4], s[5], s[10], s[7], s[8], s[9], s[11]
    )
}

#[test]
fn the_summary_shows_no_secret() {
    let cfg = write(&everything());
    let config = load(&cfg, Component::Agentd, &[("CTX7", SECRETS[6])]).unwrap();
    let summary = config.summary();
    for secret in SECRETS {
        assert!(!summary.contains(secret), "{secret} in\n{summary}");
    }
    for shown in [
        "sk-a…cdef",
        "User-Agent = [REDACTED]",
        "CONTEXT7_API_KEY = [REDACTED]",
        "GITHUB_TOKEN = [REDACTED]",
        "X-Org = [REDACTED]",
        "claude_code: claude -p",
        "listen 127.0.0.1:50051",
        "gpt-4o (default)",
        "default \"anthropic\"",
    ] {
        assert!(summary.contains(shown), "{shown} not in\n{summary}");
    }
}

#[test]
fn the_redactor_knows_every_secret() {
    let cfg = write(&everything());
    let config = load(&cfg, Component::Agentd, &[("CTX7", SECRETS[6])]).unwrap();
    let text = SECRETS.join(" | ");
    let redacted = config.redactor().redact(&text);
    for secret in SECRETS {
        assert!(!redacted.contains(secret), "{secret} in {redacted}");
    }
    assert!(redacted.contains("sk-o…6789"), "{redacted}");
    assert!(redacted.contains("[REDACTED]"), "{redacted}");
    // Debug output of the config masks too.
    let debug = format!("{config:?}");
    for secret in SECRETS {
        assert!(!debug.contains(secret), "{secret} in Debug");
    }
}
