//! What kernel-tg remembers, in memory only, for messages that live (issue 47): the
//! acknowledgement reaction setting, the edit window and a small budget against a flood of
//! reactions. The offers for edits of answered messages (`EditMessage`) and which answer a
//! reaction is on (`SetFeedback`: its session, whether it is that session's last answer) are
//! agentd's: they outlive a restart.

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// Most reactions handled per [`REACTION_WINDOW`]; the rest are ignored.
const MAX_REACTIONS: usize = 20;
const REACTION_WINDOW: Duration = Duration::from_secs(60);

/// The settings (`[telegram]`) and what kernel-tg remembers.
#[derive(Debug)]
pub(crate) struct Living {
    ack_reaction: Option<String>,
    edit_window: Duration,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    reactions: Vec<Instant>,
}

impl Default for Living {
    fn default() -> Self {
        Self::new(None, Duration::from_secs(48 * 3600))
    }
}

impl Living {
    pub(crate) fn new(ack_reaction: Option<String>, edit_window: Duration) -> Self {
        Self {
            ack_reaction,
            edit_window,
            state: Mutex::new(State::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The acknowledgement reaction (`None`: off).
    pub(crate) fn ack_reaction(&self) -> Option<&str> {
        self.ack_reaction.as_deref()
    }

    /// Edits of messages older than this are ignored.
    pub(crate) fn edit_window(&self) -> Duration {
        self.edit_window
    }

    /// Counts one reaction; false when too many came lately (a flood is ignored).
    pub(crate) fn reaction_allowed(&self) -> bool {
        let now = Instant::now();
        let mut s = self.lock();
        s.reactions
            .retain(|t| now.duration_since(*t) < REACTION_WINDOW);
        if s.reactions.len() >= MAX_REACTIONS {
            return false;
        }
        s.reactions.push(now);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_flood_of_reactions_is_cut_off() {
        let living = Living::default();
        let allowed = (0..30).filter(|_| living.reaction_allowed()).count();
        assert_eq!(allowed, MAX_REACTIONS);
        tokio::time::advance(REACTION_WINDOW).await;
        assert!(living.reaction_allowed());
    }
}
