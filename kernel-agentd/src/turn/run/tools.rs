//! A step's tool calls: read-only ones next to each other run concurrently, the rest alone and
//! in order, within the turn's tool-call limit, the doom-loop guard
//! (the same tool with the same input at most [`MAX_IDENTICAL_CALLS`] times per user message
//! without asking the owner, see `repeat`),
//! skipped calls after a `/steer`, synthetic results on cancellation, and tool events forwarded
//! as turn events.

use super::repeat::Verdict;
use super::*;
use crate::approvals::{self, ApprovalRequest, Decision};
use crate::tools::Tool;

/// The result of a planned call not run because the owner steered before it started.
const SKIPPED_BY_STEER: &str = "skipped: the owner steered";
/// The result of a planned call not run because the owner stopped the turn at a repeated call.
const SKIPPED_BY_STOP: &str = "skipped: the owner stopped the turn";
/// The same tool with the same input is run at most this many times per user message.
const MAX_IDENTICAL_CALLS: usize = 2;

impl Turn {
    /// Runs a step's calls (up to the calls left of the turn's [`MAX_TOOL_CALLS`]; two or more read-only calls in a row run
    /// concurrently, every other call alone and in order), then stores their
    /// results in call order as one user message. A `/steer` received meanwhile ends the step
    /// after the call in progress: the calls not started get a "skipped" result and the steer
    /// text joins the results message (what the next model request sees right after them). On
    /// cancellation, calls without a result get a synthetic "cancelled by the user" one.
    pub(super) async fn run_tools(&mut self, calls: Vec<Call>) -> Result<(), Stop> {
        let runnable = MAX_TOOL_CALLS
            .saturating_sub(self.calls_used)
            .min(calls.len());
        let mut outputs: Vec<Option<ToolOutput>> = vec![None; calls.len()];
        for slot in outputs.iter_mut().skip(runnable) {
            *slot = Some(limit_output());
        }
        let tools = self.turns.inner.tools.clone();
        self.turns.inner.live.tool_ran(&self.id);
        let mut cancelled = false;
        let mut steered = false;
        let mut i = 0;
        while i < runnable {
            if self.permit.as_ref().is_some_and(Permit::steered) {
                steered = true;
                break;
            }
            if self.owner_stop.is_some() {
                break;
            }
            let batch = calls[i..runnable]
                .iter()
                .take_while(|c| tools.runs_concurrently(&c.name, &c.input))
                .count();
            let done = if batch >= 2 {
                self.run_read_only(&calls[i..i + batch], &mut outputs[i..i + batch])
                    .await
            } else {
                outputs[i] = self.run_one(&calls[i]).await;
                outputs[i].is_some()
            };
            if !done {
                cancelled = true;
                break;
            }
            i += batch.max(1);
        }
        self.with_permit(Permit::tools_finished);
        if cancelled {
            self.close_calls(
                &calls,
                outputs,
                || ToolOutput::error(CANCELLED_BY_USER),
                None,
            )
            .await?;
            return Err(Stop::Cancelled);
        }
        if steered {
            tracing::info!("the owner steered: the step's remaining calls are skipped");
        }
        let steer = self.steer_block();
        let extra = self.with_repeat_notes(steer);
        let skipped = if self.owner_stop.is_some() {
            SKIPPED_BY_STOP
        } else {
            SKIPPED_BY_STEER
        };
        self.close_calls(&calls, outputs, || ToolOutput::error(skipped), extra)
            .await
    }

    /// Runs `call` alone: the doom-loop guard, the owner's approval when it is risky, then the
    /// tool under the turn's token. `None` when the owner cancelled (the tool is given
    /// [`CANCEL_GRACE`] to notice its token).
    async fn run_one(&mut self, call: &Call) -> Option<ToolOutput> {
        if let Some(output) = self.start_call(call).await {
            if self.cancel.is_cancelled() {
                return None;
            }
            return Some(output);
        }
        let turns = self.turns.inner.clone();
        self.with_permit(|p| p.tool_started(&call.name));
        let ctx = self.tool_context(call);
        let tool = turns.tools.get(&call.name);
        if let Some(refused) = self.approve(tool.as_deref(), call, &ctx).await {
            if self.cancel.is_cancelled() {
                return None;
            }
            self.finish_call(call, &refused);
            return Some(refused);
        }
        if tool.as_deref().is_some_and(Tool::brings_outside_content) {
            self.outside_content = true;
        }
        let running = turns.tools.call(&call.name, call.input.clone(), ctx);
        tokio::pin!(running);
        let output = tokio::select! {
            biased;
            () = self.cancel.cancelled() => None,
            output = &mut running => Some(output),
        };
        let Some(output) = output else {
            // Let the tool see its token and clean up (kill a process group…), briefly;
            // whatever it answers now is replaced by the "cancelled" result.
            let _ = tokio::time::timeout(CANCEL_GRACE, running).await;
            return None;
        };
        self.fold_outside_mark();
        self.finish_call(call, &output);
        Some(output)
    }

    /// Counts and announces `call` and applies the doom-loop guard (past
    /// [`MAX_IDENTICAL_CALLS`], the owner is asked): `Some` output when it is not to run
    /// (already announced as finished), `None` when it is to run.
    async fn start_call(&mut self, call: &Call) -> Option<ToolOutput> {
        let redactor = self.turns.inner.redactor.clone();
        self.calls_used += 1;
        let input_summary = input_line(&call.input, &redactor);
        tracing::info!(tool = %call.name, call = %call.id, input = %input_summary, "tool started");
        self.emit(TurnEvent::ToolStarted {
            call_id: call.id.clone(),
            tool_name: call.name.clone(),
            input_summary,
        });
        let key = call_key(call);
        let seen = self.repeats.entry(key.clone()).or_default();
        *seen += 1;
        let times = *seen;
        if times <= MAX_IDENTICAL_CALLS {
            return None;
        }
        let output = if self.owner_stop.is_some() {
            ToolOutput::error(SKIPPED_BY_STOP)
        } else {
            match self.ask_about_repeat(call, times).await {
                Verdict::Run => {
                    // Let it continue: the count starts again with this call.
                    self.repeats.insert(key, 1);
                    return None;
                }
                Verdict::Skip(output) => output,
            }
        };
        tracing::warn!(tool = %call.name, call = %call.id, "doom loop: an identical call was not run");
        self.emit(TurnEvent::ToolFinished {
            call_id: call.id.clone(),
            ok: false,
            summary: result_line(&output, &redactor),
        });
        Some(output)
    }

    /// A tool took in outside content (an `ask_user` answer the owner forwarded): the turn is
    /// outside content from then on.
    fn fold_outside_mark(&mut self) {
        if self.took_outside.is_set() && !self.outside_content {
            tracing::info!("a tool took in outside content: the turn is outside content");
            self.outside_content = true;
        }
    }

    /// Announces that `call` finished with `output`.
    fn finish_call(&self, call: &Call, output: &ToolOutput) {
        let summary = result_line(output, &self.turns.inner.redactor);
        tracing::info!(tool = %call.name, call = %call.id, ok = !output.is_error, "tool finished");
        self.emit(TurnEvent::ToolFinished {
            call_id: call.id.clone(),
            ok: !output.is_error,
            summary,
        });
        self.with_permit(|p| p.tool_finished(&call.name));
    }

    fn tool_context(&self, call: &Call) -> ToolContext {
        ToolContext {
            cancel: self.cancel.child_token(),
            call_id: call.id.clone(),
            session_id: self.session_id,
            events: self.tool_events(),
            outside_content: self.outside_content,
            took_outside: self.took_outside.clone(),
        }
    }

    /// Runs read-only `calls` concurrently, their outputs into `outputs` in the model's order;
    /// `false` when the owner cancelled (every call's token is cancelled with the turn's).
    async fn run_read_only(&mut self, calls: &[Call], outputs: &mut [Option<ToolOutput>]) -> bool {
        let turns = self.turns.inner.clone();
        let mut running = Vec::new();
        for (k, call) in calls.iter().enumerate() {
            if self.owner_stop.is_some() {
                break;
            }
            if let Some(output) = self.start_call(call).await {
                if self.cancel.is_cancelled() {
                    return false;
                }
                outputs[k] = Some(output);
                continue;
            }
            self.with_permit(|p| p.tool_started(&call.name));
            if turns
                .tools
                .get(&call.name)
                .is_some_and(|t| t.brings_outside_content())
            {
                self.outside_content = true;
            }
            let ctx = self.tool_context(call);
            let tools = &turns.tools;
            running.push(async move { (k, tools.call(&call.name, call.input.clone(), ctx).await) });
        }
        tracing::debug!(
            calls = running.len(),
            "read-only tool calls run concurrently"
        );
        let all = futures::future::join_all(running);
        tokio::pin!(all);
        let done = tokio::select! {
            biased;
            () = self.cancel.cancelled() => None,
            done = &mut all => Some(done),
        };
        let Some(done) = done else {
            let _ = tokio::time::timeout(CANCEL_GRACE, all).await;
            return false;
        };
        self.fold_outside_mark();
        for (k, output) in done {
            self.finish_call(&calls[k], &output);
            outputs[k] = Some(output);
        }
        true
    }

    /// Asks the owner to approve `call` when it is risky and the policy wants it; the result
    /// the model gets instead when it may not run (`None`: run it).
    async fn approve(
        &self,
        tool: Option<&dyn Tool>,
        call: &Call,
        ctx: &ToolContext,
    ) -> Option<ToolOutput> {
        let approvals = &self.turns.inner.approvals;
        let risk = tool?.risk(&call.input)?;
        if !approvals.must_ask(self.outside_content) {
            return None;
        }
        let request = ApprovalRequest {
            turn_id: self.id.clone(),
            session_id: self.session_id,
            risk,
        };
        let decision = approvals.request(request, &ctx.events, &ctx.cancel).await;
        match decision {
            Decision::Allowed => None,
            Decision::Denied => Some(ToolOutput::error(approvals::DENIED)),
            Decision::Expired => Some(ToolOutput::error(approvals::NOT_ANSWERED)),
            Decision::Cancelled => Some(ToolOutput::error(CANCELLED_BY_USER)),
        }
    }

    /// Stores and appends the results message for `calls` (`missing()` for calls without output).
    pub(super) async fn close_calls(
        &mut self,
        calls: &[Call],
        outputs: Vec<Option<ToolOutput>>,
        missing: impl Fn() -> ToolOutput,
        extra: Option<Block>,
    ) -> Result<(), Stop> {
        let mut content: Vec<Block> = calls
            .iter()
            .zip(outputs)
            .map(|(call, output)| {
                let ToolOutput { content, is_error } = output.unwrap_or_else(&missing);
                Block::ToolResult {
                    call_id: call.id.clone(),
                    content,
                    is_error,
                }
            })
            .collect();
        content.extend(extra);
        let message = Message {
            role: Role::User,
            content,
        };
        let names: Vec<(&str, &str)> = calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str()))
            .collect();
        self.persist(&message, &names).await?;
        self.messages.push(message);
        Ok(())
    }

    /// Forwards what tools report as turn events (e.g. `CliStarted`), in order with the rest.
    pub(super) fn tool_events(&self) -> ToolEvents {
        let events = self.events.clone();
        let publish = self.publisher();
        ToolEvents::new(move |event| {
            let event = match event {
                ToolEvent::CliStarted { cli, cwd } => TurnEvent::CliStarted { cli, cwd },
                ToolEvent::Question { id, text, options } => {
                    TurnEvent::Question { id, text, options }
                }
                ToolEvent::QuestionClosed { id } => TurnEvent::QuestionClosed { id },
                ToolEvent::ApprovalRequested(shown) => TurnEvent::ApprovalRequested(shown),
                ToolEvent::ApprovalClosed { id, decision } => {
                    TurnEvent::ApprovalClosed { id, decision }
                }
            };
            publish(&event);
            // A listener that went away is noticed (and logged) by the turn's own events.
            let _ = events.send(event);
        })
    }
}

/// The doom-loop guard's key of a call: its tool and its input (object keys sorted).
fn call_key(call: &Call) -> String {
    format!("{}\u{0}{}", call.name, call.input)
}

pub(super) fn limit_output() -> ToolOutput {
    ToolOutput::error(format!(
        "not run: the limit of {MAX_TOOL_CALLS} tool calls for this message was reached"
    ))
}
