//! Unit tests of the turn loop without gRPC: `Turns` over real services and SQLite, driven by an
//! in-process scripted provider.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::*;
use crate::conversation::{Block, Message, Role};
use crate::llm::Provider;
use crate::test_support::{ScriptedProvider, Step, TestEnv, env, roles};
use crate::tools::{Tool, ToolContext, ToolOutput};
use recall::NoRecall;

/// Echoes its `text`.
#[derive(Debug)]
struct Echo;

#[async_trait::async_trait]
impl Tool for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn description(&self) -> &str {
        "echoes its text"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    }
    async fn call(&self, input: Value, _ctx: ToolContext) -> ToolOutput {
        ToolOutput::ok(input["text"].as_str().unwrap_or_default())
    }
}

struct Fixture {
    turns: Turns,
    sessions: Sessions,
    tasks: TaskTracker,
}

/// `Turns` whose current provider (`main`) is `provider`, with `Echo` registered.
async fn fixture(env: &TestEnv, provider: Arc<ScriptedProvider>) -> Fixture {
    let clients = BTreeMap::from([("main".to_owned(), provider as Arc<dyn Provider>)]);
    let models = Models::start(&env.config, clients, env.store.clone())
        .await
        .unwrap();
    let sessions = Sessions::new(
        env.store.clone(),
        models.clone(),
        env.config.general.timezone,
    );
    let (root, tasks) = (CancellationToken::new(), TaskTracker::new());
    let budget = crate::budget::Budget::with_system_clock(
        env.config.budget.clone(),
        env.config.general.timezone,
        crate::usage::UsageLedger::new(&env.config, env.store.clone()),
        env.store.clone(),
    );
    let titler = Titler::new(
        env.store.clone(),
        sessions.clone(),
        models.clone(),
        None,
        tasks.clone(),
        root.clone(),
        budget.clone(),
    );
    let tools = ToolRegistry::new();
    tools.register(Arc::new(Echo)).unwrap();
    let turns = Turns::new(
        &env.config,
        TurnsSetup {
            tools,
            recall: Arc::new(NoRecall),
            skills: crate::skills::Skills::new(env.config.general.skills_dir.clone()),
            media: Media::new(&env.config, &crate::http::client().unwrap()),
            store: env.store.clone(),
            sessions: sessions.clone(),
            models,
            titler,
            after_round: super::RoundHook::default(),
            after_fold: super::FoldHook::default(),
            outbox: crate::outbox::Outbox::new(env.store.clone(), root.clone()),
            usage: crate::usage::UsageLedger::new(&env.config, env.store.clone()),
            budget,
            root,
            tasks: tasks.clone(),
            approvals: crate::approvals::Approvals::new(&env.config.approvals),
        },
    );
    Fixture {
        turns,
        sessions,
        tasks,
    }
}

/// Every event up to and including the last one of the turn.
async fn events(rx: &mut TurnEvents) -> Vec<TurnEvent> {
    let mut out = Vec::new();
    while let Some(event) = rx.recv().await {
        let last = matches!(
            event,
            TurnEvent::Completed { .. } | TurnEvent::Failed { .. } | TurnEvent::Cancelled
        );
        out.push(event);
        if last {
            return out;
        }
    }
    panic!("the turn ended without a last event: {out:?}");
}

async fn stored(env: &TestEnv, session_id: i64) -> Vec<Message> {
    let rows = env.store.load_messages(session_id).await.unwrap();
    rows.into_iter().map(|r| r.message).collect()
}

#[tokio::test]
async fn a_plain_answer_is_streamed_stored_and_titled() {
    let env = env("").await;
    let provider = ScriptedProvider::new(vec![Step::text("你好，主人")]);
    let f = fixture(&env, provider.clone()).await;
    let mut rx = f.turns.chat(UserInput::text("你好\n第二行")).await.unwrap();
    let events = events(&mut rx).await;
    let session_id = f.sessions.current().await.unwrap().id;
    assert!(matches!(&events[0], TurnEvent::Started { session_id: s, .. } if *s == session_id));
    assert_eq!(
        events[1..],
        [
            TurnEvent::TextDelta("你好，主人".into()),
            TurnEvent::Completed {
                text: "你好，主人".into(),
                usage: Usage::default(),
                voice_reply: None,
                reasoning: String::new(),
            },
        ]
    );
    let sent = provider.seen.lock().unwrap().clone();
    assert_eq!(sent.len(), 1);
    assert!(sent[0].last().unwrap().text().contains("你好\n第二行"));
    let messages = stored(&env, session_id).await;
    assert_eq!(roles(&messages), [Role::User, Role::Assistant]);
    assert_eq!(
        messages[0].text(),
        "你好\n第二行",
        "the per-turn block is not stored"
    );
    assert_eq!(messages[1].text(), "你好，主人");
    // Without `[titles]`, the first line of the first message titles the session.
    f.tasks.close();
    f.tasks.wait().await;
    let row = env.store.get_session(session_id).await.unwrap().unwrap();
    assert_eq!(row.title.as_deref(), Some("你好"));
    assert!(f.turns.status().running_turn.is_none());
}

#[tokio::test]
async fn a_tool_call_runs_and_its_result_goes_back_to_the_model() {
    let env = env("").await;
    let call = Message {
        role: Role::Assistant,
        content: vec![Block::ToolCall {
            id: "call_1".into(),
            name: "echo".into(),
            input: json!({"text": "ping"}),
        }],
    };
    let provider = ScriptedProvider::new(vec![Step::message(call), Step::text("pong")]);
    let f = fixture(&env, provider.clone()).await;
    let mut rx = f.turns.chat(UserInput::text("echo ping")).await.unwrap();
    let events = events(&mut rx).await;
    let names: Vec<String> = events
        .iter()
        .map(|e| match e {
            TurnEvent::ToolStarted {
                call_id, tool_name, ..
            } => format!("started {call_id} {tool_name}"),
            TurnEvent::ToolFinished { call_id, ok, .. } => format!("finished {call_id} {ok}"),
            TurnEvent::TextDelta(t) => format!("text {t}"),
            TurnEvent::Started { .. } => "started".into(),
            TurnEvent::Completed { text, .. } => format!("completed {text}"),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        names,
        [
            "started",
            "started call_1 echo",
            "finished call_1 true",
            "text pong",
            "completed pong"
        ]
    );
    let sent = provider.seen.lock().unwrap().clone();
    assert_eq!(sent.len(), 2);
    let result = sent[1].last().unwrap();
    assert_eq!(result.role, Role::User);
    assert!(matches!(
        &result.content[..],
        [Block::ToolResult { call_id, content, is_error: false }] if call_id == "call_1" && content == "ping"
    ));
    let session_id = f.sessions.current().await.unwrap().id;
    let messages = stored(&env, session_id).await;
    assert_eq!(
        roles(&messages),
        [Role::User, Role::Assistant, Role::User, Role::Assistant]
    );
}

#[tokio::test]
async fn cancel_stops_a_hanging_model_call_and_frees_the_gate() {
    let env = env("").await;
    let provider = ScriptedProvider::new(vec![Step::Hang, Step::text("again")]);
    let f = fixture(&env, provider.clone()).await;
    let mut rx = f.turns.chat(UserInput::text("wait")).await.unwrap();
    assert!(matches!(rx.recv().await, Some(TurnEvent::Started { .. })));
    provider.called.notified().await;
    let mut busy = f.turns.chat(UserInput::text("me too")).await.unwrap();
    assert_eq!(
        busy.recv().await,
        Some(TurnEvent::Busy {
            first_in_window: true
        })
    );
    assert!(f.turns.status().running_turn.is_some());
    assert!(f.turns.cancel());
    assert_eq!(events(&mut rx).await, [TurnEvent::Cancelled]);
    assert!(!f.turns.cancel(), "nothing runs any more");

    let mut rx = f.turns.chat(UserInput::text("again")).await.unwrap();
    assert!(
        matches!(events(&mut rx).await.last(), Some(TurnEvent::Completed { text, .. }) if text == "again")
    );
    let session_id = f.sessions.current().await.unwrap().id;
    let messages = stored(&env, session_id).await;
    assert_eq!(
        roles(&messages),
        [Role::User, Role::User, Role::Assistant],
        "the cancelled turn kept its user message"
    );
}

mod budget;
