//! Auto memory's texts: the `/notes` reply (the day's note, already rendered from Markdown by
//! the caller) and its `/status` line.

use std::fmt::Write as _;

use super::{Texts, escape_html};
use kernel_common::config::Locale;
use kernel_proto::words::RunOutcome;

/// Auto memory's state as `/status` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemoryAutoView<'a> {
    pub enabled: bool,
    /// RFC 3339 time of the last run (shown in the owner's time zone), if any.
    pub last_run: Option<&'a str>,
    pub added: u32,
    pub refreshed: u32,
    /// "ok", "malformed" or "failed".
    pub outcome: &'a str,
}

impl Texts {
    /// The `/notes` reply: a heading with the date, then `note_html` (the note rendered to
    /// Telegram HTML), or a line saying the day has no note.
    pub fn notes(self, date: &str, note_html: Option<&str>) -> String {
        let date = escape_html(date);
        match (note_html, self.locale()) {
            (Some(html), Locale::Zh) => format!("<b>{date} 的笔记</b>\n\n{html}"),
            (Some(html), Locale::En) => format!("<b>Notes of {date}</b>\n\n{html}"),
            (None, Locale::Zh) => {
                format!("{date} 还没有笔记（自动记忆每隔若干条消息、/new 时和午夜整理一次）")
            }
            (None, Locale::En) => format!(
                "No notes for {date} yet (auto memory writes them every few messages, on /new and at midnight)"
            ),
        }
    }

    /// The `/status` line of auto memory.
    pub(super) fn push_memory_auto(self, out: &mut String, auto: &MemoryAutoView<'_>) {
        let label = self.pick("自动记忆：", "Auto memory: ");
        if !auto.enabled {
            let _ = writeln!(out, "{label}{}", self.pick("关闭", "off"));
            return;
        }
        let Some(at) = auto.last_run else {
            let _ = writeln!(
                out,
                "{label}{}",
                self.pick("开启，尚未运行", "on, not run yet")
            );
            return;
        };
        let at = escape_html(&self.local_time(at));
        let (added, refreshed) = (auto.added, auto.refreshed);
        let result = match (RunOutcome::parse(auto.outcome), self.locale()) {
            (Some(RunOutcome::Ok), Locale::Zh) => format!("新增 {added} 条，更新 {refreshed} 条"),
            (Some(RunOutcome::Ok), Locale::En) => format!("{added} added, {refreshed} refreshed"),
            (Some(RunOutcome::Malformed), Locale::Zh) => "模型输出无法解析，已跳过".to_owned(),
            (Some(RunOutcome::Malformed), Locale::En) => {
                "unreadable model output, skipped".to_owned()
            }
            (Some(RunOutcome::Failed) | None, Locale::Zh) => "调用失败，未作改动".to_owned(),
            (Some(RunOutcome::Failed) | None, Locale::En) => {
                "the call failed, nothing changed".to_owned()
            }
        };
        let _ = writeln!(
            out,
            "{label}{}{at}{}{result}",
            self.pick("上次 ", "last run "),
            self.pick("，", ", ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_and_status_lines_in_both_languages() {
        let (zh, en) = (Texts::new(Locale::Zh), Texts::new(Locale::En));
        assert!(
            zh.notes("2026-02-11", Some("<b>x</b>"))
                .starts_with("<b>2026-02-11 的笔记</b>")
        );
        assert!(
            en.notes("2026-02-11", None)
                .starts_with("No notes for 2026-02-11")
        );
        let view = MemoryAutoView {
            enabled: true,
            last_run: Some("2026-02-11T13:42:00Z"),
            added: 2,
            refreshed: 1,
            outcome: "ok",
        };
        let mut out = String::new();
        en.push_memory_auto(&mut out, &view);
        assert!(
            out.starts_with("Auto memory: last run ") && out.ends_with("2 added, 1 refreshed\n"),
            "{out}"
        );
        let mut out = String::new();
        zh.push_memory_auto(&mut out, &MemoryAutoView::default());
        assert_eq!(out, "自动记忆：关闭\n");
    }
}
