//! Texts of messages that live (issue 47): `/retry`, the offer to answer an edited message,
//! and the 👎 offer to try again.

use kernel_common::config::Locale;

use super::{Texts, escape_html, escape_truncated};

/// Longest quote of an edited message in the offer (characters).
const MAX_QUOTE_CHARS: usize = 300;

impl Texts {
    /// `/retry` started the new try on `model` (`provider/model`).
    pub fn retry_started(self, model: &str) -> String {
        let model = escape_html(model);
        match self.locale() {
            Locale::Zh => format!("正在用 {model} 重新回答上一条消息…"),
            Locale::En => format!("Answering the last message again on {model}…"),
        }
    }

    /// `/retry` while another turn runs.
    pub fn retry_busy(self) -> &'static str {
        self.pick(
            "正在处理另一条消息，结束后再试 /retry",
            "Another message is being answered; try /retry once it is done",
        )
    }

    /// `/retry` with nothing to run again.
    pub fn nothing_to_retry(self) -> &'static str {
        self.pick(
            "本会话还没有可以重新回答的消息",
            "There is no message in this session to answer again",
        )
    }

    /// `/retry <model>` naming a model agentd does not know.
    pub fn retry_unknown_model(self) -> &'static str {
        self.pick(
            "没有这个模型：/model 列出可用的模型（provider/model）",
            "No such model: /model lists the ones you can use (provider/model)",
        )
    }

    /// The reply to an edit of an answered message: the change quoted, with a button.
    pub fn edit_offer(self, text: &str) -> String {
        let quoted = escape_truncated(text, MAX_QUOTE_CHARS);
        match self.locale() {
            Locale::Zh => format!("你修改了已回答的消息：\n<blockquote>{quoted}</blockquote>"),
            Locale::En => {
                format!(
                    "You edited a message that was already answered:\n<blockquote>{quoted}</blockquote>"
                )
            }
        }
    }

    /// The button under [`Texts::edit_offer`].
    pub fn edit_offer_button(self) -> &'static str {
        self.pick("回答修改后的消息", "Answer the edited message")
    }

    /// The toast of a press on the edit offer: the edited message is being answered.
    pub fn edit_answering(self) -> &'static str {
        self.pick("正在回答修改后的消息", "Answering the edited message")
    }

    /// The toast of a press while another turn runs.
    pub fn living_busy(self) -> &'static str {
        self.pick(
            "正在处理另一条消息，稍后再按",
            "Another message is being answered; press again once it is done",
        )
    }

    /// The toast of a press on an offer that no longer applies.
    pub fn living_stale(self) -> &'static str {
        self.pick("这条提示已过时", "This offer no longer applies")
    }

    /// The 👎 offer under Kernel's last answer.
    pub fn try_again_offer(self) -> &'static str {
        self.pick("要重新回答吗？", "Shall I try again?")
    }

    /// The "Try again" button.
    pub fn try_again_button(self) -> &'static str {
        self.pick("重新回答", "Try again")
    }

    /// The "Try again with <model>" button.
    pub fn try_again_with_button(self, model: &str) -> String {
        match self.locale() {
            Locale::Zh => format!("用 {model} 重新回答"),
            Locale::En => format!("Try again with {model}"),
        }
    }

    /// The toast of a press on a try-again button: the new try runs.
    pub fn trying_again(self) -> &'static str {
        self.pick("正在重新回答", "Trying again")
    }
}

impl Texts {
    /// An edit that emptied the message (a caption removed) is ignored.
    pub fn edit_emptied(self) -> &'static str {
        self.pick(
            "这次修改把消息清空了，已忽略（原消息照常处理）",
            "The edit empties the message, so it is ignored (the original stands)",
        )
    }

    /// An edit that made the message a command is ignored.
    pub fn edit_command(self) -> &'static str {
        self.pick(
            "修改消息不会执行命令；请把命令重新发送一次",
            "An edit does not run a command; send the command again as a new message",
        )
    }
}
