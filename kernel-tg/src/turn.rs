//! A turn as the owner sees it: placeholder, media download, `Chat`, progress, then the final
//! answer in rendered chunks (or the failure), and the placeholder gone.
//!
//! [`begin`] runs up to agentd's first event (accepted or busy) so that turns reach agentd in the
//! order the owner sent them; the rest of the turn runs in its own task ([`Turn::drive`]).

mod narration;
mod progress;

use futures::StreamExt;
use kernel_proto::v1 as pb;
use pb::chat_event::Event;
use teloxide::types::MessageId;
use tonic::Streaming;

use crate::agentd::{is_transport_failure, refused};
use crate::handle::App;
use crate::incoming::{Media, MediaKind, TurnInput};
use crate::render;
use crate::telegram::DownloadError;
use narration::Narration;
use progress::Progress;

/// Largest attachment kernel-tg downloads (Telegram's own Bot API limit).
pub const MAX_DOWNLOAD_BYTES: u64 = kernel_common::limits::MAX_ATTACHMENT_BYTES as u64;

/// A turn agentd accepted, ready to be driven to its end.
pub struct Turn {
    app: App,
    /// The owner's message the answer replies to.
    reply_to: MessageId,
    /// `None` when Telegram refused even the placeholder: the answer still comes.
    placeholder: Option<MessageId>,
    events: Streaming<pb::ChatEvent>,
}

/// Sends the message to agentd. Returns the accepted turn, or `None` when it ended here (busy,
/// refused, agentd unavailable, file too large) — the owner has then been told what happened.
pub async fn begin(app: &App, reply_to: MessageId, input: TurnInput) -> Option<Turn> {
    let texts = app.texts();
    let mut placeholder = None;
    let mut request = pb::ChatRequest {
        text: input.text,
        attachments: Vec::new(),
        want_voice_reply: input.media.as_ref().is_some_and(Media::is_voice),
    };
    if let Some(media) = input.media {
        if media.size > MAX_DOWNLOAD_BYTES {
            app.say(
                &texts.file_too_large(mb(MAX_DOWNLOAD_BYTES)),
                Some(reply_to),
            )
            .await;
            return None;
        }
        // A download can take a while: show the placeholder first.
        placeholder = app
            .telegram()
            .send_html(texts.placeholder(), Some(reply_to))
            .await
            .ok();
        match download(app, media).await {
            Ok(attachment) => request.attachments.push(attachment),
            Err(html) => {
                app.replace_or_say(placeholder, &html, reply_to).await;
                return None;
            }
        }
    }
    let mut events = match start_chat(app, request).await {
        Ok(events) => events,
        Err(html) => {
            app.replace_or_say(placeholder, &html, reply_to).await;
            return None;
        }
    };
    match events.next().await {
        Some(Ok(pb::ChatEvent {
            event: Some(Event::Started(started)),
        })) => {
            tracing::info!(session_id = started.session_id, turn_id = %started.turn_id, "turn started");
        }
        Some(Ok(pb::ChatEvent {
            event: Some(Event::Busy(busy)),
        })) => {
            tracing::info!(
                first_in_window = busy.first_in_window,
                "agentd is busy; message refused"
            );
            if busy.first_in_window {
                app.replace_or_say(placeholder, texts.busy(), reply_to)
                    .await;
            } else if let Some(id) = placeholder {
                let _ = app.telegram().delete(id).await;
            }
            return None;
        }
        other => {
            let html = interrupted(app, other.and_then(Result::err));
            app.replace_or_say(placeholder, &html, reply_to).await;
            return None;
        }
    }
    let placeholder = match placeholder {
        Some(id) => Some(id),
        None => match app
            .telegram()
            .send_html(texts.placeholder(), Some(reply_to))
            .await
        {
            Ok(id) => Some(id),
            Err(e) => {
                tracing::warn!(error = %e, "the placeholder could not be sent; the turn goes on");
                None
            }
        },
    };
    Some(Turn {
        app: app.clone(),
        reply_to,
        placeholder,
        events,
    })
}

impl Turn {
    /// Follows the turn's events to the end and shows the outcome.
    pub async fn drive(mut self) {
        let texts = self.app.texts();
        let progress = Progress::start(
            self.app.telegram().clone(),
            self.placeholder,
            texts.placeholder().to_owned(),
        );
        let mut narration = Narration::new(texts);
        let outcome = loop {
            match self.events.next().await {
                Some(Ok(pb::ChatEvent { event: Some(event) })) => match event {
                    Event::Completed(done) => break Outcome::Completed(done),
                    Event::Failed(failed) => {
                        break Outcome::Say(texts.turn_failed(&failed.message));
                    }
                    Event::Cancelled(_) => break Outcome::Cancelled,
                    progress_event => {
                        if let Some(html) = narration.after(&progress_event) {
                            progress.show(html);
                        }
                    }
                },
                Some(Ok(pb::ChatEvent { event: None })) => {}
                Some(Err(status)) => break Outcome::Say(interrupted(&self.app, Some(status))),
                None => break Outcome::Say(interrupted(&self.app, None)),
            }
        };
        progress.finish().await;
        match outcome {
            Outcome::Completed(done) => self.deliver(done).await,
            Outcome::Say(html) => {
                self.app
                    .replace_or_say(self.placeholder, &html, self.reply_to)
                    .await
            }
            Outcome::Cancelled => {
                tracing::info!("turn cancelled");
                if let Some(id) = self.placeholder {
                    let _ = self.app.telegram().delete(id).await;
                }
            }
        }
    }

    /// Sends the answer's chunks (the first as a reply), the voice note if any, then removes the
    /// placeholder. A chunk that finally fails is logged as an ERROR and the owner is told.
    async fn deliver(self, done: pb::TurnCompleted) {
        let texts = self.app.texts();
        let telegram = self.app.telegram();
        let chunks = render::render(&done.text);
        if chunks.is_empty() {
            self.app
                .replace_or_say(self.placeholder, texts.empty_answer(), self.reply_to)
                .await;
            return;
        }
        let mut failed = 0;
        for (index, chunk) in chunks.iter().enumerate() {
            let reply_to = (index == 0).then_some(self.reply_to);
            if let Err(e) = telegram.send_chunk(chunk, reply_to).await {
                failed += 1;
                tracing::error!(error = %e, chunk = index + 1, of = chunks.len(), "a chunk of the answer could not be sent");
            }
        }
        if let Some(ogg) = done.voice_reply.filter(|v| !v.is_empty())
            && let Err(e) = telegram.send_voice(ogg, Some(self.reply_to)).await
        {
            tracing::warn!(error = %e, "the voice reply could not be sent");
        }
        if failed == chunks.len() {
            self.app
                .replace_or_say(
                    self.placeholder,
                    &texts.delivery_failed(failed, chunks.len()),
                    self.reply_to,
                )
                .await;
            return;
        }
        if failed > 0 {
            self.app
                .say(&texts.delivery_failed(failed, chunks.len()), None)
                .await;
        }
        if let Some(id) = self.placeholder
            && let Err(e) = telegram.delete(id).await
        {
            tracing::warn!(error = %e, "the placeholder could not be deleted");
        }
        tracing::info!(chunks = chunks.len(), "answer delivered");
    }
}

enum Outcome {
    Completed(pb::TurnCompleted),
    Say(String),
    Cancelled,
}

/// Calls `Chat`; on failure, the HTML to tell the owner.
async fn start_chat(
    app: &App,
    request: pb::ChatRequest,
) -> Result<Streaming<pb::ChatEvent>, String> {
    let texts = app.texts();
    let mut client = app.agentd().client().await.map_err(|e| {
        tracing::warn!(error = %e, "kernel-agentd unavailable for a turn");
        app.agentd().lost();
        texts.agentd_unavailable().to_owned()
    })?;
    match client.chat(request).await {
        Ok(response) => Ok(response.into_inner()),
        Err(status) if is_transport_failure(&status) => {
            app.agentd().lost();
            Err(texts.agentd_unavailable().to_owned())
        }
        Err(status) => {
            tracing::info!(code = ?status.code(), "kernel-agentd refused the message");
            Err(refused(&status, texts))
        }
    }
}

/// The stream ended without a final event: agentd went away mid-turn.
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
