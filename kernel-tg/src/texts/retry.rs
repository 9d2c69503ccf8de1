//! Texts of model calls retried on the same provider: the progress line while a retry waits and
//! the `/status` line counting them.

use kernel_common::config::Locale;
use kernel_proto::words::RetryReason;

use super::{MAX_TITLE_CHARS, Texts, escape_html, escape_truncated};

impl Texts {
    /// Why a call is retried, as a predicate after the provider's name (agentd's reason code).
    fn retry_reason(self, reason: &str) -> &'static str {
        match RetryReason::parse(reason) {
            Some(RetryReason::RateLimited) => self.pick("被限流", "is rate limited"),
            Some(RetryReason::Overloaded) => self.pick("过载", "is overloaded"),
            Some(RetryReason::Network) => self.pick("连接失败", "is unreachable"),
            Some(RetryReason::Stalled) => self.pick("没有响应", "stalled"),
            Some(RetryReason::StreamCut) => self.pick("连接中断", "cut the answer off"),
            None => self.pick("出错", "failed"),
        }
    }

    /// Progress: `provider`'s call failed for `reason` and is retried (`attempt` of
    /// `max_attempts`) after `wait_ms`, e.g. "Anthropic 过载，4 秒后重试（2/3）".
    pub fn retry_scheduled(
        self,
        provider: &str,
        reason: &str,
        attempt: u32,
        max_attempts: u32,
        wait_ms: u64,
    ) -> String {
        let provider = escape_truncated(provider, MAX_TITLE_CHARS);
        let why = self.retry_reason(reason);
        let secs = wait_ms.div_ceil(1000).max(1);
        match self.locale() {
            Locale::Zh => format!(
                "⏳ <code>{provider}</code> {why}，{secs} 秒后重试（{attempt}/{max_attempts}）…"
            ),
            Locale::En => format!(
                "⏳ <code>{provider}</code> {why}; retrying in {secs} s ({attempt}/{max_attempts})…"
            ),
        }
    }

    /// `/status`: model calls retried since agentd started, and the last one; `None` when none.
    pub fn model_retries(
        self,
        count: u64,
        last_at: Option<&str>,
        last_provider: &str,
        last_reason: &str,
    ) -> Option<String> {
        if count == 0 {
            return None;
        }
        let last = last_at.map(|at| {
            (
                escape_truncated(last_provider, MAX_TITLE_CHARS),
                self.retry_reason(last_reason),
                escape_html(&self.local_time(at)),
            )
        });
        Some(match (self.locale(), last) {
            (Locale::Zh, Some((p, why, at))) => {
                format!("模型重试：{count} 次（最近：<code>{p}</code> {why}，{at}）")
            }
            (Locale::Zh, None) => format!("模型重试：{count} 次"),
            (Locale::En, Some((p, why, at))) => {
                format!("Model retries: {count} (last: <code>{p}</code> {why}, {at})")
            }
            (Locale::En, None) => format!("Model retries: {count}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_retry_progress_line_names_provider_reason_wait_and_attempt() {
        let zh = Texts::new(Locale::Zh);
        let en = Texts::new(Locale::En);
        assert_eq!(
            zh.retry_scheduled("Anthropic", "overloaded", 2, 3, 4_000),
            "⏳ <code>Anthropic</code> 过载，4 秒后重试（2/3）…"
        );
        assert_eq!(
            en.retry_scheduled("Anthropic", "overloaded", 2, 3, 4_000),
            "⏳ <code>Anthropic</code> is overloaded; retrying in 4 s (2/3)…"
        );
        assert!(
            zh.retry_scheduled("a", "rate_limited", 1, 3, 1_200)
                .contains("2 秒后")
        );
        assert!(
            en.retry_scheduled("a", "stalled", 1, 3, 0)
                .contains("in 1 s")
        );
        assert!(
            en.retry_scheduled("<b>", "new_code", 1, 3, 0)
                .contains("<code>&lt;b&gt;</code> failed")
        );
    }

    #[test]
    fn the_status_line_appears_only_after_retries() {
        let en = Texts::new(Locale::En);
        assert_eq!(en.model_retries(0, None, "", ""), None);
        let line = en
            .model_retries(3, Some("2026-01-01T00:00:00Z"), "main", "stream_cut")
            .unwrap();
        assert!(
            line.starts_with("Model retries: 3 (last: <code>main</code> cut"),
            "{line}"
        );
        let zh = Texts::new(Locale::Zh)
            .model_retries(1, None, "", "")
            .unwrap();
        assert_eq!(zh, "模型重试：1 次");
    }
}
