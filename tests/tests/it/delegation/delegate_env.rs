//! The secrets the owner keeps in the environment for MCP servers (`${VAR}` in url, header and
//! env values) never reach a delegated CLI (real kernel-agentd binary, a fake CLI printing its
//! environment).

use std::path::PathBuf;

use kernel_proto::v1::agent_client::AgentClient;
use tests::chat::{completed, turn};
use tests::config::TestConfig;
use tests::fake_cli::{FakeCli, PRINT_ENV};
use tests::fake_llm::{FakeLlm, Script};
use tests::harness::unix_channel;
use tests::process::AgentdProcess;

const MCP_SECRETS: [(&str, &str); 3] = [
    ("OWNER_EXA_KEY", "exa-secret-value-0123456789"),
    ("OWNER_CTX7_KEY", "ctx7-secret-value-0123456789"),
    ("OWNER_GITHUB_TOKEN", "ghp-secret-value-0123456789"),
];

fn mcp_sections() -> String {
    "[[mcp.servers]]\nname = \"exa\"\ntype = \"http\"\n\
     url = \"http://127.0.0.1:9/mcp?exaApiKey=${OWNER_EXA_KEY}\"\n\n\
     [[mcp.servers]]\nname = \"ctx7\"\ntype = \"http\"\nurl = \"http://127.0.0.1:9/mcp\"\n\
     headers = { CONTEXT7_API_KEY = \"${OWNER_CTX7_KEY}\" }\n\n\
     [[mcp.servers]]\nname = \"gh\"\ntype = \"stdio\"\ncommand = \"true\"\n\
     env = { GITHUB_TOKEN = \"Bearer ${OWNER_GITHUB_TOKEN}\" }\n"
        .to_owned()
}

fn only_output_file(cfg: &TestConfig) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(cfg.data_dir().join("cli_outputs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files.into_iter().next().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn variables_the_config_references_as_secrets_are_stripped_from_the_cli() {
    let fake = FakeLlm::start().await;
    let cli = FakeCli::new(PRINT_ENV);
    let cfg = TestConfig::new(
        &fake.url(),
        &format!(
            "{}\n{}",
            cli.toml("claude_code", &["-p"], None),
            mcp_sections()
        ),
    );
    let mut env: Vec<(&str, &str)> = MCP_SECRETS.to_vec();
    env.push(("KERNEL_TEST_VISIBLE", "inherited-ok"));
    let config_path = cfg.path.clone();
    let agentd = tokio::task::spawn_blocking(move || AgentdProcess::start(&config_path, &env))
        .await
        .unwrap();
    let mut client = AgentClient::new(unix_channel(cfg.socket()).await);
    fake.push(Script::tool_call(
        "delegate_to_cli",
        r#"{"task": "print your environment"}"#,
    ));
    fake.push(Script::text("done"));

    let events = turn(&mut client, "看看环境变量").await;
    completed(&events);

    let printed = std::fs::read_to_string(only_output_file(&cfg)).unwrap();
    assert!(
        printed.contains("KERNEL_TEST_VISIBLE=inherited-ok"),
        "the rest of the environment is inherited: {printed}"
    );
    let model_saw = fake.requests()[1].raw_body.clone();
    for (name, value) in MCP_SECRETS {
        assert!(
            !printed.contains(&format!("{name}=")),
            "{name} leaked: {printed}"
        );
        for text in [&printed, &model_saw] {
            assert!(!text.contains(value), "{name}'s value leaked");
        }
    }
    drop(agentd);
}
