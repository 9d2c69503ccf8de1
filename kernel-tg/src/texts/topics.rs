//! Texts about topics of the owner's chat (parallel sessions): `/status`'s list of the turns
//! running in several sessions at once, `/resume` inside a topic, the note on an item whose
//! topic was deleted, the name of a topic `/new` opens.

use std::fmt::Write as _;

use kernel_common::config::Locale;

use super::{SessionEntry, Texts};

/// A running turn as `/status` in the main chat lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RunningEntry<'a> {
    /// Its session's database id.
    pub session_id: i64,
    /// RFC 3339 start of the turn.
    pub started_at: &'a str,
    pub running_tool: Option<&'a str>,
}

impl Texts {
    /// `/status` in the main chat: every running turn with its session (turns of several
    /// sessions run at once); empty when none runs.
    pub fn running_turns(self, turns: &[RunningEntry<'_>]) -> String {
        if turns.is_empty() {
            return String::new();
        }
        let mut out = String::from(self.pick("正在运行的回合：\n", "Running turns:\n"));
        for turn in turns {
            let session = match self.locale() {
                Locale::Zh => format!("会话 {}", turn.session_id),
                Locale::En => format!("session {}", turn.session_id),
            };
            let task = self.task(Some(turn.started_at), turn.running_tool);
            let _ = writeln!(out, "· {session}{}{task}", self.pick("：", ": "));
        }
        out
    }

    /// `/resume #n` sent inside a topic: the session now lives in that topic.
    pub fn resumed_in_topic(self, session: &SessionEntry<'_>) -> String {
        format!(
            "{}{}",
            self.pick("本话题现在接续会话：", "This topic now continues: "),
            self.session_line(&SessionEntry {
                current: false,
                ..*session
            })
        )
    }

    /// The note under an item delivered in the main chat because its topic (`name`, if known)
    /// was deleted.
    pub fn topic_deleted_note(self, name: Option<&str>) -> String {
        match (self.locale(), name) {
            (Locale::Zh, Some(name)) => format!("（原话题「{name}」已删除）"),
            (Locale::Zh, None) => "（原话题已删除）".to_owned(),
            (Locale::En, Some(name)) => format!("(topic \"{name}\" was deleted)"),
            (Locale::En, None) => "(its topic was deleted)".to_owned(),
        }
    }

    /// The name of a topic `/new` opens, until the session's title renames it.
    pub fn new_topic_name(self) -> &'static str {
        self.pick("新对话", "New chat")
    }
}
