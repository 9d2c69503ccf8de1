//! Refusals from agentd (`kernel.v1.Refusal`: a reason and its arguments) said in the owner's
//! language; a reason this build does not know falls back to agentd's English message.

use std::collections::HashMap;

use super::{MAX_DETAIL_CHARS, MAX_TITLE_CHARS, Said, escape_truncated};
use kernel_proto::words::{Listed, RefusalReason};

/// A refusal's arguments, escaped for Telegram HTML as they are said.
struct Args<'a>(&'a HashMap<String, String>);

impl Args<'_> {
    fn raw(&self, name: &str) -> &str {
        self.0.get(name).map_or("", String::as_str)
    }

    /// The argument `name`, escaped and cut to a title's length.
    fn get(&self, name: &str) -> String {
        escape_truncated(self.raw(name), MAX_TITLE_CHARS)
    }

    /// The argument `name` as inline code.
    fn code(&self, name: &str) -> String {
        format!("<code>{}</code>", self.get(name))
    }

    /// What listing the refusal is about (`what`), if it names one.
    fn listed(&self) -> Option<Listed> {
        Listed::parse(self.raw("what"))
    }
}

impl Said {
    /// The reply for agentd's refusal `reason` with `args`; `None` for an unknown reason.
    pub fn refusal(self, reason: &str, args: &HashMap<String, String>) -> Option<String> {
        let reason = RefusalReason::parse(reason)?;
        let a = Args(args);
        let text = match reason {
            RefusalReason::NoNumbers => self.no_numbers(a.listed()),
            RefusalReason::ListingNotShown => self.listing_not_shown(a.listed()),
            RefusalReason::NotInListing => self.not_in_listing(&a),
            RefusalReason::SessionGone => self.session_gone(&a),
            RefusalReason::SessionDeletedMeanwhile => self
                .pick("该会话刚刚被删除了", "That session was just deleted")
                .into(),
            RefusalReason::UnknownProvider => self.unknown_provider(&a),
            RefusalReason::ProviderWithoutKey => self.provider_without_key(&a),
            RefusalReason::ProviderUnavailable => self.provider_unavailable(&a),
            RefusalReason::UnknownModel => self.unknown_model(&a),
            RefusalReason::TitlesNotConfigured => self
                .pick(
                    "没有配置标题模型（[titles]），无法重新生成标题",
                    "No titles model is configured ([titles]), so titles cannot be regenerated",
                )
                .into(),
            RefusalReason::NothingToTitle => self
                .pick(
                    "这个会话还没有完整的一轮对话，暂时无法生成标题",
                    "This session has no complete exchange to title yet",
                )
                .into(),
            RefusalReason::TitleFailed => self.title_failed(&a),
            RefusalReason::MemoryEmpty => self
                .pick("记忆内容是空的", "The memory text is empty")
                .into(),
            RefusalReason::MemoryTooLong => self.memory_too_long(&a),
            RefusalReason::QueryEmpty => self
                .pick("搜索内容是空的", "The search query is empty")
                .into(),
            RefusalReason::BudgetExceeded => return Some(self.budget_exceeded(args)),
        };
        Some(format!("⚠️ {text}"))
    }

    /// `NO_NUMBERS`: a delete without numbers, for the listing it names (sessions by default).
    fn no_numbers(self, what: Option<Listed>) -> String {
        let (zh, en) = match what {
            Some(Listed::Schedules) => (
                "请给出要删除的编号，例如 <code>/tasks del #1</code>",
                "Name the ones to delete, e.g. <code>/tasks del #1</code>",
            ),
            Some(Listed::Memories) => (
                "请给出要删除的记忆编号，例如 <code>/forget #1</code>",
                "Name the memories to delete, e.g. <code>/forget #1</code>",
            ),
            Some(Listed::Sessions | Listed::Jobs) | None => (
                "请给出要删除的会话编号，例如 <code>/del_history #1</code>",
                "Name the sessions to delete, e.g. <code>/del_history #1</code>",
            ),
        };
        self.pick(zh, en).into()
    }

    /// `LISTING_NOT_SHOWN`: numbers used before the listing they refer to was shown.
    fn listing_not_shown(self, what: Option<Listed>) -> String {
        let (zh, en) = match what {
            Some(Listed::Jobs) => (
                "请先发送 /jobs 列出后台任务，再使用其中的编号",
                "List the background jobs first with /jobs, then use their numbers",
            ),
            Some(Listed::Schedules) => (
                "请先发送 /tasks 列出提醒与任务，再使用其中的编号",
                "List the reminders and tasks first with /tasks, then use their numbers",
            ),
            Some(Listed::Memories) => (
                "请先发送 /memory 列出记忆，再使用其中的编号",
                "List the memories first with /memory, then use their numbers",
            ),
            Some(Listed::Sessions) | None => (
                "请先发送 /history 列出会话，再使用其中的编号",
                "List the sessions first with /history, then use their numbers",
            ),
        };
        self.pick(zh, en).into()
    }

    fn not_in_listing(self, a: &Args<'_>) -> String {
        let (number, max) = (a.get("number"), a.get("max"));
        self.pick(
            format!("最近的列表中没有 #{number}（编号范围 #1–#{max}）"),
            format!("#{number} is not in the latest listing (#1–#{max})"),
        )
    }

    fn session_gone(self, a: &Args<'_>) -> String {
        let number = a.get("number");
        self.pick(
            format!("会话 #{number} 已不存在，请重新发送 /history 查看"),
            format!("Session #{number} no longer exists; send /history again"),
        )
    }

    fn unknown_provider(self, a: &Args<'_>) -> String {
        let (provider, choices) = (a.code("provider"), a.code("choices"));
        self.pick(
            format!("没有名为 {provider} 的提供方，可选：{choices}"),
            format!("There is no provider {provider}; choose one of {choices}"),
        )
    }

    fn provider_without_key(self, a: &Args<'_>) -> String {
        let (provider, env) = (a.get("provider"), a.get("env"));
        self.pick(
            format!(
                "提供方 <code>{provider}</code> 没有 API 密钥：请在配置中设置 \
                 <code>providers.{provider}.api_key</code> 或环境变量 <code>{env}</code>"
            ),
            format!(
                "Provider <code>{provider}</code> has no API key: set \
                 <code>providers.{provider}.api_key</code> or <code>{env}</code>"
            ),
        )
    }

    fn provider_unavailable(self, a: &Args<'_>) -> String {
        let provider = a.code("provider");
        self.pick(
            format!("当前提供方 {provider} 不可用（没有 API 密钥），请用 /provider 切换"),
            format!(
                "The current provider {provider} is unavailable (no API key); switch with /provider"
            ),
        )
    }

    fn unknown_model(self, a: &Args<'_>) -> String {
        let (model, provider, choices) = (a.code("model"), a.code("provider"), a.code("choices"));
        self.pick(
            format!("提供方 {provider} 没有配置模型 {model}，可选：{choices}"),
            format!(
                "Model {model} is not configured for provider {provider}; choose one of {choices}"
            ),
        )
    }

    fn title_failed(self, a: &Args<'_>) -> String {
        let detail = escape_truncated(a.raw("detail"), MAX_DETAIL_CHARS);
        self.pick(
            format!("生成标题失败：{detail}"),
            format!("Title generation failed: {detail}"),
        )
    }

    fn memory_too_long(self, a: &Args<'_>) -> String {
        let (chars, max) = (a.get("chars"), a.get("max"));
        self.pick(
            format!("记忆太长：{chars} 个字符，最多 {max} 个"),
            format!("The memory is too long: {chars} characters, at most {max}"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Locale;

    fn args() -> HashMap<String, String> {
        [
            ("what", "memories"),
            ("number", "9"),
            ("max", "3"),
            ("provider", "main"),
            ("model", "<nope>"),
            ("choices", "m1, m2"),
            ("env", "KERNEL_MAIN_API_KEY"),
            ("detail", "HTTP 500"),
            ("chars", "10001"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
    }

    #[test]
    fn every_reason_is_said_in_the_owners_language() {
        let cjk = |s: &str| s.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
        for reason in RefusalReason::ALL.iter().map(|r| r.as_str()) {
            let zh = Said::new(Locale::Zh)
                .refusal(reason, &args())
                .expect(reason);
            let en = Said::new(Locale::En)
                .refusal(reason, &args())
                .expect(reason);
            assert!(cjk(&zh), "{reason}: {zh}");
            assert!(!cjk(&en) && en.len() > 10, "{reason}: {en}");
            assert!(!zh.contains("<nope>") && !en.contains("<nope>"), "escaped");
        }
        let zh = Said::new(Locale::Zh);
        assert_eq!(
            zh.refusal("NOT_IN_LISTING", &args()).as_deref(),
            Some("⚠️ 最近的列表中没有 #9（编号范围 #1–#3）")
        );
        assert_eq!(zh.refusal("SOMETHING_NEW", &args()), None);
    }
}
