//! The MCP client against the real server-everything on stdio, through the gRPC service: tools
//! registered as `mcp_everything__*`, a model-requested call round-tripping through a turn, and a
//! killed server failing the next call cleanly, then coming back and leaving no zombie.

use kernel_proto::v1::chat_event::Event;
use tests::chat::{completed, turn};
use tests::config::TestConfig;
use tests::fake_llm::{FakeLlm, FakeToolCall, Reply, Script};
use tests::harness::Harness;
use tests::mcp_support::{KillableStdio, process_gone, stdio_toml, wait_for_server};

fn finished(events: &[Event]) -> Vec<&kernel_proto::v1::ToolFinished> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolFinished(t) => Some(t),
            _ => None,
        })
        .collect()
}

fn echo_call(message: &str) -> Reply {
    Reply::default().tool(FakeToolCall::new(
        "mcp_everything__echo",
        format!(r#"{{"message":"{message}"}}"#),
    ))
}

#[tokio::test]
async fn stdio_tools_are_registered_with_prefixed_names_and_shown_in_status() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(TestConfig::new(&fake.url(), &stdio_toml("everything"))).await;
    let status = wait_for_server(&mut h.client, "everything", "connected").await;

    let names: Vec<String> = h
        .ext
        .tools
        .names()
        .into_iter()
        .filter(|n| n.starts_with("mcp_"))
        .collect();
    for expected in [
        "mcp_everything__echo",
        "mcp_everything__get-sum",
        "mcp_everything__get-env",
    ] {
        assert!(names.iter().any(|n| n == expected), "{expected}: {names:?}");
    }
    assert_eq!(status.tool_count as usize, names.len(), "{status:?}");
    assert_eq!(status.detail, None);

    let spec = h
        .ext
        .tools
        .specs()
        .into_iter()
        .find(|s| s.name == "mcp_everything__echo")
        .unwrap();
    assert!(
        spec.description.contains("everything") && spec.description.contains("Echoes back"),
        "{}",
        spec.description
    );
    assert_eq!(spec.input_schema["type"], "object");
    assert_eq!(spec.input_schema["properties"]["message"]["type"], "string");

    // The model is offered them too.
    fake.push(Script::text("好的。"));
    turn(&mut h.client, "你有哪些工具？").await;
    let body = &fake.requests()[0].raw_body;
    assert!(body.contains("mcp_everything__echo"), "{body}");
    h.stop().await;
}

#[tokio::test]
async fn a_model_requested_mcp_call_round_trips_through_a_turn() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(TestConfig::new(&fake.url(), &stdio_toml("everything"))).await;
    wait_for_server(&mut h.client, "everything", "connected").await;

    fake.push(echo_call("ping-mcp-7"));
    fake.push(Script::text("服务器回了 ping-mcp-7。"));
    let events = turn(&mut h.client, "用 echo 工具发 ping-mcp-7").await;

    assert_eq!(completed(&events).text, "服务器回了 ping-mcp-7。");
    let done = finished(&events);
    assert_eq!(done.len(), 1, "{events:?}");
    assert!(done[0].ok, "{:?}", done[0]);
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    let second = &requests[1].raw_body;
    assert!(second.contains("Echo: ping-mcp-7"), "{second}");
    assert!(
        second.contains("external tool result from MCP server"),
        "{second}"
    );
    assert!(!requests[0].raw_body.contains("Echo: ping-mcp-7"));
    h.stop().await;
}

#[tokio::test]
async fn a_killed_server_fails_the_next_call_cleanly_then_reconnects_without_zombies() {
    let fake = FakeLlm::start().await;
    let scratch = tempfile::tempdir().unwrap();
    let server = KillableStdio::new(scratch.path());
    let mut h = Harness::start(TestConfig::new(&fake.url(), &server.toml("everything"))).await;
    wait_for_server(&mut h.client, "everything", "connected").await;
    let specs_before = format!("{:?}", h.ext.tools.specs());

    // Kill it, and keep it from coming back until the failed call has been seen.
    server.break_it();
    let first_pid = server.kill();
    fake.push(echo_call("after-kill"));
    fake.push(Script::text("工具暂时不可用。"));
    let events = turn(&mut h.client, "再 echo 一次").await;
    assert_eq!(completed(&events).text, "工具暂时不可用。");
    let done = finished(&events);
    assert_eq!(done.len(), 1, "{events:?}");
    assert!(!done[0].ok, "the call failed: {:?}", done[0]);
    let second = &fake.requests()[1].raw_body;
    assert!(second.contains("MCP server"), "{second}");
    assert!(!second.contains("Echo: after-kill"), "{second}");

    // It comes back by itself once it can start again; the tools never left (not disabled).
    server.fix();
    wait_for_server(&mut h.client, "everything", "connected").await;
    let second_pid = server.pid().unwrap();
    assert_ne!(first_pid, second_pid);
    assert!(process_gone(first_pid), "the killed server was reaped");
    assert_eq!(
        format!("{:?}", h.ext.tools.specs()),
        specs_before,
        "the tool list stays byte-identical across the reconnect"
    );

    fake.push(echo_call("back-again"));
    fake.push(Script::text("又好了。"));
    let events = turn(&mut h.client, "再试一次").await;
    assert!(finished(&events)[0].ok, "{events:?}");
    assert!(fake.requests()[3].raw_body.contains("Echo: back-again"));

    // Shutdown ends the child and reaps it.
    h.stop().await;
    assert!(
        process_gone(second_pid),
        "no server left behind at shutdown"
    );
}
