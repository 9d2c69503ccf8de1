//! One watch run's bounded turn: the model/tool loop on the watch's model, offered the read-only
//! tools and `notify_owner`, at most `[watch] max_steps` model calls (the last with no tools) and
//! `max_tokens_per_run` tokens, every call in the usage ledger as `watch`. It never touches a
//! session and never sends anything itself: what `notify_owner` got is handed back.
//!
//! A watch reads the world, so its turn counts as outside content: a risky call asks the owner
//! whenever `[approvals]` asks for untrusted turns. A tool that is not read-only is not offered,
//! and a call to one is refused.

use std::sync::Arc;

use futures::StreamExt as _;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::approvals::{self, ApprovalRequest, Approvals, Decision};
use crate::conversation::{Block, Message, Purpose, Role, ToolSpec, Usage};
use crate::llm::{LlmError, ModelRequest, Provider, StreamEvent};
use crate::tools::notify_owner::{self, Notifications};
use crate::tools::{ToolContext, ToolOutput, ToolRegistry};
use crate::usage::UsageLedger;

/// The provider and model a watch runs on.
#[derive(Debug, Clone)]
pub(crate) struct WatchModel {
    /// The provider name its calls are recorded under.
    pub name: String,
    pub model: String,
    pub provider: Arc<dyn Provider>,
}

/// What a watch turn uses.
pub(super) struct WatchTurn<'a> {
    pub watch_id: i64,
    pub model: &'a WatchModel,
    pub tools: &'a ToolRegistry,
    pub approvals: &'a Approvals,
    pub ledger: &'a UsageLedger,
    /// Shutdown: the run stops at once and runs again at the next start.
    pub cancel: &'a CancellationToken,
    pub max_steps: u32,
    pub max_tokens: u64,
}

/// How a watch turn ended.
#[derive(Debug, Default)]
pub(super) struct TurnEnd {
    /// What it passed to `notify_owner` (one message), if anything.
    pub notified: Option<String>,
    /// The model's last text (its own summary; the owner does not see it).
    pub final_text: String,
    /// Tokens of every call, summed.
    pub tokens: u64,
    /// USD of every call; `None` when the model has no price.
    pub cost_usd: Option<f64>,
    /// The model call that failed (redacted), if one did.
    pub error: Option<String>,
    /// Shutdown cut it off: nothing is stored, the run runs again.
    pub interrupted: bool,
}

impl WatchTurn<'_> {
    /// Runs the turn for `prompt` under `system`.
    pub(super) async fn run(&self, system: &str, prompt: String) -> TurnEnd {
        let mut specs: Vec<ToolSpec> = self.tools.read_only_specs();
        specs.retain(|s| s.name != notify_owner::NAME);
        specs.push(notify_owner::spec());
        let mut messages = vec![Message::user_text(prompt)];
        let mut notifications = Notifications::default();
        let mut end = TurnEnd::default();
        for step in 1..=self.max_steps {
            let last = step == self.max_steps || end.tokens >= self.max_tokens;
            let request = ModelRequest {
                model: &self.model.model,
                system,
                tools: if last { &[] } else { &specs },
                messages: &messages,
                stable_prefix: 0,
            };
            let response = tokio::select! {
                biased;
                () = self.cancel.cancelled() => {
                    end.interrupted = true;
                    return end;
                }
                r = call(self.model.provider.as_ref(), request) => r,
            };
            let response = match response {
                Ok(r) => r,
                Err(e) => {
                    tracing::warn!(watch = self.watch_id, error = %e, "a watch's model call failed");
                    end.error = Some(e.to_string());
                    break;
                }
            };
            self.count(&mut end, &response.usage).await;
            let calls: Vec<(String, String, Value)> = response
                .message
                .tool_calls()
                .map(|c| (c.id.to_owned(), c.name.to_owned(), c.input.clone()))
                .collect();
            let text = response.message.text();
            if !text.trim().is_empty() {
                end.final_text = text;
            }
            messages.push(response.message);
            if calls.is_empty() || last {
                break;
            }
            let mut results = Vec::new();
            for (id, name, input) in calls {
                let output = if name == notify_owner::NAME {
                    notifications.take(&input)
                } else {
                    match self.call_tool(&id, &name, input).await {
                        Some(output) => output,
                        None => {
                            end.interrupted = true;
                            return end;
                        }
                    }
                };
                tracing::info!(watch = self.watch_id, tool = %name, ok = !output.is_error, "watch tool call");
                results.push(Block::ToolResult {
                    call_id: id,
                    content: output.content,
                    is_error: output.is_error,
                });
            }
            messages.push(Message {
                role: Role::User,
                content: results,
            });
            if end.tokens >= self.max_tokens {
                tracing::info!(
                    watch = self.watch_id,
                    tokens = end.tokens,
                    "a watch run reached its token limit"
                );
                break;
            }
        }
        end.notified = notifications.message();
        end
    }

    /// Records one call's usage for `watch` and adds its tokens and cost to `end`.
    async fn count(&self, end: &mut TurnEnd, usage: &Usage) {
        let (name, model) = (&self.model.name, &self.model.model);
        self.ledger
            .record(None, (name, model), Purpose::Watch, usage)
            .await;
        end.tokens += usage.input_tokens
            + usage.output_tokens
            + usage.cache_read_tokens
            + usage.cache_write_tokens;
        if let Some(price) = self.ledger.price(name, model) {
            let cost = price.cost(
                usage.input_tokens,
                usage.output_tokens,
                usage.cache_read_tokens,
                usage.cache_write_tokens,
            );
            *end.cost_usd.get_or_insert(0.0) += cost;
        }
    }

    /// Runs one read-only tool call (asking the owner first when it is risky); `None` on
    /// shutdown.
    async fn call_tool(&self, id: &str, name: &str, input: Value) -> Option<ToolOutput> {
        let Some(tool) = self.tools.get(name).filter(|t| t.read_only()) else {
            return Some(ToolOutput::error(format!(
                "{name} is not offered in a watch: only read-only tools and notify_owner"
            )));
        };
        let ctx = ToolContext {
            cancel: self.cancel.child_token(),
            call_id: id.to_owned(),
            session_id: 0,
            events: crate::tools::ToolEvents::default(),
            // A watch reads the outside world.
            outside_content: true,
            took_outside: crate::tools::OutsideMark::default(),
        };
        if let Some(risk) = tool.risk(&input)
            && self.approvals.must_ask(true)
        {
            let request = ApprovalRequest {
                turn_id: format!("watch-{}", self.watch_id),
                session_id: 0,
                risk,
            };
            match self
                .approvals
                .request(request, &ctx.events, &ctx.cancel)
                .await
            {
                Decision::Allowed => {}
                Decision::Denied => return Some(ToolOutput::error(approvals::DENIED)),
                Decision::Expired => return Some(ToolOutput::error(approvals::NOT_ANSWERED)),
                Decision::Cancelled => return None,
            }
        }
        tokio::select! {
            biased;
            () = self.cancel.cancelled() => None,
            output = self.tools.call(name, input, ctx.clone()) => Some(output),
        }
    }
}

/// One streamed model call to its final response.
async fn call(
    provider: &dyn Provider,
    request: ModelRequest<'_>,
) -> Result<crate::llm::ModelResponse, LlmError> {
    let mut stream = provider.stream(request).await?;
    while let Some(item) = stream.next().await {
        match item? {
            StreamEvent::Done(response) => return Ok(response),
            StreamEvent::TextDelta(_) | StreamEvent::ToolCallStarted { .. } => {}
        }
    }
    Err(LlmError::Stream {
        message: "the stream ended without a final message".into(),
    })
}
