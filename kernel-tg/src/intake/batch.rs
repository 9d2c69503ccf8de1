//! Grouping owner messages into turns ([`Coalescer`], pure): everything in one `getUpdates`
//! batch is one turn; a turn whose last message says more is coming waits a short quiet
//! window for it — an album part (`media_group_id`) for the group's next part, a text at or near
//! Telegram's split length for the rest of the text. Anything else goes at once: a single
//! ordinary message never waits.

use std::time::Duration;

use tokio::time::Instant;

use crate::bundle::{Bundle, Part};

/// Quiet time after an album part before the album counts as complete.
pub(crate) const MEDIA_GROUP_QUIET: Duration = Duration::from_millis(1_200);
/// How long a text at Telegram's split length waits for its continuation.
pub(crate) const SPLIT_WINDOW: Duration = Duration::from_millis(2_000);
/// A text this long (characters) may have been split by the Telegram app (it splits at 4,096).
pub(crate) const NEAR_SPLIT_CHARS: usize = 4_000;

/// The turn being gathered.
#[derive(Debug)]
struct Pending {
    bundle: Bundle,
    /// Touched by the current batch (a batch is one turn).
    this_batch: bool,
    /// When it goes when nothing more comes.
    until: Option<Instant>,
}

/// Gathers owner messages into turns. Feed a batch's messages with [`Coalescer::add`], end it
/// with [`Coalescer::end_batch`]; a waiting turn goes at [`Coalescer::deadline`]
/// ([`Coalescer::due`]) or when something that does not belong to it comes.
#[derive(Debug, Default)]
pub(crate) struct Coalescer {
    pending: Option<Pending>,
}

impl Coalescer {
    /// Adds a message of the current batch; returns the turn it ends, if any (a waiting one
    /// it does not belong to).
    pub(crate) fn add(&mut self, update: i32, part: Part) -> Option<Bundle> {
        // Messages of different topics never share a turn: each topic is its own session.
        if let Some(pending) = &mut self.pending
            && pending.bundle.thread() == part.thread
            && (pending.this_batch || continues(&pending.bundle, &part))
        {
            pending.bundle.push(update, part);
            pending.this_batch = true;
            return None;
        }
        let done = self.flush();
        self.pending = Some(Pending {
            bundle: Bundle::of(update, part),
            this_batch: true,
            until: None,
        });
        done
    }

    /// The owner edited message `message_id` while it waits here: its text becomes `text`;
    /// false when it does not wait here.
    pub(crate) fn replace_text(&mut self, message_id: i32, text: &str) -> bool {
        let Some(pending) = &mut self.pending else {
            return false;
        };
        match pending
            .bundle
            .parts
            .iter_mut()
            .find(|p| p.message_id == message_id)
        {
            Some(part) => {
                part.input.text = text.to_owned();
                true
            }
            None => false,
        }
    }

    /// Adds a left-out line to the waiting turn when `media_group` names its album (a part of
    /// it Kernel cannot take); false when there is no such turn.
    pub(crate) fn left_out(
        &mut self,
        update: i32,
        media_group: Option<&str>,
        line: String,
    ) -> bool {
        let Some(pending) = &mut self.pending else {
            return false;
        };
        let same_group = media_group.is_some()
            && pending
                .bundle
                .parts
                .last()
                .is_some_and(|p| p.media_group.as_deref() == media_group);
        if !same_group {
            return false;
        }
        pending.bundle.left_out.push(line);
        pending.bundle.updates.push(update);
        true
    }

    /// Ends a batch at `now`: the turn goes now, unless its last message says more is coming.
    pub(crate) fn end_batch(&mut self, now: Instant) -> Option<Bundle> {
        let pending = self.pending.as_mut()?;
        if !pending.this_batch {
            return None;
        }
        pending.this_batch = false;
        match wait_for_more(&pending.bundle) {
            Some(window) => {
                pending.until = Some(now + window);
                None
            }
            None => self.flush(),
        }
    }

    /// When the waiting turn goes if nothing more comes.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.pending.as_ref().and_then(|p| p.until)
    }

    /// The waiting turn, once its window has passed at `now`.
    pub(crate) fn due(&mut self, now: Instant) -> Option<Bundle> {
        if self.deadline().is_some_and(|until| until <= now) {
            self.flush()
        } else {
            None
        }
    }

    /// The waiting turn, now.
    pub(crate) fn flush(&mut self) -> Option<Bundle> {
        self.pending.take().map(|p| p.bundle)
    }
}

/// Whether `part` continues the waiting `bundle`: the next part of its album, or more text
/// after a text at the split length.
fn continues(bundle: &Bundle, part: &Part) -> bool {
    let Some(last) = bundle.parts.last() else {
        return false;
    };
    match &last.media_group {
        Some(group) => part.media_group.as_ref() == Some(group),
        None => near_split(last),
    }
}

/// How long to wait after `bundle`'s last message for more, when it says more is coming.
fn wait_for_more(bundle: &Bundle) -> Option<Duration> {
    let last = bundle.parts.last()?;
    if last.media_group.is_some() {
        Some(MEDIA_GROUP_QUIET)
    } else if near_split(last) {
        Some(SPLIT_WINDOW)
    } else {
        None
    }
}

fn near_split(part: &Part) -> bool {
    part.input.media.is_none() && part.input.text.chars().count() >= NEAR_SPLIT_CHARS
}

#[cfg(test)]
mod tests;
