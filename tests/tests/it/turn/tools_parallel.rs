//! Parallel tool calls through the real service: three read-only calls of 1 s in one step take
//! about 1 s (serial: 3 s, printed side by side for BENCHMARKS.md); a side-effecting call runs
//! alone, in the model's order, between read-only ones; results go back in the model's order;
//! `/cancel` stops every running call; an unknown tool in a parallel step still gets an error.

use std::time::{Duration, Instant};

use kernel_agentd::tools::Tool;
use kernel_proto::v1 as pb;
use kernel_proto::v1::chat_event::Event;
use tests::chat::{self, completed, turn};
use tests::config::TestConfig;
use tests::fake_llm::{FakeLlm, FakeToolCall, Reply, Script};
use tests::harness::Harness;
use tests::test_tools::with_tools;
use tests::timed_tools::{Runs, Timed};

fn step(names: &[&str]) -> Script {
    names
        .iter()
        .fold(Reply::default(), |r, n| r.tool(FakeToolCall::new(*n, "{}")))
        .into()
}

/// The tool results of the request after the step, in order.
fn results(fake: &FakeLlm) -> Vec<String> {
    let body = fake.last_request().unwrap().body;
    let messages = body["messages"].as_array().unwrap().clone();
    let last = messages.last().unwrap();
    last["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["content"].to_string())
        .collect()
}

async fn three_calls(read_only: bool) -> (Duration, Vec<String>) {
    let runs = Runs::default();
    let tools: Vec<std::sync::Arc<dyn Tool>> = ["a", "b", "c"]
        .into_iter()
        .map(|n| Timed::new(n, read_only, Duration::from_secs(1), &runs) as _)
        .collect();
    let fake = FakeLlm::start().await;
    let mut h = Harness::start_with(TestConfig::new(&fake.url(), ""), with_tools(tools)).await;
    fake.push(step(&["a", "b", "c"]));
    fake.push(Script::text("done"));
    let started = Instant::now();
    completed(&turn(&mut h.client, "go").await);
    let took = started.elapsed();
    let out = results(&fake);
    h.stop().await;
    (took, out)
}

#[tokio::test(flavor = "multi_thread")]
async fn three_read_only_calls_of_a_second_take_about_a_second() {
    let (parallel, out) = three_calls(true).await;
    let (serial, serial_out) = three_calls(false).await;
    println!(
        "bench: three 1 s tool calls in one step: read-only {parallel:?}, side-effecting (serial) {serial:?}"
    );
    assert!(parallel < Duration::from_millis(2500), "{parallel:?}");
    assert!(serial >= Duration::from_secs(3), "{serial:?}");
    for o in [&out, &serial_out] {
        assert_eq!(o.len(), 3);
        for (r, n) in o.iter().zip(["a", "b", "c"]) {
            assert!(
                r.contains(&format!("done: {n}")),
                "the model's order: {o:?}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_side_effecting_call_runs_alone_in_order_and_unknown_tools_get_an_error() {
    let runs = Runs::default();
    let ms = Duration::from_millis(300);
    let tools: Vec<std::sync::Arc<dyn Tool>> = vec![
        Timed::new("r1", true, ms, &runs),
        Timed::new("r2", true, ms, &runs),
        Timed::new("write", false, ms, &runs),
        Timed::new("r3", true, ms, &runs),
        Timed::new("r4", true, ms, &runs),
    ];
    let fake = FakeLlm::start().await;
    let mut h = Harness::start_with(TestConfig::new(&fake.url(), ""), with_tools(tools)).await;
    fake.push(step(&["r1", "r2", "write", "r3", "nope", "r4"]));
    fake.push(Script::text("done"));
    completed(&turn(&mut h.client, "go").await);
    let out = results(&fake);
    assert_eq!(out.len(), 6);
    assert!(out[4].contains("unknown tool"), "{out:?}");
    for (i, n) in [(0, "r1"), (1, "r2"), (2, "write"), (3, "r3"), (5, "r4")] {
        assert!(out[i].contains(&format!("done: {n}")), "{out:?}");
    }
    let runs = runs.lock().unwrap().clone();
    let at = |n: &str| runs.iter().find(|r| r.0 == n).cloned().unwrap();
    let (write, r1, r2, r3) = (at("write"), at("r1"), at("r2"), at("r3"));
    assert!(
        write.1 >= r1.2 && write.1 >= r2.2,
        "the write waits for the reads before it"
    );
    assert!(r3.1 >= write.2, "the reads after it wait for the write");
    assert!(r1.1.max(r2.1) < r1.2.min(r2.2), "r1 and r2 overlap");
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn cancel_stops_every_running_read_only_call() {
    let runs = Runs::default();
    let long = Duration::from_secs(300);
    let tools: Vec<std::sync::Arc<dyn Tool>> = vec![
        Timed::new("a", true, long, &runs),
        Timed::new("b", true, long, &runs),
    ];
    let fake = FakeLlm::start().await;
    let mut h = Harness::start_with(TestConfig::new(&fake.url(), ""), with_tools(tools)).await;
    fake.push(step(&["a", "b"]));
    let mut stream = chat::send(&mut h.client, "go").await;
    chat::until(
        &mut stream,
        |e| matches!(e, Event::ToolStarted(t) if t.tool_name == "b"),
    )
    .await;
    let started = Instant::now();
    h.client.cancel(pb::CancelRequest::default()).await.unwrap();
    let rest = chat::rest(&mut stream).await;
    assert!(matches!(rest.last(), Some(Event::Cancelled(_))), "{rest:?}");
    assert!(started.elapsed() < Duration::from_secs(1));
    tests::wait::eventually("both calls to stop", Duration::from_secs(2), async || {
        (runs.lock().unwrap().len() == 2).then_some(())
    })
    .await;
    h.stop().await;
}
