//! Delivering one outbox item: the answer's rendered chunks (the first as a reply) and its voice
//! note, each acknowledged once Telegram accepted it, then the placeholder removed and the item
//! acknowledged as done; a failure or cancellation notice likewise, a notice (a reminder) like
//! an answer, and a file as a photo or a document.
//!
//! A part Telegram refuses for good (the bot was blocked…) is logged at ERROR and acknowledged
//! as failed, so the queue never wedges; anything else is retried with backoff, in place, so
//! nothing is reordered.

use std::time::Duration;

use kernel_proto::v1 as pb;
use pb::outbox_item::Body;
use teloxide::types::MessageId;
use tokio_util::sync::CancellationToken;

use super::End;
use crate::handle::App;
use crate::render;
use crate::telegram::SendError;

/// First pause before a transiently failed part is sent again.
const FIRST_RETRY: Duration = Duration::from_secs(1);
/// Longest pause between two attempts at one part.
const MAX_RETRY: Duration = Duration::from_secs(60);

/// Delivers `item`; `Err` when following must stop (shutdown, or an ack agentd did not record:
/// the item is replayed from its last acknowledged part after resubscribing).
pub(super) async fn deliver(
    app: &App,
    item: pb::OutboxItem,
    placeholder: Option<MessageId>,
    shutdown: &CancellationToken,
) -> Result<(), End> {
    let delivery = Item {
        app,
        seq: item.seq,
        reply_to: item.reply_to_message_id.and_then(super::message_id),
        placeholder,
        shutdown,
    };
    let texts = app.texts();
    match item.body {
        Some(Body::Completed(done)) => delivery.answer(done, item.parts_done).await?,
        Some(Body::Notice(notice)) => {
            // A reminder: rendered and sent like an answer, with nothing to reply to.
            let done = pb::TurnCompleted {
                text: notice.text,
                ..Default::default()
            };
            delivery.answer(done, item.parts_done).await?;
        }
        Some(Body::File(file)) if item.parts_done == 0 => delivery.file(file).await?,
        Some(Body::File(_)) => {}
        Some(Body::Failed(failed)) => {
            tracing::info!(seq = item.seq, "delivering a turn failure");
            show(
                app,
                placeholder,
                &texts.turn_failure(&failed.reason, &failed.args, &failed.message),
                delivery.reply_to,
            )
            .await;
        }
        Some(Body::Cancelled(_)) => {
            tracing::info!(seq = item.seq, "turn cancelled");
            delivery.remove_placeholder().await;
        }
        None => tracing::warn!(
            seq = item.seq,
            "an outbox item of an unknown kind was skipped"
        ),
    }
    delivery.ack(item.parts_done, Vec::new(), false, true).await
}

/// Shows `html` in place of the placeholder when there is one, else as new message(s) split like
/// answers; failures are logged (the owner cannot be told).
pub(super) async fn show(
    app: &App,
    placeholder: Option<MessageId>,
    html: &str,
    reply_to: Option<MessageId>,
) {
    if let Some(id) = placeholder {
        match app.telegram().edit_html(id, html).await {
            Ok(()) => return,
            Err(e) => tracing::warn!(error = %e, "placeholder edit failed; sending instead"),
        }
    }
    app.say(html, reply_to).await;
}

struct Item<'a> {
    app: &'a App,
    seq: u64,
    reply_to: Option<MessageId>,
    placeholder: Option<MessageId>,
    shutdown: &'a CancellationToken,
}

impl Item<'_> {
    /// Sends the parts from `parts_done` on, acknowledging each, then removes the placeholder.
    async fn answer(&self, done: pb::TurnCompleted, parts_done: u32) -> Result<(), End> {
        let texts = self.app.texts();
        let telegram = self.app.telegram();
        let chunks = render::render(&done.text);
        if chunks.is_empty() {
            show(
                self.app,
                self.placeholder,
                texts.empty_answer(),
                self.reply_to,
            )
            .await;
            return Ok(());
        }
        let skip = parts_done as usize;
        if skip == 0 && self.app.form().show_reasoning && !done.reasoning.trim().is_empty() {
            // Not a part of the item: resent only when kernel-tg died before the first ack.
            let html = texts.reasoning(&done.reasoning);
            if let Err(e) = self
                .attempt(|| telegram.send_html(&html, self.reply_to))
                .await?
            {
                tracing::warn!(error = %e, seq = self.seq, "the reasoning was refused");
            }
        }
        tracing::info!(
            seq = self.seq,
            chunks = chunks.len(),
            from = skip,
            "delivering an answer"
        );
        let (mut sent, mut failed) = (0, 0);
        for (index, chunk) in chunks.iter().enumerate().skip(skip) {
            let reply_to = if index == 0 { self.reply_to } else { None };
            let part = part_number(index);
            match self
                .attempt(|| telegram.send_chunk(chunk, reply_to))
                .await?
            {
                Ok(id) => {
                    sent += 1;
                    self.ack(part, vec![i64::from(id.0)], false, false).await?;
                }
                Err(e) => {
                    failed += 1;
                    tracing::error!(error = %e, seq = self.seq, chunk = index + 1, of = chunks.len(), "a chunk of the answer was refused for good");
                    self.ack(part, Vec::new(), true, false).await?;
                }
            }
        }
        if let Some(ogg) = done.voice_reply.filter(|v| !v.is_empty())
            && skip <= chunks.len()
        {
            let part = part_number(chunks.len());
            match self
                .attempt(|| telegram.send_voice(ogg.clone(), self.reply_to))
                .await?
            {
                Ok(id) => self.ack(part, vec![i64::from(id.0)], false, false).await?,
                Err(e) => {
                    tracing::warn!(error = %e, "the voice reply was refused");
                    self.ack(part, Vec::new(), true, false).await?;
                }
            }
        }
        if failed > 0 && sent == 0 && skip == 0 {
            // Nothing arrived: the placeholder itself says so.
            let html = texts.delivery_failed(failed, chunks.len());
            show(self.app, self.placeholder, &html, self.reply_to).await;
            return Ok(());
        }
        if failed > 0 {
            let html = texts.delivery_failed(failed, chunks.len());
            show(self.app, None, &html, None).await;
        }
        self.remove_placeholder().await;
        tracing::info!(seq = self.seq, chunks = chunks.len(), "answer delivered");
        Ok(())
    }

    /// Sends a file (images Telegram shows as photos, anything else as a document) as part 1.
    async fn file(&self, file: pb::OutboxFile) -> Result<(), End> {
        let photo = is_photo(&file.file_name, file.data.len());
        tracing::info!(
            seq = self.seq,
            bytes = file.data.len(),
            photo,
            "delivering a file"
        );
        let telegram = self.app.telegram();
        match self
            .attempt(|| {
                telegram.send_file(&file.file_name, file.data.clone(), &file.caption, photo)
            })
            .await?
        {
            Ok(id) => self.ack(1, vec![i64::from(id.0)], false, false).await,
            Err(e) => {
                tracing::error!(error = %e, seq = self.seq, "a file was refused for good");
                let html = self.app.texts().delivery_failed(1, 1);
                show(self.app, None, &html, None).await;
                self.ack(1, Vec::new(), true, false).await
            }
        }
    }

    async fn remove_placeholder(&self) {
        if let Some(id) = self.placeholder
            && let Err(e) = self.app.telegram().delete(id).await
        {
            tracing::warn!(error = %e, "the placeholder could not be deleted");
        }
    }

    /// Runs `send` until it succeeds or fails for good, backing off between transient failures;
    /// `Err` at shutdown.
    async fn attempt<T, F, Fut>(&self, send: F) -> Result<Result<T, SendError>, End>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T, SendError>>,
    {
        let mut pause = FIRST_RETRY;
        loop {
            if self.shutdown.is_cancelled() {
                return Err(End::Shutdown);
            }
            match send().await {
                Ok(value) => return Ok(Ok(value)),
                Err(e) if e.is_permanent() => return Ok(Err(e)),
                Err(e) => {
                    tracing::warn!(error = %e, retry_in_s = pause.as_secs(), "Telegram failed; the part will be sent again");
                }
            }
            self.shutdown
                .run_until_cancelled(tokio::time::sleep(pause))
                .await
                .ok_or(End::Shutdown)?;
            pause = (pause * 2).min(MAX_RETRY);
        }
    }

    /// Tells agentd how far the item got; `Err(End::Broken)` when it could not be recorded.
    async fn ack(
        &self,
        parts_done: u32,
        message_ids: Vec<i64>,
        failed: bool,
        done: bool,
    ) -> Result<(), End> {
        let request = pb::AckRequest {
            seq: self.seq,
            parts_done,
            message_ids,
            failed,
            done,
        };
        let result = match self.app.agentd().client().await {
            Ok(mut client) => client.ack(request).await.map(|_| ()).map_err(|s| {
                if crate::agentd::is_transport_failure(&s) {
                    self.app.agentd().lost();
                }
                s.to_string()
            }),
            Err(e) => Err(e.to_string()),
        };
        result.map_err(|e| {
            tracing::warn!(error = %e, seq = self.seq, parts_done, "an ack was not recorded; resubscribing");
            End::Broken
        })
    }
}

/// Telegram shows JPEG, PNG and WebP images up to 10 MB as photos; anything else goes as a
/// document.
fn is_photo(name: &str, len: usize) -> bool {
    const PHOTO_LIMIT: usize = 10 * 1024 * 1024;
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    matches!(ext.as_deref(), Some("jpg" | "jpeg" | "png" | "webp")) && len <= PHOTO_LIMIT
}

/// The part count after part `index`.
fn part_number(index: usize) -> u32 {
    u32::try_from(index + 1).unwrap_or(u32::MAX)
}
