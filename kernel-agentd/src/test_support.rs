//! Unit-test support for the services: a validated config and a real SQLite store in a temp dir,
//! and [`ScriptedProvider`], an in-process `llm::Provider` that answers from a script.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use kernel_common::Config;
use kernel_common::config::Component;

use crate::conversation::{Message, Role, Usage};
use crate::llm::{
    EventStream, LlmError, ModelRequest, ModelResponse, Provider, StopReason, StreamEvent,
};
use crate::store::Store;

/// A temp dir with a config and its open store; the dir lives as long as this.
pub(crate) struct TestEnv {
    _dir: tempfile::TempDir,
    pub config: Config,
    pub store: Store,
}

/// Providers in [`env`]'s config: `main` (claude, the default, two models), `spare`
/// (openai_compat) and `keyless` (no key: listed, not usable).
const PROVIDERS: &str = r#"
[providers.main]
type = "claude"
api_base = "http://127.0.0.1:9"
api_key = "sk-unit-test-key-0123456789"
max_tokens = 1024
default_model = "m1"
models = ["m1", "m2"]

[providers.spare]
type = "openai_compat"
api_base = "http://127.0.0.1:9/v1"
api_key = "sk-unit-test-spare-0123456789"
default_model = "s1"

[providers.keyless]
type = "openai_compat"
api_base = "http://127.0.0.1:9/v1"
default_model = "k1"
"#;

/// A fresh temp dir with a validated config (data dir `data`, time zone Asia/Shanghai,
/// [`PROVIDERS`], `extra` appended) and the store opened in it.
pub(crate) async fn env(extra: &str) -> TestEnv {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    let toml = format!(
        "[telegram]\ntoken = \"123456789:AAUnitTestTokenForTests_xyz\"\nallowed_user = 42\n\n\
         [general]\ntimezone = \"Asia/Shanghai\"\ndefault_provider = \"main\"\ndata_dir = \"data\"\n\
         {PROVIDERS}\n{extra}\n"
    );
    std::fs::write(&path, toml).expect("write config");
    let config = Config::load(&path, Component::Agentd, &|_| None).expect("valid test config");
    let store = Store::open(&config.general.data_dir.join("kernel.db"))
        .await
        .expect("open store");
    TestEnv {
        _dir: dir,
        config,
        store,
    }
}

/// One scripted model call.
#[derive(Debug, Clone)]
pub(crate) enum Step {
    /// Streams `text` as one delta, then answers with `message`.
    Answer { text: String, message: Message },
    /// Never yields (until the stream is dropped).
    Hang,
    /// The call fails before streaming.
    Fail(LlmError),
}

impl Step {
    /// A final text answer.
    pub(crate) fn text(text: &str) -> Step {
        Step::Answer {
            text: text.to_owned(),
            message: Message::assistant_text(text.to_owned()),
        }
    }

    /// An answer that is `message` (e.g. with tool calls), streaming no text.
    pub(crate) fn message(message: Message) -> Step {
        Step::Answer {
            text: String::new(),
            message,
        }
    }
}

/// A `Provider` answering each call with the next [`Step`]; records what each call was sent.
#[derive(Debug, Default)]
pub(crate) struct ScriptedProvider {
    steps: Mutex<VecDeque<Step>>,
    /// The messages of every request, in call order.
    pub seen: Mutex<Vec<Vec<Message>>>,
    /// Notified (one stored permit) on every call.
    pub called: tokio::sync::Notify,
}

impl ScriptedProvider {
    /// A provider that plays `steps` in order.
    pub(crate) fn new(steps: Vec<Step>) -> Arc<ScriptedProvider> {
        Arc::new(ScriptedProvider {
            steps: Mutex::new(steps.into()),
            seen: Mutex::new(Vec::new()),
            called: tokio::sync::Notify::new(),
        })
    }
}

#[async_trait::async_trait]
impl Provider for ScriptedProvider {
    async fn stream(&self, request: ModelRequest<'_>) -> Result<EventStream, LlmError> {
        self.seen.lock().unwrap().push(request.messages.to_vec());
        let step = self.steps.lock().unwrap().pop_front();
        self.called.notify_one();
        match step {
            Some(Step::Answer { text, message }) => {
                let stop_reason = if message.tool_calls().next().is_some() {
                    StopReason::ToolUse
                } else {
                    StopReason::EndTurn
                };
                let mut events = Vec::new();
                if !text.is_empty() {
                    events.push(Ok(StreamEvent::TextDelta(text)));
                }
                events.push(Ok(StreamEvent::Done(ModelResponse {
                    message,
                    stop_reason,
                    usage: Usage::default(),
                })));
                Ok(Box::pin(futures::stream::iter(events)))
            }
            Some(Step::Hang) => Ok(Box::pin(futures::stream::pending())),
            Some(Step::Fail(e)) => Err(e),
            None => Err(LlmError::Stream {
                message: "the script has no more steps".into(),
            }),
        }
    }
}

/// The roles of `messages`, in order.
pub(crate) fn roles(messages: &[Message]) -> Vec<Role> {
    messages.iter().map(|m| m.role).collect()
}
