//! Starting a turn: media download (behind a placeholder), then `Chat` as an owner turn, up to
//! agentd's first event (accepted or busy), so that turns reach agentd in the order the owner
//! sent them. Everything after that — progress, the answer, the placeholder's removal — comes
//! through the outbox subscription (`crate::delivery`), never from the `Chat` stream.

pub(crate) mod draft;
pub(crate) mod narration;
pub(crate) mod progress;

use futures::StreamExt;
use kernel_proto::v1 as pb;
use pb::chat_event::Event;
use teloxide::types::MessageId;
use tonic::Streaming;

use crate::agentd::{is_transport_failure, refused};
use crate::handle::App;
use crate::incoming::{Media, MediaKind, TurnInput};
use crate::telegram::DownloadError;

/// Largest attachment kernel-tg downloads (Telegram's own Bot API limit).
pub const MAX_DOWNLOAD_BYTES: u64 = kernel_common::limits::MAX_ATTACHMENT_BYTES as u64;

/// Sends the message to agentd as an owner turn. Returns whether agentd accepted it; when not
/// (busy, refused, agentd unavailable, file too large) the owner has been told what happened.
pub async fn begin(app: &App, reply_to: MessageId, input: TurnInput) -> bool {
    let texts = app.texts();
    let mut placeholder = None;
    let mut request = pb::ChatRequest {
        text: input.text,
        attachments: Vec::new(),
        want_voice_reply: input.media.as_ref().is_some_and(Media::is_voice),
        deliver_to_owner: None,
        idempotency_keys: Vec::new(),
        outside_content: false,
    };
    if let Some(media) = input.media {
        if media.size > MAX_DOWNLOAD_BYTES {
            app.say(
                &texts.file_too_large(mb(MAX_DOWNLOAD_BYTES)),
                Some(reply_to),
            )
            .await;
            return false;
        }
        // A download can take a while: show the placeholder first.
        placeholder = app
            .telegram()
            .send_html(texts.placeholder(), Some(reply_to))
            .await
            .ok();
        match download(app, media).await {
            Ok(attachment) => {
                // A document is content from outside the owner (`approvals.mode = "untrusted"`).
                if matches!(attachment.kind, Some(pb::attachment::Kind::Document(_))) {
                    request.outside_content = true;
                }
                request.attachments.push(attachment);
            }
            Err(html) => {
                app.replace_or_say(placeholder, &html, reply_to).await;
                return false;
            }
        }
    }
    request.deliver_to_owner = Some(pb::OwnerDelivery {
        reply_to_message_id: Some(i64::from(reply_to.0)),
        placeholder_message_id: placeholder.map(|id| i64::from(id.0)),
    });
    let mut events = match start_chat(app, request).await {
        Ok(events) => events,
        Err(html) => {
            app.replace_or_say(placeholder, &html, reply_to).await;
            return false;
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
            return false;
        }
        Some(Ok(pb::ChatEvent {
            event: Some(Event::Answered(answered)),
        })) => {
            // The running turn's question took the message as its answer.
            tracing::info!(question = %answered.question_id, "the message answered the pending question");
            if let Some(id) = placeholder {
                let _ = app.telegram().delete(id).await;
            }
        }
        other => {
            let html = interrupted(app, other.and_then(Result::err));
            app.replace_or_say(placeholder, &html, reply_to).await;
            return false;
        }
    }
    // The `Chat` stream is dropped: the turn goes on, its progress and outcome come through the
    // subscription.
    true
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
