//! The owner's messages kernel-tg holds after gathering them: handed to the hand-over task and
//! not yet handled (queued behind another turn, or waiting while agentd is away). An edit of one
//! of them is kept here and replaces its text before the next try, so the turn runs once, with
//! the newest text. An edit that came while the turn was being handed over (the old text may
//! already be with agentd) is given back once it was handled, to reach agentd as an edit.

use std::collections::HashMap;
use std::sync::Mutex;

/// Messages held, by message id: the edit not yet applied to each, if any.
#[derive(Debug, Default)]
pub(crate) struct Held {
    messages: Mutex<HashMap<i32, Option<String>>>,
}

impl Held {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<i32, Option<String>>> {
        self.messages
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Messages `ids` are handed to the hand-over task.
    pub(crate) fn hold(&self, ids: impl IntoIterator<Item = i32>) {
        let mut held = self.lock();
        for id in ids {
            held.entry(id).or_insert(None);
        }
    }

    /// The owner edited message `id` to `text`: kept when the message is held (true).
    pub(crate) fn edit(&self, id: i32, text: &str) -> bool {
        match self.lock().get_mut(&id) {
            Some(edit) => {
                *edit = Some(text.to_owned());
                true
            }
            None => false,
        }
    }

    /// The edits not yet applied to messages `ids` (taken: each applies once).
    pub(crate) fn take_edits(&self, ids: &[i32]) -> Vec<(i32, String)> {
        let mut held = self.lock();
        ids.iter()
            .filter_map(|id| Some((*id, held.get_mut(id)?.take()?)))
            .collect()
    }

    /// Messages `ids` are handled: no longer held. The edits that came after their last try
    /// (they still have to reach agentd).
    pub(crate) fn release(&self, ids: &[i32]) -> Vec<(i32, String)> {
        let mut held = self.lock();
        ids.iter()
            .filter_map(|id| Some((*id, held.remove(id)??)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_of_a_held_message_applies_once_and_a_late_one_is_given_back() {
        let held = Held::default();
        assert!(!held.edit(5, "not held"));
        held.hold([5, 6]);
        assert!(held.edit(5, "first"));
        assert!(held.edit(5, "second"));
        assert_eq!(held.take_edits(&[5, 6]), [(5, "second".to_owned())]);
        assert!(held.take_edits(&[5, 6]).is_empty());
        assert!(held.edit(6, "while handed over"));
        assert_eq!(held.release(&[5, 6]), [(6, "while handed over".to_owned())]);
        assert!(!held.edit(6, "after"), "released");
    }
}
