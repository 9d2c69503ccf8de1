//! Listings and confirmations: /history, /memory, /status, /provider, /model and what the
//! session/memory commands answer. Inputs are plain borrowed values mapped from agentd replies.

use super::{
    MAX_DETAIL_CHARS, MAX_MEMORY_CHARS, MAX_TITLE_CHARS, Texts, escape_html, escape_truncated,
};
use kernel_common::config::Locale;
use std::fmt::Write as _;

/// A session as listed by agentd.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SessionEntry<'a> {
    /// `#n` in the latest listing (0 when not from a listing).
    pub number: u32,
    /// `YYYY-MM-DD` of the last activity, in the configured time zone.
    pub date: &'a str,
    /// Empty while untitled.
    pub title: &'a str,
    /// Whether it is the current session.
    pub current: bool,
    /// The Telegram topic it lives in: `Some("")` when its name is unknown.
    pub topic: Option<&'a str>,
}

/// A long-term memory as listed by agentd.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemoryEntry<'a> {
    pub number: u32,
    /// `YYYY-MM-DD`.
    pub date: &'a str,
    pub text: &'a str,
    /// Added by auto memory (marked in the listing).
    pub auto: bool,
    /// Where an automatic memory came from when not from the owner (`tool <name>`); empty: the
    /// owner.
    pub origin: &'a str,
}

/// A reminder, scheduled task or watch as listed by agentd.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ScheduleEntry<'a> {
    pub number: u32,
    /// The next fire time, `YYYY-MM-DD HH:MM` in the configured time zone.
    pub next_fire: &'a str,
    /// `remind`, `task` or `watch` (a `ScheduleMode` word).
    pub mode: &'a str,
    pub message: &'a str,
    /// The cron expression of a recurring one; empty for a one-shot.
    pub cron: &'a str,
    /// The `provider/model` a task runs on; empty: the current one.
    pub model: &'a str,
    /// It does not fire until resumed.
    pub paused: bool,
    /// A watch's last run: when (local time; empty: never), how it ended (a `WatchOutcome`
    /// word), its summary.
    pub last_run_at: &'a str,
    pub last_outcome: &'a str,
    pub last_summary: &'a str,
    /// A watch's runs today and their cost (USD; `None`: unknown).
    pub runs_today: u32,
    pub spend_today_usd: Option<f64>,
}

/// A configured provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProviderEntry<'a> {
    pub name: &'a str,
    pub models: &'a [String],
    pub default_model: &'a str,
    /// False when it has no API key.
    pub available: bool,
    pub current: bool,
    /// RFC 3339 end of its cooldown after failed calls, while it lasts.
    pub cooldown_until: Option<&'a str>,
}

/// A provider cooling down after failed calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CooldownEntry<'a> {
    /// `[titles]` for the titles provider.
    pub provider: &'a str,
    /// RFC 3339 (shown in the owner's time zone).
    pub until: &'a str,
    /// Consecutive failures.
    pub failures: u32,
}

/// An MCP server's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct McpEntry<'a> {
    pub name: &'a str,
    /// "connected", "connecting", "disabled" or "skipped".
    pub state: &'a str,
    pub tool_count: u32,
    pub detail: Option<&'a str>,
}

/// What `/status` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StatusView<'a> {
    pub version: &'a str,
    pub uptime_seconds: u64,
    pub session: Option<SessionEntry<'a>>,
    pub provider: &'a str,
    pub model: &'a str,
    /// RFC 3339 start of the running turn, if one runs (shown in the owner's time zone).
    pub turn_started_at: Option<&'a str>,
    pub running_tool: Option<&'a str>,
    /// The running CLI, e.g. `claude_code since <RFC 3339>` (shown in the owner's language and
    /// time zone).
    pub running_cli: Option<&'a str>,
    pub last_error: Option<&'a str>,
    pub fts5_available: bool,
    pub mcp_servers: &'a [McpEntry<'a>],
    /// Outbox items agentd has not seen delivered, and the oldest one's age.
    pub undelivered: u64,
    pub oldest_undelivered_seconds: Option<u64>,
    pub cooldowns: &'a [CooldownEntry<'a>],
    /// Auto memory's state; `None` when agentd did not say.
    pub memory_auto: Option<super::MemoryAutoView<'a>>,
    /// Recall by meaning, when agentd has `[embeddings]`.
    pub embeddings: Option<super::EmbeddingsEntry<'a>>,
}

impl Texts {
    pub(super) fn title(self, title: &str) -> String {
        match title.trim() {
            "" => self.said().untitled().to_owned(),
            title => escape_truncated(title, MAX_TITLE_CHARS),
        }
    }

    /// One session line: `#<n> YYYY-MM-DD <title>` (current one marked).
    pub fn session_line(self, session: &SessionEntry<'_>) -> String {
        let mark = if session.current {
            self.pick(" ← 当前", " ← current")
        } else {
            ""
        };
        let number = if session.number > 0 {
            format!("#{} ", session.number)
        } else {
            String::new()
        };
        let topic = match (session.topic, self.locale()) {
            (None, _) => String::new(),
            (Some(""), Locale::Zh) => " · 话题".to_owned(),
            (Some(""), Locale::En) => " · in a topic".to_owned(),
            (Some(name), Locale::Zh) => format!(" · 话题「{}」", escape_html(name)),
            (Some(name), Locale::En) => format!(" · topic \"{}\"", escape_html(name)),
        };
        format!(
            "{number}{} {}{topic}{mark}",
            escape_html(session.date),
            self.title(session.title)
        )
    }

    /// The /history reply, newest first as agentd lists them.
    pub fn history(self, sessions: &[SessionEntry<'_>]) -> String {
        if sessions.is_empty() {
            return self.pick("还没有历史会话", "No sessions yet").to_owned();
        }
        let mut out = String::from(self.pick("<b>历史会话</b>\n", "<b>Sessions</b>\n"));
        for session in sessions {
            out.push_str(&self.session_line(session));
            out.push('\n');
        }
        out.push_str(self.pick(
            "\n/resume #n 继续，/del_history #n 删除",
            "\n/resume #n to continue, /del_history #n to delete",
        ));
        out
    }

    /// The /memory reply: `#<n> date text`, headed by how many memories there are in `total`
    /// (agentd lists at most the newest 200; a long reply is sent in several messages).
    pub fn memories(self, memories: &[MemoryEntry<'_>], total: usize) -> String {
        if memories.is_empty() {
            return self.pick("还没有长期记忆", "No memories yet").to_owned();
        }
        let (total, shown) = (total.max(memories.len()), memories.len());
        let mut out = match (self.locale(), total > shown) {
            (Locale::Zh, false) => format!("<b>长期记忆</b>（共 {total} 条）\n"),
            (Locale::Zh, true) => {
                format!("<b>长期记忆</b>（共 {total} 条，显示最新 {shown} 条）\n")
            }
            (Locale::En, false) => format!("<b>Memories</b> ({total} in total)\n"),
            (Locale::En, true) => {
                format!("<b>Memories</b> ({total} in total, the newest {shown} shown)\n")
            }
        };
        for memory in memories {
            let text = escape_truncated(memory.text, MAX_MEMORY_CHARS);
            let auto = if memory.auto {
                self.pick(" 〔自动〕", " [auto]")
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "#{} {}{auto} {text}",
                memory.number,
                escape_html(memory.date)
            );
        }
        out.push_str(self.pick("\n/forget #n 删除", "\n/forget #n to delete"));
        out
    }

    /// The /tasks reply: `#<n> 下次 <local time> <mode> [<provider/model>] <text>` (next due
    /// first; the model only for a task that names one).
    pub fn schedules(self, schedules: &[ScheduleEntry<'_>]) -> String {
        if schedules.is_empty() {
            return self
                .pick("还没有提醒或定时任务", "No reminders or scheduled tasks")
                .to_owned();
        }
        let mut out = self
            .pick("<b>提醒与定时任务</b>\n", "<b>Reminders and tasks</b>\n")
            .to_owned();
        for s in schedules {
            let mode = self.schedule_mode(s.mode);
            let repeat = if s.cron.is_empty() {
                String::new()
            } else {
                format!(" (<code>{}</code>)", escape_html(s.cron))
            };
            let model = if s.model.is_empty() {
                String::new()
            } else {
                format!(" [{}]", escape_truncated(s.model, MAX_TITLE_CHARS))
            };
            let paused = if s.paused {
                self.pick("〔已暂停〕", "[paused] ")
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "#{} {paused}{} {}{repeat} {mode}{model} {}",
                s.number,
                self.said().next_time(),
                escape_html(s.next_fire),
                escape_truncated(s.message, MAX_MEMORY_CHARS)
            );
            if s.mode == kernel_proto::words::ScheduleMode::Watch.as_str() {
                out.push_str(&self.watch_line(s));
            }
        }
        out.push_str(self.pick(
            "\n/tasks del #n 删除 · /tasks pause #n 暂停 · /tasks resume #n 恢复",
            "\n/tasks del #n to delete · /tasks pause #n · /tasks resume #n",
        ));
        out
    }

    /// `/tasks del` succeeded.
    pub fn schedules_deleted(self, count: usize) -> String {
        match self.locale() {
            Locale::Zh => format!("已删除 {count} 个提醒或任务"),
            Locale::En => format!("Deleted {count} reminder(s) or task(s)"),
        }
    }

    /// The /status reply.
    pub fn status(self, status: &StatusView<'_>) -> String {
        let zh = self.locale() == Locale::Zh;
        let mut out = String::from(self.pick("<b>状态</b>\n", "<b>Status</b>\n"));
        let session = match &status.session {
            Some(session) => self.session_line(&SessionEntry {
                current: false,
                ..*session
            }),
            None => self.pick("（无）", "(none)").to_owned(),
        };
        let _ = writeln!(out, "{}{session}", self.pick("会话：", "Session: "));
        let _ = writeln!(
            out,
            "{}<code>{}</code> / <code>{}</code>",
            self.pick("模型：", "Model: "),
            escape_html(status.provider),
            escape_html(status.model)
        );
        self.push_cooldowns(&mut out, status.cooldowns);
        let task = self.task(status.turn_started_at, status.running_tool);
        let _ = writeln!(out, "{}{task}", self.pick("任务：", "Task: "));
        self.push_undelivered(
            &mut out,
            status.undelivered,
            status.oldest_undelivered_seconds,
        );
        if let Some(cli) = status.running_cli {
            let cli = self.running_cli(cli);
            let _ = writeln!(out, "CLI{}{cli}", self.pick("：", ": "));
        }
        if let Some(error) = status.last_error {
            let _ = writeln!(
                out,
                "{}{}",
                self.pick("最近错误：", "Last error: "),
                escape_truncated(error, MAX_DETAIL_CHARS)
            );
        }
        let fts = match (status.fts5_available, zh) {
            (true, true) => "可用",
            (false, true) => "不可用（使用 LIKE 搜索）",
            (true, false) => "available",
            (false, false) => "unavailable (LIKE search)",
        };
        if let Some(auto) = &status.memory_auto {
            self.push_memory_auto(&mut out, auto);
        }
        let _ = writeln!(out, "FTS5: {fts}");
        self.push_embeddings(&mut out, status.embeddings.as_ref());
        self.push_mcp(&mut out, status.mcp_servers);
        let _ = write!(
            out,
            "{}{} · {}",
            self.pick("版本 ", "Version "),
            escape_html(status.version),
            self.uptime(status.uptime_seconds)
        );
        out
    }

    /// `至 <local time>` / `until <local time>`.
    pub(super) fn cooling_until(self, rfc3339: &str) -> String {
        format!(
            "{}{}",
            self.pick("至 ", "until "),
            escape_truncated(&self.local_time(rfc3339), MAX_TITLE_CHARS)
        )
    }

    /// The `/status` lines of the providers cooling down.
    fn push_cooldowns(self, out: &mut String, cooldowns: &[CooldownEntry<'_>]) {
        for cooldown in cooldowns {
            let _ = writeln!(
                out,
                "{}<code>{}</code> {}{}",
                self.pick("冷却中：", "Cooling down: "),
                escape_truncated(cooldown.provider, MAX_TITLE_CHARS),
                self.cooling_until(cooldown.until),
                match self.locale() {
                    Locale::Zh => format!("（连续失败 {} 次）", cooldown.failures),
                    Locale::En => format!(" ({} failures in a row)", cooldown.failures),
                }
            );
        }
    }

    /// What the running turn does (since when, which tool), or idle.
    pub(super) fn task(self, started_at: Option<&str>, running_tool: Option<&str>) -> String {
        match (started_at, running_tool) {
            (None, _) => self.said().idle().to_owned(),
            (Some(since), None) => format!(
                "{}{}",
                self.pick("运行中，开始于 ", "running since "),
                escape_html(&self.local_time(since))
            ),
            (Some(since), Some(tool)) => format!(
                "{}{}{}<code>{}</code>",
                self.pick("运行中，开始于 ", "running since "),
                escape_html(&self.local_time(since)),
                self.pick("，工具 ", ", tool "),
                escape_truncated(tool, MAX_TITLE_CHARS)
            ),
        }
    }

    /// The `/status` line of undelivered outbox items, with how long the oldest waits.
    fn push_undelivered(self, out: &mut String, undelivered: u64, oldest_seconds: Option<u64>) {
        let _ = write!(
            out,
            "{}{}",
            self.pick("待送达：", "Undelivered: "),
            undelivered
        );
        if let Some(age) = oldest_seconds {
            let _ = write!(
                out,
                "{}{}{}",
                self.pick("（最早的已等 ", " (oldest waiting "),
                self.age(age),
                self.pick("）", ")")
            );
        }
        out.push('\n');
    }

    /// The running CLI (`name since <time>`, else as agentd said it, its times made local).
    fn running_cli(self, cli: &str) -> String {
        match cli.split_once(" since ") {
            Some((name, since)) => format!(
                "<code>{}</code>{}{}",
                escape_truncated(name, MAX_TITLE_CHARS),
                self.pick("，开始于 ", " since "),
                escape_html(&self.local_time(since))
            ),
            None => format!(
                "<code>{}</code>",
                escape_truncated(&self.local_times_in(cli), MAX_TITLE_CHARS)
            ),
        }
    }

    fn push_mcp(self, out: &mut String, servers: &[McpEntry<'_>]) {
        if servers.is_empty() {
            let _ = writeln!(out, "MCP: {}", self.pick("未配置", "none configured"));
            return;
        }
        out.push_str("MCP:\n");
        for server in servers {
            let _ = write!(
                out,
                "• <code>{}</code> {} ({} {})",
                escape_truncated(server.name, MAX_TITLE_CHARS),
                escape_html(server.state),
                server.tool_count,
                self.pick("个工具", "tools")
            );
            if let Some(detail) = server.detail.filter(|detail| !detail.is_empty()) {
                let _ = write!(out, " — {}", escape_truncated(detail, MAX_DETAIL_CHARS));
            }
            out.push('\n');
        }
    }

    /// A short age: `42s`, `5m`, `3h 2m` / `42秒`, `5分`, `3小时 2分`.
    pub fn age(self, seconds: u64) -> String {
        let (s, m, h) = match self.locale() {
            Locale::Zh => ("秒", "分", "小时"),
            Locale::En => ("s", "m", "h"),
        };
        match seconds {
            0..60 => format!("{seconds}{s}"),
            60..3_600 => format!("{}{m}", seconds / 60),
            _ => format!("{}{h} {}{m}", seconds / 3_600, seconds % 3_600 / 60),
        }
    }

    /// Uptime as `1d 2h 3m` / `1天 2小时 3分`.
    pub fn uptime(self, seconds: u64) -> String {
        let (days, hours, minutes) = (
            seconds / 86_400,
            seconds % 86_400 / 3_600,
            seconds % 3_600 / 60,
        );
        let (d, h, m) = match self.locale() {
            Locale::Zh => ("天", "小时", "分"),
            Locale::En => ("d", "h", "m"),
        };
        let label = self.pick("已运行 ", "up ");
        if days > 0 {
            format!("{label}{days}{d} {hours}{h} {minutes}{m}")
        } else if hours > 0 {
            format!("{label}{hours}{h} {minutes}{m}")
        } else {
            format!("{label}{minutes}{m}")
        }
    }

    /// The /provider reply without argument.
    pub fn providers(
        self,
        providers: &[ProviderEntry<'_>],
        current_provider: &str,
        current_model: &str,
    ) -> String {
        let mut out = format!(
            "{}<code>{}</code> / <code>{}</code>\n",
            self.pick("当前：", "Current: "),
            escape_html(current_provider),
            escape_html(current_model)
        );
        for provider in providers {
            let mark = if provider.current { " ✓" } else { "" };
            let missing = if provider.available {
                ""
            } else {
                self.pick("（缺少 API key）", " (no API key)")
            };
            let cooling = provider
                .cooldown_until
                .map(|until| self.cooling_note(until, chrono::Utc::now()))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "• <code>{}</code>{mark}{missing}{cooling} — {}",
                escape_html(provider.name),
                self.model_names(provider.models)
            );
        }
        out.push_str(self.pick("\n/provider 名称 切换提供方", "\n/provider name to switch"));
        out
    }

    /// The /model reply without argument: the current provider's configured models.
    pub fn models(self, provider: &str, models: &[String], current_model: &str) -> String {
        let mut out = format!(
            "{}<code>{}</code>\n",
            self.pick("提供方：", "Provider: "),
            escape_html(provider)
        );
        for model in models {
            let mark = if model == current_model { " ✓" } else { "" };
            let _ = writeln!(out, "• <code>{}</code>{mark}", escape_html(model));
        }
        out.push_str(self.pick("\n/model 名称 切换模型", "\n/model name to switch"));
        out
    }

    fn model_names(self, models: &[String]) -> String {
        if models.is_empty() {
            return self.pick("（无模型）", "(no models)").to_owned();
        }
        models
            .iter()
            .map(|model| escape_html(model))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `/provider x` or `/model y` succeeded.
    pub fn switched(self, provider: &str, model: &str) -> String {
        format!(
            "{}<code>{}</code> / <code>{}</code>",
            self.pick("已切换到 ", "Switched to "),
            escape_html(provider),
            escape_html(model)
        )
    }

    /// `/new` succeeded.
    pub fn new_session(self) -> &'static str {
        self.pick("已开始新会话", "Started a new session")
    }

    /// `/resume` succeeded.
    pub fn resumed(self, session: &SessionEntry<'_>) -> String {
        format!(
            "{}{}",
            self.pick("已切换到会话：", "Resumed: "),
            self.session_line(&SessionEntry {
                current: false,
                ..*session
            })
        )
    }

    /// `/retitle` succeeded.
    pub fn retitled(self, title: &str) -> String {
        format!(
            "{}{}",
            self.pick("新标题：", "New title: "),
            self.title(title)
        )
    }

    /// `/del_history` succeeded.
    pub fn sessions_deleted(self, count: usize) -> String {
        match self.locale() {
            Locale::Zh => format!("已删除 {count} 个会话"),
            Locale::En => format!("Deleted {count} session(s)"),
        }
    }

    /// `/remember` succeeded.
    pub fn remembered(self, text: &str) -> String {
        format!(
            "{}{}",
            self.pick("已记住：", "Remembered: "),
            escape_truncated(text, MAX_MEMORY_CHARS)
        )
    }

    /// `/forget` succeeded.
    pub fn memories_deleted(self, count: usize) -> String {
        match self.locale() {
            Locale::Zh => format!("已删除 {count} 条记忆"),
            Locale::En => format!("Deleted {count} memory(ies)"),
        }
    }

    /// agentd refused a command (unknown `#n`, model not in list…): its redacted message.
    pub fn rejected(self, message: &str) -> String {
        format!("⚠️ {}", escape_truncated(message, MAX_DETAIL_CHARS))
    }
}
