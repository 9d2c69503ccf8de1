//! Commands that talk to the running turn: `/cancel`, `/cancel all`, `/steer`, `/next` and
//! `/retry`.

use kernel_proto::v1 as pb;
use tonic::Status;

use crate::agentd::Client;
use crate::texts::Texts;

/// `/cancel` (or `/cancel all` with `clear_queue`): stops the running turn, says what it stopped
/// and what waits in the `/next` queue (or that the queue was cleared).
pub(super) async fn cancel(
    client: &mut Client,
    texts: Texts,
    clear_queue: bool,
) -> Result<String, Status> {
    let request = pb::CancelRequest {
        clear_queue,
        turn_id: None,
        ..Default::default()
    };
    let reply = client.cancel(request).await?.into_inner();
    let said = if reply.cancelled {
        texts.cancelled(reply.killed_cli.as_deref())
    } else {
        texts.nothing_to_cancel().to_owned()
    };
    Ok(if clear_queue {
        texts.queue_cleared(&said, reply.cleared)
    } else {
        texts.cancelled_with_queue(&said, reply.queued)
    })
}

/// `/steer <text>`: joins the running turn, or starts one (replying to message `message_id`).
pub(super) async fn steer(
    client: &mut Client,
    texts: Texts,
    text: String,
    message_id: i64,
) -> Result<String, Status> {
    let request = pb::SteerRequest {
        text,
        deliver_to_owner: Some(pb::OwnerDelivery {
            reply_to_message_id: Some(message_id),
            placeholder_message_id: None,
            thread_id: None,
        }),
        ..Default::default()
    };
    let reply = client.steer(request).await?.into_inner();
    Ok(if reply.steered {
        texts.steered().to_owned()
    } else {
        texts.steer_started().to_owned()
    })
}

/// `/next <text>`: queues a turn to run after the running one, answering the owner's message
/// `sent` (its key goes with it: an edit of that message while it waits replaces the text).
pub(super) async fn next(
    client: &mut Client,
    texts: Texts,
    text: String,
    sent: super::Sent,
) -> Result<String, Status> {
    let request = pb::QueueNextRequest {
        text,
        reply_to_message_id: Some(sent.message_id),
        message_key: Some(sent.key),
    };
    let reply = client.queue_next(request).await?.into_inner();
    Ok(texts.queued_next(reply.position))
}

/// `/retry [model]`: the session's last message runs again (its answer replies to the `/retry`
/// message `sent`; in a topic, that topic's session, answered there); the new answer replaces
/// the old one in the session's history.
pub(super) async fn retry(
    client: &mut Client,
    texts: Texts,
    model: Option<String>,
    sent: super::Sent,
) -> Result<String, Status> {
    let request = pb::RetryRequest {
        session_id: sent.session,
        model,
        deliver_to_owner: Some(pb::OwnerDelivery {
            reply_to_message_id: Some(sent.message_id),
            placeholder_message_id: None,
            thread_id: sent.thread,
        }),
    };
    match client.retry(request).await {
        Ok(reply) if reply.get_ref().busy => Ok(texts.retry_busy().to_owned()),
        Ok(reply) => Ok(texts.retry_started(&reply.get_ref().model)),
        Err(status) if status.code() == tonic::Code::FailedPrecondition => {
            Ok(texts.nothing_to_retry().to_owned())
        }
        Err(status) if status.code() == tonic::Code::InvalidArgument => {
            Ok(texts.retry_unknown_model().to_owned())
        }
        Err(status) => Err(status),
    }
}
