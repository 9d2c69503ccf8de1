//! Every refusal of `Config::load`, with the message that says how to fix it.

use crate::support;

use kernel_common::config::{Component, ConfigError};
use support::{VALID, assert_one_problem, load_text, problems, write};

const BOTH: [Component; 2] = [Component::Agentd, Component::Tg];

fn with(extra: &str) -> String {
    format!("{VALID}\n{extra}")
}

#[test]
fn the_valid_base_loads_for_both() {
    for c in BOTH {
        let config = load_text(VALID, c).unwrap();
        assert!(config.warnings.is_empty(), "{:?}", config.warnings);
    }
}

#[test]
fn tg_refuses_a_missing_token() {
    let text = VALID.replace("token = \"123456789:AAFileTelegramToken_abcdefXYZ\"", "");
    assert_one_problem(
        load_text(&text, Component::Tg),
        &["telegram.token", "KERNEL_TELEGRAM_TOKEN", "@BotFather"],
    );
    // agentd does not need it.
    load_text(&text, Component::Agentd).unwrap();
}

#[test]
fn tg_refuses_an_empty_or_placeholder_token() {
    for token in ["", "   ", "123456789:AA..."] {
        let text = VALID.replace("123456789:AAFileTelegramToken_abcdefXYZ", token);
        assert_one_problem(
            load_text(&text, Component::Tg),
            &["telegram.token", "@BotFather"],
        );
    }
    let text = VALID.replace("123456789:AAFileTelegramToken_abcdefXYZ", "1:AA...");
    assert_one_problem(load_text(&text, Component::Tg), &["example placeholder"]);
}

#[test]
fn tg_refuses_a_missing_or_non_positive_allowed_user() {
    let missing = VALID.replace("allowed_user = 42", "");
    assert_one_problem(
        load_text(&missing, Component::Tg),
        &[
            "telegram.allowed_user",
            "numeric Telegram user id",
            "@userinfobot",
        ],
    );
    for id in ["0", "-5"] {
        let text = VALID.replace("allowed_user = 42", &format!("allowed_user = {id}"));
        assert_one_problem(
            load_text(&text, Component::Tg),
            &["telegram.allowed_user", "@userinfobot"],
        );
    }
    load_text(&missing, Component::Agentd).unwrap();
}

#[test]
fn agentd_refuses_no_providers() {
    let text = "[telegram]\ntoken = \"1:abcdefghijk\"\nallowed_user = 1\n";
    assert_one_problem(
        load_text(text, Component::Agentd),
        &["no provider", "[providers.<name>]"],
    );
    load_text(text, Component::Tg).unwrap();
}

#[test]
fn agentd_refuses_an_unknown_default_provider() {
    let text = VALID.replace(
        "default_provider = \"anthropic\"",
        "default_provider = \"openia\"",
    );
    assert_one_problem(
        load_text(&text, Component::Agentd),
        &["general.default_provider", "\"openia\"", "\"anthropic\""],
    );
    load_text(&text, Component::Tg).unwrap();
}

#[test]
fn agentd_refuses_unknown_or_repeated_fallback_providers() {
    let spare = "[providers.spare]\ntype = \"openai_compat\"\napi_key = \"sk-0123456789\"\ndefault_model = \"m\"\n";
    let text = with(spare).replace(
        "default_provider = \"anthropic\"",
        "default_provider = \"anthropic\"\nfallback_providers = [\"spare\", \"sapre\"]",
    );
    assert_one_problem(
        load_text(&text, Component::Agentd),
        &[
            "general.fallback_providers",
            "\"sapre\"",
            "\"anthropic\", \"spare\"",
        ],
    );
    load_text(&text, Component::Tg).unwrap();
    let twice = text.replace("\"sapre\"", "\"spare\"");
    assert_one_problem(
        load_text(&twice, Component::Agentd),
        &["general.fallback_providers names \"spare\" twice"],
    );
    let good = text.replace(", \"sapre\"", "");
    let config = load_text(&good, Component::Agentd).unwrap();
    assert_eq!(config.general.fallback_providers, vec!["spare".to_owned()]);
    assert!(
        load_text(VALID, Component::Agentd)
            .unwrap()
            .general
            .fallback_providers
            .is_empty(),
        "no fail-over unless configured"
    );
}

#[test]
fn agentd_needs_default_provider_when_several() {
    let text = with(
        "[providers.openai]\ntype = \"openai_compat\"\napi_key = \"sk-0123456789\"\ndefault_model = \"m\"\n",
    )
    .replace("default_provider = \"anthropic\"", "");
    assert_one_problem(
        load_text(&text, Component::Agentd),
        &["general.default_provider is missing"],
    );
    // With one provider it is implied.
    let single = VALID.replace("default_provider = \"anthropic\"", "");
    assert_eq!(
        load_text(&single, Component::Agentd)
            .unwrap()
            .general
            .default_provider,
        "anthropic"
    );
}

#[test]
fn agentd_refuses_a_default_provider_without_key() {
    let text = VALID
        .replace("[providers.anthropic]", "[providers.my-claude]")
        .replace(
            "default_provider = \"anthropic\"",
            "default_provider = \"my-claude\"",
        )
        .replace(
            "api_key = \"sk-ant-file-key-0123456789abcdef\"",
            "api_key = \"\"",
        );
    assert_one_problem(
        load_text(&text, Component::Agentd),
        &[
            "providers.my-claude.api_key",
            "KERNEL_PROVIDER_MY_CLAUDE_API_KEY",
        ],
    );
    load_text(&text, Component::Tg).unwrap();
    let placeholder = VALID.replace("sk-ant-file-key-0123456789abcdef", "sk-ant-...");
    assert_one_problem(
        load_text(&placeholder, Component::Agentd),
        &["example placeholder"],
    );
}

#[test]
fn agentd_refuses_claude_without_max_tokens() {
    let text = VALID.replace("max_tokens = 1024", "");
    assert_one_problem(
        load_text(&text, Component::Agentd),
        &[
            "providers.anthropic.max_tokens",
            "Anthropic Messages API requires it",
        ],
    );
    // Non-default claude providers too.
    let other = with("[providers.second]\ntype = \"claude\"\ndefault_model = \"m\"\n");
    assert_one_problem(
        load_text(&other, Component::Agentd),
        &["providers.second.max_tokens"],
    );
    load_text(&text, Component::Tg).unwrap();
}

#[test]
fn agentd_refuses_claude_titles_without_max_tokens() {
    let text =
        with("[titles]\ntype = \"claude\"\napi_key = \"sk-t-0123456789\"\nmodel = \"haiku\"\n");
    assert_one_problem(
        load_text(&text, Component::Agentd),
        &["titles.max_tokens", "max_tokens = 100"],
    );
    // openai_compat titles default to 100.
    let openai = with(
        "[titles]\ntype = \"openai_compat\"\napi_key = \"sk-t-0123456789\"\nmodel = \"mini\"\n",
    );
    assert_eq!(
        load_text(&openai, Component::Agentd)
            .unwrap()
            .titles
            .unwrap()
            .max_tokens,
        100
    );
}

#[test]
fn a_bad_timezone_is_refused_by_both() {
    let text = with("").replace("[general]", "[general]\ntimezone = \"Mars/Olympus\"");
    for c in BOTH {
        assert_one_problem(
            load_text(&text, c),
            &["general.timezone", "Mars/Olympus", "Asia/Shanghai"],
        );
    }
}

#[test]
fn unknown_types_are_refused_by_both() {
    let provider = VALID.replace("type = \"claude\"", "type = \"anthropic\"");
    let mcp = with("[[mcp.servers]]\nname = \"x\"\ntype = \"websocket\"\nurl = \"ws://x\"\n");
    let titles = with("[titles]\ntype = \"gemini\"\nmodel = \"m\"\n");
    let locale = VALID.replace("[general]", "[general]\nlocale = \"fr\"");
    for c in BOTH {
        assert_one_problem(
            load_text(&provider, c),
            &["providers.anthropic.type", "\"anthropic\"", "openai_compat"],
        );
        assert_one_problem(load_text(&mcp, c), &["\"x\"", "websocket", "\"stdio\""]);
        assert_one_problem(load_text(&titles, c), &["titles.type", "gemini"]);
        assert_one_problem(load_text(&locale, c), &["general.locale", "\"en\""]);
    }
}

#[test]
fn non_loopback_listen_without_token_is_refused_by_both() {
    let text = with(
        "[agentd]\nlisten = \"0.0.0.0:50051\"\ntls_cert = \"config.toml\"\ntls_key = \"config.toml\"\n",
    );
    for c in BOTH {
        assert_one_problem(
            load_text(&text, c),
            &[
                "agentd.listen",
                "loopback",
                "agentd.token",
                "KERNEL_AGENTD_TOKEN",
            ],
        );
    }
}

#[test]
fn non_loopback_listen_without_tls_is_refused_by_both() {
    for addr in ["0.0.0.0:50051", "192.168.1.10:50051", "[::]:50051"] {
        let text = with(&format!(
            "[agentd]\nlisten = \"{addr}\"\ntoken = \"tok-0123456789\"\n"
        ));
        for c in BOTH {
            assert_one_problem(
                load_text(&text, c),
                &["agentd.listen", "loopback", "tls_cert", "tls_key"],
            );
        }
    }
    let loopback = with("[agentd]\nlisten = \"[::1]:50051\"\ntoken = \"tok-0123456789\"\n");
    assert!(
        load_text(&loopback, Component::Agentd)
            .unwrap()
            .agentd
            .listen
            .is_some()
    );
}

#[test]
fn half_a_tls_pair_is_refused_by_both() {
    let cert_only = with("[agentd]\ntls_cert = \"cert.pem\"\n");
    let key_only = with("[agentd]\ntls_key = \"key.pem\"\n");
    for c in BOTH {
        assert_one_problem(
            load_text(&cert_only, c),
            &["agentd.tls_cert", "agentd.tls_key", "both"],
        );
        assert_one_problem(
            load_text(&key_only, c),
            &["agentd.tls_key", "agentd.tls_cert"],
        );
    }
}

#[test]
fn tls_files_must_exist_for_agentd() {
    let text = with(
        "[agentd]\nlisten = \"0.0.0.0:50051\"\ntoken = \"tok-0123456789\"\ntls_cert = \"c.pem\"\ntls_key = \"k.pem\"\n",
    );
    let cfg = write(&text);
    let problems = problems(support::load(&cfg, Component::Agentd, &[]));
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert!(problems[0].contains("agentd.tls_cert") && problems[0].contains("c.pem"));
    std::fs::write(cfg.dir.path().join("c.pem"), "x").unwrap();
    std::fs::write(cfg.dir.path().join("k.pem"), "x").unwrap();
    let config = support::load(&cfg, Component::Agentd, &[]).unwrap();
    assert_eq!(
        config.agentd.tls.unwrap().cert,
        cfg.dir.path().join("c.pem")
    );
}

#[test]
fn empty_model_entries_are_refused_by_both() {
    let text = VALID.replace(
        "default_model = \"claude-test\"",
        "default_model = \"claude-test\"\nmodels = [\"a\", \"\"]",
    );
    for c in BOTH {
        assert_one_problem(
            load_text(&text, c),
            &["providers.anthropic.models[1]", "empty"],
        );
    }
}

#[test]
fn invalid_listen_addresses_are_refused_by_both() {
    for addr in ["localhost:50051", "127.0.0.1", "50051", "127.0.0.1:99999"] {
        let text = with(&format!(
            "[agentd]\nlisten = \"{addr}\"\ntoken = \"tok-0123456789\"\n"
        ));
        for c in BOTH {
            assert_one_problem(
                load_text(&text, c),
                &["agentd.listen", addr, "127.0.0.1:50051"],
            );
        }
    }
}

#[test]
fn malformed_mcp_servers_are_refused() {
    let cases = [
        ("type = \"http\"", "name is missing"),
        (
            "name = \"a b\"\ntype = \"http\"\nurl = \"https://x\"",
            "letters, digits",
        ),
        ("name = \"x\"\ntype = \"http\"", "url is missing"),
        ("name = \"x\"\ntype = \"stdio\"", "command is missing"),
        (
            "name = \"x\"\ntype = \"http\"\nurl = \"https://x\"\ncommand = \"npx\"",
            "`command` is only for",
        ),
        (
            "name = \"x\"\ntype = \"http\"\nurl = \"https://x/${A\"",
            "no closing",
        ),
    ];
    for (server, message) in cases {
        let text = with(&format!("[[mcp.servers]]\n{server}\n"));
        assert_one_problem(load_text(&text, Component::Agentd), &[message]);
    }
    let twice = "[[mcp.servers]]\nname = \"x\"\ntype = \"http\"\nurl = \"https://x\"\n";
    assert_one_problem(
        load_text(&with(&format!("{twice}{twice}")), Component::Agentd),
        &["used twice"],
    );
}

#[test]
fn other_malformed_values_are_refused() {
    let cases = [
        (
            VALID.replace("[general]", "[general]\ncontext_rounds = 0"),
            "general.context_rounds",
        ),
        (
            VALID.replace("max_tokens = 1024", "max_tokens = 0"),
            "max_tokens must be at least 1",
        ),
        (
            VALID.replace("default_model = \"claude-test\"", ""),
            "default_model is missing",
        ),
        (
            with("[cli.codex]\nargs = [\"exec\"]\n"),
            "cli.codex.command",
        ),
        (
            VALID.replace("[telegram]", "[telegram]\napi_url = \"api.telegram.org\""),
            "telegram.api_url",
        ),
        (
            with("[agentd]\nendpoint = \"tcp://x:1\"\n"),
            "agentd.endpoint",
        ),
        (
            VALID.replace(
                "max_tokens = 1024",
                "max_tokens = 1024\nheaders = { \"Bad Name\" = \"v\" }",
            ),
            "header name",
        ),
    ];
    for (text, message) in cases {
        assert_one_problem(load_text(&text, Component::Agentd), &[message]);
    }
}

#[test]
fn tg_needs_a_token_for_a_non_loopback_tcp_endpoint() {
    let text = with("[agentd]\nendpoint = \"https://192.168.1.10:50051\"\n");
    assert_one_problem(
        load_text(&text, Component::Tg),
        &["agentd.endpoint", "KERNEL_AGENTD_TOKEN"],
    );
}

#[test]
fn every_problem_is_reported_at_once() {
    let text = r#"
[general]
timezone = "Nowhere/City"
default_provider = "x"

[providers.a]
type = "claude"
default_model = "m"
models = [""]

[agentd]
listen = "0.0.0.0:1"
tls_cert = "c.pem"
"#;
    let problems = problems(load_text(text, Component::Tg));
    let all = problems.join("\n");
    for part in [
        "telegram.token",
        "telegram.allowed_user",
        "general.timezone",
        "models[0]",
        "agentd.tls_cert",
        "no token",
        "loopback",
    ] {
        assert!(all.contains(part), "{part} missing from {all}");
    }
    let err = load_text(text, Component::Agentd).unwrap_err().to_string();
    assert!(
        err.contains("general.default_provider") && err.contains("providers.a.max_tokens"),
        "{err}"
    );
    assert!(err.contains("\n  - "), "{err}");
}

#[test]
fn parse_errors_name_line_column_and_key() {
    let err = load_text(
        "[telegram]\ntoken = \"x\"\n\n[providers.a]\napi_ky = \"k\"\n",
        Component::Tg,
    )
    .unwrap_err();
    let ConfigError::Parse {
        line,
        column,
        message,
        ..
    } = &err
    else {
        panic!("{err}")
    };
    assert_eq!((*line, *column), (Some(5), Some(1)));
    assert!(
        message.contains("api_ky") && message.contains("providers.a"),
        "{message}"
    );
    assert!(err.to_string().contains("line 5, column 1"), "{err}");

    let err = load_text("[general]\ntimezone = \n", Component::Tg).unwrap_err();
    assert!(
        matches!(err, ConfigError::Parse { line: Some(2), .. }),
        "{err}"
    );
}

#[test]
fn parse_errors_never_quote_values() {
    let secret = "sk-ant-never-shown-0123456789";
    let texts = [
        format!("[providers.a]\napi_key = \"{secret}\nx = 1\n"),
        format!("[providers.a]\nheaders = \"{secret}\"\n"),
        format!("[telegram]\nallowed_user = \"{secret}\"\n"),
    ];
    for text in texts {
        let err = load_text(&text, Component::Agentd).unwrap_err();
        assert!(matches!(err, ConfigError::Parse { .. }), "{err}");
        assert!(!format!("{err} {err:?}").contains(secret), "{err}");
    }
}

#[test]
fn a_missing_file_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let err = kernel_common::Config::load(&dir.path().join("nope.toml"), Component::Tg, &|_| None)
        .unwrap_err();
    assert!(matches!(err, ConfigError::Read { .. }));
    let text = err.to_string();
    assert!(
        text.contains("nope.toml") && text.contains("config.example.toml"),
        "{text}"
    );
}
