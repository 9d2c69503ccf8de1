//! `/next`: the owner's queues of messages that run as their own turns once the running one
//! ends, in order — one queue per session (a Telegram topic's), and the main lane's; each runs
//! beside the others. Stored (`store::follow_ups`), so they survive a restart; one runner task
//! per agentd (started at boot, tracked, under the root token) gives each queue's head a task
//! that waits for its lane (`Gate::enter_when_free`) and starts it as an owner turn delivered
//! through the outbox. An item leaves the queue when its turn starts. An item carries the idempotency key of
//! the owner's message it came from: an edit of that message while it waits replaces its text
//! (`turn::edit`), and the turn that runs it takes the key.

use tokio_util::sync::CancellationToken;

use super::input::Accepted;
use super::{IntakeKeys, Origin, OwnerDelivery, Turns, UserInput};
use crate::conversation::{Message, Role};
use crate::error::ApiError;
use crate::media::Refusal;
use crate::store::follow_ups::{FollowUp, Kept};

impl Turns {
    /// Queues `text` (its answer replying to `reply_to`; `key`: the idempotency key of the
    /// owner's message it came from) to run in session `session_id`'s own lane (queued inside a
    /// Telegram topic: it answers there; `None`: the main lane); its place in the queue (1:
    /// next). Empty or over-long text is refused like a message, a bad key like a `Chat`'s, an
    /// unknown session is `NOT_FOUND`.
    pub async fn queue_next(
        &self,
        text: String,
        reply_to: Option<i64>,
        session_id: Option<i64>,
        key: Option<String>,
    ) -> Result<usize, ApiError> {
        if session_id.is_some() {
            self.lane(session_id).await?;
        }
        let key = match key.filter(|k| !k.is_empty()) {
            Some(key) => IntakeKeys::parse(vec![key])?.as_slice().first().cloned(),
            None => None,
        };
        self.queue_kept(Kept::text(text), reply_to, session_id, key)
            .await
    }

    /// [`Turns::queue_next`] for a kept message: a whole one (images, documents) was accepted
    /// when it came.
    pub(super) async fn queue_kept(
        &self,
        kept: Kept,
        reply_to: Option<i64>,
        session_id: Option<i64>,
        key: Option<String>,
    ) -> Result<usize, ApiError> {
        let inner = &self.inner;
        self.accept_kept(kept.clone()).await?;
        let position = inner
            .store
            .push_follow_up(&kept, reply_to, session_id, key.as_deref())
            .await
            .map_err(ApiError::internal)?;
        tracing::info!(position, "message queued for after the running turn");
        inner.follow_ups.notify_one();
        Ok(position)
    }

    /// A kept message as a turn's input: text is checked like a message, a whole one is taken
    /// as it was accepted (its attachments not kept under `downloads/` yet).
    async fn accept_kept(&self, kept: Kept) -> Result<Accepted, ApiError> {
        let locale = self.inner.media.locale();
        let Some(content) = kept.whole else {
            let mut input = UserInput::text(kept.text);
            input.outside_content = kept.outside_content;
            return input.accept(locale, false);
        };
        let message = Message {
            role: Role::User,
            content,
        };
        let mut accepted = Accepted::again(message, kept.outside_content, false)
            .ok_or_else(|| Refusal::EmptyMessage.into_error(locale))?;
        accepted.already_kept = false;
        self.fits_provider(accepted).await
    }

    /// The queued texts, in the order they will run.
    pub async fn queued(&self) -> Result<Vec<String>, ApiError> {
        let queue = self
            .inner
            .store
            .follow_ups()
            .await
            .map_err(ApiError::internal)?;
        Ok(queue.into_iter().map(|f| f.kept.text).collect())
    }

    /// Drops every queued message; how many.
    pub async fn clear_queue(&self) -> Result<usize, ApiError> {
        let cleared = self
            .inner
            .store
            .clear_follow_ups()
            .await
            .map_err(ApiError::internal)?;
        tracing::info!(cleared, "the /next queue was cleared");
        Ok(cleared)
    }

    /// Starts the queue's runner (once, at boot); it stops with the root token.
    pub fn start_queue(&self) {
        let turns = self.clone();
        let root = self.inner.root.clone();
        self.inner.tasks.spawn(async move {
            root.run_until_cancelled(turns.run_queue(root.clone()))
                .await;
        });
    }

    /// Runs every queue beside the others: each queue's head (one queue per session, and the
    /// main lane's) gets its own task waiting for its lane, so an item waiting for a busy
    /// session never holds back another session's.
    async fn run_queue(self, root: CancellationToken) {
        loop {
            for head in self.follow_up_heads().await {
                let queue = head.session_id;
                if !self.queue_runners().insert(queue) {
                    continue;
                }
                let (this, root) = (self.clone(), root.clone());
                self.inner.tasks.spawn(async move {
                    root.clone()
                        .run_until_cancelled(this.run_head(head, root))
                        .await;
                    this.queue_runners().remove(&queue);
                    // The queue's next item (if any) gets its runner.
                    this.inner.follow_ups.notify_one();
                });
            }
            self.inner.follow_ups.notified().await;
        }
    }

    fn queue_runners(&self) -> std::sync::MutexGuard<'_, std::collections::HashSet<Option<i64>>> {
        self.inner
            .queue_runners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for the lane of `head` (its queue's oldest item) and starts it as an owner turn,
    /// unless it left its queue's head meanwhile (taken, cleared, or its queue changed).
    async fn run_head(&self, head: FollowUp, root: CancellationToken) {
        let cancel = root.child_token();
        let lane = match self.queued_lane(head.session_id).await {
            Ok(lane) => lane,
            Err(e) => {
                return tracing::error!(error = %e, "cannot find the current session; the queued message waits");
            }
        };
        let Some(permit) = self
            .inner
            .gate
            .enter_when_free(lane, cancel.clone(), Origin::Owner)
            .await
        else {
            return;
        };
        // The queue may have been cleared (or changed, an item edited) while the gate was busy.
        let item = match self.next_follow_up(head.session_id).await {
            Some(item) if item.id == head.id => item,
            _ => return,
        };
        match self.inner.store.take_follow_up(item.id).await {
            Ok(true) => {}
            Ok(false) => return,
            Err(e) => {
                return tracing::error!(error = %e, "cannot take a queued message; it waits");
            }
        }
        let accepted = match self.accept_kept(item.kept).await {
            Ok(accepted) => accepted,
            Err(e) => return tracing::warn!(error = %e, "a queued message was dropped"),
        };
        let thread_id = match lane.main {
            true => None,
            false => self.topic_of(lane.session_id).await,
        };
        let delivery = OwnerDelivery {
            reply_to: item.reply_to,
            placeholder: None,
            thread_id,
        };
        // The turn takes the key of the owner's message it came from: an edit finds it.
        let keys = item
            .key
            .and_then(|key| IntakeKeys::parse(vec![key]).ok())
            .unwrap_or_default();
        tracing::info!(session = ?item.session_id, "a queued message starts its turn");
        // Its outcome reaches the owner through the outbox; the events are not followed.
        if let Err(e) = self
            .start(permit, cancel, accepted, Some(delivery), keys, None)
            .await
        {
            tracing::warn!(error = %e, "a queued message could not start its turn");
        }
    }

    /// The lane a queued message runs in: its session's own (a session deleted meanwhile: the
    /// main lane), or the main lane.
    async fn queued_lane(&self, session_id: Option<i64>) -> Result<super::gate::Lane, ApiError> {
        if session_id.is_some() {
            match self.lane(session_id).await {
                Ok(lane) => return Ok(lane),
                Err(ApiError::NotFound(_)) => {
                    tracing::info!("a queued message's session is gone; it runs in the main lane");
                }
                Err(e) => return Err(e),
            }
        }
        self.lane(None).await
    }

    /// The Telegram topic session `session_id` lives in, if any (a store error is logged and
    /// counts as none: the main chat).
    pub(super) async fn topic_of(&self, session_id: i64) -> Option<i64> {
        match self.inner.store.session_topic(session_id).await {
            Ok(thread) => thread,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read a session's topic; the main chat");
                None
            }
        }
    }

    /// The oldest queued message of each queue (a store error is logged and counts as none).
    async fn follow_up_heads(&self) -> Vec<FollowUp> {
        self.inner
            .store
            .follow_up_heads()
            .await
            .unwrap_or_else(|e| {
                tracing::error!(error = %e, "cannot read the /next queue");
                Vec::new()
            })
    }

    /// The oldest queued message of session `session_id`'s queue, if any (a store error is
    /// logged and counts as none).
    async fn next_follow_up(&self, session_id: Option<i64>) -> Option<FollowUp> {
        match self.inner.store.next_follow_up(session_id).await {
            Ok(next) => next,
            Err(e) => {
                tracing::error!(error = %e, "cannot read the /next queue");
                None
            }
        }
    }
}
