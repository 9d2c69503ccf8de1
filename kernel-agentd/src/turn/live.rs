//! The running turns an owner's edit can still reach, keyed by session: which owner messages
//! (idempotency keys) each carries, whether a tool has run in it yet, and an edited text it
//! is to restart with. A small API over a map so it stays the same once turns run per session.

use std::sync::Mutex;

/// One running turn as an edit sees it.
#[derive(Debug, Clone)]
struct LiveTurn {
    turn_id: String,
    session_id: i64,
    keys: Vec<String>,
    tool_ran: bool,
    /// The edited text the turn restarts with once its cancellation lands.
    restart: Option<String>,
}

/// What an edit finds for a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Found {
    pub turn_id: String,
    pub tool_ran: bool,
}

/// The running turns (today at most one).
#[derive(Debug, Default)]
pub(super) struct LiveTurns {
    turns: Mutex<Vec<LiveTurn>>,
}

impl LiveTurns {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<LiveTurn>> {
        self.turns.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Turn `turn_id` of `session_id` runs, carrying the owner messages `keys`.
    pub(super) fn begin(&self, turn_id: &str, session_id: i64, keys: &[String]) {
        let mut turns = self.lock();
        turns.retain(|t| t.turn_id != turn_id);
        turns.push(LiveTurn {
            turn_id: turn_id.to_owned(),
            session_id,
            keys: keys.to_vec(),
            tool_ran: false,
            restart: None,
        });
    }

    /// A tool ran (or started) in turn `turn_id`: an edit now steers instead of restarting.
    pub(super) fn tool_ran(&self, turn_id: &str) {
        if let Some(t) = self.lock().iter_mut().find(|t| t.turn_id == turn_id) {
            t.tool_ran = true;
        }
    }

    /// Turn `turn_id` ended; the restart text asked for it, if any.
    pub(super) fn end(&self, turn_id: &str) -> Option<String> {
        let mut turns = self.lock();
        let at = turns.iter().position(|t| t.turn_id == turn_id)?;
        turns.remove(at).restart
    }

    /// The running turn of `session_id` carrying `key` (empty: any running owner turn of that
    /// session that carries a message).
    pub(super) fn find(&self, session_id: i64, key: &str) -> Option<Found> {
        self.lock()
            .iter()
            .find(|t| {
                t.session_id == session_id
                    && if key.is_empty() {
                        !t.keys.is_empty()
                    } else {
                        t.keys.iter().any(|k| k == key)
                    }
            })
            .map(|t| Found {
                turn_id: t.turn_id.clone(),
                tool_ran: t.tool_ran,
            })
    }

    /// Asks turn `turn_id` to restart with `text` (a later edit's text wins); false when it
    /// already ran a tool or ended.
    pub(super) fn restart(&self, turn_id: &str, text: String) -> bool {
        match self
            .lock()
            .iter_mut()
            .find(|t| t.turn_id == turn_id && !t.tool_ran)
        {
            Some(t) => {
                t.restart = Some(text);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_finds_the_running_turn_of_its_session_and_restarts_it_only_before_a_tool() {
        let live = LiveTurns::default();
        live.begin("t1", 1, &["tg:1:10".to_owned()]);
        assert_eq!(live.find(2, "tg:1:10"), None, "another session's message");
        assert_eq!(
            live.find(1, "tg:1:11"),
            None,
            "a message the turn does not carry"
        );
        let found = live.find(1, "tg:1:10").unwrap();
        assert_eq!(found.turn_id, "t1");
        assert!(!found.tool_ran);
        assert!(live.restart("t1", "first".into()));
        assert!(live.restart("t1", "second".into()));
        assert_eq!(live.end("t1").as_deref(), Some("second"));
        assert_eq!(live.find(1, "tg:1:10"), None);

        live.begin("t2", 1, &["tg:1:12".to_owned()]);
        live.tool_ran("t2");
        assert!(live.find(1, "").unwrap().tool_ran);
        assert!(
            !live.restart("t2", "late".into()),
            "after a tool an edit steers"
        );
        assert_eq!(live.end("t2"), None);
    }
}
