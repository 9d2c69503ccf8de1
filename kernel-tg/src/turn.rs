//! Starting a turn: media download (behind a placeholder, [`prepare`]), then `Chat` as an owner
//! turn carrying one idempotency key per message, up to agentd's first event (accepted, busy,
//! already taken: [`hand_over`]), so that turns reach agentd in the order the owner sent them.
//! Everything after that — progress, the answer, the placeholder's removal — comes through the
//! outbox subscription (`crate::delivery`), never from the `Chat` stream.

use chrono::Utc;
use futures::StreamExt;
use kernel_proto::v1 as pb;
use pb::chat_event::Event;
use teloxide::types::MessageId;
use tonic::Streaming;

use crate::agentd::{is_transport_failure, refused};
use crate::bundle::Bundle;
use crate::handle::App;
use crate::incoming::{Media, MediaKind};
use crate::telegram::DownloadError;

/// Largest attachment kernel-tg downloads (Telegram's own Bot API limit).
pub(crate) const MAX_DOWNLOAD_BYTES: u64 = kernel_common::limits::MAX_ATTACHMENT_BYTES as u64;

/// A turn ready for agentd: its messages, their downloaded attachments, its placeholder.
#[derive(Debug)]
pub(crate) struct Ready {
    /// The messages (their media taken out: see `attachments`).
    bundle: Bundle,
    /// Each message's attachment, in the order of `bundle.parts`.
    attachments: Vec<Option<pb::Attachment>>,
    placeholder: Option<MessageId>,
    reply_to: MessageId,
    voice: bool,
}

/// How a hand-over went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Handled: accepted, answered a question, refused (busy or otherwise, the owner told), or
    /// nothing was left to send.
    Done,
    /// An earlier turn took these keys (some of the turn's messages); the rest is not sent yet.
    Taken(Vec<String>),
    /// agentd could not be reached (or went away before answering): try again later.
    Unreachable,
}

impl Ready {
    /// The topic the turn's messages were sent in (`None`: the main chat).
    pub(crate) fn thread(&self) -> Option<i64> {
        self.bundle.thread()
    }

    /// The updates the turn answers for.
    pub(crate) fn updates(&self) -> &[i32] {
        &self.bundle.updates
    }

    /// Takes `other` in after this turn's messages (both waited for agentd).
    pub(crate) async fn absorb(&mut self, app: &App, other: Ready) {
        if let Some(id) = other.placeholder {
            let _ = app.telegram().delete(id).await;
        }
        self.reply_to = other.reply_to;
        self.voice |= other.voice;
        let mut kept = self.attachments.iter().flatten().count();
        let mut over = 0usize;
        for attachment in other.attachments {
            match attachment {
                Some(a) if kept < kernel_common::limits::MAX_ATTACHMENTS => {
                    kept += 1;
                    self.attachments.push(Some(a));
                }
                Some(_) => {
                    over += 1;
                    self.attachments.push(None);
                }
                None => self.attachments.push(None),
            }
        }
        if over > 0 {
            let texts = app.texts();
            let line = texts.left_over_limit(over, kernel_common::limits::MAX_ATTACHMENTS);
            app.say(&texts.left_out(&[line]), Some(self.reply_to)).await;
        }
        self.bundle.absorb(other.bundle);
    }

    /// The owner edited message `message_id` while the turn waited: its text becomes `text`.
    pub(crate) fn replace_text(&mut self, message_id: i32, text: &str) {
        if let Some(part) = self
            .bundle
            .parts
            .iter_mut()
            .find(|p| p.message_id == message_id)
        {
            part.input.text = text.to_owned();
        }
    }

    /// Drops the messages whose keys an earlier turn took.
    pub(crate) fn drop_taken(&mut self, taken: &[String]) {
        let keep: Vec<bool> = self
            .bundle
            .parts
            .iter()
            .map(|p| !taken.contains(&p.key()))
            .collect();
        let mut k = keep.iter();
        self.attachments.retain(|_| *k.next().unwrap_or(&true));
        let updates = std::mem::take(&mut self.bundle.updates);
        self.bundle = std::mem::take(&mut self.bundle).without(taken);
        self.bundle.updates = updates;
    }

    /// Tells the owner agentd did not take the turn within `waited_secs` (in place of the
    /// placeholder).
    pub(crate) async fn give_up(&self, app: &App, waited_secs: u64) {
        let excerpt = self
            .bundle
            .parts
            .iter()
            .map(|p| p.input.text.as_str())
            .find(|t| !t.is_empty())
            .unwrap_or("📎");
        let html = app.texts().not_taken(excerpt, waited_secs);
        app.replace_or_say(self.placeholder, &html, self.reply_to)
            .await;
    }
}

/// Downloads the turn's attachments (behind a placeholder) and tells the owner what was left
/// out. A single message keeps today's answers: its file refusal replaces the turn.
pub(crate) async fn prepare(app: &App, mut bundle: Bundle) -> Ready {
    let texts = app.texts();
    let single = bundle.parts.len() == 1;
    let reply_to = bundle.reply_to().unwrap_or(MessageId(0));
    let voice = bundle.wants_voice();
    let mut left_out = std::mem::take(&mut bundle.left_out);
    let downloads = bundle
        .parts
        .iter()
        .filter_map(|p| p.input.media.as_ref())
        .any(|m| m.size <= MAX_DOWNLOAD_BYTES);
    let mut placeholder = None;
    if downloads {
        // A download can take a while: show the placeholder first.
        placeholder = app
            .telegram()
            .send_html(texts.placeholder(), Some(reply_to))
            .await
            .ok();
    }
    let mut attachments = Vec::with_capacity(bundle.parts.len());
    let mut failed = false;
    for part in &mut bundle.parts {
        let Some(media) = part.input.media.take() else {
            attachments.push(None);
            continue;
        };
        let name = media_name(&media);
        let got = if media.size > MAX_DOWNLOAD_BYTES {
            Err(if single {
                texts.file_too_large(mb(MAX_DOWNLOAD_BYTES))
            } else {
                texts.left_too_large(&name, mb(MAX_DOWNLOAD_BYTES))
            })
        } else {
            download(app, media).await.map_err(|html| {
                if single {
                    html
                } else {
                    texts.left_failed(&name)
                }
            })
        };
        match got {
            Ok(attachment) => attachments.push(Some(attachment)),
            Err(line) if single => {
                // Today's answer for a single message: the refusal, and no turn.
                app.replace_or_say(placeholder.take(), &line, reply_to)
                    .await;
                failed = true;
                attachments.push(None);
            }
            Err(line) => {
                left_out.push(line);
                attachments.push(None);
            }
        }
    }
    if failed {
        let updates = bundle.updates.clone();
        bundle.parts.clear();
        bundle.updates = updates;
        attachments.clear();
    }
    if !left_out.is_empty() {
        app.say(&texts.left_out(&left_out), Some(reply_to)).await;
    }
    Ready {
        bundle,
        attachments,
        placeholder,
        reply_to,
        voice,
    }
}

/// What a left-out file is called.
fn media_name(media: &Media) -> String {
    match &media.kind {
        MediaKind::Document { file_name } => file_name.clone(),
        _ => String::new(),
    }
}

/// Hands the turn to agentd as an owner turn (`late`: its messages waited for agentd) and
/// reads agentd's first event, so that turns reach agentd in the order the owner sent them.
pub(crate) async fn hand_over(app: &App, ready: &Ready, late: bool) -> Outcome {
    let mut request = chat_request(app, ready, late);
    if request.text.trim().is_empty() && request.attachments.is_empty() {
        drop_placeholder(app, ready.placeholder).await;
        return Outcome::Done;
    }
    if let Some(thread) = ready.thread() {
        match crate::topics::session(app, thread).await {
            Ok(session) => request.session_id = Some(session),
            Err(Some(html)) => {
                app.replace_or_say(ready.placeholder, &html, ready.reply_to)
                    .await;
                return Outcome::Done;
            }
            Err(None) => return Outcome::Unreachable,
        }
    }
    let mut events = match start_chat(app, request).await {
        Ok(events) => events,
        Err(Some(html)) => {
            app.replace_or_say(ready.placeholder, &html, ready.reply_to)
                .await;
            return Outcome::Done;
        }
        Err(None) => return Outcome::Unreachable,
    };
    let first = events.next().await;
    // The `Chat` stream is dropped: the turn goes on, its progress and outcome come through the
    // subscription.
    first_event_outcome(app, ready, first).await
}

/// The `Chat` request of `ready` (`late`: it waited for agentd, which its text says).
fn chat_request(app: &App, ready: &Ready, late: bool) -> pb::ChatRequest {
    pb::ChatRequest {
        text: ready.bundle.text(app.texts(), Utc::now(), late),
        attachments: ready.attachments.iter().flatten().cloned().collect(),
        want_voice_reply: ready.voice,
        deliver_to_owner: Some(pb::OwnerDelivery {
            reply_to_message_id: Some(i64::from(ready.reply_to.0)),
            placeholder_message_id: ready.placeholder.map(|id| i64::from(id.0)),
            thread_id: ready.thread(),
        }),
        idempotency_keys: ready.bundle.keys(),
        // A forward or a document is content from outside the owner (`[approvals]`).
        outside_content: ready.bundle.parts.iter().any(|p| p.input.outside)
            || ready
                .attachments
                .iter()
                .flatten()
                .any(|a| matches!(a.kind, Some(pb::attachment::Kind::Document(_)))),
        // A reply to Kernel's answer or a job's output: agentd knows whether that carried
        // outside content.
        replied_to_message_ids: ready
            .bundle
            .parts
            .iter()
            .filter_map(|p| p.input.replied_to)
            .collect(),
        session_id: None,
    }
}

/// What agentd's `first` event on the `Chat` stream means for the turn: started (with what it
/// left out), busy, over a budget, an answer to the pending question, already taken — or the
/// stream broke before it said.
async fn first_event_outcome(
    app: &App,
    ready: &Ready,
    first: Option<Result<pb::ChatEvent, tonic::Status>>,
) -> Outcome {
    let texts = app.texts();
    let (placeholder, reply_to) = (ready.placeholder, ready.reply_to);
    match first.map(|r| r.map(|e| e.event)) {
        Some(Ok(Some(Event::Started(started)))) => {
            tracing::info!(session_id = started.session_id, turn_id = %started.turn_id, messages = ready.bundle.parts.len(), "turn started");
            if !started.left_out.is_empty() {
                // agentd refused some attachments of the burst one by one (worded in the owner's
                // language, plain text); the rest runs.
                let lines: Vec<String> = started
                    .left_out
                    .iter()
                    .map(|line| crate::texts::escape_html(line))
                    .collect();
                app.say(&texts.left_out(&lines), Some(reply_to)).await;
            }
        }
        Some(Ok(Some(Event::Busy(busy)))) => {
            tracing::info!(
                first_in_window = busy.first_in_window,
                "agentd is busy; message refused"
            );
            if busy.first_in_window {
                app.replace_or_say(placeholder, texts.busy(), reply_to)
                    .await;
            } else {
                drop_placeholder(app, placeholder).await;
            }
            clear_acknowledgements(app, ready);
        }
        Some(Ok(Some(Event::BudgetExceeded(over)))) => {
            // No turn started; the limit notice (with its buttons) comes through the outbox, in
            // place of the placeholder.
            tracing::info!(period = %over.period, spent = over.spent_usd, limit = over.limit_usd, "a budget limit refused the turn");
        }
        Some(Ok(Some(Event::Answered(answered)))) => {
            // The running turn's question took the message as its answer.
            tracing::info!(question = %answered.question_id, "the message answered the pending question");
            drop_placeholder(app, placeholder).await;
            clear_acknowledgements(app, ready);
        }
        Some(Ok(Some(Event::AlreadyTaken(taken)))) => {
            tracing::info!(keys = taken.keys.len(), turn_id = %taken.turn_id, "messages already taken by an earlier turn");
            let all = ready.bundle.keys().iter().all(|k| taken.keys.contains(k));
            if all || taken.keys.is_empty() {
                drop_placeholder(app, placeholder).await;
            } else {
                return Outcome::Taken(taken.keys);
            }
        }
        other => {
            let status = other.and_then(Result::err);
            if status.as_ref().is_none_or(is_transport_failure) {
                // agentd went away before answering: it may or may not have the turn; the
                // idempotency keys make the retry safe.
                tracing::warn!("the turn's stream ended before agentd answered; retrying");
                app.agentd().lost();
                return Outcome::Unreachable;
            }
            let html = interrupted(app, status);
            app.replace_or_say(placeholder, &html, reply_to).await;
            clear_acknowledgements(app, ready);
        }
    }
    Outcome::Done
}

/// The turn was refused or answered on the spot: its messages' acknowledgement reactions go.
fn clear_acknowledgements(app: &App, ready: &Ready) {
    for part in &ready.bundle.parts {
        crate::reactions::clear(app, MessageId(part.message_id));
    }
}

/// Deletes the turn's placeholder, if it has one (nothing will be shown in it).
async fn drop_placeholder(app: &App, placeholder: Option<MessageId>) {
    if let Some(id) = placeholder {
        let _ = app.telegram().delete(id).await;
    }
}

async fn start_chat(
    app: &App,
    request: pb::ChatRequest,
) -> Result<Streaming<pb::ChatEvent>, Option<String>> {
    let texts = app.texts();
    let mut client = app.agentd().client().await.map_err(|e| {
        tracing::warn!(error = %e, "kernel-agentd unavailable for a turn");
        app.agentd().lost();
        None
    })?;
    match client.chat(request).await {
        Ok(response) => Ok(response.into_inner()),
        Err(status) if is_transport_failure(&status) => {
            app.agentd().lost();
            Err(None)
        }
        Err(status) => {
            tracing::info!(code = ?status.code(), "kernel-agentd refused the message");
            Err(Some(refused(&status, texts)))
        }
    }
}

/// The stream ended without a first event: agentd went away.
fn interrupted(app: &App, status: Option<tonic::Status>) -> String {
    match &status {
        Some(status) => tracing::warn!(code = ?status.code(), "the turn's stream broke"),
        None => tracing::warn!("the turn's stream ended without an outcome"),
    }
    if status.as_ref().is_none_or(is_transport_failure) {
        app.agentd().lost();
    }
    app.texts().turn_interrupted().to_owned()
}

/// Downloads the attachment; on failure, the HTML to tell the owner.
async fn download(app: &App, media: Media) -> Result<pb::Attachment, String> {
    let texts = app.texts();
    let data = match app
        .telegram()
        .download(&media.file_id, MAX_DOWNLOAD_BYTES)
        .await
    {
        Ok(data) => data,
        Err(DownloadError::TooLarge { .. }) => {
            return Err(texts.file_too_large(mb(MAX_DOWNLOAD_BYTES)));
        }
        Err(DownloadError::Failed(e)) => {
            tracing::warn!(error = %e, "an attachment could not be downloaded");
            return Err(texts.download_failed());
        }
    };
    use pb::attachment::Kind;
    let kind = match media.kind {
        MediaKind::Image { mime_type } => Kind::Image(pb::Image { data, mime_type }),
        MediaKind::Document { file_name } => Kind::Document(pb::Document { data, file_name }),
        MediaKind::Voice { mime_type } | MediaKind::Audio { mime_type } => {
            Kind::Voice(pb::Voice { data, mime_type })
        }
    };
    Ok(pb::Attachment { kind: Some(kind) })
}

fn mb(bytes: u64) -> u32 {
    (bytes / (1024 * 1024)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::Part;
    use crate::incoming::TurnInput;

    fn part(id: i32) -> Part {
        Part {
            thread: None,
            chat_id: 7,
            message_id: id,
            date: chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap(),
            media_group: None,
            input: TurnInput {
                text: format!("m{id}"),
                media: None,
                outside: false,
                replied_to: None,
            },
            late: false,
        }
    }

    fn doc(name: &str) -> pb::Attachment {
        pb::Attachment {
            kind: Some(pb::attachment::Kind::Document(pb::Document {
                data: b"x".to_vec(),
                file_name: name.into(),
            })),
        }
    }

    #[test]
    fn messages_an_earlier_turn_took_are_dropped_with_their_attachments_only() {
        let mut bundle = Bundle::default();
        for id in 1..=3 {
            bundle.push(100 + id, part(id));
        }
        let mut ready = Ready {
            bundle,
            attachments: vec![Some(doc("one")), None, Some(doc("three"))],
            placeholder: None,
            reply_to: MessageId(3),
            voice: false,
        };
        ready.drop_taken(&["tg:7:1".to_owned()]);
        assert_eq!(ready.bundle.keys(), vec!["tg:7:2", "tg:7:3"]);
        assert_eq!(ready.attachments, vec![None, Some(doc("three"))]);
        assert_eq!(
            ready.updates(),
            &[101, 102, 103],
            "every update is still answered for"
        );
    }
}
