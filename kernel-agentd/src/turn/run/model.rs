//! One model call of a turn: streamed and cancellable, retried on the same provider after a
//! transient failure, failed over to the next usable provider when retries cannot help, and the
//! turn's failure when nothing can.

use futures::StreamExt as _;

use super::{Stop, Turn};
use crate::conversation::Message;
use crate::failure::FailReason;
use crate::llm::retry::{Retry, Scheduled};
use crate::llm::{LlmError, ModelRequest, ModelResponse, StreamEvent};
use crate::turn::TurnEvent;

/// Why one model call ended without a response.
#[derive(Debug)]
enum CallError {
    Cancelled,
    Llm(LlmError),
}

impl Turn {
    /// One model call, streamed; stops at once on cancellation (the stream is dropped). A
    /// transient failure before any answer text streamed is retried on the same provider first
    /// (see [`crate::llm::retry`]); when retries cannot help or are used up, a provider failure
    /// continues the call on the next usable fallback provider (see
    /// [`crate::models::Models::fail_over`]), which the turn then keeps.
    pub(super) async fn model_step(&mut self, tools_allowed: bool) -> Result<ModelResponse, Stop> {
        let mut retry = Retry::new(self.model.retry);
        loop {
            self.fit_token_budget().await?;
            let mut partial = None;
            let error = match self.stream_model(tools_allowed, &mut partial).await {
                Ok(response) => {
                    self.turns.inner.models.succeeded(&self.model.name).await;
                    return Ok(response);
                }
                Err(CallError::Cancelled) => Stop::Cancelled,
                Err(CallError::Llm(e @ LlmError::ContextTooLong { .. })) if partial.is_none() => {
                    tracing::warn!(error = %e, estimate = self.request_tokens(), budget = self.token_budget, "the provider says the context is too long");
                    if self.shrink().await? {
                        continue;
                    }
                    self.llm_failed(e)
                }
                Err(CallError::Llm(e)) if partial.is_none() => {
                    if let Some(next) = retry.after(&e) {
                        self.wait_to_retry(next, &e).await?;
                        continue;
                    }
                    let models = &self.turns.inner.models;
                    match models.fail_over(&self.model.name, &e).await {
                        Some((next, reason)) => {
                            tracing::warn!(error = %e, from = %self.model.name, to = %next.name, "model call failed over");
                            self.emit(TurnEvent::FailedOver {
                                from: self.model.name.clone(),
                                to: next.name.clone(),
                                model: next.model.clone(),
                                reason,
                            });
                            self.model = next;
                            self.purpose = crate::usage::Purpose::Failover;
                            retry = Retry::new(self.model.retry);
                            continue;
                        }
                        None => self.llm_failed(e),
                    }
                }
                Err(CallError::Llm(e)) => self.llm_failed(e),
            };
            if let Some(text) = partial.filter(|t| !t.trim().is_empty()) {
                let message = Message::assistant_text(text);
                if self.persist(&message, &[]).await.is_ok() {
                    self.messages.push(message);
                }
            }
            return Err(error);
        }
    }

    /// Tells the owner and the logs that the call is retried after `next.wait`, and waits;
    /// cancellation ends the wait at once.
    async fn wait_to_retry(&self, next: Scheduled, error: &LlmError) -> Result<(), Stop> {
        let provider = self.model.name.clone();
        crate::llm::retry::log(&provider, &next, error);
        self.turns
            .inner
            .models
            .retries()
            .record(&provider, next.reason);
        self.emit(TurnEvent::RetryScheduled {
            provider,
            scheduled: next,
        });
        if crate::llm::retry::sleep(next.wait, &self.cancel).await {
            Ok(())
        } else {
            Err(Stop::Cancelled)
        }
    }

    /// Streams one call to `self.model`; `partial` collects the answer text shown so far (still
    /// `None` when none streamed).
    async fn stream_model(
        &self,
        tools_allowed: bool,
        partial: &mut Option<String>,
    ) -> Result<ModelResponse, CallError> {
        let request = ModelRequest {
            model: &self.model.model,
            system: &self.system,
            tools: if tools_allowed { &self.specs } else { &[] },
            messages: &self.messages,
            stable_prefix: self.stable_prefix,
        };
        let mut stream = tokio::select! {
            biased;
            () = self.cancel.cancelled() => return Err(CallError::Cancelled),
            s = self.model.provider.stream(request) => s.map_err(CallError::Llm)?,
        };
        loop {
            let item = tokio::select! {
                biased;
                () = self.cancel.cancelled() => return Err(CallError::Cancelled),
                item = stream.next() => item,
            };
            match item {
                Some(Ok(StreamEvent::TextDelta(text))) => {
                    partial.get_or_insert_default().push_str(&text);
                    self.emit(TurnEvent::TextDelta(text));
                }
                Some(Ok(StreamEvent::ToolCallStarted { .. })) => {}
                Some(Ok(StreamEvent::Done(response))) => return Ok(response),
                Some(Err(e)) => return Err(CallError::Llm(e)),
                None => {
                    return Err(CallError::Llm(LlmError::Stream {
                        message: "the stream ended without a final message".into(),
                    }));
                }
            }
        }
    }

    /// The turn's failure after the current provider's call failed with `e` (the provider
    /// named in the reason's arguments).
    fn llm_failed(&self, e: LlmError) -> Stop {
        let reason = FailReason::llm(&e).of_provider(&self.model.name, &e);
        Stop::Failed(e.to_string(), reason)
    }
}
