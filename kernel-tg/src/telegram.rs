//! `Telegram`: every call kernel-tg makes to the Bot API, bound to the owner's private chat, with
//! flood-control waits, bounded retries, HTML→plain fallback and URL-free (token-free) errors.
//!
//! Retries never risk a duplicate: a 429 (Telegram did nothing) is retried after its
//! `retry_after`; a failure to connect (the request never left) is retried with backoff; other
//! network errors are retried only for idempotent calls (edit, delete, chat action, downloads).

use std::time::Duration;

use futures::StreamExt;
use teloxide::net::Download;
use teloxide::payloads::{
    AnswerCallbackQuerySetters, EditMessageReplyMarkupSetters, EditMessageTextSetters,
    SendChatActionSetters, SendMessageSetters,
};
use teloxide::prelude::Requester;
use teloxide::requests::Output;
use teloxide::types::{
    BotCommand, CallbackQueryId, ChatAction, ChatId, FileId, InlineKeyboardMarkup, MessageId,
    ParseMode, ReplyParameters, ThreadId,
};
use teloxide::{ApiError, Bot, RequestError};

use kernel_render::Chunk;

mod draft;
mod files;
mod topics;

pub(crate) use draft::DraftError;
use draft::DraftSupport;
pub(crate) use topics::{Availability, BotMe, is_not_forum};

/// Telegram's longest text message, in UTF-16 units.
const MAX_MESSAGE_UNITS: usize = 4096;
/// Most waits for one call under flood control.
const MAX_FLOOD_WAITS: u32 = 5;
/// Longest `retry_after` honoured; longer ones fail the call (and are logged).
const MAX_RETRY_AFTER: Duration = Duration::from_secs(120);
/// Most retries after a network error.
const MAX_NETWORK_RETRIES: u32 = 3;

/// The Bot API, as used for the one chat kernel-tg ever writes to.
#[derive(Clone)]
pub(crate) struct Telegram {
    bot: Bot,
    chat: ChatId,
    /// The topic of the chat new messages go to (`message_thread_id`); `None`: the main chat.
    thread: Option<ThreadId>,
    /// Added (plain text) under a text that falls back to the main chat because the topic was
    /// deleted: which topic it was for.
    gone_note: Option<String>,
    drafts: DraftSupport,
}

impl std::fmt::Debug for Telegram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telegram")
            .field("chat", &self.chat)
            .finish_non_exhaustive()
    }
}

/// A Bot API call that finally failed; its text never contains a URL (so never the token).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{text}")]
pub(crate) struct SendError {
    text: String,
    permanent: bool,
}

impl SendError {
    /// Whether Telegram refused the call for good (the bot was blocked, a bad request…);
    /// otherwise it may work later (network, flood control, Telegram's own 5xx).
    pub(crate) fn is_permanent(&self) -> bool {
        self.permanent
    }
}

/// Telegram's answer for a send into a topic that no longer exists (the owner deleted it).
fn is_thread_gone(e: &RequestError) -> bool {
    matches!(e, RequestError::Api(ApiError::Unknown(text))
        if text.to_ascii_lowercase().contains("message thread not found"))
}

/// A file that could not be fetched from Telegram.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum DownloadError {
    #[error("the file is larger than {limit} bytes")]
    TooLarge { limit: u64 },
    #[error("{0}")]
    Failed(String),
}

impl Telegram {
    /// Binds `bot` to the owner's private chat.
    pub(crate) fn new(bot: Bot, chat: ChatId) -> Self {
        Self {
            bot,
            chat,
            thread: None,
            gone_note: None,
            drafts: DraftSupport::default(),
        }
    }

    /// The same chat, new messages, drafts and chat actions going into topic `thread`
    /// (`None`: the main chat). Edits and deletions need no topic.
    pub(crate) fn in_topic(&self, thread: Option<i64>) -> Self {
        let thread = thread
            .and_then(|t| i32::try_from(t).ok())
            .map(|t| ThreadId(MessageId(t)));
        Self {
            thread,
            gone_note: None,
            ..self.clone()
        }
    }

    /// The same, adding `note` under a text sent in the main chat because the topic is gone.
    pub(crate) fn with_gone_note(&self, note: String) -> Self {
        Self {
            gone_note: Some(note),
            ..self.clone()
        }
    }

    /// The topic new messages go to.
    pub(crate) fn topic(&self) -> Option<i64> {
        self.thread.map(|t| i64::from(t.0.0))
    }

    /// The underlying bot (for polling).
    pub(crate) fn bot(&self) -> &Bot {
        &self.bot
    }

    /// Sends HTML; `None` reply means a plain new message.
    pub(crate) async fn send_html(
        &self,
        html: &str,
        reply_to: Option<MessageId>,
    ) -> Result<MessageId, SendError> {
        self.send(html, Some(ParseMode::Html), reply_to)
            .await
            .map_err(describe)
    }

    /// Sends a bot text (Telegram HTML, e.g. a command reply) through the answers' split: one
    /// message per chunk of at most 4096 units (the first replying to `reply_to`), each falling
    /// back to plain text when Telegram rejects its HTML. Stops at the first chunk that fails.
    pub(crate) async fn send_text(
        &self,
        html: &str,
        reply_to: Option<MessageId>,
    ) -> Result<MessageId, SendError> {
        let chunks = kernel_render::render_html(html);
        let mut first = None;
        for (index, chunk) in chunks.iter().enumerate() {
            let reply = if index == 0 { reply_to } else { None };
            let id = self.send_chunk(chunk, reply).await.inspect_err(|e| {
                tracing::warn!(
                    error = %e,
                    chunk = index + 1,
                    of = chunks.len(),
                    "a part of a reply could not be sent"
                );
            })?;
            first.get_or_insert(id);
        }
        first.ok_or_else(|| SendError {
            text: "empty text".to_owned(),
            permanent: true,
        })
    }

    /// Sends one rendered chunk; when Telegram rejects its HTML, sends the plain fallback.
    pub(crate) async fn send_chunk(
        &self,
        chunk: &Chunk,
        reply_to: Option<MessageId>,
    ) -> Result<MessageId, SendError> {
        match self
            .send(&chunk.html, Some(ParseMode::Html), reply_to)
            .await
        {
            Err(RequestError::Api(ApiError::CantParseEntities(detail))) => {
                tracing::warn!(%detail, "Telegram rejected a chunk's HTML; sending it as plain text");
                self.send(&chunk.plain, None, reply_to)
                    .await
                    .map_err(describe)
            }
            other => other.map_err(describe),
        }
    }

    async fn send(
        &self,
        text: &str,
        mode: Option<ParseMode>,
        reply_to: Option<MessageId>,
    ) -> Result<MessageId, RequestError> {
        let mut thread = self.thread;
        let mut text = std::borrow::Cow::Borrowed(text);
        loop {
            let sent = retry(false, || {
                let mut request = self.bot.send_message(self.chat, text.as_ref());
                if let Some(thread) = thread {
                    request = request.message_thread_id(thread);
                }
                if let Some(mode) = mode {
                    request = request.parse_mode(mode);
                }
                if let Some(id) = reply_to {
                    request = request
                        .reply_parameters(ReplyParameters::new(id).allow_sending_without_reply());
                }
                request
            })
            .await;
            match sent {
                // The owner deleted the topic: the text goes to the main chat, never lost.
                Err(e) if thread.is_some() && is_thread_gone(&e) => {
                    tracing::warn!(thread = ?thread, "the topic is gone; sending in the main chat");
                    thread = None;
                    if let Some(note) = &self.gone_note {
                        let note = match mode {
                            Some(ParseMode::Html) => crate::texts::escape_html(note),
                            _ => note.clone(),
                        };
                        let noted = format!("{text}\n\n{note}");
                        // Telegram's limit: a text too long for the note goes without it.
                        if noted.encode_utf16().count() <= MAX_MESSAGE_UNITS {
                            text = noted.into();
                        }
                    }
                }
                other => return other.map(|m| m.id),
            }
        }
    }

    /// Runs `send` into this topic; when the owner deleted the topic ("message thread not
    /// found"), once more in the main chat: buttons, voice and files are never lost either.
    async fn to_topic_or_main<T, Fut>(
        &self,
        send: impl Fn(Option<ThreadId>) -> Fut,
    ) -> Result<T, RequestError>
    where
        Fut: Future<Output = Result<T, RequestError>>,
    {
        match send(self.thread).await {
            Err(e) if self.thread.is_some() && is_thread_gone(&e) => {
                tracing::warn!(thread = ?self.thread, "the topic is gone; sending in the main chat");
                send(None).await
            }
            other => other,
        }
    }

    /// Replaces a message's HTML; "message is not modified" counts as success.
    pub(crate) async fn edit_html(&self, id: MessageId, html: &str) -> Result<(), SendError> {
        let result = retry(true, || {
            self.bot
                .edit_message_text(self.chat, id, html)
                .parse_mode(ParseMode::Html)
        })
        .await;
        match result {
            Ok(_) | Err(RequestError::Api(ApiError::MessageNotModified)) => Ok(()),
            Err(e) => Err(describe(e)),
        }
    }

    /// Sends HTML with inline keyboard `buttons` (a placeholder's Stop button, a question's
    /// options).
    pub(crate) async fn send_with_buttons(
        &self,
        html: &str,
        reply_to: Option<MessageId>,
        buttons: InlineKeyboardMarkup,
    ) -> Result<MessageId, SendError> {
        let buttons = &buttons;
        let message = self
            .to_topic_or_main(|thread| {
                retry(false, move || {
                    let mut request = self
                        .bot
                        .send_message(self.chat, html)
                        .parse_mode(ParseMode::Html)
                        .reply_markup(buttons.clone());
                    if let Some(thread) = thread {
                        request = request.message_thread_id(thread);
                    }
                    if let Some(id) = reply_to {
                        request = request.reply_parameters(
                            ReplyParameters::new(id).allow_sending_without_reply(),
                        );
                    }
                    request
                })
            })
            .await
            .map_err(describe)?;
        Ok(message.id)
    }

    /// [`Telegram::edit_html`] keeping `buttons` (an edit without them would remove them).
    pub(crate) async fn edit_html_with_buttons(
        &self,
        id: MessageId,
        html: &str,
        buttons: &InlineKeyboardMarkup,
    ) -> Result<(), SendError> {
        let result = retry(true, || {
            self.bot
                .edit_message_text(self.chat, id, html)
                .parse_mode(ParseMode::Html)
                .reply_markup(buttons.clone())
        })
        .await;
        match result {
            Ok(_) | Err(RequestError::Api(ApiError::MessageNotModified)) => Ok(()),
            Err(e) => Err(describe(e)),
        }
    }

    /// Sets a message's inline keyboard (`None` removes it); "not modified" counts as success.
    pub(crate) async fn set_buttons(
        &self,
        id: MessageId,
        buttons: Option<InlineKeyboardMarkup>,
    ) -> Result<(), SendError> {
        let result = retry(true, || {
            let request = self.bot.edit_message_reply_markup(self.chat, id);
            match buttons.clone() {
                Some(buttons) => request.reply_markup(buttons),
                None => request,
            }
        })
        .await;
        match result {
            Ok(_) | Err(RequestError::Api(ApiError::MessageNotModified)) => Ok(()),
            Err(e) => Err(describe(e)),
        }
    }

    /// Answers a button press (Telegram shows `toast` briefly, or just stops the spinner).
    pub(crate) async fn answer_callback(
        &self,
        id: &str,
        toast: Option<&str>,
    ) -> Result<(), SendError> {
        retry(true, || {
            let request = self
                .bot
                .answer_callback_query(CallbackQueryId(id.to_owned()));
            match toast {
                Some(text) => request.text(text),
                None => request,
            }
        })
        .await
        .map(|_| ())
        .map_err(describe)
    }

    /// Deletes a message; one already gone counts as success.
    pub(crate) async fn delete(&self, id: MessageId) -> Result<(), SendError> {
        match retry(true, || self.bot.delete_message(self.chat, id)).await {
            Ok(_) | Err(RequestError::Api(ApiError::MessageToDeleteNotFound)) => Ok(()),
            Err(e) => Err(describe(e)),
        }
    }

    /// Shows "typing…" for about five seconds.
    pub(crate) async fn typing(&self) -> Result<(), SendError> {
        retry(true, || {
            let mut request = self.bot.send_chat_action(self.chat, ChatAction::Typing);
            if let Some(thread) = self.thread {
                request = request.message_thread_id(thread);
            }
            request
        })
        .await
        .map(|_| ())
        .map_err(describe)
    }

    /// Registers the command menu.
    pub(crate) async fn set_commands(&self, commands: Vec<BotCommand>) -> Result<(), SendError> {
        retry(true, || self.bot.set_my_commands(commands.clone()))
            .await
            .map(|_| ())
            .map_err(describe)
    }

    /// Downloads a file, refusing more than `limit` bytes even if Telegram's size was wrong.
    pub(crate) async fn download(
        &self,
        file_id: &str,
        limit: u64,
    ) -> Result<Vec<u8>, DownloadError> {
        let file = retry(true, || self.bot.get_file(FileId(file_id.to_owned())))
            .await
            .map_err(|e| DownloadError::Failed(describe(e).text))?;
        if u64::from(file.meta.size) > limit {
            return Err(DownloadError::TooLarge { limit });
        }
        let mut stream = self.bot.download_file_stream(&file.path);
        let mut data = Vec::with_capacity(file.meta.size as usize);
        while let Some(piece) = stream.next().await {
            let piece = piece.map_err(|e| DownloadError::Failed(without_url(&e)))?;
            if (data.len() + piece.len()) as u64 > limit {
                return Err(DownloadError::TooLarge { limit });
            }
            data.extend_from_slice(&piece);
        }
        Ok(data)
    }
}

/// Sends the request built by `make` until it succeeds or fails for good.
async fn retry<R, F>(idempotent: bool, make: F) -> Result<Output<R>, RequestError>
where
    F: Fn() -> R,
    R: teloxide::requests::Request<Err = RequestError>,
{
    let mut flood_waits = 0;
    let mut network_retries = 0;
    loop {
        match make().send().await {
            Err(RequestError::RetryAfter(after))
                if flood_waits < MAX_FLOOD_WAITS && after.duration() <= MAX_RETRY_AFTER =>
            {
                flood_waits += 1;
                tracing::warn!(
                    retry_after_s = after.seconds(),
                    "Telegram flood control; waiting"
                );
                tokio::time::sleep(after.duration()).await;
            }
            Err(RequestError::Network(e))
                if network_retries < MAX_NETWORK_RETRIES && (idempotent || e.is_connect()) =>
            {
                network_retries += 1;
                tracing::warn!(error = %without_url(&*e), attempt = network_retries, "Telegram unreachable; retrying");
                tokio::time::sleep(Duration::from_millis(500) * 2u32.pow(network_retries)).await;
            }
            other => return other,
        }
    }
}

/// A failed call's text, with any URL (which holds the bot token) left out.
pub(crate) fn describe(e: RequestError) -> SendError {
    let permanent = is_permanent(&e);
    let text = match e {
        RequestError::Network(e) => format!("network error: {}", without_url(&*e)),
        RequestError::InvalidJson { source, .. } => {
            format!("invalid response from Telegram: {source}")
        }
        other => other.to_string(),
    };
    SendError { text, permanent }
}

/// Whether Telegram answered with a refusal that will not change by retrying. teloxide keeps
/// only the description of an error answer (not its `error_code`), and maps descriptions it
/// does not know to `ApiError::Unknown`: Telegram words its 4xx refusals "Bad Request: …",
/// "Forbidden: …", "Unauthorized", "Not Found", so an unknown description is permanent only
/// with one of those prefixes. Everything else is transient: a 5xx's description ("Internal
/// Server Error", "Bad Gateway", "Service Unavailable"… or any other wording), a non-JSON page
/// (a proxy's 502, `InvalidJson`), network errors, flood control beyond our waits.
fn is_permanent(e: &RequestError) -> bool {
    match e {
        RequestError::Api(ApiError::Unknown(text)) => is_refusal(text),
        RequestError::Api(_) | RequestError::MigrateToChatId(_) => true,
        _ => false,
    }
}

/// Whether an unknown error description is a 4xx refusal.
fn is_refusal(description: &str) -> bool {
    const REFUSALS: [&str; 5] = [
        "Bad Request",
        "Forbidden",
        "Unauthorized",
        "Not Found",
        "Conflict",
    ];
    let description = description.trim_start();
    REFUSALS.iter().any(|r| description.starts_with(r))
}

/// An error's chain with every `for url (…)` part (reqwest's, holding the token) cut out.
fn without_url(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = strip_urls(&e.to_string());
    let mut cur = e.source();
    while let Some(s) = cur {
        out.push_str(": ");
        out.push_str(&strip_urls(&s.to_string()));
        cur = s.source();
    }
    out
}

/// `text` without reqwest's ` for url (…)` parts and without anything URL-shaped.
fn strip_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(" for url (") {
        out.push_str(&rest[..at]);
        rest = &rest[at + " for url (".len()..];
        rest = match rest.find(')') {
            Some(end) => &rest[end + 1..],
            None => "",
        };
    }
    out.push_str(rest);
    out.split(' ')
        .map(|word| if word.contains("://") { "[url]" } else { word })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::{describe, strip_urls};
    use teloxide::types::Seconds;
    use teloxide::{ApiError, RequestError};

    #[test]
    fn refusals_are_permanent_and_everything_else_is_retried() {
        let permanent = |e: RequestError| describe(e).is_permanent();
        assert!(permanent(RequestError::Api(ApiError::BotBlocked)));
        assert!(permanent(RequestError::Api(ApiError::MessageIsTooLong)));
        assert!(permanent(RequestError::Api(ApiError::Unknown(
            "Bad Request: something new".into()
        ))));
        assert!(permanent(RequestError::Api(ApiError::Unknown(
            "Forbidden: bot was kicked from the group chat".into()
        ))));
        assert!(permanent(RequestError::Api(ApiError::Unknown(
            "Unauthorized".into()
        ))));
        for server in [
            "Internal Server Error",
            "Bad Gateway",
            "Service Unavailable",
            "Service Temporarily Unavailable",
            "Gateway Timeout",
            "Internal Server Error: restart",
            "something Telegram never said before",
        ] {
            assert!(
                !permanent(RequestError::Api(ApiError::Unknown(server.into()))),
                "{server}"
            );
        }
        assert!(!permanent(RequestError::RetryAfter(Seconds::from_seconds(
            300
        ))));
    }

    #[test]
    fn a_non_json_error_page_is_transient() {
        // What teloxide makes of a proxy's HTML 502/503 page.
        let page = "<html><head><title>502 Bad Gateway</title></head></html>";
        let source = serde_json::from_str::<serde_json::Value>(page).unwrap_err();
        let e = RequestError::InvalidJson {
            source: std::sync::Arc::new(source),
            raw: page.into(),
        };
        let described = describe(e);
        assert!(!described.is_permanent());
        assert!(
            described
                .to_string()
                .starts_with("invalid response from Telegram")
        );
    }

    #[test]
    fn urls_and_their_tokens_are_cut_out() {
        let text =
            "error sending request for url (http://127.0.0.1:1/bot123:SECRET/SendMessage): connect";
        let stripped = strip_urls(text);
        assert_eq!(stripped, "error sending request: connect");
        let bare = strip_urls("see https://api.telegram.org/bot123:SECRET/GetMe now");
        assert_eq!(bare, "see [url] now");
        assert!(!strip_urls("x for url (unterminated bot1:SECRET").contains("SECRET"));
    }
}
