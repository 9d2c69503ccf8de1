//! Delivering one outbox item: the answer's rendered chunks (the first as a reply) and its voice
//! note, each acknowledged once Telegram accepted it, then — only when some part was refused —
//! the notice saying so, itself a part (retried, acknowledged, sent again on replay until
//! acknowledged); then the placeholder removed and the item acknowledged as done. A failure
//! notice is part 1 of a failed turn's item, a notice (a reminder) is delivered like an answer,
//! and a file as a photo or a document. A topic title renames the item's topic (shows nothing).
//!
//! A part Telegram refuses for good (the bot was blocked, a bad request) is logged at ERROR and
//! acknowledged as failed, so the queue never wedges; anything else (5xx, a non-JSON answer,
//! network errors, unknown errors) is retried with backoff, in place, so nothing is reordered,
//! for as long as the item is young ([`MAX_RETRY_AGE`]). An ack agentd did not record is kept
//! ([`Unacked`]) and sent first when the item is replayed, so a part Telegram accepted is not
//! sent again.

mod answer;

use kernel_proto::refused::BudgetExceeded;
use std::sync::Mutex;
use std::time::Duration;

use chrono::{DateTime, Utc};
use kernel_proto::v1 as pb;
use kernel_proto::words::FailureReason;
use pb::outbox_item::Body;
use teloxide::types::{InlineKeyboardMarkup, MessageId};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::End;
use crate::handle::App;
use crate::telegram::SendError;

/// First pause before a transiently failed part is sent again.
const FIRST_RETRY: Duration = Duration::from_secs(1);
/// Longest pause between two attempts at one part.
const MAX_RETRY: Duration = Duration::from_secs(60);
/// Longest topic name Telegram takes.
const MAX_TOPIC_NAME_CHARS: usize = 128;
/// How long after an item was stored its parts are still retried after transient failures;
/// then a failing part is given up like a refused one.
pub(super) const MAX_RETRY_AGE: Duration = Duration::from_secs(3600);

/// The ack agentd did not record (it went away between Telegram's OK and the ack), kept across
/// resubscriptions in memory: when its item is replayed, it is sent first and delivery goes on
/// after it.
#[derive(Debug, Default)]
pub(super) struct Unacked(Mutex<Option<pb::AckRequest>>);

impl Unacked {
    fn keep(&self, ack: pb::AckRequest) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(ack);
    }

    /// The kept ack of item `seq`, taken out (an ack of another item is dropped: agentd moved
    /// past it, so it was recorded).
    fn take(&self, seq: u64) -> Option<pb::AckRequest> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .filter(|a| a.seq == seq)
    }
}

/// Where a replayed item stands: agentd's record, moved on by a kept ack that went further.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Resume {
    parts_done: u32,
    parts_failed: u32,
    /// The kept ack finished the item.
    done: bool,
}

/// Where item (`parts_done`, `parts_failed`) stands once `kept` is recorded; `None` when the
/// kept ack adds nothing (agentd recorded it after all).
fn resume(parts_done: u32, parts_failed: u32, kept: &pb::AckRequest) -> Option<Resume> {
    if kept.parts_done <= parts_done && !kept.done {
        return None;
    }
    let advanced = kept.parts_done > parts_done;
    Some(Resume {
        parts_done: kept.parts_done.max(parts_done),
        parts_failed: parts_failed + u32::from(kept.failed && advanced),
        done: kept.done,
    })
}

/// Delivers `item`; `Err` when following must stop (shutdown, or an ack agentd did not record:
/// it is kept in `unacked` and the item replayed after resubscribing).
pub(super) async fn deliver(
    app: &App,
    item: pb::OutboxItem,
    placeholder: Option<MessageId>,
    shutdown: &CancellationToken,
    unacked: &Unacked,
) -> Result<(), End> {
    let delivery = Item {
        app,
        seq: item.seq,
        reply_to: item.reply_to_message_id.and_then(super::message_id),
        placeholder,
        shutdown,
        unacked,
        retry_until: retry_until(&item.created_at, Utc::now()),
    };
    let Some((parts_done, parts_failed)) = delivery
        .record_kept_ack(item.parts_done, item.parts_failed)
        .await?
    else {
        return Ok(());
    };
    delivery
        .body(item.body, &item.turn_id, parts_done, parts_failed)
        .await?;
    delivery.ack(parts_done, Vec::new(), false, true).await?;
    // Off the critical path: the acknowledgement reaction goes once the outcome is delivered.
    if let Some(message) = delivery.reply_to {
        crate::reactions::clear(app, message);
    }
    Ok(())
}

/// Until when an item stored at `created_at` (RFC 3339; unreadable: now) is retried.
fn retry_until(created_at: &str, now: DateTime<Utc>) -> Instant {
    let age = DateTime::parse_from_rfc3339(created_at)
        .ok()
        .and_then(|t| (now - t.with_timezone(&Utc)).to_std().ok())
        .unwrap_or_default();
    Instant::now() + MAX_RETRY_AGE.saturating_sub(age)
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
    unacked: &'a Unacked,
    /// Transient failures are retried until then.
    retry_until: Instant,
}

impl Item<'_> {
    /// Records the ack agentd missed of this item, if one is kept: where the item stands then
    /// (`parts_done`, `parts_failed`), or `None` when that ack finished it.
    async fn record_kept_ack(
        &self,
        parts_done: u32,
        parts_failed: u32,
    ) -> Result<Option<(u32, u32)>, End> {
        if let Some(kept) = self.unacked.take(self.seq)
            && let Some(resumed) = resume(parts_done, parts_failed, &kept)
        {
            tracing::info!(
                seq = self.seq,
                parts_done = kept.parts_done,
                "recording an ack agentd missed before resuming"
            );
            self.send_ack(kept).await?;
            if resumed.done {
                return Ok(None);
            }
            return Ok(Some((resumed.parts_done, resumed.parts_failed)));
        }
        Ok(Some((parts_done, parts_failed)))
    }

    /// Delivers the item's `body` (of turn `turn_id`) from part `parts_done` on.
    async fn body(
        &self,
        body: Option<Body>,
        turn_id: &str,
        parts_done: u32,
        parts_failed: u32,
    ) -> Result<(), End> {
        match body {
            Some(Body::Completed(done)) => self.answer(done, parts_done, parts_failed).await,
            Some(Body::Notice(notice)) if notice.watch_id != 0 && parts_done == 0 => {
                self.watch_notice(notice, parts_failed).await
            }
            Some(Body::Notice(notice)) => {
                // A reminder: rendered and sent like an answer, with nothing to reply to.
                let done = pb::TurnCompleted {
                    text: notice.text,
                    ..Default::default()
                };
                self.answer(done, parts_done, parts_failed).await
            }
            Some(Body::File(file)) => self.file(file, parts_done).await,
            Some(Body::TopicTitle(title)) if parts_done == 0 => self.topic_title(&title.name).await,
            Some(Body::TopicTitle(_)) => Ok(()),
            Some(Body::MemoryProposal(p)) if parts_done == 0 => {
                self.memory_proposal(p, parts_failed).await
            }
            Some(Body::MemoryProposal(_)) => Ok(()),
            Some(Body::Failed(failed)) if parts_done == 0 => self.failure(failed, turn_id).await,
            Some(Body::Failed(_)) => Ok(()),
            Some(Body::Cancelled(_)) => {
                tracing::info!(seq = self.seq, "turn cancelled");
                self.remove_placeholder().await
            }
            None => {
                tracing::warn!(
                    seq = self.seq,
                    "an outbox item of an unknown kind was skipped"
                );
                Ok(())
            }
        }
    }

    /// What a watch told the owner, not yet sent: one message with pause / delete buttons; a
    /// text too long for one goes like a plain notice.
    async fn watch_notice(&self, notice: pb::Notice, parts_failed: u32) -> Result<(), End> {
        let texts = self.app.texts();
        let chunks = kernel_render::render(&notice.text);
        let buttons = crate::buttons::watch(notice.watch_id, texts);
        match chunks.as_slice() {
            [one] if buttons.is_some() => {
                tracing::info!(seq = self.seq, "delivering a watch's notification");
                self.show_part_with(1, &one.html, None, buttons).await
            }
            _ => {
                let done = pb::TurnCompleted {
                    text: notice.text,
                    ..Default::default()
                };
                self.answer(done, 0, parts_failed).await
            }
        }
    }

    /// A memory consolidation's proposal, not yet sent: one message with merge / keep; a text
    /// too long for one goes like a notice.
    async fn memory_proposal(&self, p: pb::MemoryProposal, parts_failed: u32) -> Result<(), End> {
        let texts = self.app.texts();
        let chunks = kernel_render::render(&p.text);
        let buttons = crate::buttons::memory_proposal(p.proposal_id, texts);
        match chunks.as_slice() {
            [one] if buttons.is_some() => {
                tracing::info!(seq = self.seq, "delivering a memory proposal");
                self.show_part_with(1, &one.html, None, buttons).await
            }
            _ => {
                let done = pb::TurnCompleted {
                    text: p.text,
                    ..Default::default()
                };
                self.answer(done, 0, parts_failed).await
            }
        }
    }

    /// Renames the item's topic to its session's title (`editForumTopic`, at most 128
    /// characters). A refusal (the topic deleted, the name unchanged) is logged and dropped: the
    /// item is done either way.
    async fn topic_title(&self, name: &str) -> Result<(), End> {
        let Some(thread) = self.app.topic() else {
            tracing::warn!(seq = self.seq, "a topic title without a topic was dropped");
            return Ok(());
        };
        let name: String = name.trim().chars().take(MAX_TOPIC_NAME_CHARS).collect();
        if name.is_empty() {
            return Ok(());
        }
        let telegram = self.app.telegram();
        match self
            .attempt(|| telegram.rename_topic(thread, &name))
            .await?
        {
            Ok(()) => tracing::info!(
                seq = self.seq,
                thread,
                "topic renamed to its session's title"
            ),
            Err(e) => {
                tracing::warn!(seq = self.seq, thread, error = %e, "the topic could not be renamed; dropped")
            }
        }
        Ok(())
    }

    /// A failed turn's notice (part 1, not yet sent) in place of the placeholder: a cut-off
    /// turn's with a button to run it again, a budget limit's with its buttons, else why the
    /// turn failed.
    async fn failure(&self, failed: pb::TurnFailed, turn_id: &str) -> Result<(), End> {
        let texts = self.app.texts();
        let reason = FailureReason::parse(&failed.reason);
        let over = match reason {
            Some(FailureReason::BudgetExceeded) => BudgetExceeded::parse(&failed.args),
            _ => None,
        };
        match (reason, over) {
            (Some(FailureReason::TurnCutOff), _) => {
                tracing::info!(seq = self.seq, "delivering a cut-off turn's notice");
                let buttons = crate::buttons::rerun(turn_id, texts);
                self.show_part_with(1, texts.turn_cut_off(), self.placeholder, buttons)
                    .await
            }
            (Some(FailureReason::BudgetExceeded), Some(over)) => {
                tracing::info!(seq = self.seq, "delivering a budget limit's notice");
                let refusal = failed.args.get("refusal").map_or("", String::as_str);
                let buttons = crate::buttons::budget((&over.day, &over.month), refusal, texts);
                let html = texts.budget_exceeded(&over);
                self.show_part_with(1, &html, self.placeholder, buttons)
                    .await
            }
            _ => {
                tracing::info!(seq = self.seq, "delivering a turn failure");
                let html = texts.turn_failure(&failed.reason, &failed.args, &failed.message);
                self.show_part(1, &html, self.placeholder, self.reply_to)
                    .await
            }
        }
    }

    /// Sends a file (images Telegram shows as photos, anything else as a document) as part 1;
    /// when it is refused, part 2 tells the owner.
    async fn file(&self, file: pb::OutboxFile, parts_done: u32) -> Result<(), End> {
        if parts_done == 0 {
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
                Ok(id) => return self.ack(1, vec![i64::from(id.0)], false, false).await,
                Err(e) => {
                    tracing::error!(error = %e, seq = self.seq, "a file was refused for good");
                    self.ack(1, Vec::new(), true, false).await?;
                }
            }
        } else if parts_done >= 2 {
            return Ok(());
        }
        // Part 1 was refused (now or before a replay): the notice is part 2.
        let html = self.app.texts().delivery_failed(1, 1);
        self.show_part(2, &html, None, None).await
    }

    /// Shows `html` as part `part`: in place of `instead_of` (a placeholder) when given and
    /// Telegram takes the edit, else as new message(s) replying to `reply_to`; retried like
    /// every part, then acknowledged (as failed when Telegram refused it for good).
    async fn show_part(
        &self,
        part: u32,
        html: &str,
        instead_of: Option<MessageId>,
        reply_to: Option<MessageId>,
    ) -> Result<(), End> {
        let telegram = self.app.telegram();
        if let Some(id) = instead_of {
            match self.attempt(|| telegram.edit_html(id, html)).await? {
                Ok(()) => return self.ack(part, vec![i64::from(id.0)], false, false).await,
                Err(e) => tracing::warn!(error = %e, "placeholder edit failed; sending instead"),
            }
        }
        match self.attempt(|| telegram.send_text(html, reply_to)).await? {
            Ok(id) => self.ack(part, vec![i64::from(id.0)], false, false).await,
            Err(e) => {
                tracing::error!(error = %e, seq = self.seq, part, "a notice for the owner was refused for good");
                self.ack(part, Vec::new(), true, false).await
            }
        }
    }

    /// [`Item::show_part`] with `buttons` under the text (in place of `instead_of` when
    /// Telegram takes the edit, else as a new message replying to the item's message).
    async fn show_part_with(
        &self,
        part: u32,
        html: &str,
        instead_of: Option<MessageId>,
        buttons: Option<InlineKeyboardMarkup>,
    ) -> Result<(), End> {
        let Some(buttons) = buttons else {
            return self.show_part(part, html, instead_of, self.reply_to).await;
        };
        let telegram = self.app.telegram();
        if let Some(id) = instead_of {
            match self
                .attempt(|| telegram.edit_html_with_buttons(id, html, &buttons))
                .await?
            {
                Ok(()) => return self.ack(part, vec![i64::from(id.0)], false, false).await,
                Err(e) => tracing::warn!(error = %e, "placeholder edit failed; sending instead"),
            }
        }
        match self
            .attempt(|| telegram.send_with_buttons(html, self.reply_to, buttons.clone()))
            .await?
        {
            Ok(id) => self.ack(part, vec![i64::from(id.0)], false, false).await,
            Err(e) => {
                tracing::error!(error = %e, seq = self.seq, part, "a notice for the owner was refused for good");
                self.ack(part, Vec::new(), true, false).await
            }
        }
    }

    /// Deletes the placeholder (retried; one already gone counts as deleted).
    async fn remove_placeholder(&self) -> Result<(), End> {
        if let Some(id) = self.placeholder
            && let Err(e) = self.attempt(|| self.app.telegram().delete(id)).await?
        {
            tracing::warn!(error = %e, "the placeholder could not be deleted");
        }
        Ok(())
    }

    /// Runs `send` until it succeeds or fails for good, backing off between transient failures
    /// while the item is young (then the last failure counts as final); `Err` at shutdown.
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
                Err(e) if Instant::now() + pause > self.retry_until => {
                    tracing::error!(error = %e, seq = self.seq, "Telegram kept failing for as long as the item may wait; giving the part up");
                    return Ok(Err(e));
                }
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

    /// Tells agentd how far the item got; `Err(End::Broken)` when it could not be recorded
    /// (the ack is kept and sent first when the item is replayed).
    async fn ack(
        &self,
        parts_done: u32,
        message_ids: Vec<i64>,
        failed: bool,
        done: bool,
    ) -> Result<(), End> {
        self.send_ack(pb::AckRequest {
            seq: self.seq,
            parts_done,
            message_ids,
            failed,
            done,
        })
        .await
    }

    async fn send_ack(&self, request: pb::AckRequest) -> Result<(), End> {
        let result = match self.app.agentd().client().await {
            Ok(mut client) => client.ack(request.clone()).await.map(|_| ()).map_err(|s| {
                if crate::agentd::is_transport_failure(&s) {
                    self.app.agentd().lost();
                }
                s.to_string()
            }),
            Err(e) => Err(e.to_string()),
        };
        result.map_err(|e| {
            tracing::warn!(error = %e, seq = self.seq, parts_done = request.parts_done, "an ack was not recorded; kept for the replay, resubscribing");
            self.unacked.keep(request);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(seq: u64, parts_done: u32, failed: bool, done: bool) -> pb::AckRequest {
        pb::AckRequest {
            seq,
            parts_done,
            message_ids: vec![],
            failed,
            done,
        }
    }

    #[test]
    fn a_kept_ack_moves_the_replay_past_the_part_telegram_accepted() {
        // agentd recorded 1 part; the ack of part 2 was lost: the replay starts after part 2.
        let resumed = resume(1, 0, &ack(5, 2, false, false)).unwrap();
        assert_eq!(
            resumed,
            Resume {
                parts_done: 2,
                parts_failed: 0,
                done: false
            }
        );
        // A refused part kept as failed counts for the notice.
        let resumed = resume(1, 1, &ack(5, 2, true, false)).unwrap();
        assert_eq!(resumed.parts_failed, 2);
        // A lost final ack finishes the item without sending anything again.
        assert!(resume(3, 0, &ack(5, 3, false, true)).unwrap().done);
        // agentd had recorded it after all: nothing to resend.
        assert_eq!(resume(2, 0, &ack(5, 2, false, false)), None);
        assert_eq!(resume(3, 0, &ack(5, 2, false, false)), None);
    }

    #[test]
    fn a_kept_ack_is_used_only_by_its_own_item_and_only_once() {
        let unacked = Unacked::default();
        unacked.keep(ack(7, 2, false, false));
        assert_eq!(unacked.take(8), None);
        assert_eq!(unacked.take(7), None, "dropped once another item came");
        unacked.keep(ack(7, 2, false, false));
        assert_eq!(unacked.take(7).map(|a| a.parts_done), Some(2));
        assert_eq!(unacked.take(7), None);
    }

    #[tokio::test(start_paused = true)]
    async fn an_item_is_retried_for_an_hour_after_it_was_stored() {
        let now = Utc::now();
        let fresh = retry_until(&now.to_rfc3339(), now);
        assert_eq!(fresh - Instant::now(), MAX_RETRY_AGE);
        let older = (now - chrono::TimeDelta::minutes(50)).to_rfc3339();
        assert_eq!(
            retry_until(&older, now) - Instant::now(),
            Duration::from_secs(600)
        );
        let stale = (now - chrono::TimeDelta::hours(3)).to_rfc3339();
        assert_eq!(retry_until(&stale, now), Instant::now());
        assert_eq!(
            retry_until("not a time", now) - Instant::now(),
            MAX_RETRY_AGE
        );
    }
}
