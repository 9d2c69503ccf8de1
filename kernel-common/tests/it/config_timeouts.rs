//! `[stt] timeout_secs`, `[tts] timeout_secs` and an MCP server's `connect_timeout_secs` /
//! `call_timeout_secs`: defaults, custom values, and out-of-range values refused by key.

use crate::support;

use std::time::Duration;

use kernel_common::config::{
    Component, DEFAULT_MCP_CALL_TIMEOUT, DEFAULT_MCP_CONNECT_TIMEOUT, DEFAULT_STT_TIMEOUT,
    DEFAULT_TTS_TIMEOUT,
};
use support::{VALID, assert_one_problem, load_text};

fn with(extra: &str) -> String {
    format!("{VALID}\n{extra}")
}

fn mcp(extra: &str) -> String {
    with(&format!(
        "[[mcp.servers]]\nname = \"tools\"\ntype = \"stdio\"\ncommand = \"node\"\n{extra}"
    ))
}

#[test]
fn timeouts_default_to_the_old_constants() {
    assert_eq!(DEFAULT_STT_TIMEOUT, Duration::from_secs(120));
    assert_eq!(DEFAULT_TTS_TIMEOUT, Duration::from_secs(90));
    assert_eq!(DEFAULT_MCP_CONNECT_TIMEOUT, Duration::from_secs(10));
    assert_eq!(DEFAULT_MCP_CALL_TIMEOUT, Duration::from_secs(120));
    let config = load_text(&with("[stt]\n[tts]\n"), Component::Agentd).unwrap();
    assert_eq!(config.stt.unwrap().timeout, DEFAULT_STT_TIMEOUT);
    assert_eq!(config.tts.unwrap().timeout, DEFAULT_TTS_TIMEOUT);
    let config = load_text(&mcp(""), Component::Agentd).unwrap();
    let server = &config.mcp_servers[0];
    assert_eq!((server.connect_timeout, server.call_timeout), (None, None));
    let summary = config.summary();
    assert!(
        summary.contains("timeouts: connect 10s, call 120s"),
        "{summary}"
    );
}

#[test]
fn custom_timeouts_are_read() {
    let text = with("[stt]\ntimeout_secs = 1\n[tts]\ntimeout_secs = 3600\n");
    let config = load_text(&text, Component::Agentd).unwrap();
    assert_eq!(config.stt.as_ref().unwrap().timeout, Duration::from_secs(1));
    assert_eq!(
        config.tts.as_ref().unwrap().timeout,
        Duration::from_secs(3600)
    );
    let summary = config.summary();
    assert!(
        summary.contains("timeout 1s") && summary.contains("timeout 3600s"),
        "{summary}"
    );

    let text = mcp("connect_timeout_secs = 30\ncall_timeout_secs = 2\n");
    let config = load_text(&text, Component::Agentd).unwrap();
    let server = &config.mcp_servers[0];
    assert_eq!(server.connect_timeout, Some(Duration::from_secs(30)));
    assert_eq!(server.call_timeout, Some(Duration::from_secs(2)));
    assert!(config.summary().contains("timeouts: connect 30s, call 2s"));

    // http servers take them too.
    let text = with(
        "[[mcp.servers]]\nname = \"web\"\ntype = \"http\"\nurl = \"http://127.0.0.1:9/mcp\"\ncall_timeout_secs = 5\n",
    );
    let config = load_text(&text, Component::Agentd).unwrap();
    assert_eq!(
        config.mcp_servers[0].call_timeout,
        Some(Duration::from_secs(5))
    );
}

#[test]
fn out_of_range_timeouts_are_refused_by_key() {
    for n in ["0", "3601", "86400000"] {
        assert_one_problem(
            load_text(
                &with(&format!("[stt]\ntimeout_secs = {n}\n")),
                Component::Agentd,
            ),
            &["stt.timeout_secs", n, "between 1 and 3600", "default 120"],
        );
        assert_one_problem(
            load_text(
                &with(&format!("[tts]\ntimeout_secs = {n}\n")),
                Component::Tg,
            ),
            &["tts.timeout_secs", n, "between 1 and 3600", "default 90"],
        );
        assert_one_problem(
            load_text(
                &mcp(&format!("connect_timeout_secs = {n}\n")),
                Component::Agentd,
            ),
            &[
                "mcp server \"tools\"",
                "connect_timeout_secs",
                n,
                "default 10",
            ],
        );
        assert_one_problem(
            load_text(
                &mcp(&format!("call_timeout_secs = {n}\n")),
                Component::Agentd,
            ),
            &[
                "mcp server \"tools\"",
                "call_timeout_secs",
                n,
                "default 120",
            ],
        );
    }
}

#[test]
fn a_negative_timeout_is_a_parse_error_naming_the_key() {
    let err = load_text(&with("[stt]\ntimeout_secs = -5\n"), Component::Agentd).unwrap_err();
    assert!(err.to_string().contains("timeout_secs"), "{err}");
}
