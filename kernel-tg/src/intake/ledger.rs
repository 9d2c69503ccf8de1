//! [`Ledger`] (pure): which Telegram updates were seen and which are handled, and so the
//! `getUpdates` offset to send — one past the longest handled prefix, so an update is confirmed
//! (Telegram forgets it) only once it is handled; an update Telegram delivers again before
//! that is recognised and not handled twice.

use std::collections::BTreeMap;

/// Seen and handled update ids.
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    /// Seen and not yet confirmable: id → handled.
    open: BTreeMap<i32, bool>,
    /// Every id below this one is handled (the offset to send), once anything was seen.
    floor: Option<i32>,
}

impl Ledger {
    /// Records `id` as seen; false when it was seen before (a redelivery).
    pub(crate) fn see(&mut self, id: i32) -> bool {
        if self.floor.is_some_and(|floor| id < floor) || self.open.contains_key(&id) {
            return false;
        }
        if self.open.keys().next_back().is_some_and(|last| id < *last) {
            // Telegram hands updates out in order: an id below one seen is old.
            return false;
        }
        self.open.insert(id, false);
        if self.floor.is_none() {
            self.floor = Some(id);
        }
        true
    }

    /// Records `id` as handled.
    pub(crate) fn handled(&mut self, id: i32) {
        if let Some(done) = self.open.get_mut(&id) {
            *done = true;
        }
        while let Some(entry) = self.open.first_entry() {
            if !*entry.get() {
                break;
            }
            let (id, _) = entry.remove_entry();
            self.floor = Some(id + 1);
        }
    }

    /// The offset for the next `getUpdates`: the first update not yet handled, or one past the
    /// last seen; `None` before anything was seen.
    pub(crate) fn offset(&self) -> Option<i32> {
        match self.open.first_key_value() {
            Some((first, _)) => Some(*first),
            None => self.floor,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_offset_moves_only_over_handled_updates() {
        let mut l = Ledger::default();
        assert_eq!(l.offset(), None);
        assert!(l.see(10) && l.see(11) && l.see(12));
        assert_eq!(l.offset(), Some(10));
        l.handled(11);
        assert_eq!(l.offset(), Some(10), "10 is still open");
        l.handled(10);
        assert_eq!(l.offset(), Some(12));
        l.handled(12);
        assert_eq!(l.offset(), Some(13));
        assert!(!l.see(11), "a redelivery");
        assert!(!l.see(12), "a redelivery");
        assert!(l.see(13));
    }

    #[test]
    fn an_open_update_delivered_again_is_not_new() {
        let mut l = Ledger::default();
        assert!(l.see(5) && l.see(6));
        l.handled(6);
        assert!(!l.see(5) && !l.see(6));
        assert_eq!(l.open.keys().next_back().map(|id| id + 1), Some(7));
    }

    proptest! {
        /// Whatever order updates are handled in, the offset never passes an unhandled one
        /// and reaches one past the last once all are handled.
        #[test]
        fn the_offset_never_passes_an_open_update(order in Just((0..20).collect::<Vec<i32>>()).prop_shuffle()) {
            let mut l = Ledger::default();
            for id in 0..20 {
                prop_assert!(l.see(100 + id));
            }
            let mut done = std::collections::BTreeSet::new();
            for id in order {
                l.handled(100 + id);
                done.insert(id);
                let offset = l.offset().unwrap() - 100;
                prop_assert!((0..offset).all(|i| done.contains(&i)));
                prop_assert!(offset == 20 || !done.contains(&offset));
            }
            prop_assert_eq!(l.offset(), Some(120));
        }
    }
}
