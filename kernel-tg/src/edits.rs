//! The owner's edits of messages (`edited_message` updates, admitted like messages): one still
//! waiting in kernel-tg (a burst being gathered) takes the new text there; otherwise agentd is
//! told (`EditMessage`): the running turn restarts or is steered, and for an answered message
//! the owner gets one reply quoting the change with a button "Answer the edited message" (a
//! second edit updates that reply; agentd keeps the edit and the offer, so a press or a second
//! edit after a kernel-tg restart works the same). An edit of a `/next <text>` message (still `/next` with a
//! text) goes to agentd too: while the item waits in the queue its text is replaced there. An
//! edit older than `telegram.edit_window_hours`, one that empties the message, or one that
//! makes it (another) command is ignored, the owner told why (an old one silently).

use chrono::Utc;
use kernel_proto::v1 as pb;
use pb::edit_message_response::Outcome;
use teloxide::types::{InlineKeyboardButton, InlineKeyboardMarkup, Message, MessageId};

use crate::buttons::{self, Press};
use crate::handle::App;

/// What to do with an admitted edit before agentd hears of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Checked {
    /// Send this text on.
    Text(String),
    /// A `/next` message, still `/next` with this text: send the text on (the queued item).
    Next(String),
    /// Older than the edit window: ignored without a word.
    TooOld,
    /// The edit empties the message (a caption removed).
    Emptied,
    /// The edit made it a command (commands run when sent, never again on an edit).
    Command,
}

/// Checks an edit of `message` against the window and what it now says.
pub(crate) fn check(app: &App, message: &Message) -> Checked {
    let age = (Utc::now() - message.date).to_std().unwrap_or_default();
    if age > app.living().edit_window() {
        return Checked::TooOld;
    }
    let text = message
        .text()
        .or_else(|| message.caption())
        .unwrap_or_default()
        .trim();
    if text.is_empty() {
        return Checked::Emptied;
    }
    if text.starts_with('/') || text.starts_with('／') {
        return match crate::command::parse(text, app.username()) {
            Some(Ok(crate::command::Command::Next(text))) => Checked::Next(text),
            _ => Checked::Command,
        };
    }
    Checked::Text(text.to_owned())
}

/// Handles an edit no waiting turn took: tells the owner why it is ignored, or tells agentd.
pub(crate) async fn handle(app: App, message: Message, checked: Checked) {
    let texts = app.texts();
    let text = match checked {
        Checked::Text(text) | Checked::Next(text) => text,
        Checked::TooOld => {
            tracing::info!(
                message = message.id.0,
                "an edit of an old message is ignored"
            );
            return;
        }
        Checked::Emptied => {
            app.say(texts.edit_emptied(), Some(message.id)).await;
            return;
        }
        Checked::Command => {
            app.say(texts.edit_command(), Some(message.id)).await;
            return;
        }
    };
    forward(&app, message.id, text).await;
}

/// Tells agentd the owner edited message `message` to `text`: the running turn restarts or is
/// steered; for an answered message the owner gets the offer (agentd records the edit and the
/// offer, so both outlive a kernel-tg restart).
pub(crate) async fn forward(app: &App, message: MessageId, text: String) {
    let reply = tell(app, message, text.clone(), None).await;
    match reply {
        Ok(reply) => match reply.outcome() {
            Outcome::Answered => offer(app, message, text, reply.offer_message_id).await,
            Outcome::ReplacedWaiting => {
                tracing::info!(
                    message = message.0,
                    "the owner edited a message waiting in the /next queue"
                )
            }
            outcome => {
                tracing::info!(
                    ?outcome,
                    message = message.0,
                    "the owner's edit reached the turn"
                )
            }
        },
        Err(status) if status.code() == tonic::Code::NotFound => {
            tracing::info!(
                message = message.0,
                "an edit of a message Kernel never took is ignored"
            );
        }
        Err(status) => {
            tracing::warn!(code = ?status.code(), "an edit could not reach kernel-agentd");
            if crate::agentd::is_transport_failure(&status) {
                app.agentd().lost();
            }
        }
    }
}

/// One `EditMessage` (nothing runs): the edit of message `message` to `text`, with the chat
/// message `offer` offering it when known.
async fn tell(
    app: &App,
    message: MessageId,
    text: String,
    offer: Option<MessageId>,
) -> Result<pb::EditMessageResponse, tonic::Status> {
    let request = pb::EditMessageRequest {
        session_id: None,
        message_key: key(app, message),
        text,
        run: false,
        deliver_to_owner: Some(pb::OwnerDelivery {
            reply_to_message_id: Some(i64::from(message.0)),
            placeholder_message_id: None,
            thread_id: app.topic(),
        }),
        offer_message_id: offer.map(|o| i64::from(o.0)),
    };
    match app.agentd().client().await {
        Ok(mut client) => client
            .edit_message(request)
            .await
            .map(tonic::Response::into_inner),
        Err(e) => Err(tonic::Status::unavailable(e.to_string())),
    }
}

/// The idempotency key of the owner's message `message` (as the turn that took it sent it: the
/// owner's private chat has the owner's id).
pub(crate) fn key(app: &App, message: MessageId) -> String {
    format!("tg:{}:{}", app.owner().0, message.0)
}

/// One reply quoting the edit with the button; a second edit updates the offer agentd
/// recorded (`recorded`), and a new offer is recorded with agentd.
async fn offer(app: &App, message: MessageId, text: String, recorded: Option<i64>) {
    let texts = app.texts();
    let html = texts.edit_offer(&text);
    let Some(buttons) = answer_button(message, app) else {
        return;
    };
    let telegram = app.telegram();
    if let Some(old) = recorded
        .and_then(|id| i32::try_from(id).ok())
        .map(MessageId)
    {
        match telegram.edit_html_with_buttons(old, &html, &buttons).await {
            Ok(()) => return,
            Err(e) => {
                tracing::warn!(error = %e, "the edit offer could not be updated; sending anew")
            }
        }
    }
    match telegram
        .send_with_buttons(&html, Some(message), buttons)
        .await
    {
        Ok(offer) => match tell(app, message, text, Some(offer)).await {
            Ok(_) => tracing::info!(offer = offer.0, "the edit offer is recorded"),
            Err(status) => {
                tracing::warn!(code = ?status.code(), "the edit offer could not be recorded")
            }
        },
        Err(e) => tracing::warn!(error = %e, "the edit offer could not be sent"),
    }
}

fn answer_button(message: MessageId, app: &App) -> Option<InlineKeyboardMarkup> {
    let data = buttons::data(&Press::AnswerEdit { message: message.0 })?;
    Some(InlineKeyboardMarkup::new([[
        InlineKeyboardButton::callback(app.texts().edit_offer_button(), data),
    ]]))
}

/// The owner pressed "Answer the edited message" for edited message `message` on the offer
/// `offer`: a turn answers the edit agentd recorded (its buttons go once it started). The toast.
pub(crate) async fn answer(app: &App, message: i32, offer: Option<MessageId>) -> &'static str {
    let texts = app.texts();
    let message = MessageId(message);
    let request = pb::EditMessageRequest {
        session_id: None,
        message_key: key(app, message),
        // Empty: the edit agentd recorded for the message (the newest one).
        text: String::new(),
        run: true,
        deliver_to_owner: Some(pb::OwnerDelivery {
            reply_to_message_id: Some(i64::from(message.0)),
            placeholder_message_id: None,
            thread_id: app.topic(),
        }),
        offer_message_id: None,
    };
    let reply = match app.agentd().client().await {
        Ok(mut client) => client.edit_message(request).await,
        Err(e) => Err(tonic::Status::unavailable(e.to_string())),
    };
    let (toast, done) = match reply {
        Ok(reply) if reply.get_ref().outcome() == Outcome::Busy => (texts.living_busy(), false),
        Ok(_) => (texts.edit_answering(), true),
        Err(status) if crate::agentd::is_transport_failure(&status) => {
            app.agentd().lost();
            (texts.agentd_unavailable(), false)
        }
        Err(status) => {
            tracing::info!(code = ?status.code(), "an edit offer is stale");
            (texts.living_stale(), true)
        }
    };
    if done
        && let Some(id) = offer
        && let Err(e) = app.telegram().set_buttons(id, None).await
    {
        tracing::debug!(error = %e, "the edit offer's button could not be removed");
    }
    toast
}
