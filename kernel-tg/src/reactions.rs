//! Reactions both ways. Kernel's acknowledgement (`telegram.ack_reaction`, default "👀") is set
//! on the owner's message when kernel-tg takes it and cleared once its answer (or refusal, or
//! failure notice) is delivered — each call in a task of its own, once, never awaited by the
//! turn: a refused `setMessageReaction` (an old client, a rate limit) changes nothing else. The
//! owner's reactions (`message_reaction` updates, the owner's only, in the owner's chat): a 👎
//! on the last answer of a session offers "Try again" / "Try again with <another model>"
//! (`Retry`), in the topic of that session; in the main chat the press runs that session's last
//! message even when the owner has left it (`/new`, `/resume`): it becomes the current session
//! again (`Retry` with `resume`) and answers there; every reaction on one of Kernel's answers, of any
//! age (that 👎 too), is stored as feedback (`SetFeedback`, which also tells which answer it
//! is), with no reply; a flood is cut off (at most 20 a minute).

use std::time::Duration;

use kernel_proto::v1 as pb;
use teloxide::payloads::SetMessageReactionSetters;
use teloxide::prelude::Requester;
use teloxide::types::{
    ChatId, InlineKeyboardButton, InlineKeyboardMarkup, MessageId, MessageReactionUpdated,
    ReactionType, UserId,
};

use crate::buttons::{self, Press};
use crate::handle::App;

/// How long one `setMessageReaction` may take (it is cosmetic).
const REACTION_TIMEOUT: Duration = Duration::from_secs(10);

/// Sets the acknowledgement reaction on the owner's message `message` (in the background).
pub(crate) fn acknowledge(app: &App, message: MessageId) {
    if let Some(emoji) = app.living().ack_reaction() {
        set(app, message, Some(emoji.to_owned()));
    }
}

/// Clears the acknowledgement reaction from the owner's message `message` (in the background).
pub(crate) fn clear(app: &App, message: MessageId) {
    if app.living().ack_reaction().is_some() {
        set(app, message, None);
    }
}

/// One `setMessageReaction` in a task of its own; a failure is logged at debug.
fn set(app: &App, message: MessageId, emoji: Option<String>) {
    let bot = app.telegram().bot().clone();
    let chat = ChatId(app.owner().0 as i64);
    tokio::spawn(async move {
        let mut request = bot.set_message_reaction(chat, message);
        if let Some(emoji) = emoji {
            request = request.reaction([ReactionType::Emoji { emoji }]);
        }
        match tokio::time::timeout(REACTION_TIMEOUT, request.into_future()).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => tracing::debug!(error = %e, "setMessageReaction refused; ignored"),
            Err(_) => tracing::debug!("setMessageReaction took too long; ignored"),
        }
    });
}

/// The owner's reaction update, when it is one kernel-tg handles: by the owner, in the owner's
/// private chat.
pub(crate) fn admit(update: &MessageReactionUpdated, owner: UserId) -> bool {
    let by_owner = update.user().is_some_and(|u| u.id == owner);
    let owners_chat = update.chat.is_private() && update.chat.id.0 == owner.0 as i64;
    by_owner && owners_chat
}

fn emojis(reactions: &[ReactionType]) -> Vec<&str> {
    reactions
        .iter()
        .filter_map(|r| r.emoji().map(String::as_str))
        .collect()
}

/// Handles an admitted reaction of the owner.
pub(crate) async fn handle(app: App, update: MessageReactionUpdated) {
    if !app.living().reaction_allowed() {
        tracing::info!("a flood of reactions: this one is ignored");
        return;
    }
    let message = update.message_id;
    let new = emojis(&update.new_reaction);
    let old = emojis(&update.old_reaction);
    let thumbs_down = new.contains(&"👎") && !old.contains(&"👎");
    let feedback = new.first().copied().unwrap_or_default().to_owned();
    let request = pb::SetFeedbackRequest {
        chat_message_id: i64::from(message.0),
        feedback,
    };
    let reply = match app.agentd().client().await {
        Ok(mut client) => client
            .set_feedback(request)
            .await
            .map(tonic::Response::into_inner),
        Err(e) => Err(tonic::Status::unavailable(e.to_string())),
    };
    match reply {
        Ok(answer) => {
            tracing::info!(
                message = message.0,
                "the owner's reaction is stored as feedback"
            );
            if thumbs_down && answer.last_answer {
                // The offer goes where the answer is (its session's topic); the 👎 is kept as
                // feedback too (it stays unless the answer is tried again, which replaces it).
                offer_try_again(&app.in_topic(answer.thread_id), answer.session_id, message).await;
            }
        }
        Err(status) => {
            tracing::debug!(code = ?status.code(), message = message.0, "a reaction on no answer of Kernel's changes nothing")
        }
    }
}

/// Offers to answer session `session`'s last message again, replying to the 👎'd answer
/// `message`.
async fn offer_try_again(app: &App, session: i64, message: MessageId) {
    let texts = app.texts();
    let other = other_model(app).await;
    let session = Some(session).filter(|&s| s >= 1);
    let mut row = Vec::new();
    if let Some(data) = buttons::data(&Press::TryAgain {
        session,
        model: None,
    }) {
        row.push(InlineKeyboardButton::callback(
            texts.try_again_button(),
            data,
        ));
    }
    if let Some(model) = other
        && let Some(data) = buttons::data(&Press::TryAgain {
            session,
            model: Some(model.clone()),
        })
    {
        row.push(InlineKeyboardButton::callback(
            texts.try_again_with_button(&model),
            data,
        ));
    }
    let buttons = InlineKeyboardMarkup::new([row]);
    if let Err(e) = app
        .telegram()
        .send_with_buttons(texts.try_again_offer(), Some(message), buttons)
        .await
    {
        tracing::warn!(error = %e, "the try-again offer could not be sent");
    }
}

/// Another usable model for "Try again with …": the first available provider other than the
/// current one (its default model), as `provider/model`.
async fn other_model(app: &App) -> Option<String> {
    let mut client = app.agentd().client().await.ok()?;
    let providers = client
        .list_providers(pb::ListProvidersRequest {})
        .await
        .ok()?
        .into_inner();
    providers
        .providers
        .iter()
        .find(|p| p.available && p.name != providers.current_provider)
        .map(|p| format!("{}/{}", p.name, p.default_model))
}

/// The owner pressed "Try again" (on `model`) on the offer `offer` for session `session`: its
/// last message runs again (its buttons go once it started); an offer in a topic, that topic's;
/// in the main chat a session the owner left becomes the current one again. The toast.
pub(crate) async fn try_again(
    app: &App,
    session: Option<i64>,
    model: Option<String>,
    offer: Option<MessageId>,
) -> &'static str {
    let texts = app.texts();
    let (session_id, resume) = match app.topic() {
        Some(thread) => match crate::topics::session(app, thread).await {
            Ok(session) => (Some(session), false),
            Err(Some(_refused)) => return texts.nothing_to_retry(),
            Err(None) => return texts.agentd_unavailable(),
        },
        None => (session, session.is_some()),
    };
    let request = pb::RetryRequest {
        session_id,
        resume,
        model,
        deliver_to_owner: Some(pb::OwnerDelivery {
            reply_to_message_id: offer.map(|m| i64::from(m.0)),
            placeholder_message_id: None,
            thread_id: app.topic(),
        }),
    };
    let reply = match app.agentd().client().await {
        Ok(mut client) => client.retry(request).await,
        Err(e) => Err(tonic::Status::unavailable(e.to_string())),
    };
    let (toast, done) = match reply {
        Ok(reply) if reply.get_ref().busy => (texts.living_busy(), false),
        Ok(_) => (texts.trying_again(), true),
        Err(status) if crate::agentd::is_transport_failure(&status) => {
            app.agentd().lost();
            (texts.agentd_unavailable(), false)
        }
        Err(status) if status.code() == tonic::Code::InvalidArgument => {
            (texts.retry_unknown_model(), true)
        }
        Err(_) => (texts.nothing_to_retry(), true),
    };
    if done
        && let Some(id) = offer
        && let Err(e) = app.telegram().set_buttons(id, None).await
    {
        tracing::debug!(error = %e, "the try-again buttons could not be removed");
    }
    toast
}
