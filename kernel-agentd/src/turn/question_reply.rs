//! An owner message while the running turn's `ask_user` question is pending is the owner's reply:
//! the text, or a voice note's transcript (transcribed here, under the root token). Anything
//! else (a photo, a document) follows the busy rule like any message while a turn runs. A
//! reply that carries outside content (a forward, a reply to one) keeps its mark: the turn that
//! asked is outside content from then on.

use super::{Lane, Turns, UserInput};
use crate::media::SttFailure;
use crate::turn::input::Part;

impl Turns {
    /// Replies to the pending question of `lane`'s session with `input` when it is one; the
    /// question's id.
    pub(super) async fn reply_to_question(&self, lane: Lane, input: &UserInput) -> Option<String> {
        let inner = &self.inner;
        let session_id = lane.session_id;
        if !inner.asks.is_pending_in(session_id) {
            return None;
        }
        if input.attachments.is_empty() {
            return inner
                .asks
                .answer_pending_in(session_id, &input.text, input.outside_content);
        }
        let media = &inner.media;
        let accepted = input
            .clone()
            .accept(media.locale(), media.stt_configured())
            .ok()?;
        let mut words = Vec::new();
        for part in accepted.parts {
            match part {
                Part::Text(text) => words.push(text),
                Part::Voice(clip) => {
                    let cancel = inner.root.child_token();
                    match media.transcribe(clip, &cancel).await {
                        Ok(text) => words.push(text),
                        Err(SttFailure::Cancelled) => return None,
                        Err(SttFailure::Failed(message)) => {
                            tracing::warn!(error = %message, "a spoken answer could not be transcribed");
                            return None;
                        }
                    }
                }
                _ => return None,
            }
        }
        inner
            .asks
            .answer_pending_in(session_id, &words.join("\n"), input.outside_content)
    }
}
