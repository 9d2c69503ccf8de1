//! Watches' texts: a schedule's mode as `/tasks` names it, a watch's second line there (its
//! last run and spend today), the pause / delete buttons of a watch's notification and what a
//! press or `/tasks pause|resume #n` answers.

use kernel_proto::words::{ScheduleMode, WatchOutcome};

use super::listing::ScheduleEntry;
use super::{Texts, escape_truncated};
use kernel_common::config::Locale;

/// The most characters of a watch's last summary `/tasks` shows.
const MAX_SUMMARY_CHARS: usize = 80;

impl Texts {
    /// A schedule's mode (`remind`, `task`, `watch`; an unknown one reads as a reminder).
    pub fn schedule_mode(self, mode: &str) -> &'static str {
        match ScheduleMode::parse(mode) {
            Some(ScheduleMode::Task) => self.pick("任务", "task"),
            Some(ScheduleMode::Watch) => self.pick("监视", "watch"),
            Some(ScheduleMode::Remind) | None => self.pick("提醒", "reminder"),
        }
    }

    /// How a watch's run ended (an unknown word is shown escaped).
    pub fn watch_outcome(self, outcome: &str) -> String {
        let known = match WatchOutcome::parse(outcome) {
            Some(WatchOutcome::Quiet) => self.pick("无新消息", "nothing to tell"),
            Some(WatchOutcome::Notified) => self.pick("已通知", "told you"),
            Some(WatchOutcome::Failed) => self.pick("失败", "failed"),
            Some(WatchOutcome::Skipped) => self.pick("因预算跳过", "skipped (budget)"),
            None => return escape_truncated(outcome, 20),
        };
        known.to_owned()
    }

    /// A watch's second `/tasks` line: its last run (time, outcome, summary) and today's runs
    /// and spend, indented.
    pub fn watch_line(self, s: &ScheduleEntry<'_>) -> String {
        let last = if s.last_run_at.is_empty() {
            self.pick("尚未运行", "not run yet").to_owned()
        } else {
            let summary = escape_truncated(s.last_summary, MAX_SUMMARY_CHARS);
            let at = escape_truncated(s.last_run_at, 20);
            let outcome = self.watch_outcome(s.last_outcome);
            match self.locale() {
                Locale::Zh => format!("上次 {at} {outcome}：{summary}"),
                Locale::En => format!("last {at} {outcome}: {summary}"),
            }
        };
        let spend = s.spend_today_usd.map_or_else(
            || self.pick("费用未知", "cost unknown").to_owned(),
            |c| format!("${c:.4}"),
        );
        match self.locale() {
            Locale::Zh => format!("    {last} · 今日 {} 次，{spend}\n", s.runs_today),
            Locale::En => format!("    {last} · today {} runs, {spend}\n", s.runs_today),
        }
    }

    /// The button that pauses a watch from its notification.
    pub fn watch_pause_button(self) -> &'static str {
        self.pick("⏸ 暂停此监视", "⏸ Pause this watch")
    }

    /// The button that deletes a watch from its notification.
    pub fn watch_delete_button(self) -> &'static str {
        self.pick("🗑 删除此监视", "🗑 Delete this watch")
    }

    /// A watch (or schedule) was paused.
    pub fn schedule_paused(self) -> &'static str {
        self.pick(
            "已暂停，/tasks resume #n 可恢复",
            "Paused; /tasks resume #n restarts it",
        )
    }

    /// A schedule was resumed.
    pub fn schedule_resumed(self) -> &'static str {
        self.pick("已恢复", "Resumed")
    }

    /// A watch was deleted from its notification.
    pub fn watch_deleted(self) -> &'static str {
        self.pick("已删除此监视", "Watch deleted")
    }

    /// A button of a watch that no longer exists.
    pub fn watch_gone(self) -> &'static str {
        self.pick("此监视已不存在", "This watch no longer exists")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watch_line_says_its_last_run_and_spend_in_both_languages() {
        let entry = ScheduleEntry {
            mode: "watch",
            last_run_at: "2026-05-02 09:00",
            last_outcome: "notified",
            last_summary: "2.0 <is> out",
            runs_today: 3,
            spend_today_usd: Some(0.0123),
            ..Default::default()
        };
        let zh = Texts::new(Locale::Zh).watch_line(&entry);
        assert_eq!(
            zh,
            "    上次 2026-05-02 09:00 已通知：2.0 &lt;is&gt; out · 今日 3 次，$0.0123\n"
        );
        let en = Texts::new(Locale::En).watch_line(&ScheduleEntry {
            last_run_at: "",
            spend_today_usd: None,
            ..entry
        });
        assert_eq!(en, "    not run yet · today 3 runs, cost unknown\n");
        assert_eq!(Texts::new(Locale::En).schedule_mode("watch"), "watch");
        assert_eq!(Texts::new(Locale::Zh).watch_outcome("quiet"), "无新消息");
    }
}
