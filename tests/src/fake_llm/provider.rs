//! Driving Kernel's providers against the fake: provider and titles configs pointing at it,
//! and draining an event stream into what a test asserts on.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::StreamExt;
use kernel_agentd::llm::{EventStream, LlmError, ModelResponse, StreamEvent};
use kernel_common::Secret;
use kernel_common::config::{ProviderConfig, ProviderKind, TitlesConfig};

use super::FakeLlm;

/// The API key in configs made by [`FakeLlm::provider_config`] (tests assert it never leaks).
pub const FAKE_KEY: &str = "sk-fake-provider-key-0123456789abcdef";
/// The model in those configs.
pub const FAKE_MODEL: &str = "fake-model-1";

impl FakeLlm {
    /// A provider `fake` of `kind` pointing at this server: key [`FAKE_KEY`], model
    /// [`FAKE_MODEL`], `max_tokens` 1024 (claude) / unset (openai_compat), idle timeout 10 s.
    pub fn provider_config(&self, kind: ProviderKind) -> ProviderConfig {
        let (api_base, max_tokens) = match kind {
            ProviderKind::Claude => (self.url(), Some(1024)),
            ProviderKind::OpenAiCompat => (self.openai_base(), None),
        };
        ProviderConfig {
            name: "fake".into(),
            kind,
            api_base,
            api_key: Some(Secret::new(FAKE_KEY)),
            max_tokens,
            default_model: FAKE_MODEL.into(),
            models: vec![FAKE_MODEL.into()],
            headers: BTreeMap::new(),
            stream_idle_timeout: Duration::from_secs(10),
            first_byte_timeout: Duration::from_secs(10),
            retry: Default::default(),
            context: Default::default(),
            thinking: None,
            images: Default::default(),
        }
    }

    /// A `[titles]` config of `kind` pointing at this server (key [`FAKE_KEY`], 64 tokens, no
    /// retries).
    pub fn titles_config(&self, kind: ProviderKind) -> TitlesConfig {
        let api_base = match kind {
            ProviderKind::Claude => self.url(),
            ProviderKind::OpenAiCompat => self.openai_base(),
        };
        TitlesConfig {
            provider: "titles".into(),
            kind,
            api_base,
            api_key: Some(Secret::new(FAKE_KEY)),
            model: "fake-titles-model".into(),
            max_tokens: 64,
            headers: BTreeMap::new(),
            retry: kernel_common::config::retry::RetryConfig {
                max_retries: 0,
                ..Default::default()
            },
        }
    }
}

/// Everything a provider stream yielded.
#[derive(Debug)]
pub struct Drained {
    /// The events before `Done` (text deltas, tool call starts).
    pub events: Vec<StreamEvent>,
    /// `Done`'s response, or the error that ended the stream.
    pub result: Result<ModelResponse, LlmError>,
}

impl Drained {
    /// The concatenated text deltas.
    pub fn text(&self) -> String {
        self.events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::TextDelta(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }

    /// How many text deltas arrived.
    pub fn text_deltas(&self) -> usize {
        self.events
            .iter()
            .filter(|e| matches!(e, StreamEvent::TextDelta(_)))
            .count()
    }

    /// The (id, name) of every `ToolCallStarted`.
    pub fn started_tools(&self) -> Vec<(String, String)> {
        self.events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ToolCallStarted { id, name } => Some((id.clone(), name.clone())),
                _ => None,
            })
            .collect()
    }

    /// The response; panics with the error otherwise.
    pub fn response(self) -> ModelResponse {
        self.result
            .unwrap_or_else(|e| panic!("expected a response, got {e:?}"))
    }

    /// The error; panics when the stream succeeded.
    pub fn error(self) -> LlmError {
        match self.result {
            Ok(r) => panic!("expected an error, got {r:?}"),
            Err(e) => e,
        }
    }
}

/// Reads `stream` to its end. Panics if anything follows `Done` or an error.
pub async fn drain(mut stream: EventStream) -> Drained {
    let mut events = Vec::new();
    let result = loop {
        match stream.next().await {
            Some(Ok(StreamEvent::Done(response))) => break Ok(response),
            Some(Ok(event)) => events.push(event),
            Some(Err(e)) => break Err(e),
            None => panic!("the stream ended without Done or an error"),
        }
    };
    assert!(
        stream.next().await.is_none(),
        "the stream must end after Done or an error"
    );
    Drained { events, result }
}
