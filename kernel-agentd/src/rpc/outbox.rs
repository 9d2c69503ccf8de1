//! The `Subscribe`, `Ack` and `SetPlaceholder` RPC bodies: proto ⇄ domain for the outbox.

use futures::StreamExt as _;
use kernel_proto::v1 as pb;
use tonic::Status;

use super::chat::chat_event;
use super::{AgentService, to_status};
use crate::error::ApiError;
use crate::outbox::{Ack, Delivery, ItemBody, StoredItem};

/// The stream `Subscribe` returns.
pub(super) type SubscribeStream = std::pin::Pin<
    Box<dyn futures::Stream<Item = Result<pb::DeliveryEvent, Status>> + Send + 'static>,
>;

impl AgentService {
    /// Follows the outbox (see `Outbox::subscribe`).
    pub(super) fn subscribe_rpc(&self, req: pb::SubscribeRequest) -> SubscribeStream {
        let after = i64::try_from(req.after_seq).unwrap_or(i64::MAX);
        tracing::info!(after_seq = after, "a client subscribed to the outbox");
        // Pending approvals first, then whatever comes; the outbox's end ends the stream.
        let approvals = super::approvals::watch(self.agent.approvals());
        let outbox = self.agent.outbox().clone();
        let deliveries = self.agent.outbox().subscribe(after).then(move |d| {
            let outbox = outbox.clone();
            async move {
                let mut event = d
                    .map(delivery_event)
                    .map_err(|e| to_status(ApiError::internal(e)))?;
                // An item for a topic carries the topic's name (for the deleted-topic note).
                if let Some(pb::delivery_event::Event::Item(item)) = event.event.as_mut()
                    && let Some(thread) = item.thread_id
                {
                    item.thread_name = outbox.topic_name(thread).await.unwrap_or_else(|e| {
                        tracing::warn!(error = %e, "cannot read a topic's name");
                        None
                    });
                }
                Ok::<_, Status>(event)
            }
        });
        Box::pin(super::approvals::merge(approvals, deliveries))
    }

    /// Records a delivery report.
    pub(super) async fn ack_rpc(&self, req: pb::AckRequest) -> Result<pb::AckResponse, Status> {
        let seq = i64::try_from(req.seq)
            .map_err(|_| to_status(ApiError::InvalidArgument("seq is out of range".into())))?;
        let ack = Ack {
            seq,
            parts_done: req.parts_done,
            message_ids: req.message_ids,
            failed: req.failed,
            done: req.done,
        };
        self.agent
            .outbox()
            .ack(&ack)
            .await
            .map_err(|e| to_status(ApiError::internal(e)))?;
        Ok(pb::AckResponse {})
    }

    /// Records a running turn's placeholder.
    pub(super) async fn set_placeholder_rpc(
        &self,
        req: pb::SetPlaceholderRequest,
    ) -> Result<pb::SetPlaceholderResponse, Status> {
        if req.turn_id.is_empty() {
            return Err(to_status(ApiError::InvalidArgument(
                "turn_id is empty".into(),
            )));
        }
        self.agent
            .outbox()
            .set_placeholder(&req.turn_id, req.message_id)
            .await
            .map_err(|e| to_status(ApiError::internal(e)))?;
        Ok(pb::SetPlaceholderResponse {})
    }
}

fn delivery_event(d: Delivery<crate::turn::TurnEvent>) -> pb::DeliveryEvent {
    use pb::delivery_event::Event;
    let event = match d {
        Delivery::Item(item) => Event::Item(outbox_item(&item)),
        Delivery::Live(live) => Event::Live(pb::LiveTurn {
            turn_id: live.turn_id,
            event: Some(chat_event(live.event)),
            reply_to_message_id: live.delivery.and_then(|d| d.reply_to),
            placeholder_message_id: live.delivery.and_then(|d| d.placeholder),
            thread_id: live.delivery.and_then(|d| d.thread_id),
        }),
    };
    pb::DeliveryEvent { event: Some(event) }
}

fn outbox_item(item: &StoredItem) -> pb::OutboxItem {
    use pb::outbox_item::Body;
    let body = match &item.body {
        ItemBody::Answer {
            text,
            voice,
            reasoning,
        } => Body::Completed(pb::TurnCompleted {
            text: text.clone(),
            usage: None,
            voice_reply: voice.clone(),
            reasoning: reasoning.clone(),
        }),
        ItemBody::Failed { message, reason } => Body::Failed(pb::TurnFailed {
            message: message.clone(),
            reason: reason
                .reason
                .map(|r| r.as_str().to_owned())
                .unwrap_or_default(),
            args: reason.args.clone().into_iter().collect(),
        }),
        ItemBody::Cancelled => Body::Cancelled(pb::TurnCancelled {}),
        ItemBody::Notice { text } => Body::Notice(pb::Notice {
            text: text.clone(),
            watch_id: 0,
        }),
        ItemBody::WatchNotice { text, watch } => Body::Notice(pb::Notice {
            text: text.clone(),
            watch_id: *watch,
        }),
        ItemBody::MemoryProposal { text, proposal } => Body::MemoryProposal(pb::MemoryProposal {
            text: text.clone(),
            proposal_id: *proposal,
        }),
        ItemBody::TopicTitle { name } => Body::TopicTitle(pb::TopicTitle { name: name.clone() }),
        ItemBody::File {
            name,
            data,
            caption,
        } => Body::File(pb::OutboxFile {
            file_name: name.clone(),
            data: data.clone(),
            caption: caption.clone(),
        }),
    };
    pb::OutboxItem {
        seq: u64::try_from(item.seq).unwrap_or(0),
        turn_id: item.turn_id.clone(),
        reply_to_message_id: item.reply_to,
        placeholder_message_id: item.placeholder,
        thread_id: item.thread_id,
        thread_name: None,
        parts_done: item.parts_done,
        parts_failed: item.parts_failed,
        created_at: item
            .created_at
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        body: Some(body),
    }
}
