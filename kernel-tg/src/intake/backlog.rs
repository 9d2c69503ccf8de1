//! The start-up backlog (pure): updates Telegram kept while kernel-tg was down. Owner messages
//! younger than `telegram.max_backlog_age_secs` become one late turn; older ones are counted,
//! commands (stale: a `/cancel` or `/del_history` from hours ago must not act) and kinds Kernel
//! cannot take are named — one notice for all of it.

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::texts::Texts;

/// What the backlog did not run.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Skipped {
    /// Messages older than the limit.
    pub old: usize,
    /// Commands, as the owner typed them (first word).
    pub commands: Vec<String>,
}

impl Skipped {
    /// Whether a message sent at `sent` is too old to run at `now`.
    pub(crate) fn too_old(sent: DateTime<Utc>, now: DateTime<Utc>, max_age: Duration) -> bool {
        let age = now.signed_duration_since(sent);
        age.to_std().is_ok_and(|age| age > max_age)
    }

    /// Records a command found in the backlog (its first word: arguments may be long).
    pub(crate) fn command(&mut self, text: &str) {
        let word = text.split_whitespace().next().unwrap_or(text);
        self.commands.push(word.to_owned());
    }

    /// The notice for the owner, when anything was skipped.
    pub(crate) fn notice(&self, texts: Texts, max_age: Duration) -> Option<String> {
        if self.old == 0 && self.commands.is_empty() {
            return None;
        }
        let hours = max_age.as_secs().div_ceil(3_600);
        Some(texts.backlog_skipped(self.old, hours, &self.commands))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernel_common::config::Locale;

    const DAY: Duration = Duration::from_secs(86_400);

    #[test]
    fn age_is_measured_from_the_send_time() {
        let now = DateTime::from_timestamp(1_700_100_000, 0).unwrap();
        let fresh = now - chrono::Duration::hours(23);
        let stale = now - chrono::Duration::hours(25);
        assert!(!Skipped::too_old(fresh, now, DAY));
        assert!(Skipped::too_old(stale, now, DAY));
        // A clock slightly behind Telegram's: a "future" message is not old.
        assert!(!Skipped::too_old(
            now + chrono::Duration::seconds(5),
            now,
            DAY
        ));
    }

    #[test]
    fn the_notice_counts_old_messages_and_names_commands() {
        let mut skipped = Skipped::default();
        assert_eq!(skipped.notice(Texts::new(Locale::En), DAY), None);
        skipped.old = 3;
        skipped.command("/del_history now please");
        skipped.command("/cancel");
        let zh = skipped.notice(Texts::new(Locale::Zh), DAY).unwrap();
        assert!(zh.contains("3 条消息超过 24 小时"), "{zh}");
        assert!(zh.contains("/del_history, /cancel"), "{zh}");
        assert!(!zh.contains("now please"), "{zh}");
        let en = skipped.notice(Texts::new(Locale::En), DAY).unwrap();
        assert!(en.contains("3 message(s) older than 24 h"), "{en}");
    }
}
