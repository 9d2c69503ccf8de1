//! `App`: the cheap `Clone` handle every task gets — the Bot API bound to the owner's chat, the
//! agentd handle, the texts, and who the owner and the bot are. Nothing survives between
//! updates except what agentd keeps.

use std::sync::Arc;

use teloxide::types::{MessageId, UserId};

use crate::agentd::Agentd;
use crate::living::Living;
use crate::telegram::Telegram;
use crate::texts::Texts;

/// How answers take form (`telegram.live_preview`, `telegram.show_reasoning`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct AnswerForm {
    /// Show a running turn as Telegram drafts (when the Bot API has them).
    pub live_preview: bool,
    /// Send the model's reasoning before the answer.
    pub show_reasoning: bool,
    /// Messages in a topic of the owner's chat run in that topic's session and are answered
    /// there (`telegram.topics` not "off").
    pub topics: bool,
}

/// What every task shares.
#[derive(Clone, Debug)]
pub(crate) struct App {
    inner: Arc<Inner>,
    /// The Bot API bound to the owner's chat, or to one topic of it ([`App::in_topic`]).
    telegram: Telegram,
}

#[derive(Debug)]
struct Inner {
    agentd: Agentd,
    texts: Texts,
    owner: UserId,
    username: Option<String>,
    form: AnswerForm,
    living: Living,
    /// Whether the bot has topics (read from getMe, kept up to date).
    topics: crate::telegram::Availability,
}

impl App {
    /// The handle over the adapter's parts; `me` is what getMe said about the bot (its
    /// username for `/cmd@bot`, whether it has topics).
    pub(crate) fn new(
        telegram: Telegram,
        agentd: Agentd,
        texts: Texts,
        owner: UserId,
        me: crate::telegram::BotMe,
        form: AnswerForm,
        living: Living,
    ) -> Self {
        Self {
            telegram,
            inner: Arc::new(Inner {
                agentd,
                texts,
                owner,
                username: me.username,
                form,
                living,
                topics: crate::telegram::Availability::new(me.has_topics_enabled),
            }),
        }
    }

    /// How answers take form.
    pub(crate) fn form(&self) -> AnswerForm {
        self.inner.form
    }

    /// Whether the bot has topics, as last learnt ([`crate::topics::usable`] decides).
    pub(crate) fn topic_availability(&self) -> &crate::telegram::Availability {
        &self.inner.topics
    }

    /// What messages that live need remembered (edits, reactions).
    pub(crate) fn living(&self) -> &Living {
        &self.inner.living
    }

    pub(crate) fn telegram(&self) -> &Telegram {
        &self.telegram
    }

    /// This handle writing into topic `thread` of the owner's chat (`None`: the main chat).
    pub(crate) fn in_topic(&self, thread: Option<i64>) -> App {
        App {
            inner: self.inner.clone(),
            telegram: self.telegram.in_topic(thread),
        }
    }

    /// This handle adding `note` under a text that falls back to the main chat because the
    /// topic it was for is gone.
    pub(crate) fn with_gone_note(&self, note: String) -> App {
        App {
            inner: self.inner.clone(),
            telegram: self.telegram.with_gone_note(note),
        }
    }

    /// The topic this handle writes into (`None`: the main chat).
    pub(crate) fn topic(&self) -> Option<i64> {
        self.telegram.topic()
    }

    pub(crate) fn agentd(&self) -> &Agentd {
        &self.inner.agentd
    }

    pub(crate) fn texts(&self) -> Texts {
        self.inner.texts
    }

    /// The only Telegram user the bot answers.
    pub(crate) fn owner(&self) -> UserId {
        self.inner.owner
    }

    /// The bot's username, when getMe told it.
    pub(crate) fn username(&self) -> Option<&str> {
        self.inner.username.as_deref()
    }

    /// Sends `html` to the owner, split like answers when long; failures are logged (the owner cannot be told).
    pub(crate) async fn say(&self, html: &str, reply_to: Option<MessageId>) {
        if let Err(e) = self.telegram().send_text(html, reply_to).await {
            tracing::error!(error = %e, "a reply could not be sent");
        }
    }

    /// Sends `html` (one message: a page of `/memory`) with `buttons`, as a reply to `reply_to`;
    /// sent without them if Telegram refuses the keyboard.
    pub(crate) async fn say_with_buttons(
        &self,
        html: &str,
        reply_to: MessageId,
        buttons: teloxide::types::InlineKeyboardMarkup,
    ) {
        let sent = self
            .telegram()
            .send_with_buttons(html, Some(reply_to), buttons)
            .await;
        if let Err(e) = sent {
            tracing::warn!(error = %e, "a reply with buttons could not be sent; sending it plain");
            self.say(html, Some(reply_to)).await;
        }
    }

    /// Shows `html` in place of the placeholder when there is one, else as a new reply.
    pub(crate) async fn replace_or_say(
        &self,
        placeholder: Option<MessageId>,
        html: &str,
        reply_to: MessageId,
    ) {
        if let Some(id) = placeholder {
            match self.telegram().edit_html(id, html).await {
                Ok(()) => return,
                Err(e) => tracing::warn!(error = %e, "placeholder edit failed; sending instead"),
            }
        }
        self.say(html, Some(reply_to)).await;
    }
}
