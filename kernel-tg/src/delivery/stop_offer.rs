//! `StopOffer`: a drafted turn has no placeholder, hence no Stop button; once it has run
//! [`AFTER`], a small message with a Stop button appears, and it is deleted when the turn's
//! display ends. A quicker turn adds no message.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use teloxide::types::MessageId;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::buttons;
use crate::telegram::Telegram;
use crate::texts::Texts;

/// How long a drafted turn runs before it is offered a Stop button.
pub(super) const AFTER: Duration = Duration::from_secs(3);

/// The pending or shown offer of one turn.
pub(super) struct StopOffer {
    telegram: Telegram,
    cancel: CancellationToken,
    task: JoinHandle<()>,
    sent: Arc<Mutex<Option<MessageId>>>,
}

impl StopOffer {
    /// Offers Stop for `turn_id` after [`AFTER`] (in reply to the owner's message).
    pub(super) fn start(
        telegram: Telegram,
        turn_id: &str,
        reply_to: Option<MessageId>,
        texts: Texts,
    ) -> Self {
        let cancel = CancellationToken::new();
        let sent = Arc::new(Mutex::new(None));
        let keyboard = buttons::stop(turn_id, texts);
        let task = tokio::spawn({
            let (telegram, cancel, sent) = (telegram.clone(), cancel.clone(), sent.clone());
            async move {
                tokio::select! {
                    () = cancel.cancelled() => return,
                    () = tokio::time::sleep(AFTER) => {}
                }
                match telegram
                    .send_with_buttons(texts.stop_offer(), reply_to, keyboard)
                    .await
                {
                    Ok(id) => *sent.lock().unwrap_or_else(|e| e.into_inner()) = Some(id),
                    Err(e) => tracing::debug!(error = %e, "the Stop offer could not be sent"),
                }
            }
        });
        Self {
            telegram,
            cancel,
            task,
            sent,
        }
    }

    /// Withdraws the offer: not sent yet, it never is; sent, it is deleted.
    pub(super) async fn finish(self) {
        self.cancel.cancel();
        let _ = self.task.await;
        let sent = self.sent.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(id) = sent
            && let Err(e) = self.telegram.delete(id).await
        {
            tracing::debug!(error = %e, "the Stop offer could not be deleted");
        }
    }
}
