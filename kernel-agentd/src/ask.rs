//! `Asks` and the `ask_user(question, options?)` tool: the model asks the owner and waits —
//! on the turn's token and `general.ask_timeout_secs` — for the answer: a chosen option or
//! words, given by the `Answer` RPC or (for the owner) by a message sent while the question is
//! pending (`Turns::chat_for_owner`). The question and its closing reach clients as turn events
//! (`ToolEvent::Question` / `QuestionClosed`). One question is pending at most per session (one
//! turn runs per session); a message answers the one of its own session.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::oneshot;

use tokio_util::sync::CancellationToken;

use crate::tools::{
    RegistryError, Tool, ToolContext, ToolEvent, ToolEvents, ToolOutput, ToolRegistry,
};

/// The tool's name.
pub(crate) const TOOL_NAME: &str = "ask_user";
/// Most options a question offers (one button row each).
const MAX_OPTIONS: usize = 10;
/// Longest option, in characters (a button label).
const MAX_OPTION_CHARS: usize = 64;
/// What the model gets when the owner did not answer in time.
pub(crate) const NO_ANSWER: &str = "no answer: the owner did not reply in time";

const DESCRIPTION: &str = "Ask the owner a question and wait for the reply. Use it only when you cannot go on without the owner's decision or a missing fact. Give `options` (short labels, at most 10) when the answer is a choice: the owner sees them as buttons but may still answer in words. Returns the owner's answer, or says that none came.";

/// How a question ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reply {
    /// The owner chose option `n` (0-based).
    Chose(usize),
    /// The owner answered in words; `outside`: they carry content from outside the owner (a
    /// forwarded message, a reply to one): the turn that asked is outside content from then on.
    Said { words: String, outside: bool },
    /// No answer within the timeout.
    NoAnswer,
    /// The turn was cancelled while waiting.
    Cancelled,
}

/// The pending questions (at most one per session) and the answers to them; a cheap `Clone`
/// handle.
#[derive(Debug, Clone, Default)]
pub struct Asks {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    pending: Mutex<Vec<Pending>>,
    next_id: AtomicU64,
}

#[derive(Debug)]
struct Pending {
    id: String,
    /// The session of the turn that asks.
    session_id: i64,
    options: Vec<String>,
    answer: oneshot::Sender<Reply>,
}

impl Asks {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Pending>> {
        self.inner.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Answers question `id` with option `option` or with `text`; false when `id` is not the
    /// pending question (stale) or the option does not exist.
    pub fn answer(&self, id: &str, option: Option<u32>, text: &str) -> bool {
        self.answer_marked(id, option, text, false)
    }

    /// [`Asks::answer`], the words marked as outside content when `outside`.
    fn answer_marked(&self, id: &str, option: Option<u32>, text: &str, outside: bool) -> bool {
        let mut pending = self.lock();
        let Some(at) = pending.iter().position(|p| p.id == id) else {
            return false;
        };
        let p = &pending[at];
        let answer = match option {
            Some(i) if (i as usize) < p.options.len() => Reply::Chose(i as usize),
            Some(_) => return false,
            None if text.trim().is_empty() => return false,
            None => Reply::Said {
                words: text.to_owned(),
                outside,
            },
        };
        let p = pending.remove(at);
        tracing::info!(question = %p.id, by_option = option.is_some(), "question answered");
        p.answer.send(answer).is_ok()
    }

    /// Whether a question waits for its answer (in any session).
    pub fn is_pending(&self) -> bool {
        !self.lock().is_empty()
    }

    /// Whether a question of session `session_id` waits for its answer.
    pub fn is_pending_in(&self, session_id: i64) -> bool {
        self.lock().iter().any(|p| p.session_id == session_id)
    }

    /// Answers the pending question, if any (the oldest), with `text`; its id.
    pub fn answer_pending(&self, text: &str) -> Option<String> {
        let id = self.lock().first()?.id.clone();
        self.answer(&id, None, text).then_some(id)
    }

    /// Answers the pending question of session `session_id`, if any, with `text` (outside
    /// content when `outside`: a forward, a reply to one); its id.
    pub fn answer_pending_in(&self, session_id: i64, text: &str, outside: bool) -> Option<String> {
        let id = self
            .lock()
            .iter()
            .find(|p| p.session_id == session_id)?
            .id
            .clone();
        self.answer_marked(&id, None, text, outside).then_some(id)
    }

    /// Puts `question` to the owner of session `session_id` (with `options` as buttons) and
    /// waits for the answer, `timeout` or `cancel`. The question and its closing are emitted on
    /// `events` (a `ChatEvent.question` over gRPC, buttons in kernel-tg).
    pub(crate) async fn ask_owner(
        &self,
        session_id: i64,
        question: String,
        options: Vec<String>,
        events: &ToolEvents,
        cancel: &CancellationToken,
        timeout: Duration,
    ) -> Reply {
        let id = format!(
            "q{}",
            self.inner.next_id.fetch_add(1, Ordering::Relaxed) + 1
        );
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = self.lock();
            // A session's newer question replaces its older one (one turn per session).
            pending.retain(|p| p.session_id != session_id);
            pending.push(Pending {
                id: id.clone(),
                session_id,
                options: options.clone(),
                answer: tx,
            });
        }
        tracing::info!(question = %id, options = options.len(), "asking the owner");
        events.emit(ToolEvent::Question {
            id: id.clone(),
            text: question,
            options,
        });
        let reply = tokio::select! {
            answer = rx => answer.unwrap_or(Reply::NoAnswer),
            () = cancel.cancelled() => Reply::Cancelled,
            () = tokio::time::sleep(timeout) => Reply::NoAnswer,
        };
        {
            self.lock().retain(|p| p.id != id);
        }
        events.emit(ToolEvent::QuestionClosed { id: id.clone() });
        if reply == Reply::NoAnswer {
            tracing::info!(question = %id, "the question timed out");
        }
        reply
    }

    /// Puts `question` to the owner and waits for the answer (or `timeout`, or `ctx.cancel`).
    async fn ask(
        &self,
        question: String,
        options: Vec<String>,
        ctx: &ToolContext,
        timeout: Duration,
    ) -> ToolOutput {
        let reply = self
            .ask_owner(
                ctx.session_id,
                question,
                options.clone(),
                &ctx.events,
                &ctx.cancel,
                timeout,
            )
            .await;
        match reply {
            Reply::Chose(i) => ToolOutput::ok(options[i].clone()),
            Reply::Said { words, outside } => {
                if outside {
                    tracing::info!(
                        "an answer carried outside content: the turn is outside content"
                    );
                    ctx.took_outside.set();
                }
                ToolOutput::ok(words)
            }
            Reply::NoAnswer => ToolOutput::ok(NO_ANSWER),
            Reply::Cancelled => ToolOutput::error("cancelled by the user"),
        }
    }
}

/// Registers `ask_user` (waiting up to `timeout`) on `registry`, replacing an earlier one.
pub(crate) fn register_tool(
    registry: &ToolRegistry,
    asks: &Asks,
    timeout: Duration,
) -> Result<(), RegistryError> {
    let mut schema = schemars::schema_for!(AskInput);
    schema.remove("$schema");
    schema.remove("title");
    registry.unregister(TOOL_NAME);
    registry.register(Arc::new(AskUserTool {
        asks: asks.clone(),
        timeout,
        schema: schema.to_value(),
    }))
}

/// `ask_user` input.
#[derive(Debug, Deserialize, JsonSchema)]
struct AskInput {
    /// The question, as the owner should read it.
    question: String,
    /// Short answer choices shown as buttons (optional, at most 10).
    #[serde(default)]
    options: Option<Vec<String>>,
}

#[derive(Debug)]
struct AskUserTool {
    asks: Asks,
    timeout: Duration,
    schema: Value,
}

#[async_trait::async_trait]
impl Tool for AskUserTool {
    fn name(&self) -> &str {
        TOOL_NAME
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        self.schema.clone()
    }

    async fn call(&self, input: Value, ctx: ToolContext) -> ToolOutput {
        let input: AskInput = match serde_json::from_value(input) {
            Ok(input) => input,
            Err(e) => return ToolOutput::error(format!("invalid input for {TOOL_NAME}: {e}")),
        };
        if input.question.trim().is_empty() {
            return ToolOutput::error("the question is empty");
        }
        let options: Vec<String> = input
            .options
            .unwrap_or_default()
            .into_iter()
            .map(|o| o.trim().to_owned())
            .filter(|o| !o.is_empty())
            .collect();
        if options.len() > MAX_OPTIONS {
            return ToolOutput::error(format!("at most {MAX_OPTIONS} options"));
        }
        if options.iter().any(|o| o.chars().count() > MAX_OPTION_CHARS) {
            return ToolOutput::error(format!(
                "an option is longer than {MAX_OPTION_CHARS} characters"
            ));
        }
        self.asks
            .ask(input.question, options, &ctx, self.timeout)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolEvents;

    fn ctx(seen: Arc<Mutex<Vec<ToolEvent>>>) -> ToolContext {
        ToolContext {
            events: ToolEvents::new(move |e| seen.lock().unwrap().push(e)),
            ..ToolContext::default()
        }
    }

    #[tokio::test]
    async fn an_option_or_words_answer_and_stale_answers_are_refused() {
        let asks = Asks::default();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let asking = tokio::spawn({
            let (asks, ctx) = (asks.clone(), ctx(seen.clone()));
            async move {
                let options = vec!["a".into(), "b".into()];
                asks.ask("which?".into(), options, &ctx, Duration::from_secs(60))
                    .await
            }
        });
        let id = loop {
            if let Some(ToolEvent::Question { id, .. }) = seen.lock().unwrap().first().cloned() {
                break id;
            }
            tokio::task::yield_now().await;
        };
        assert!(!asks.answer(&id, Some(5), ""));
        assert!(!asks.answer("q999", Some(0), ""));
        assert!(asks.answer(&id, Some(1), ""));
        assert_eq!(asking.await.unwrap(), ToolOutput::ok("b"));
        assert!(!asks.answer(&id, Some(0), ""), "answered twice");
        assert_eq!(asks.answer_pending("late"), None);
        assert!(matches!(
            seen.lock().unwrap().last(),
            Some(ToolEvent::QuestionClosed { .. })
        ));
    }

    #[tokio::test(start_paused = true)]
    async fn no_answer_in_time_says_so() {
        let asks = Asks::default();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let out = asks
            .ask("?".into(), Vec::new(), &ctx(seen), Duration::from_secs(600))
            .await;
        assert_eq!(out, ToolOutput::ok(NO_ANSWER));
        assert_eq!(asks.answer_pending("too late"), None);
    }
}
