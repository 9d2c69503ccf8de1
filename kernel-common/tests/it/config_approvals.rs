//! `[approvals]`: defaults when absent, the values, refusals naming the key and the fix, and an
//! MCP server's `approval`.

use crate::support;

use std::time::Duration;

use kernel_common::config::{ApprovalMode, ApprovalsConfig, Component, McpApproval};
use support::{VALID, load_text, problems};

fn with(extra: &str) -> String {
    format!("{VALID}\n{extra}")
}

#[test]
fn untrusted_and_ten_minutes_by_default() {
    let config = load_text(VALID, Component::Agentd).unwrap();
    assert_eq!(config.approvals, ApprovalsConfig::default());
    assert_eq!(config.approvals.mode, ApprovalMode::Untrusted);
    assert_eq!(config.approvals.timeout, Duration::from_secs(600));
    let config = load_text(
        &with("[approvals]\nmode = \"always\"\ntimeout_secs = 5\n"),
        Component::Agentd,
    )
    .unwrap();
    assert_eq!(config.approvals.mode, ApprovalMode::Always);
    assert_eq!(config.approvals.timeout, Duration::from_secs(5));
    assert!(
        config
            .summary()
            .contains("approvals: always; unanswered after 5s counts as denied"),
        "{}",
        config.summary()
    );
}

#[test]
fn bad_values_are_refused_with_the_fix() {
    let found = problems(load_text(
        &with("[approvals]\nmode = \"sometimes\"\ntimeout_secs = 0\n"),
        Component::Agentd,
    ));
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found[0].contains("approvals.mode = \"sometimes\"") && found[0].contains("\"off\""));
    assert!(found[1].contains("approvals.timeout_secs = 0") && found[1].contains("1 to 86400"));
    let found = problems(load_text(
        &with(
            "[[mcp.servers]]\nname = \"fs\"\ntype = \"stdio\"\ncommand = \"x\"\napproval = \"maybe\"\n",
        ),
        Component::Agentd,
    ));
    assert!(
        found[0].contains("mcp server \"fs\": approval = \"maybe\""),
        "{found:#?}"
    );
}

#[test]
fn an_mcp_server_sets_its_approval() {
    let config = load_text(
        &with("[[mcp.servers]]\nname = \"fs\"\ntype = \"stdio\"\ncommand = \"x\"\napproval = \"never\"\n\n[[mcp.servers]]\nname = \"web\"\ntype = \"stdio\"\ncommand = \"y\"\n"),
        Component::Agentd,
    )
    .unwrap();
    assert_eq!(config.mcp_servers[0].approval, McpApproval::Never);
    assert_eq!(config.mcp_servers[1].approval, McpApproval::Auto);
}
