//! Refusals from agentd (`kernel.v1.Refusal`: a reason and its arguments) said in the owner's
//! language; a reason this build does not know falls back to agentd's English message.

use std::collections::HashMap;

use super::{MAX_DETAIL_CHARS, MAX_TITLE_CHARS, Said, escape_truncated};
use crate::config::Locale;
use kernel_proto::words::{Listed, RefusalReason};

impl Said {
    /// The reply for agentd's refusal `reason` with `args`; `None` for an unknown reason.
    pub fn refusal(self, reason: &str, args: &HashMap<String, String>) -> Option<String> {
        let arg = |name: &str| {
            escape_truncated(args.get(name).map_or("", String::as_str), MAX_TITLE_CHARS)
        };
        let code = |name: &str| format!("<code>{}</code>", arg(name));
        let reason = RefusalReason::parse(reason)?;
        let what = args.get("what").and_then(|w| Listed::parse(w));
        let memories = what == Some(Listed::Memories);
        let zh = self.locale() == Locale::Zh;
        let schedules = what == Some(Listed::Schedules);
        let jobs = what == Some(Listed::Jobs);
        let text = match reason {
            RefusalReason::ListingNotShown if jobs => self
                .pick(
                    "请先发送 /jobs 列出后台任务，再使用其中的编号",
                    "List the background jobs first with /jobs, then use their numbers",
                )
                .into(),
            RefusalReason::NoNumbers if schedules => self
                .pick(
                    "请给出要删除的编号，例如 <code>/tasks del #1</code>",
                    "Name the ones to delete, e.g. <code>/tasks del #1</code>",
                )
                .into(),
            RefusalReason::ListingNotShown if schedules => self
                .pick(
                    "请先发送 /tasks 列出提醒与任务，再使用其中的编号",
                    "List the reminders and tasks first with /tasks, then use their numbers",
                )
                .into(),
            RefusalReason::NoNumbers => match (zh, memories) {
                (true, false) => "请给出要删除的会话编号，例如 <code>/del_history #1</code>".into(),
                (true, true) => "请给出要删除的记忆编号，例如 <code>/forget #1</code>".into(),
                (false, false) => {
                    "Name the sessions to delete, e.g. <code>/del_history #1</code>".into()
                }
                (false, true) => "Name the memories to delete, e.g. <code>/forget #1</code>".into(),
            },
            RefusalReason::ListingNotShown => match (zh, memories) {
                (true, false) => "请先发送 /history 列出会话，再使用其中的编号".into(),
                (true, true) => "请先发送 /memory 列出记忆，再使用其中的编号".into(),
                (false, false) => {
                    "List the sessions first with /history, then use their numbers".into()
                }
                (false, true) => {
                    "List the memories first with /memory, then use their numbers".into()
                }
            },
            RefusalReason::NotInListing => {
                let (number, max) = (arg("number"), arg("max"));
                if zh {
                    format!("最近的列表中没有 #{number}（编号范围 #1–#{max}）")
                } else {
                    format!("#{number} is not in the latest listing (#1–#{max})")
                }
            }
            RefusalReason::SessionGone => {
                let number = arg("number");
                if zh {
                    format!("会话 #{number} 已不存在，请重新发送 /history 查看")
                } else {
                    format!("Session #{number} no longer exists; send /history again")
                }
            }
            RefusalReason::SessionDeletedMeanwhile => self
                .pick("该会话刚刚被删除了", "That session was just deleted")
                .into(),
            RefusalReason::UnknownProvider => {
                let (provider, choices) = (code("provider"), code("choices"));
                if zh {
                    format!("没有名为 {provider} 的提供方，可选：{choices}")
                } else {
                    format!("There is no provider {provider}; choose one of {choices}")
                }
            }
            RefusalReason::ProviderWithoutKey => {
                let (provider, env) = (arg("provider"), arg("env"));
                if zh {
                    format!(
                        "提供方 <code>{provider}</code> 没有 API 密钥：请在配置中设置 \
                         <code>providers.{provider}.api_key</code> 或环境变量 <code>{env}</code>"
                    )
                } else {
                    format!(
                        "Provider <code>{provider}</code> has no API key: set \
                         <code>providers.{provider}.api_key</code> or <code>{env}</code>"
                    )
                }
            }
            RefusalReason::ProviderUnavailable => {
                let provider = code("provider");
                if zh {
                    format!("当前提供方 {provider} 不可用（没有 API 密钥），请用 /provider 切换")
                } else {
                    format!(
                        "The current provider {provider} is unavailable (no API key); switch with /provider"
                    )
                }
            }
            RefusalReason::UnknownModel => {
                let (model, provider, choices) = (code("model"), code("provider"), code("choices"));
                if zh {
                    format!("提供方 {provider} 没有配置模型 {model}，可选：{choices}")
                } else {
                    format!(
                        "Model {model} is not configured for provider {provider}; choose one of {choices}"
                    )
                }
            }
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
            RefusalReason::TitleFailed => {
                let detail = escape_truncated(
                    args.get("detail").map_or("", String::as_str),
                    MAX_DETAIL_CHARS,
                );
                if zh {
                    format!("生成标题失败：{detail}")
                } else {
                    format!("Title generation failed: {detail}")
                }
            }
            RefusalReason::MemoryEmpty => self
                .pick("记忆内容是空的", "The memory text is empty")
                .into(),
            RefusalReason::MemoryTooLong => {
                let (chars, max) = (arg("chars"), arg("max"));
                if zh {
                    format!("记忆太长：{chars} 个字符，最多 {max} 个")
                } else {
                    format!("The memory is too long: {chars} characters, at most {max}")
                }
            }
            RefusalReason::QueryEmpty => self
                .pick("搜索内容是空的", "The search query is empty")
                .into(),
            RefusalReason::BudgetExceeded => return Some(self.budget_exceeded(args)),
        };
        Some(format!("⚠️ {text}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
