//! Memory consolidation's texts: a proposed merge's buttons and what a press answers, the mark
//! of a set-aside memory in `/memory all`, what `/memory undo` answers, and the `/status` line.

use std::fmt::Write as _;

use super::{Texts, escape_html};
use kernel_common::config::Locale;
use kernel_proto::words::{RunOutcome, SetAsideReason};

/// The job's state as `/status` shows it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConsolidationView<'a> {
    pub enabled: bool,
    /// The last run's time (RFC 3339), if it ran.
    pub at: Option<&'a str>,
    /// `ok`, `malformed` or `failed`.
    pub outcome: &'a str,
    pub merged: u32,
    pub retired: u32,
    pub superseded: u32,
    pub proposed: u32,
    pub undone: bool,
}

impl Texts {
    /// The button that merges a proposal's memories.
    pub fn memory_merge_button(self) -> &'static str {
        self.pick("合并", "Merge")
    }

    /// The button that keeps them as they are.
    pub fn memory_keep_button(self) -> &'static str {
        self.pick("保留原样", "Keep as is")
    }

    /// The memories were merged.
    pub fn memory_merged(self) -> &'static str {
        self.pick("已合并", "Merged")
    }

    /// They stay as they are.
    pub fn memory_kept(self) -> &'static str {
        self.pick("已保留原样", "Kept as they are")
    }

    /// The proposal was decided already, its memories changed, or the press was not Kernel's.
    pub fn memory_proposal_stale(self) -> &'static str {
        self.pick(
            "这个建议已过期，记忆没有改动",
            "This proposal is stale; nothing was changed",
        )
    }

    /// The mark before a set-aside memory in `/memory all` (`reason`: `merged`, `retired`,
    /// `superseded`).
    pub fn memory_set_aside_mark(self, reason: &str) -> &'static str {
        match SetAsideReason::parse(reason) {
            Some(SetAsideReason::Merged) => self.pick("〔已合并〕", "[merged]"),
            Some(SetAsideReason::Retired) => self.pick("〔已完成〕", "[retired]"),
            Some(SetAsideReason::Superseded) | None => self.pick("〔已被取代〕", "[superseded]"),
        }
    }

    /// What `/memory undo` answers.
    pub fn memory_undone(self, undone: bool, restored: u32) -> String {
        match (undone, self.locale()) {
            (false, Locale::Zh) => "没有可以撤销的记忆整理".to_owned(),
            (false, Locale::En) => "There is no memory tidying to undo".to_owned(),
            (true, Locale::Zh) => format!("已撤销上次记忆整理，{restored} 条记忆恢复原样"),
            (true, Locale::En) => {
                format!(
                    "The last memory tidying is undone: {restored} memories are back as they were"
                )
            }
        }
    }

    /// The `/status` line of memory consolidation.
    pub fn consolidation_line(self, c: &ConsolidationView<'_>) -> String {
        let label = self.pick("记忆整理：", "Memory tidying: ");
        if !c.enabled {
            return format!("{label}{}\n", self.pick("关闭", "off"));
        }
        let Some(at) = c.at else {
            return format!(
                "{label}{}\n",
                self.pick("开启，尚未运行", "on, not run yet")
            );
        };
        let at = escape_html(&self.local_time(at));
        let result = match (RunOutcome::parse(c.outcome), self.locale()) {
            (Some(RunOutcome::Ok), Locale::Zh) => format!(
                "合并 {} 组，完成 {} 条，取代 {} 条，建议 {} 条",
                c.merged, c.retired, c.superseded, c.proposed
            ),
            (Some(RunOutcome::Ok), Locale::En) => format!(
                "{} merged, {} retired, {} superseded, {} proposed",
                c.merged, c.retired, c.superseded, c.proposed
            ),
            (Some(RunOutcome::Malformed), Locale::Zh) => "计划无法使用，未作改动".to_owned(),
            (Some(RunOutcome::Malformed), Locale::En) => {
                "unusable plan, nothing changed".to_owned()
            }
            (Some(RunOutcome::Failed) | None, Locale::Zh) => "调用失败，未作改动".to_owned(),
            (Some(RunOutcome::Failed) | None, Locale::En) => {
                "the call failed, nothing changed".to_owned()
            }
        };
        let mut out = format!(
            "{label}{}{at}{}{result}",
            self.pick("上次 ", "last run "),
            self.pick("，", ", ")
        );
        let changed = c.merged + c.retired + c.superseded > 0;
        if c.undone {
            out.push_str(self.pick("（已撤销）", " (undone)"));
        } else if changed {
            out.push_str(self.pick("（/memory undo 撤销）", " (/memory undo to undo)"));
        }
        let _ = writeln!(out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_line_says_when_it_ran_what_it_changed_and_how_to_undo() {
        let view = ConsolidationView {
            enabled: true,
            at: Some("2026-02-11T13:42:00Z"),
            outcome: "ok",
            merged: 1,
            retired: 2,
            superseded: 3,
            ..Default::default()
        };
        let zh = Texts::new(Locale::Zh).consolidation_line(&view);
        assert!(
            zh.contains("合并 1 组，完成 2 条，取代 3 条") && zh.contains("/memory undo"),
            "{zh}"
        );
        let en = Texts::new(Locale::En).consolidation_line(&ConsolidationView {
            undone: true,
            ..view
        });
        assert!(
            en.contains("1 merged, 2 retired, 3 superseded") && en.ends_with("(undone)\n"),
            "{en}"
        );
        let off = Texts::new(Locale::En).consolidation_line(&ConsolidationView::default());
        assert_eq!(off, "Memory tidying: off\n");
        assert_eq!(
            Texts::new(Locale::Zh).memory_undone(true, 5),
            "已撤销上次记忆整理，5 条记忆恢复原样"
        );
    }
}
