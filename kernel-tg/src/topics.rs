//! Topics of the owner's private chat (Bot API 9.3): a topic is one session. A message in a
//! topic runs as a `Chat` in the topic's session (`TopicSession` binds a new topic to a new
//! session, and agentd keeps the binding); its outcome comes back into the topic through the
//! outbox (the turn's `OwnerDelivery.thread_id`). Forum topic service messages (a topic created,
//! renamed, closed, reopened) are not answered; a creation or rename tells agentd the topic's name
//! (outbox items for the topic carry it, so that one delivered in the main chat after the owner
//! deleted the topic can say which topic it was for).
//!
//! Whether the bot has topics (`telegram::Availability`) is read from
//! `getMe.has_topics_enabled` at start, learnt for free from any topic message, and read again
//! (at most every 30 s) only when Kernel would open a topic while it thinks topics are off.

use kernel_proto::v1 as pb;
use teloxide::types::{Message, MessageId};

use crate::agentd::{is_transport_failure, refused};
use crate::handle::App;

/// Whether Kernel may open topics now: `telegram.topics` is "auto" and the bot has topics.
/// While they seem off, `getMe` is read again (at most every 30 s): the owner may
/// have turned them on in @BotFather since.
pub(crate) async fn usable(app: &App) -> bool {
    if !app.form().topics {
        return false;
    }
    let availability = app.topic_availability();
    if availability.on() || !availability.due() {
        return availability.on();
    }
    match app.telegram().me().await {
        Ok(me) => availability.learn(me.has_topics_enabled, "getMe"),
        Err(e) => {
            tracing::warn!(error = %crate::telegram::describe(e), "getMe failed; topics stay off");
        }
    }
    availability.on()
}

/// The session of topic `thread`: `Err(None)` when agentd is unreachable, `Err(Some(html))`
/// when it refused (the owner is told that).
pub(crate) async fn session(app: &App, thread: i64) -> Result<i64, Option<String>> {
    named_session(app, thread, None).await
}

/// [`session`], recording `name` as the topic's name (one Kernel just gave it).
async fn named_session(app: &App, thread: i64, name: Option<&str>) -> Result<i64, Option<String>> {
    let mut client = app.agentd().client().await.map_err(|e| {
        tracing::warn!(error = %e, "kernel-agentd unavailable for a topic's turn");
        app.agentd().lost();
        None
    })?;
    match client
        .topic_session(pb::TopicSessionRequest {
            thread_id: thread,
            name: name.map(str::to_owned),
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

/// `/new` with topics: in the main chat (`thread` `None`) it opens a topic and binds a new
/// session to it, confirming in the topic; inside a topic it binds a new session to that same
/// topic (the earlier one stays in `/history`), confirming there. False when topics cannot be
/// used (off, or the topic could not be opened): the caller runs today's `/new`.
pub(crate) async fn new_session(app: &App, thread: Option<i64>, message_id: MessageId) -> bool {
    let texts = app.texts();
    let (thread, reply_to) = match thread {
        Some(thread) => (thread, Some(message_id)),
        // A topic just opened gets its session like any new topic (`TopicSession`): a message
        // the owner sends there before agentd answered lands in the same session.
        None => {
            if !usable(app).await {
                return false;
            }
            match app.telegram().create_topic(texts.new_topic_name()).await {
                Ok(thread) => {
                    tracing::info!(thread, "/new opened a topic");
                    (thread, None)
                }
                Err(e) => {
                    if crate::telegram::is_not_forum(&e) {
                        app.topic_availability().learn(false, "createForumTopic");
                    }
                    tracing::warn!(error = %e, "createForumTopic failed; /new in the main chat");
                    return false;
                }
            }
        }
    };
    let topic = app.in_topic(Some(thread));
    if reply_to.is_none() {
        // The name Kernel gave the topic is recorded like one the owner gives.
        let html = match named_session(app, thread, Some(texts.new_topic_name())).await {
            Ok(_) => texts.new_session().to_owned(),
            Err(Some(html)) => html,
            Err(None) => texts.agentd_unavailable().to_owned(),
        };
        topic.say(&html, None).await;
        return true;
    }
    let html = match app.agentd().client().await {
        Err(_) => {
            app.agentd().lost();
            texts.agentd_unavailable().to_owned()
        }
        Ok(mut client) => {
            let request = pb::NewSessionRequest {
                thread_id: Some(thread),
            };
            match client.new_session(request).await {
                Ok(reply) => {
                    let session = reply.into_inner().session.map(|s| s.id).unwrap_or_default();
                    tracing::info!(thread, session, "/new: a new session in a topic");
                    texts.new_session().to_owned()
                }
                Err(status) if is_transport_failure(&status) => {
                    app.agentd().lost();
                    texts.agentd_unavailable().to_owned()
                }
                Err(status) => refused(&status, texts),
            }
        }
    };
    topic.say(&html, reply_to).await;
    true
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

/// The topic of the owner's chat `message` was sent in (Bot API 9.3 topics in a private chat):
/// its `message_thread_id` when it is a topic message and `telegram.topics` is not "off".
pub(crate) fn topic_of(message: &Message, topics: bool) -> Option<i64> {
    if !message.is_topic_message || !topics {
        return None;
    }
    message.thread_id.map(|t| i64::from(t.0.0))
}
