//! Texts of talking to a running turn: `/steer`, `/next` and its queue, `/cancel all`, the Stop
//! button and `ask_user` questions.

use std::fmt::Write as _;

use kernel_common::config::Locale;

use super::{MAX_TITLE_CHARS, Texts, escape_html, escape_truncated};

impl Texts {
    /// `/steer` reached the running turn.
    pub fn steered(self) -> &'static str {
        self.pick(
            "已转告正在进行的任务（在下一步之前生效）",
            "Passed on to the running task (it takes effect before its next step)",
        )
    }

    /// `/steer` with no turn running: it runs as a new message.
    pub fn steer_started(self) -> &'static str {
        self.pick(
            "没有正在进行的任务，已作为新消息处理",
            "Nothing was running; handled as a new message",
        )
    }

    /// `/next` was queued at `position` (1: next).
    pub fn queued_next(self, position: u32) -> String {
        match self.locale() {
            Locale::Zh => format!("已排队（第 {position} 条），当前任务结束后处理"),
            Locale::En => format!("Queued (#{position}); it runs after the current task"),
        }
    }

    /// `/cancel`'s reply with how many queued messages still wait (nothing added for none).
    pub fn cancelled_with_queue(self, reply: &str, queued: u32) -> String {
        if queued == 0 {
            return reply.to_owned();
        }
        match self.locale() {
            Locale::Zh => {
                format!("{reply}\n队列中还有 {queued} 条，将继续处理（/cancel all 一并清空）")
            }
            Locale::En => format!(
                "{reply}\n{queued} queued message(s) still wait and will run (/cancel all clears them)"
            ),
        }
    }

    /// `/cancel all` cleared `cleared` queued messages (after `reply` about the running turn).
    pub fn queue_cleared(self, reply: &str, cleared: u32) -> String {
        match self.locale() {
            Locale::Zh => format!("{reply}\n已清空队列（{cleared} 条）"),
            Locale::En => format!("{reply}\nQueue cleared ({cleared} message(s))"),
        }
    }

    /// The `/next` queue as lines appended to `/status` (nothing when empty).
    pub fn queue_lines(self, queued: &[String]) -> String {
        if queued.is_empty() {
            return String::new();
        }
        let mut out = format!("\n{}{}", self.pick("排队中：", "Queued: "), queued.len());
        for (i, text) in queued.iter().enumerate() {
            let _ = write!(
                out,
                "\n  {}. {}",
                i + 1,
                escape_truncated(text, MAX_TITLE_CHARS)
            );
        }
        out
    }

    /// The Stop button's label.
    pub fn stop_button(self) -> &'static str {
        self.said().stop()
    }

    /// Toast of a Stop button pressed after its turn ended.
    pub fn stop_stale(self) -> &'static str {
        self.pick("该任务已结束", "That task has already ended")
    }

    /// Toast of a Stop button that stopped its turn.
    pub fn stop_done(self) -> &'static str {
        self.pick("已停止", "Stopped")
    }

    /// The question `ask_user` puts to the owner.
    pub fn question(self, text: &str, has_options: bool) -> String {
        let hint = match (has_options, self.locale()) {
            (true, Locale::Zh) => "点选一个选项，或直接回复文字",
            (false, Locale::Zh) => "直接回复文字即可",
            (true, Locale::En) => "Pick an option or reply in words",
            (false, Locale::En) => "Reply in words",
        };
        format!("❓ {}\n<i>{hint}</i>", escape_html(text))
    }

    /// Toast of an answer button pressed when its question is no longer pending.
    pub fn question_stale(self) -> &'static str {
        self.pick("这个问题已经结束", "That question is closed")
    }

    /// Toast of an answer button that answered.
    pub fn question_answered(self) -> &'static str {
        self.pick("已回答", "Answered")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ZH: Texts = Texts {
        locale: Locale::Zh,
        timezone: None,
    };
    const EN: Texts = Texts {
        locale: Locale::En,
        timezone: None,
    };

    #[test]
    fn the_queue_and_questions_are_escaped_and_localized() {
        let lines = ZH.queue_lines(&["a <b>".into(), "c".into()]);
        assert_eq!(lines, "\n排队中：2\n  1. a &lt;b&gt;\n  2. c");
        assert!(EN.queue_lines(&[]).is_empty());
        assert!(ZH.question("x < y?", true).contains("x &lt; y?"));
        assert!(
            EN.cancelled_with_queue("Cancelled", 2)
                .contains("/cancel all")
        );
        assert_eq!(ZH.cancelled_with_queue("已取消", 0), "已取消");
        assert!(ZH.queued_next(3).contains('3'));
    }
}
