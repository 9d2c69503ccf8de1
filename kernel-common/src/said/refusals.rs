//! Refusals from agentd (`kernel.v1.Refusal`: a reason and its arguments, read into the typed
//! `kernel_proto::refused::Refused`) said in the owner's language; a reason this build does not
//! know, or arguments it cannot read, fall back to agentd's English message.

use kernel_proto::refused::{self, Refused};
use kernel_proto::v1::Refusal;
use kernel_proto::words::Listed;

use super::{MAX_DETAIL_CHARS, MAX_TITLE_CHARS, Said, escape_truncated};

/// A name-like argument, escaped and cut to a title's length.
fn name(text: &str) -> String {
    escape_truncated(text, MAX_TITLE_CHARS)
}

/// A name-like argument as inline code.
fn code(text: &str) -> String {
    format!("<code>{}</code>", name(text))
}

/// A list argument as inline code.
fn choices(items: &[String]) -> String {
    code(&items.join(", "))
}

impl Said {
    /// The reply for agentd's refusal; `None` for a reason this build does not know or
    /// arguments it cannot read.
    pub fn refusal(self, wire: &Refusal) -> Option<String> {
        Refused::parse(wire).map(|r| self.refused(&r))
    }

    /// The reply for a refusal.
    pub fn refused(self, refusal: &Refused) -> String {
        let text = match refusal {
            Refused::NoNumbers(a) => self.no_numbers(a.what),
            Refused::ListingNotShown(a) => self.listing_not_shown(a.what),
            Refused::NotInListing(a) => self.not_in_listing(a),
            Refused::SessionGone(a) => self.session_gone(a),
            Refused::SessionDeletedMeanwhile => self
                .pick("该会话刚刚被删除了", "That session was just deleted")
                .into(),
            Refused::UnknownProvider(a) => self.unknown_provider(a),
            Refused::ProviderWithoutKey(a) => self.provider_without_key(a),
            Refused::ProviderUnavailable(a) => self.provider_unavailable(a),
            Refused::UnknownModel(a) => self.unknown_model(a),
            Refused::TitlesNotConfigured => self
                .pick(
                    "没有配置标题模型（[titles]），无法重新生成标题",
                    "No titles model is configured ([titles]), so titles cannot be regenerated",
                )
                .into(),
            Refused::NothingToTitle => self
                .pick(
                    "这个会话还没有完整的一轮对话，暂时无法生成标题",
                    "This session has no complete exchange to title yet",
                )
                .into(),
            Refused::TitleFailed(a) => self.title_failed(a),
            Refused::MemoryEmpty => self
                .pick("记忆内容是空的", "The memory text is empty")
                .into(),
            Refused::MemoryTooLong(a) => self.memory_too_long(a),
            Refused::QueryEmpty => self
                .pick("搜索内容是空的", "The search query is empty")
                .into(),
            Refused::BudgetExceeded(a) => return self.budget_exceeded(a),
        };
        format!("⚠️ {text}")
    }

    /// `NO_NUMBERS`: a delete without numbers, for the listing it names (sessions by default).
    fn no_numbers(self, what: Listed) -> String {
        let (zh, en) = match what {
            Listed::Schedules => (
                "请给出要删除的编号，例如 <code>/tasks del #1</code>",
                "Name the ones to delete, e.g. <code>/tasks del #1</code>",
            ),
            Listed::Memories => (
                "请给出要删除的记忆编号，例如 <code>/forget #1</code>",
                "Name the memories to delete, e.g. <code>/forget #1</code>",
            ),
            Listed::Sessions | Listed::Jobs => (
                "请给出要删除的会话编号，例如 <code>/del_history #1</code>",
                "Name the sessions to delete, e.g. <code>/del_history #1</code>",
            ),
        };
        self.pick(zh, en).into()
    }

    /// `LISTING_NOT_SHOWN`: numbers used before the listing they refer to was shown.
    fn listing_not_shown(self, what: Listed) -> String {
        let (zh, en) = match what {
            Listed::Jobs => (
                "请先发送 /jobs 列出后台任务，再使用其中的编号",
                "List the background jobs first with /jobs, then use their numbers",
            ),
            Listed::Schedules => (
                "请先发送 /tasks 列出提醒与任务，再使用其中的编号",
                "List the reminders and tasks first with /tasks, then use their numbers",
            ),
            Listed::Memories => (
                "请先发送 /memory 列出记忆，再使用其中的编号",
                "List the memories first with /memory, then use their numbers",
            ),
            Listed::Sessions => (
                "请先发送 /history 列出会话，再使用其中的编号",
                "List the sessions first with /history, then use their numbers",
            ),
        };
        self.pick(zh, en).into()
    }

    fn not_in_listing(self, a: &refused::NotInListing) -> String {
        let (number, max) = (a.number, a.max);
        self.pick(
            format!("最近的列表中没有 #{number}（编号范围 #1–#{max}）"),
            format!("#{number} is not in the latest listing (#1–#{max})"),
        )
    }

    fn session_gone(self, a: &refused::SessionGone) -> String {
        let number = a.number;
        self.pick(
            format!("会话 #{number} 已不存在，请重新发送 /history 查看"),
            format!("Session #{number} no longer exists; send /history again"),
        )
    }

    fn unknown_provider(self, a: &refused::UnknownProvider) -> String {
        let (provider, choices) = (code(&a.provider), choices(&a.choices));
        self.pick(
            format!("没有名为 {provider} 的提供方，可选：{choices}"),
            format!("There is no provider {provider}; choose one of {choices}"),
        )
    }

    fn provider_without_key(self, a: &refused::ProviderWithoutKey) -> String {
        let (provider, env) = (name(&a.provider), name(&a.env));
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

    fn provider_unavailable(self, a: &refused::ProviderUnavailable) -> String {
        let provider = code(&a.provider);
        self.pick(
            format!("当前提供方 {provider} 不可用（没有 API 密钥），请用 /provider 切换"),
            format!(
                "The current provider {provider} is unavailable (no API key); switch with /provider"
            ),
        )
    }

    fn unknown_model(self, a: &refused::UnknownModel) -> String {
        let (model, provider, choices) = (code(&a.model), code(&a.provider), choices(&a.choices));
        self.pick(
            format!("提供方 {provider} 没有配置模型 {model}，可选：{choices}"),
            format!(
                "Model {model} is not configured for provider {provider}; choose one of {choices}"
            ),
        )
    }

    fn title_failed(self, a: &refused::TitleFailed) -> String {
        let detail = escape_truncated(&a.detail, MAX_DETAIL_CHARS);
        self.pick(
            format!("生成标题失败：{detail}"),
            format!("Title generation failed: {detail}"),
        )
    }

    fn memory_too_long(self, a: &refused::MemoryTooLong) -> String {
        let (chars, max) = (a.chars, a.max);
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
    use kernel_proto::words::RefusalReason;

    fn wire(reason: RefusalReason) -> Refusal {
        let args = [
            ("what", "memories"),
            ("number", "9"),
            ("max", "3"),
            ("provider", "main"),
            ("model", "<nope>"),
            ("choices", "m1, m2"),
            ("env", "KERNEL_MAIN_API_KEY"),
            ("detail", "HTTP 500"),
            ("chars", "10001"),
            ("period", "daily"),
            ("spent_usd", "5.20"),
            ("limit_usd", "5.00"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        Refusal {
            reason: reason.as_str().to_owned(),
            args,
        }
    }

    #[test]
    fn every_reason_is_said_in_the_owners_language() {
        let cjk = |s: &str| s.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
        for &reason in RefusalReason::ALL {
            let name = reason.as_str();
            let zh = Said::new(Locale::Zh).refusal(&wire(reason)).expect(name);
            let en = Said::new(Locale::En).refusal(&wire(reason)).expect(name);
            assert!(cjk(&zh), "{reason}: {zh}");
            assert!(!cjk(&en) && en.len() > 10, "{reason}: {en}");
            assert!(!zh.contains("<nope>") && !en.contains("<nope>"), "escaped");
        }
        let zh = Said::new(Locale::Zh);
        assert_eq!(
            zh.refusal(&wire(RefusalReason::NotInListing)).as_deref(),
            Some("⚠️ 最近的列表中没有 #9（编号范围 #1–#3）")
        );
        let mut unknown = wire(RefusalReason::QueryEmpty);
        unknown.reason = "SOMETHING_NEW".into();
        assert_eq!(zh.refusal(&unknown), None);
        let mut unreadable = wire(RefusalReason::NotInListing);
        unreadable.args.insert("number".into(), "nine".into());
        assert_eq!(zh.refusal(&unreadable), None, "English message instead");
    }
}
