//! The `Approve` RPC body and the approvals' side of `Subscribe`: proto ⇄ domain for the
//! approvals service.

use futures::{Stream, StreamExt as _};
use kernel_proto::v1 as pb;
use tokio::sync::broadcast;
use tonic::Status;

use super::{AgentService, to_status};
use crate::approvals::{ApprovalEvent, Approvals, Choice, Requested};
use crate::error::ApiError;

impl AgentService {
    /// `Approve`: answers a pending approval; NOT_FOUND when the id is not pending.
    pub(super) fn approve_rpc(
        &self,
        req: pb::ApproveRequest,
    ) -> Result<pb::ApproveResponse, Status> {
        use pb::ApprovalDecision as D;
        let choice = match D::try_from(req.decision) {
            Ok(D::AllowOnce) => Choice::AllowOnce,
            Ok(D::AllowSession) => Choice::AllowForSession,
            Ok(D::Deny) => Choice::Deny,
            Ok(D::Unspecified) | Err(_) => {
                return Err(to_status(ApiError::InvalidArgument(
                    "decision must be ALLOW_ONCE, ALLOW_SESSION or DENY".into(),
                )));
            }
        };
        if req.approval_id.is_empty() || req.approval_id.len() > 128 {
            return Err(to_status(ApiError::InvalidArgument(
                "approval_id must be 1–128 characters".into(),
            )));
        }
        self.agent
            .approvals()
            .decide(&req.approval_id, choice)
            .map_err(|e| to_status(ApiError::NotFound(e.to_string())))?;
        Ok(pb::ApproveResponse {})
    }
}

/// The wire form of a pending approval.
pub(super) fn requested_pb(shown: Requested) -> pb::ApprovalRequested {
    pb::ApprovalRequested {
        approval_id: shown.id,
        turn_id: shown.turn_id,
        action: shown.action,
        text: shown.text,
        text_chars: shown.text_chars,
        timeout_secs: shown.timeout_secs,
    }
}

fn delivery(event: ApprovalEvent) -> pb::DeliveryEvent {
    use pb::delivery_event::Event;
    let event = match event {
        ApprovalEvent::Requested(shown) => Event::ApprovalRequested(requested_pb(shown)),
        ApprovalEvent::Closed { id, decision } => Event::ApprovalClosed(pb::ApprovalClosed {
            approval_id: id,
            decision: decision.as_str().to_owned(),
        }),
    };
    pb::DeliveryEvent { event: Some(event) }
}

/// The pending approvals, then every later request and closing (a lagging watcher skips
/// what it missed: a closing it missed leaves at most stale buttons, which `Approve` refuses).
pub(super) fn watch(
    approvals: &Approvals,
) -> impl Stream<Item = pb::DeliveryEvent> + Send + 'static {
    let (pending, rx) = approvals.watch();
    let first = futures::stream::iter(
        pending
            .into_iter()
            .map(|p| delivery(ApprovalEvent::Requested(p))),
    );
    let later = futures::stream::unfold(rx, |mut rx| async move {
        loop {
            match rx.recv().await {
                Ok(event) => return Some((delivery(event), rx)),
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    tracing::warn!(missed = n, "a subscriber lagged behind the approvals");
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    });
    first.chain(later)
}

/// `deliveries` with `approvals` woven in; ends when `deliveries` ends.
pub(super) fn merge<S>(
    approvals: impl Stream<Item = pb::DeliveryEvent> + Send + 'static,
    deliveries: S,
) -> impl Stream<Item = Result<pb::DeliveryEvent, Status>> + Send + 'static
where
    S: Stream<Item = Result<pb::DeliveryEvent, Status>> + Send + 'static,
{
    // `None` marks the end of the outbox's stream; the approvals never end it.
    let approvals = approvals.map(|e| Some(Ok(e)));
    let deliveries = deliveries.map(Some).chain(futures::stream::iter([None]));
    futures::stream::select(approvals, deliveries)
        .take_while(|item| std::future::ready(item.is_some()))
        .filter_map(std::future::ready)
}
