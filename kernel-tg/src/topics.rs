//! Topics of the owner's private chat (Bot API 9.3): a topic is one session. A message in a
//! topic runs as a `Chat` in the topic's session (`TopicSession` binds a new topic to a new
//! session, and agentd keeps the binding); its outcome comes back into the topic through the
//! outbox (the turn's `OwnerDelivery.thread_id`). Forum topic service messages (a topic created,
//! renamed, closed, reopened) are not answered; a creation or rename tells agentd the topic's name
//! (outbox items for the topic carry it, so that one delivered in the main chat after the owner
//! deleted the topic can say which topic it was for).

use kernel_proto::v1 as pb;
use teloxide::types::Message;

use crate::agentd::{is_transport_failure, refused};
use crate::handle::App;

/// The session of topic `thread`: `Err(None)` when agentd is unreachable, `Err(Some(html))`
/// when it refused (the owner is told that).
pub(crate) async fn session(app: &App, thread: i64) -> Result<i64, Option<String>> {
    let mut client = app.agentd().client().await.map_err(|e| {
        tracing::warn!(error = %e, "kernel-agentd unavailable for a topic's turn");
        app.agentd().lost();
        None
    })?;
    match client
        .topic_session(pb::TopicSessionRequest {
            thread_id: thread,
            name: None,
        })
        .await
    {
        Ok(response) => {
            let response = response.into_inner();
            let session = response.session.map(|s| s.id).unwrap_or_default();
            if response.created {
                tracing::info!(thread, session, "a new topic got its own session");
            }
            Ok(session)
        }
        Err(status) if is_transport_failure(&status) => {
            app.agentd().lost();
            Err(None)
        }
        Err(status) => {
            tracing::warn!(code = ?status.code(), thread, "kernel-agentd refused a topic");
            Err(Some(refused(&status, app.texts())))
        }
    }
}

/// A topic created or renamed (`message` in topic `thread`): agentd records its name (binding
/// the topic to its session now if it is new). Best effort: a failure is only logged.
pub(crate) async fn record_name(app: &App, thread: i64, message: &Message) {
    let name = match (message.forum_topic_created(), message.forum_topic_edited()) {
        (Some(created), _) => Some(created.name.clone()),
        (None, Some(edited)) => edited.name.clone(),
        (None, None) => None,
    };
    let Some(name) = name.filter(|n| !n.trim().is_empty()) else {
        return;
    };
    let request = pb::TopicSessionRequest {
        thread_id: thread,
        name: Some(name),
    };
    let recorded = match app.agentd().client().await {
        Ok(mut client) => client.topic_session(request).await.map(|_| ()),
        Err(e) => {
            tracing::warn!(error = %e, thread, "kernel-agentd unavailable to name a topic");
            return;
        }
    };
    if let Err(status) = recorded {
        if is_transport_failure(&status) {
            app.agentd().lost();
        }
        tracing::warn!(code = ?status.code(), thread, "cannot record a topic's name");
    }
}

/// Whether `message` is a forum topic service message (nothing for Kernel to answer).
pub(crate) fn is_service(message: &Message) -> bool {
    message.forum_topic_created().is_some()
        || message.forum_topic_edited().is_some()
        || message.forum_topic_closed().is_some()
        || message.forum_topic_reopened().is_some()
        || message.general_forum_topic_hidden().is_some()
        || message.general_forum_topic_unhidden().is_some()
}
