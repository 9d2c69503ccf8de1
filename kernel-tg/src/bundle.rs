//! `Bundle`: the owner messages one turn carries — one message, or a burst (album, split long
//! text, one `getUpdates` batch, the backlog of messages sent while Kernel was down) — with the
//! updates it answers for and what it left out. [`Bundle::bound`] keeps a turn bounded; the
//! idempotency key of each message is `tg:<chat id>:<message id>`.

use chrono::{DateTime, Utc};
use kernel_common::limits::MAX_ATTACHMENTS;
use teloxide::types::MessageId;

use crate::incoming::TurnInput;
use crate::texts::Texts;

/// Most messages one turn carries (the latest are kept).
pub(crate) const MAX_PARTS: usize = 50;
/// Most characters of text one turn carries (below agentd's own limit; the latest are kept).
pub(crate) const MAX_TEXT_CHARS: usize = 60_000;

/// One owner message of a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Part {
    pub chat_id: i64,
    pub message_id: i32,
    /// When the owner sent it.
    pub date: DateTime<Utc>,
    /// Telegram's `media_group_id` (an album).
    pub media_group: Option<String>,
    pub input: TurnInput,
    /// It waited (sent while Kernel was down): the model is told when it was sent.
    pub late: bool,
    /// The topic of the owner's chat it was sent in (`message_thread_id`); `None`: the main
    /// chat. A turn's messages are all from one topic.
    pub thread: Option<i64>,
}

impl Part {
    /// The idempotency key agentd stores with the turn.
    pub(crate) fn key(&self) -> String {
        format!("tg:{}:{}", self.chat_id, self.message_id)
    }
}

/// The messages of one turn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Bundle {
    pub parts: Vec<Part>,
    /// Lines (owner's language, HTML) naming what was left out; the rest still runs.
    pub left_out: Vec<String>,
    /// The Telegram updates this turn answers for: confirmed once it is handled.
    pub updates: Vec<i32>,
}

impl Bundle {
    /// A bundle of one message.
    pub(crate) fn of(update: i32, part: Part) -> Bundle {
        Bundle {
            parts: vec![part],
            left_out: Vec::new(),
            updates: vec![update],
        }
    }

    /// The topic the turn's messages were sent in (`None`: the main chat).
    pub(crate) fn thread(&self) -> Option<i64> {
        self.parts.first().and_then(|p| p.thread)
    }

    /// Adds a message.
    pub(crate) fn push(&mut self, update: i32, part: Part) {
        self.parts.push(part);
        self.updates.push(update);
    }

    /// Takes in `other` after this bundle's messages.
    pub(crate) fn absorb(&mut self, other: Bundle) {
        self.parts.extend(other.parts);
        self.left_out.extend(other.left_out);
        self.updates.extend(other.updates);
    }

    /// The message the answer replies to: the last one.
    pub(crate) fn reply_to(&self) -> Option<MessageId> {
        self.parts.last().map(|p| MessageId(p.message_id))
    }

    /// One key per message.
    pub(crate) fn keys(&self) -> Vec<String> {
        self.parts.iter().map(Part::key).collect()
    }

    /// Drops the messages whose keys are in `taken` (an earlier turn has them).
    pub(crate) fn without(mut self, taken: &[String]) -> Bundle {
        self.parts.retain(|p| !taken.contains(&p.key()));
        self
    }

    /// Whether any message is a voice note (the answer then comes back as voice too).
    pub(crate) fn wants_voice(&self) -> bool {
        self.parts.iter().any(|p| {
            p.input
                .media
                .as_ref()
                .is_some_and(crate::incoming::Media::is_voice)
        })
    }

    /// Keeps the turn bounded: the latest [`MAX_PARTS`] messages within [`MAX_TEXT_CHARS`],
    /// and the first [`MAX_ATTACHMENTS`] attachments; what is cut is named in `left_out`.
    pub(crate) fn bound(&mut self, texts: Texts) {
        let mut kept = 0usize;
        let mut chars = 0usize;
        for part in self.parts.iter().rev() {
            let len = part.input.text.chars().count();
            if kept == MAX_PARTS || (kept > 0 && chars + len > MAX_TEXT_CHARS) {
                break;
            }
            kept += 1;
            chars += len;
        }
        let cut = self.parts.len() - kept;
        if cut > 0 {
            self.parts.drain(..cut);
            self.left_out.push(texts.left_cut(cut));
        }
        if let Some(last) = self.parts.last_mut() {
            // A single message longer than the limit keeps its beginning.
            if last.input.text.chars().count() > MAX_TEXT_CHARS {
                last.input.text =
                    kernel_common::text::fit(&last.input.text, MAX_TEXT_CHARS).into_owned();
            }
        }
        let mut media = 0usize;
        let mut over = 0usize;
        for part in &mut self.parts {
            if part.input.media.is_some() {
                media += 1;
                if media > MAX_ATTACHMENTS {
                    part.input.media = None;
                    over += 1;
                }
            }
        }
        if over > 0 {
            self.left_out
                .push(texts.left_over_limit(over, MAX_ATTACHMENTS));
        }
    }

    /// The turn's text: each message's text in order, a late one after its late marker,
    /// separated by blank lines. `all_late` marks every message (they waited for agentd).
    pub(crate) fn text(&self, texts: Texts, now: DateTime<Utc>, all_late: bool) -> String {
        let mut out = String::new();
        for part in &self.parts {
            let late = part.late || all_late;
            if part.input.text.is_empty() && !late {
                continue;
            }
            if !out.is_empty() {
                out.push_str("\n\n");
            }
            if late {
                out.push_str(&texts.late_marker(part.date, now));
                if !part.input.text.is_empty() {
                    out.push(' ');
                }
            }
            out.push_str(&part.input.text);
        }
        out
    }
}

#[cfg(test)]
mod tests;
