//! Commands that talk to the running turn: `/cancel`, `/cancel all`, `/steer`, `/next` and
//! `/retry`.

use kernel_proto::v1 as pb;
use tonic::Status;

use super::Sent;
use crate::agentd::Client;
use crate::texts::Texts;

/// Where a `/steer` or `/next` goes: the session of the topic it was sent in (`None`: the main
/// lane) and the owner's message its answer replies to.
pub(super) struct To {
    pub session: Option<i64>,
    pub sent: Sent,
}

impl To {
    fn delivery(&self) -> pb::OwnerDelivery {
        pb::OwnerDelivery {
            reply_to_message_id: Some(self.sent.message_id),
            placeholder_message_id: None,
            thread_id: self.sent.thread,
        }
    }
}

/// `/cancel` (or `/cancel all` with `clear_queue`): stops the running turn, says what it stopped
/// and what waits in the `/next` queue (or that the queue was cleared). Inside a topic
/// (`session`: the topic's session) only that session's turn is stopped.
pub(super) async fn cancel(
    client: &mut Client,
    texts: Texts,
    clear_queue: bool,
    session: Option<i64>,
) -> Result<String, Status> {
    let request = pb::CancelRequest {
        clear_queue,
        turn_id: None,
        session_id: session,
        ..Default::default()
    };
    let reply = client.cancel(request).await?.into_inner();
    let said = if reply.cancelled {
        texts.cancelled(reply.killed_cli.as_deref())
    } else {
        texts.nothing_to_cancel().to_owned()
    };
    if let Some(session) = session {
        tracing::info!(session, cancelled = reply.cancelled, "/cancel in a topic");
        return Ok(said);
    }
    Ok(if clear_queue {
        texts.queue_cleared(&said, reply.cleared)
    } else {
        texts.cancelled_with_queue(&said, reply.queued)
    })
}

/// `/steer <text>`: joins the running turn of `to`'s lane, or starts one there (replying to
/// the `/steer` message).
pub(super) async fn steer(
    client: &mut Client,
    texts: Texts,
    text: String,
    to: To,
) -> Result<String, Status> {
    let request = pb::SteerRequest {
        text,
        deliver_to_owner: Some(to.delivery()),
        session_id: to.session,
        outside_content: to.sent.outside,
        replied_to_message_ids: to.sent.replied_to.into_iter().collect(),
    };
    let reply = client.steer(request).await?.into_inner();
    Ok(if reply.steered {
        texts.steered().to_owned()
    } else {
        texts.steer_started().to_owned()
    })
}

/// `/next <text>`: queues a turn to run after the running one of `to`'s lane, answering the
/// `/next` message (inside a topic, in that topic; its key goes with it: an edit of that
/// message while it waits replaces the text).
pub(super) async fn next(
    client: &mut Client,
    texts: Texts,
    text: String,
    to: To,
) -> Result<String, Status> {
    let request = pb::QueueNextRequest {
        text,
        reply_to_message_id: Some(to.sent.message_id),
        session_id: to.session,
        message_key: Some(to.sent.key),
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
        resume: false,
    };
    match client.retry(request).await {
        Ok(reply) if reply.get_ref().busy => Ok(texts.retry_busy().to_owned()),
        Ok(reply) => Ok(texts.retry_started(&reply.get_ref().model)),
        // Nothing to run again, or its session is gone.
        Err(status)
            if matches!(
                status.code(),
                tonic::Code::FailedPrecondition | tonic::Code::NotFound
            ) =>
        {
            Ok(texts.nothing_to_retry().to_owned())
        }
        Err(status) if status.code() == tonic::Code::InvalidArgument => {
            Ok(texts.retry_unknown_model().to_owned())
        }
        Err(status) => Err(status),
    }
}
