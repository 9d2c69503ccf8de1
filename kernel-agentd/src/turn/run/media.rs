//! The turn's media steps: keeping received attachments, transcribing voice notes (before the
//! user message is stored), and the voice reply (after the final answer). Each speech step is
//! announced with `SpeechStarted` before it begins.

use super::{Stop, Turn};
use crate::conversation::{Block, Message};
use crate::failure::FailReason;
use crate::media::SttFailure;
use crate::media::stt::VoiceClip;
use crate::turn::input::Part;
use crate::turn::{SpeechStage, TurnEvent};

/// How a document's text block starts (it is left out of the memory-recall query).
const DOCUMENT_PREFIX: &str = "[文件: ";

impl Turn {
    /// Keeps a copy of every attachment under `downloads/` (a failure is logged, never fatal),
    /// then transcribes the voice notes in order; afterwards `user` is the message to store and
    /// send. A failed transcription fails the turn before anything is stored.
    pub(super) async fn receive(&mut self) -> Result<(), Stop> {
        let Some(mut input) = self.input.take() else {
            return Ok(());
        };
        let media = &self.turns.inner.media;
        let keep = if input.already_kept {
            &[][..]
        } else {
            &input.parts[..]
        };
        for part in keep {
            let Some((ext, data)) = part.download() else {
                continue;
            };
            match media.downloads().save(ext, data).await {
                Ok(path) => {
                    tracing::info!(file = %path.display(), bytes = data.len(), "attachment kept");
                }
                Err(e) => tracing::warn!(error = %e, "cannot keep a copy of an attachment"),
            }
        }
        if input.parts.iter().any(|p| matches!(p, Part::Voice(_))) {
            self.emit(TurnEvent::SpeechStarted(SpeechStage::Transcribing));
        }
        let mut transcripts = Vec::new();
        for part in &mut input.parts {
            let Part::Voice(clip) = part else {
                continue;
            };
            let clip = VoiceClip {
                mime_type: clip.mime_type,
                data: std::mem::take(&mut clip.data),
            };
            match media.transcribe(clip, &self.cancel).await {
                Ok(text) => transcripts.push(text),
                Err(SttFailure::Cancelled) => return Err(Stop::Cancelled),
                Err(SttFailure::Failed(message)) => {
                    return Err(Stop::Failed(message, FailReason::default()));
                }
            }
        }
        self.user = input.into_message(transcripts);
        Ok(())
    }

    /// The spoken version of `answer`, or `None` (no `[tts]`, nothing to say or cancel; the
    /// answer then goes out as text only), or why it failed (one line for the owner, in the
    /// owner's language, not yet redacted). `SpeechStarted(Synthesizing)` is sent only when
    /// something in the answer reads aloud, i.e. when a synthesis request will be made.
    pub(super) async fn voice_reply(&self, answer: &str) -> Result<Option<Vec<u8>>, String> {
        let media = &self.turns.inner.media;
        let Some(text) = media.spoken_version(answer) else {
            return Ok(None);
        };
        self.emit(TurnEvent::SpeechStarted(SpeechStage::Synthesizing));
        media.voice_reply(&text, &self.cancel).await
    }
}

/// The text long-term memory is recalled for: the owner's words and transcripts, not the
/// documents they attached (up to 50,000 characters of file content are no search query).
pub(super) fn recall_query(user: &Message) -> String {
    user.content
        .iter()
        .filter_map(|b| match b {
            Block::Text { text } if !text.starts_with(DOCUMENT_PREFIX) => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::Role;

    #[test]
    fn documents_are_left_out_of_the_recall_query() {
        let user = Message {
            role: Role::User,
            content: vec![
                Block::text("[文件: a.py]\n```py\nsecret_sauce()\n```"),
                Block::Image {
                    mime_type: "image/png".into(),
                    data: vec![1],
                },
                Block::text("[语音: 明天开会]"),
                Block::text("看看这个"),
            ],
        };
        assert_eq!(recall_query(&user), "[语音: 明天开会]\n看看这个");
    }
}
