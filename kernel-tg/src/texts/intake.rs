//! Intake's texts: kinds Kernel cannot take, what a burst left out, a message agentd could not
//! take in time, what a backlog skipped — and the late marker the model reads before a message
//! that waited.

use chrono::{DateTime, Utc};
use kernel_common::config::Locale;

use super::{Texts, escape_html, escape_truncated};

/// A kind of message Kernel cannot take (the owner is told which).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsupported {
    Sticker,
    Video,
    VideoNote,
    Animation,
    /// Anything else without text, file or context (a game, a story, …).
    Other,
}

/// Longest excerpt of a message named in a notice (characters).
const EXCERPT_CHARS: usize = 60;

impl Texts {
    /// The owner's time zone (`general.timezone`; UTC when not set).
    pub fn zone(self) -> chrono_tz::Tz {
        self.timezone.unwrap_or(chrono_tz::UTC)
    }

    /// The reply to a kind of message Kernel cannot take.
    pub fn unsupported_kind(self, kind: Unsupported) -> String {
        let (zh, en) = kind_names(kind);
        match self.locale() {
            Locale::Zh => format!("暂不支持{zh}，请发送文字、图片、文件、语音、位置或联系人"),
            Locale::En => format!(
                "{} is not supported; send text, a photo, a file, a voice note, a location or a contact",
                capitalise(en)
            ),
        }
    }

    /// The marker (plain text, for the model) before a message that waited: sent while
    /// Kernel was away, at `sent` (shown in the owner's zone; the date too when not `now`'s).
    pub fn late_marker(self, sent: DateTime<Utc>, now: DateTime<Utc>) -> String {
        let zone = self.zone();
        let local = sent.with_timezone(&zone);
        let same_day = local.date_naive() == now.with_timezone(&zone).date_naive();
        let time = if same_day {
            local.format("%H:%M").to_string()
        } else {
            local.format("%Y-%m-%d %H:%M").to_string()
        };
        match self.locale() {
            Locale::Zh => format!("[离线期间 {time} 收到]"),
            Locale::En => format!("[received {time} while Kernel was offline]"),
        }
    }

    /// A message agentd did not take within `telegram.intake_wait_secs`.
    pub fn not_taken(self, excerpt: &str, waited_secs: u64) -> String {
        let excerpt = escape_truncated(excerpt, EXCERPT_CHARS);
        match self.locale() {
            Locale::Zh => format!(
                "⚠️ 助手后台 {waited_secs} 秒内没有恢复，这条消息未能处理，请稍后重发：\n「{excerpt}」"
            ),
            Locale::En => format!(
                "⚠️ The assistant backend did not come back within {waited_secs} s; this message \
                 was not taken, please send it again later:\n“{excerpt}”"
            ),
        }
    }

    /// What a turn left out (each line from the `left_*` texts); the rest still runs.
    pub fn left_out(self, lines: &[String]) -> String {
        let head = self.pick(
            "⚠️ 以下内容未处理，其余照常：",
            "⚠️ Left out (the rest is being answered):",
        );
        let mut out = head.to_owned();
        for line in lines {
            out.push_str("\n• ");
            out.push_str(line);
        }
        out
    }

    /// A left-out line: a part of a kind Kernel cannot take.
    pub fn left_unsupported(self, kind: Unsupported) -> String {
        let (zh, en) = kind_names(kind);
        self.pick_owned(format!("{zh}（暂不支持）"), format!("{en} (not supported)"))
    }

    /// A left-out line: a file over the download limit (`name` may be empty for a photo).
    pub fn left_too_large(self, name: &str, max_mb: u32) -> String {
        let name = self.file_name(name);
        self.pick_owned(
            format!("{name}：太大（上限 {max_mb} MB）"),
            format!("{name}: too large (limit {max_mb} MB)"),
        )
    }

    /// A left-out line: a file that could not be downloaded.
    pub fn left_failed(self, name: &str) -> String {
        let name = self.file_name(name);
        self.pick_owned(
            format!("{name}：下载失败"),
            format!("{name}: the download failed"),
        )
    }

    /// A left-out line: attachments over the per-turn limit.
    pub fn left_over_limit(self, count: usize, max: usize) -> String {
        self.pick_owned(
            format!("{count} 个附件：超出每轮 {max} 个的上限"),
            format!("{count} attachment(s): over the limit of {max} per turn"),
        )
    }

    /// A left-out line: messages cut to keep the turn bounded.
    pub fn left_cut(self, count: usize) -> String {
        self.pick_owned(
            format!("{count} 条较早的消息：超出单轮长度上限"),
            format!("{count} earlier message(s): over the length limit of one turn"),
        )
    }

    /// What the start-up backlog did not run: `old` messages older than the limit, and the
    /// commands found in it (never run: they are stale).
    pub fn backlog_skipped(self, old: usize, max_age_hours: u64, commands: &[String]) -> String {
        let mut lines = Vec::new();
        if old > 0 {
            lines.push(self.pick_owned(
                format!("{old} 条消息超过 {max_age_hours} 小时，未处理"),
                format!("{old} message(s) older than {max_age_hours} h were not run"),
            ));
        }
        if !commands.is_empty() {
            let list = commands
                .iter()
                .map(|c| escape_truncated(c, EXCERPT_CHARS))
                .collect::<Vec<_>>()
                .join(", ");
            lines.push(self.pick_owned(
                format!("离线期间的命令未执行（如仍需要请重发）：{list}"),
                format!("Commands sent while Kernel was offline were not run (send them again if still wanted): {list}"),
            ));
        }
        let head = self.pick(
            "ℹ️ Kernel 离线期间收到的消息：",
            "ℹ️ Messages sent while Kernel was offline:",
        );
        let mut out = head.to_owned();
        for line in lines {
            out.push_str("\n• ");
            out.push_str(&line);
        }
        out
    }

    fn file_name(self, name: &str) -> String {
        if name.is_empty() {
            self.pick("一张图片", "a photo").to_owned()
        } else {
            escape_html(name)
        }
    }

    fn pick_owned(self, zh: String, en: String) -> String {
        match self.locale() {
            Locale::Zh => zh,
            Locale::En => en,
        }
    }
}

fn kind_names(kind: Unsupported) -> (&'static str, &'static str) {
    match kind {
        Unsupported::Sticker => ("贴纸", "a sticker"),
        Unsupported::Video => ("视频", "a video"),
        Unsupported::VideoNote => ("视频留言", "a video message"),
        Unsupported::Animation => ("动图", "an animation (GIF)"),
        Unsupported::Other => ("这种消息", "this kind of message"),
    }
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ZH: Texts = Texts::new(Locale::Zh);
    const EN: Texts = Texts::new(Locale::En);

    #[test]
    fn kinds_not_taken_are_named_in_both_languages() {
        assert_eq!(
            ZH.unsupported_kind(Unsupported::Sticker),
            "暂不支持贴纸，请发送文字、图片、文件、语音、位置或联系人"
        );
        assert!(
            EN.unsupported_kind(Unsupported::VideoNote)
                .starts_with("A video message is not supported;")
        );
    }

    #[test]
    fn names_and_excerpts_are_escaped_and_cut() {
        let html = EN.not_taken(&format!("<b>{}", "x".repeat(200)), 120);
        assert!(
            html.contains("&lt;b&gt;") && !html.contains("<b>"),
            "{html}"
        );
        assert!(html.contains("120 s"), "{html}");
        assert!(html.chars().count() < 260, "{html}");
        let left = ZH.left_out(&[ZH.left_too_large("<a>.pdf", 20), ZH.left_failed("")]);
        assert_eq!(
            left,
            "⚠️ 以下内容未处理，其余照常：\n• &lt;a&gt;.pdf：太大（上限 20 MB）\n• 一张图片：下载失败"
        );
        let notice = EN.backlog_skipped(0, 24, &["/x<y".to_owned()]);
        assert!(notice.contains("/x&lt;y"), "{notice}");
        assert!(!notice.contains("older than"), "{notice}");
    }

    #[test]
    fn the_late_marker_shows_the_date_only_when_it_is_not_today() {
        let sent = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        assert_eq!(
            EN.late_marker(sent, sent),
            "[received 22:13 while Kernel was offline]"
        );
        let shanghai = ZH.with_timezone(chrono_tz::Asia::Shanghai);
        let later = sent + chrono::Duration::days(1);
        assert_eq!(
            shanghai.late_marker(sent, later),
            "[离线期间 2023-11-15 06:13 收到]"
        );
    }
}
