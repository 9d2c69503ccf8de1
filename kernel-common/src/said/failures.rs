//! Failed turns from agentd (`kernel.v1.TurnFailed`: a reason and its arguments next to the
//! English message) said in the owner's language; an unknown or empty reason falls back to
//! agentd's message.

use std::collections::HashMap;

use super::{MAX_DETAIL_CHARS, Said, escape_truncated};
use crate::config::Locale;

/// Longest provider's reason shown under a failure's sentence, in characters.
const MAX_REASON_CHARS: usize = 200;
use kernel_proto::words::{FailureReason, MissingFeature};

impl Said {
    /// The notice for a failed turn: `reason` with `args` in the owner's language, or
    /// [`Said::turn_failed`] with agentd's `message` when the reason is empty or unknown.
    pub fn turn_failure(
        self,
        reason: &str,
        args: &HashMap<String, String>,
        message: &str,
    ) -> String {
        let sentence = FailureReason::parse(reason).and_then(|r| self.failure_sentence(r, args));
        match sentence {
            Some(sentence) => match self.locale() {
                Locale::Zh => format!("⚠️ 出错了：{sentence}"),
                Locale::En => format!("⚠️ Something went wrong: {sentence}"),
            },
            None => self.turn_failed(message),
        }
    }

    /// The sentence for `reason`; `None` for a reason said elsewhere (a cut-off turn has its
    /// own notice with a button, said by each adapter).
    fn failure_sentence(
        self,
        reason: FailureReason,
        args: &HashMap<String, String>,
    ) -> Option<String> {
        let a = Args(args);
        let text = match reason {
            FailureReason::ModelAuth => self.model_auth(&a),
            FailureReason::ModelRateLimited => self.model_rate_limited(&a),
            FailureReason::ModelOverloaded => self.model_overloaded(&a),
            FailureReason::ModelBadRequest => self.model_bad_request(&a),
            FailureReason::ModelContextTooLong => self
                .pick(
                    "这条消息加上必要的上下文仍超出模型的上下文窗口（已自动压缩并重试）；请缩短消息或附件，或发送 /new 开始新会话",
                    "this message still does not fit the model's context window (the session was compacted and retried); shorten the message or attachment, or send /new to start a new session",
                )
                .into(),
            FailureReason::ModelCapabilityMissing => self.model_capability_missing(&a),
            FailureReason::ModelNetwork => self
                .pick(
                    "无法连接到模型服务（网络错误），请稍后再试",
                    "could not reach the model provider (network error); try again later",
                )
                .into(),
            FailureReason::ModelStalled => {
                let secs = a.short("secs");
                self.pick(
                    format!("模型服务 {secs} 秒没有响应，回复已中止，请重试"),
                    format!("the model provider sent nothing for {secs} seconds; try again"),
                )
            }
            FailureReason::ModelStream => self
                .pick(
                    "模型服务的回复中途断开了，请重试",
                    "the model provider's reply broke off; try again",
                )
                .into(),
            FailureReason::StoreFailed => self
                .pick(
                    "无法保存对话（数据库错误），详情见 agentd 的日志",
                    "could not save the conversation (database error); see the agent log",
                )
                .into(),
            // Both have their own notice with buttons (`turn_cut_off`, `budget_exceeded`).
            FailureReason::TurnCutOff | FailureReason::BudgetExceeded => return None,
        };
        Some(text)
    }

    fn model_auth(self, a: &Args<'_>) -> String {
        let status = a.short("status");
        self.pick(
            format!("模型服务拒绝了 API 密钥（HTTP {status}），请检查配置中的密钥"),
            format!(
                "the model provider rejected the API key (HTTP {status}); check the key in the configuration"
            ),
        ) + &a.reason_line()
    }

    fn model_rate_limited(self, a: &Args<'_>) -> String {
        if a.0.contains_key("retry_after_secs") {
            let secs = a.short("retry_after_secs");
            self.pick(
                format!("模型服务请求过于频繁，已被限流，请约 {secs} 秒后再试"),
                format!(
                    "the model provider is rate-limiting requests; try again in about {secs} seconds"
                ),
            )
        } else {
            self.pick(
                "模型服务请求过于频繁，已被限流，请稍后再试",
                "the model provider is rate-limiting requests; try again later",
            )
            .into()
        }
    }

    fn model_overloaded(self, a: &Args<'_>) -> String {
        let status = a.short("status");
        self.pick(
            format!("模型服务暂时不可用（HTTP {status}），请稍后再试"),
            format!("the model provider is unavailable right now (HTTP {status}); try again later"),
        ) + &a.reason_line()
    }

    fn model_bad_request(self, a: &Args<'_>) -> String {
        let status = a.short("status");
        self.pick(
            format!("模型服务拒绝了这次请求（HTTP {status}）"),
            format!("the model provider refused the request (HTTP {status})"),
        ) + &a.reason_line()
    }

    /// A model without a feature Kernel needs: named with its provider and the feature when
    /// agentd said which, else the current model in general.
    fn model_capability_missing(self, a: &Args<'_>) -> String {
        let detail = a.detail();
        if !a.0.contains_key("provider") {
            return self.pick(
                format!("当前模型缺少所需的能力（{detail}），请用 /provider 或 /model 切换"),
                format!(
                    "the current model lacks a needed capability ({detail}); switch with /provider or /model"
                ),
            );
        }
        let provider = a.short("provider");
        let feature = match MissingFeature::parse(a.raw("feature")) {
            Some(MissingFeature::Tools) => self.pick("工具调用", "tool calls"),
            Some(MissingFeature::Images) => self.pick("图片输入", "image input"),
            Some(MissingFeature::Streaming) => self.pick("流式输出", "streaming"),
            None => self.pick("所需的功能", "a feature Kernel needs"),
        };
        self.pick(
            format!(
                "<code>{provider}</code> 不支持{feature}（{detail}），请用 /provider 或 /model 切换"
            ),
            format!(
                "<code>{provider}</code> does not support {feature} ({detail}); switch with /provider or /model"
            ),
        )
    }
}

/// A failure's arguments, escaped for Telegram HTML as they are said.
struct Args<'a>(&'a HashMap<String, String>);

impl Args<'_> {
    fn raw(&self, name: &str) -> &str {
        self.0.get(name).map_or("", String::as_str)
    }

    /// A short argument (a status, a number of seconds, a provider's name).
    fn short(&self, name: &str) -> String {
        escape_truncated(self.raw(name), 20)
    }

    /// The provider's detail as inline code.
    fn detail(&self) -> String {
        format!(
            "<code>{}</code>",
            escape_truncated(self.raw("detail"), MAX_DETAIL_CHARS)
        )
    }

    /// The provider's own short reason (agentd redacted it) on a line of its own under
    /// Kernel's sentence; nothing when the provider said nothing.
    fn reason_line(&self) -> String {
        match self.raw("detail").trim() {
            "" => String::new(),
            d => format!("\n<code>{}</code>", escape_truncated(d, MAX_REASON_CHARS)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_capability_names_the_server_and_the_feature() {
        let args: HashMap<String, String> = [
            ("provider", "ollama"),
            ("feature", "tools"),
            ("detail", "no tools"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let zh = Said::new(Locale::Zh).turn_failure("MODEL_CAPABILITY_MISSING", &args, "");
        assert!(zh.contains("<code>ollama</code> 不支持工具调用"), "{zh}");
        let en = Said::new(Locale::En).turn_failure("MODEL_CAPABILITY_MISSING", &args, "");
        assert!(
            en.contains("<code>ollama</code> does not support tool calls"),
            "{en}"
        );
    }

    fn args() -> HashMap<String, String> {
        [
            ("status", "429"),
            ("retry_after_secs", "7"),
            ("secs", "60"),
            ("detail", "<bad> request"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
    }

    #[test]
    fn every_failure_reason_is_said_in_the_owners_language() {
        let cjk = |s: &str| s.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
        let said = FailureReason::ALL
            .iter()
            .filter(|r| !matches!(r, FailureReason::TurnCutOff | FailureReason::BudgetExceeded))
            .map(|r| r.as_str());
        for reason in said {
            let zh = Said::new(Locale::Zh).turn_failure(reason, &args(), "English message");
            let en = Said::new(Locale::En).turn_failure(reason, &args(), "English message");
            assert!(
                cjk(&zh) && !zh.contains("English message"),
                "{reason}: {zh}"
            );
            assert!(
                !cjk(&en) && !en.contains("English message"),
                "{reason}: {en}"
            );
            assert!(en.len() > 30, "{reason}: {en}");
            assert!(!zh.contains("<bad>") && !en.contains("<bad>"), "escaped");
        }
        let zh = Said::new(Locale::Zh);
        assert_eq!(
            zh.turn_failure("MODEL_RATE_LIMITED", &args(), "x"),
            "⚠️ 出错了：模型服务请求过于频繁，已被限流，请约 7 秒后再试"
        );
    }

    #[test]
    fn the_providers_reason_stands_under_the_sentence_in_a_code_span() {
        let mut args = args();
        args.insert("status".into(), "401".into());
        args.insert(
            "detail".into(),
            format!("invalid x-api-key <{}>", "x".repeat(300)),
        );
        for reason in ["MODEL_AUTH", "MODEL_OVERLOADED", "MODEL_BAD_REQUEST"] {
            for locale in [Locale::Zh, Locale::En] {
                let text = Said::new(locale).turn_failure(reason, &args, "");
                let (sentence, code) = text.split_once('\n').expect("two lines");
                assert!(sentence.contains("HTTP 401"), "{text}");
                let inner = code
                    .strip_prefix("<code>invalid x-api-key &lt;")
                    .and_then(|c| c.strip_suffix("</code>"))
                    .unwrap_or_else(|| panic!("{text}"));
                assert!(inner.chars().count() < MAX_REASON_CHARS, "cut: {text}");
            }
        }
        args.insert("detail".into(), " ".into());
        let text = Said::new(Locale::En).turn_failure("MODEL_AUTH", &args, "");
        assert!(!text.contains('\n') && !text.contains("<code>"), "{text}");
    }

    #[test]
    fn an_unknown_or_empty_reason_shows_agentds_message() {
        let zh = Said::new(Locale::Zh);
        for reason in ["", "SOMETHING_NEW"] {
            assert_eq!(
                zh.turn_failure(reason, &args(), "语音识别失败 & co"),
                zh.turn_failed("语音识别失败 & co")
            );
        }
    }
}
