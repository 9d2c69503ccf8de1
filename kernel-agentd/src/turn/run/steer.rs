//! The running turn's side of `/steer`: the owner's pending texts become one labelled block at
//! a step boundary (`Turn::run_tools`, `Turn::drive`); one that carried outside content (a
//! `/steer` replying to a forward) makes the turn outside content from then on (its answer is marked, risky
//! calls ask under `approvals.mode = "untrusted"`); texts that come after the last step
//! boundary join the `/next` queue, keeping that mark.

use kernel_common::config::Locale;

use super::Turn;
use crate::conversation::Block;
use crate::store::follow_ups::Kept;
use crate::turn::gate::{Permit, Steers};

/// The label of the owner's `/steer` text in the conversation (the owner's language).
pub(super) fn steer_label(locale: Locale) -> &'static str {
    match locale {
        Locale::Zh => "[主人插话]",
        Locale::En => "[The owner interjects]",
    }
}

impl Turn {
    /// The owner's pending `/steer` texts as one labelled text block, if any (taken).
    pub(super) fn steer_block(&mut self) -> Option<Block> {
        let Steers {
            texts: steers,
            outside,
        } = self.permit.as_ref().map(Permit::take_steers)?;
        if steers.is_empty() {
            return None;
        }
        if outside && !self.outside_content {
            tracing::info!("a steer carried outside content: the turn is outside content");
            self.outside_content = true;
        }
        tracing::info!(count = steers.len(), "steer texts join the conversation");
        let label = steer_label(self.turns.inner.media.locale());
        let text = steers
            .iter()
            .map(|s| format!("{label} {s}"))
            .collect::<Vec<_>>()
            .join("\n");
        Some(Block::text(text))
    }

    /// Steer texts that came after the turn's last step boundary run as turns of their own:
    /// they join the `/next` queue, which starts them once this turn has ended.
    pub(super) async fn requeue_late_steers(&self) {
        let Steers {
            texts: steers,
            outside,
        } = self
            .permit
            .as_ref()
            .map(Permit::take_steers)
            .unwrap_or_default();
        // A turn in a session's own lane (a topic) queues them there.
        let session = self
            .permit
            .as_ref()
            .and_then(Permit::lane)
            .filter(|lane| !lane.main)
            .map(|lane| lane.session_id);
        for text in steers {
            let kept = Kept {
                outside_content: outside,
                ..Kept::text(text)
            };
            match self.turns.queue_kept(kept, None, session, None).await {
                Ok(position) => {
                    tracing::info!(
                        position,
                        "a steer came after the last step; queued as a turn"
                    )
                }
                Err(e) => tracing::warn!(error = %e, "a late steer could not be queued"),
            }
        }
    }
}
