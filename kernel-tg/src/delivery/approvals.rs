//! Approvals on display: agentd's `approval_requested` becomes a message with Allow once /
//! Allow for this session / Deny (escaped text, see `Texts::approval`); `approval_closed`
//! replaces its buttons with the outcome. Any turn's approval shows — also a scheduled task's or
//! a background job's. Remembered across re-subscriptions (agentd sends the pending ones again
//! on each), so one approval is shown once per kernel-tg run.

use kernel_proto::v1 as pb;
use teloxide::types::MessageId;

use crate::buttons;
use crate::handle::App;

/// Most approvals remembered (older ones drop; their buttons still answer through agentd).
const MAX_SHOWN: usize = 32;

/// The approvals shown: (id, message, its HTML).
#[derive(Default)]
pub(super) struct Approvals {
    shown: Vec<(String, MessageId, String)>,
}

impl Approvals {
    /// Shows a pending approval (once).
    pub(super) async fn requested(&mut self, app: &App, req: pb::ApprovalRequested) {
        if self.shown.iter().any(|(id, ..)| *id == req.approval_id) {
            return;
        }
        let texts = app.texts();
        let html = texts.approval(&req.action, &req.text, req.text_chars, req.timeout_secs);
        let Some(keyboard) = buttons::approval(&req.approval_id, texts) else {
            tracing::warn!("an approval id too long for buttons; answer it with Approve");
            return;
        };
        match app
            .telegram()
            .send_with_buttons(&html, None, keyboard)
            .await
        {
            Ok(message) => {
                tracing::info!(action = %req.action, "approval shown");
                if self.shown.len() >= MAX_SHOWN {
                    self.shown.remove(0);
                }
                self.shown.push((req.approval_id, message, html));
            }
            Err(e) => tracing::warn!(error = %e, "the approval could not be shown"),
        }
    }

    /// Replaces a closed approval's buttons with its outcome.
    pub(super) async fn closed(&mut self, app: &App, closed: pb::ApprovalClosed) {
        let Some(at) = self
            .shown
            .iter()
            .position(|(id, ..)| *id == closed.approval_id)
        else {
            return;
        };
        let (_, message, html) = self.shown.remove(at);
        let outcome = app.texts().approval_closed(&closed.decision);
        // An edit without buttons removes them.
        if let Err(e) = app
            .telegram()
            .edit_html(message, &format!("{html}\n\n{outcome}"))
            .await
        {
            tracing::warn!(error = %e, "a closed approval's buttons could not be removed");
        }
    }
}
