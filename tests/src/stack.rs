//! `Stack`: the real `kernel-agentd` and `kernel-tg` binaries wired to the fake LLM and the fake
//! Telegram Bot API, for end-to-end tests as the owner sees them.

mod probe;

pub use probe::{outbox_drained, prune_outbox, rpc, sent_containing};

use std::path::Path;
use std::time::Duration;

use crate::config::{AGENTD_TOKEN, PROVIDER_KEY, TELEGRAM_TOKEN, TestConfig};
use crate::fake_llm::FakeLlm;
use crate::fake_telegram::{Call, FakeTelegram, OWNER_ID, SentMessage};
use crate::process::{AgentdProcess, BinProcess};

/// How long a test waits for something the bot should do promptly.
pub const PROMPT: Duration = Duration::from_secs(20);

/// The line of the stack's `[telegram]` section that keeps turns on the placeholder path;
/// replace it (in [`Stack::start_edited`]'s `edit`) to test live drafts.
pub const LIVE_PREVIEW_OFF: &str = "live_preview = false";

/// Both binaries and both fakes.
pub struct Stack {
    pub llm: FakeLlm,
    pub telegram: FakeTelegram,
    pub cfg: TestConfig,
    agentd: Option<AgentdProcess>,
    bot: Option<BotProcess>,
}

impl Stack {
    /// Starts everything with a `claude` provider and no extra config.
    pub async fn start() -> Stack {
        Self::start_with("claude", "").await
    }

    /// Starts everything; `kind` is the default provider's type, `extra` TOML is appended.
    pub async fn start_with(kind: &str, extra: &str) -> Stack {
        Self::start_edited(kind, extra, |toml| toml).await
    }

    /// Like [`Stack::start_with`], with `edit` applied to the config text before anything starts.
    pub async fn start_edited(
        kind: &str,
        extra: &str,
        edit: impl FnOnce(String) -> String,
    ) -> Stack {
        Self::start_on(FakeLlm::start().await, kind, extra, edit).await
    }

    /// Like [`Stack::start`], the bot having topics from the start (getMe says
    /// `has_topics_enabled` when kernel-tg starts).
    pub async fn start_with_topics() -> Stack {
        let telegram = FakeTelegram::start(TELEGRAM_TOKEN).await;
        telegram.enable_topics();
        Self::start_against(FakeLlm::start().await, telegram, "claude", "", |toml| toml).await
    }

    /// Like [`Stack::start_edited`], against `llm` (e.g. one taking large bodies).
    pub async fn start_on(
        llm: FakeLlm,
        kind: &str,
        extra: &str,
        edit: impl FnOnce(String) -> String,
    ) -> Stack {
        let telegram = FakeTelegram::start(TELEGRAM_TOKEN).await;
        Self::start_against(llm, telegram, kind, extra, edit).await
    }

    /// Like [`Stack::start_on`], against a fake Bot API `telegram` already set up.
    pub async fn start_against(
        llm: FakeLlm,
        telegram: FakeTelegram,
        kind: &str,
        extra: &str,
        edit: impl FnOnce(String) -> String,
    ) -> Stack {
        let cfg = TestConfig::with_kind(kind, &llm.url(), extra);
        let api_url = telegram.api_url();
        cfg.rewrite(|toml| {
            edit(toml.replace(
                "allowed_user = 42",
                // The placeholder path unless a test turns drafts on (`LIVE_PREVIEW_OFF`).
                &format!("allowed_user = {OWNER_ID}\napi_url = \"{api_url}\"\n{LIVE_PREVIEW_OFF}"),
            ))
        });
        let agentd = Some(AgentdProcess::start(&cfg.path, &[]));
        // kernel-tg talks to the fake (served by this runtime) before it is ready: wait off-thread.
        let path = cfg.path.clone();
        let bot = Some(
            tokio::task::spawn_blocking(move || BotProcess::start(&path))
                .await
                .expect("start kernel-tg"),
        );
        telegram.wait_polling(PROMPT).await;
        Stack {
            llm,
            telegram,
            cfg,
            agentd,
            bot,
        }
    }

    /// The owner sends `text`; returns its message id.
    pub fn owner_says(&self, text: &str) -> i64 {
        self.telegram.user_text(OWNER_ID, text)
    }

    /// Waits for the bot's first `sendMessage` replying to `message_id`.
    pub async fn reply_to(&self, message_id: i64) -> Call {
        self.telegram
            .wait_for_call(
                "sendMessage",
                |c| c.ok && reply_target(c) == Some(message_id),
                PROMPT,
            )
            .await
    }

    /// The owner sends a command and gets its reply's text.
    pub async fn command(&self, text: &str) -> String {
        let id = self.owner_says(text);
        text_of(&self.reply_to(id).await)
    }

    /// The owner's chat as the owner sees it now: messages not deleted.
    pub fn visible(&self) -> Vec<SentMessage> {
        self.telegram
            .messages(OWNER_ID)
            .into_iter()
            .filter(|m| !m.deleted)
            .collect()
    }

    /// Waits for a turn's end (its placeholder deleted); returns what the owner sees then.
    pub async fn turn_done(&self) -> Vec<SentMessage> {
        self.telegram
            .wait_for_call("deleteMessage", |c| c.ok, PROMPT)
            .await;
        self.visible()
    }

    /// Waits until the bot sends `answer` as a message of its own; returns that call.
    pub async fn answer_sent(&self, answer: &str) -> Call {
        self.telegram
            .wait_for_call("sendMessage", |c| c.ok && text_of(c) == answer, PROMPT)
            .await
    }

    /// The last message of model request `n` (the user's turn), as JSON text.
    pub fn user_message_of(&self, n: usize) -> String {
        let requests = self.llm.requests();
        let messages = requests[n].body["messages"].as_array().cloned();
        messages
            .and_then(|m| m.last().cloned())
            .unwrap_or_default()
            .to_string()
    }

    /// Waits for a turn's end and returns its one visible answer's text.
    pub async fn only_answer(&self) -> String {
        let visible = self.turn_done().await;
        assert_eq!(visible.len(), 1, "{visible:#?}");
        visible[0].text.clone()
    }

    /// Kills kernel-agentd with SIGKILL.
    pub fn kill_agentd(&mut self) {
        self.agentd = None;
    }

    /// Stops kernel-agentd with SIGTERM (a graceful stop) and returns its exit status.
    pub fn stop_agentd(&mut self) -> std::process::ExitStatus {
        self.agentd
            .take()
            .expect("kernel-agentd running")
            .terminate()
    }

    /// Starts kernel-agentd again on the same config and data dir.
    pub fn start_agentd(&mut self) {
        self.agentd = Some(AgentdProcess::start(&self.cfg.path, &[]));
    }

    /// Every log line written so far: both processes' output and the log files.
    pub fn logs(&self) -> String {
        let mut out = String::new();
        if let Some(a) = &self.agentd {
            out.push_str(&a.output());
        }
        if let Some(b) = &self.bot {
            out.push_str(&b.output());
        }
        let dir = self.cfg.data_dir().join("logs");
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            out.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
        }
        out
    }

    /// Asserts no secret appears in any log or any message the bot sent.
    pub fn assert_no_secrets(&self) {
        let logs = self.logs();
        let sent: String = self
            .telegram
            .calls()
            .iter()
            .map(|c| c.params.to_string())
            .collect();
        for secret in [TELEGRAM_TOKEN, PROVIDER_KEY, AGENTD_TOKEN] {
            assert!(!logs.contains(secret), "secret in the logs:\n{logs}");
            assert!(!sent.contains(secret), "secret in a sent message:\n{sent}");
        }
        // The token's secret half alone must not leak either (e.g. through a logged URL).
        let tail = TELEGRAM_TOKEN.split(':').nth(1).unwrap_or(TELEGRAM_TOKEN);
        assert!(!logs.contains(tail), "bot token in the logs:\n{logs}");
        assert!(
            logs.contains("kernel-tg polling Telegram"),
            "the logs were not captured:\n{logs}"
        );
    }

    /// Waits until kernel-tg confirmed every update (the next getUpdates offset passed it):
    /// each was handled (a turn accepted, a command dispatched, …).
    pub async fn updates_confirmed(&self) {
        crate::wait::eventually("kernel-tg to confirm every update", PROMPT, async || {
            self.telegram.pending_updates() == 0
        })
        .await;
    }

    /// Kills kernel-tg with SIGKILL.
    pub fn kill_bot(&mut self) {
        self.bot = None;
    }

    /// Starts kernel-tg again on the same config and waits until it polls.
    pub async fn start_bot(&mut self) {
        self.telegram.reset_polling();
        let path = self.cfg.path.clone();
        self.bot = Some(
            tokio::task::spawn_blocking(move || BotProcess::start(&path))
                .await
                .expect("start kernel-tg"),
        );
        self.telegram.wait_polling(PROMPT).await;
    }

    /// Stops kernel-tg with SIGTERM and returns its exit status.
    pub fn stop_bot(&mut self) -> std::process::ExitStatus {
        self.bot.take().expect("kernel-tg running").terminate()
    }
}

/// The text of a sendMessage/editMessageText call.
pub fn text_of(call: &Call) -> String {
    call.params["text"].as_str().unwrap_or_default().to_owned()
}

/// The message a sendMessage call replies to.
pub fn reply_target(call: &Call) -> Option<i64> {
    call.params["reply_parameters"]["message_id"]
        .as_i64()
        .or_else(|| call.params["reply_to_message_id"].as_i64())
}

/// A running `kernel-tg` (debug logging, so the secret scans see everything); killed on drop.
pub struct BotProcess(BinProcess);

impl BotProcess {
    /// Starts `kernel-tg --config <config>` and waits until it says it is polling.
    pub fn start(config: &Path) -> BotProcess {
        BotProcess(BinProcess::start(
            "kernel-tg",
            config,
            &[("RUST_LOG", "debug")],
            "kernel-tg ready",
        ))
    }

    /// Everything it printed so far.
    pub fn output(&self) -> String {
        self.0.output()
    }

    /// Sends SIGTERM and waits for the exit status.
    pub fn terminate(self) -> std::process::ExitStatus {
        self.0.terminate()
    }
}
