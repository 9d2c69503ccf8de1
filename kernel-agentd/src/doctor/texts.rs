//! The doctor's owner-visible texts, Chinese by default and English with `general.locale = "en"`:
//! each text is written in both languages where it is used (`Texts::pick`); the shared ones are
//! here.

use kernel_common::config::Locale;

/// The doctor's texts in one locale.
#[derive(Debug, Clone, Copy)]
pub struct Texts {
    locale: Locale,
}

impl Texts {
    pub fn new(locale: Locale) -> Texts {
        Texts { locale }
    }

    /// `zh` or `en`, by the locale.
    pub fn pick(&self, zh: impl Into<String>, en: impl Into<String>) -> String {
        self.locale.pick(zh.into(), en.into())
    }

    pub fn fix_prefix(&self) -> String {
        self.pick("修复：", "fix: ")
    }

    pub fn network(&self) -> String {
        self.pick("网络检查", "network checks")
    }

    pub fn network_skipped(&self) -> String {
        self.pick(
            "未运行（未连接任何网络；加 --online 检查服务商和 Telegram）",
            "not run (no connection made; add --online to check the providers and Telegram)",
        )
    }

    pub fn summary(&self, total: usize, failed: usize) -> String {
        if failed == 0 {
            self.pick(
                format!("{total} 项检查，全部通过\n"),
                format!("{total} checks, none failed\n"),
            )
        } else {
            self.pick(
                format!("{total} 项检查，{failed} 项失败\n"),
                format!("{total} checks, {failed} failed\n"),
            )
        }
    }
}
