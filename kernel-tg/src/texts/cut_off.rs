//! Texts of an answer an agentd crash cut off: the notice in place of the answer, its button to
//! run the message again, and the press's toasts.

use super::Texts;

impl Texts {
    /// The notice for a turn cut off by an agentd crash (HTML).
    pub fn turn_cut_off(self) -> &'static str {
        self.pick(
            "⚠️ 回复被中断：Kernel 在回答完成前重启了。可点击下方按钮重新运行这条消息。",
            "⚠️ The answer was cut off: Kernel restarted before it was finished. Press the button below to run the message again.",
        )
    }

    /// The button under [`Texts::turn_cut_off`].
    pub fn rerun_button(self) -> &'static str {
        self.pick("重新运行", "Run again")
    }

    /// The press started the message again.
    pub fn rerun_started(self) -> &'static str {
        self.pick("已重新运行", "Running it again")
    }

    /// Another turn runs; the button stays for later.
    pub fn rerun_busy(self) -> &'static str {
        self.pick(
            "正在处理其他消息，请稍后再点",
            "Another message is being handled; press again later",
        )
    }

    /// The message was run again already (or the button is not Kernel's).
    pub fn rerun_stale(self) -> &'static str {
        self.pick("这条消息已重新运行过", "This message was run again already")
    }
}

#[cfg(test)]
mod tests {
    use kernel_common::config::Locale;

    use super::Texts;

    #[test]
    fn cut_off_texts_are_chinese_by_default_and_english_on_request() {
        let cjk = |s: &str| s.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
        let (zh, en) = (Texts::new(Locale::Zh), Texts::new(Locale::En));
        for (z, e) in [
            (zh.turn_cut_off(), en.turn_cut_off()),
            (zh.rerun_button(), en.rerun_button()),
            (zh.rerun_started(), en.rerun_started()),
            (zh.rerun_busy(), en.rerun_busy()),
            (zh.rerun_stale(), en.rerun_stale()),
        ] {
            assert!(cjk(z) && !cjk(e), "{z} / {e}");
        }
    }
}
