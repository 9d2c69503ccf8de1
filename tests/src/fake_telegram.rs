//! `FakeTelegram`: a fake Telegram Bot API server on `127.0.0.1:0` that teloxide talks to
//! through `set_api_url`, speaking the real wire format and answering with Telegram's real
//! error texts.
//!
//! ```text
//! let tg = FakeTelegram::start(TELEGRAM_TOKEN).await;     // telegram.api_url = tg.api_url()
//! tg.wait_polling(Duration::from_secs(5)).await;          // the bot dropped pending updates
//! let asked = tg.user_text(OWNER_ID, "hello");            // queued for getUpdates
//! let reply = tg.wait_for_call("sendMessage", |c| c.ok && c.text().is_some(), T).await;
//! tg.inject("sendMessage", Failure::RetryAfter(1), 1);    // the next sendMessage gets a 429
//! tg.fail_for("sendMessage", Failure::Page(502), T);      // a proxy's HTML 502 for a while
//! let chat = tg.messages(OWNER_ID);                       // what the owner sees now
//! ```
//!
//! Served: long-poll `getUpdates` (offsets, negative offset = drop, `timeout` (or
//! [`FakeTelegram::time_out_poll`] at once), `allowed_updates`, 409 when a newer poll starts), `getMe`, `getWebhookInfo`,
//! `deleteWebhook` (`drop_pending_updates`), `sendMessage`, `editMessageText`,
//! `deleteMessage`, `sendChatAction`, `sendMessageDraft` (private chats, non-zero `draft_id`;
//! [`FakeTelegram::lack_drafts`] makes it an older Bot API without it), `setMyCommands`/`getMyCommands`/`deleteMyCommands`,
//! `getFile` + downloads, `sendVoice` (multipart), `setMessageReaction` (emoji reactions; the owner's own come as
//! `message_reaction` updates: [`FakeTelegram::user_reaction`]). Owner messages come as the apps send them:
//! text, photos, documents, voice, audio, edits, albums (`media_group_id`), replies (with
//! `quote`) and any other fields (`forward_origin`, `location`, `poll`, `sticker`, …: `bursts`).
//! An update is gone only once a later getUpdates passes a higher offset. Texts are checked with the strict
//! Telegram-HTML validator of the renderer tests. Anything else is 404 `Not Found`; a wrong
//! token is 401 `Unauthorized`. Every request is logged as a [`Call`] when it is answered.
//!
//! Topics in the private chat (Bot API 9.3/9.4): [`FakeTelegram::enable_topics`] sets getMe's
//! `has_topics_enabled`; owner messages in a topic carry `message_thread_id`
//! ([`FakeTelegram::user_text_in_topic`]); every send method takes `message_thread_id` (400
//! `message thread not found` for a topic the chat does not have or the owner deleted:
//! [`FakeTelegram::delete_topic`]) and [`SentMessage::thread_id`] records it;
//! `createForumTopic` / `editForumTopic` open and rename topics.
//!
//! Filtering follows Telegram: once the bot sends `allowed_updates` (teloxide's dispatcher does,
//! from its handler tree), queued updates of other known types are never delivered; updates
//! of unknown types (malformed test updates) always are.

mod bursts;
mod buttons;
mod hold;
mod incoming;
mod methods;
mod model;
mod multipart;
mod params;
mod polling;
mod reactions;
mod server;
mod state;
mod text;
mod topics;
mod wire;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use serde_json::Value;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

pub use buttons::{CALLBACK_DATA_LIMIT, Press};
pub use hold::Held;
pub use methods::DOWNLOAD_LIMIT;
pub use model::{Call, DOWNLOAD, Failure, SentMessage};
pub use text::{CAPTION_LIMIT, TEXT_LIMIT};
pub use wire::{BOT_FIRST_NAME, BOT_USERNAME};

use model::Injection;
use state::State;

/// The allowed user; their private chat's id is the same number.
pub const OWNER_ID: i64 = 4242;

/// What the server and every handle share.
pub(crate) struct Shared {
    token: String,
    state: Mutex<State>,
    injections: Mutex<Vec<Injection>>,
    holds: Mutex<Vec<hold::Hold>>,
    /// Woken when a call is logged or polling starts.
    activity: Notify,
    /// Woken when updates are queued or dropped, or a newer getUpdates starts.
    updates: Notify,
    shutdown: CancellationToken,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The pending injections (a panicking predicate does not wedge the server).
    fn holds(&self) -> MutexGuard<'_, Vec<hold::Hold>> {
        self.holds
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn injections(&self) -> MutexGuard<'_, Vec<Injection>> {
        self.injections
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn record(&self, call: Call) {
        self.lock().calls.push(call);
        self.activity.notify_waiters();
    }
}

/// Ends the server when the last handle is dropped.
struct StopOnDrop(CancellationToken);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// The fake Bot API; a cheap `Clone` handle. The server stops when the last handle drops.
#[derive(Clone)]
pub struct FakeTelegram {
    addr: SocketAddr,
    shared: Arc<Shared>,
    _stop: Arc<StopOnDrop>,
}

impl std::fmt::Debug for FakeTelegram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeTelegram")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl FakeTelegram {
    /// Binds `127.0.0.1:0` and serves the bot with `token` (its id is the token's number).
    pub async fn start(token: &str) -> FakeTelegram {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the fake Bot API");
        let addr = listener.local_addr().expect("fake Bot API address");
        let bot_id = token
            .split_once(':')
            .and_then(|(id, _)| id.parse().ok())
            .unwrap_or(1);
        let shutdown = CancellationToken::new();
        let shared = Arc::new(Shared {
            token: token.to_owned(),
            state: Mutex::new(State::new(bot_id)),
            injections: Mutex::new(Vec::new()),
            holds: Mutex::new(Vec::new()),
            activity: Notify::new(),
            updates: Notify::new(),
            shutdown: shutdown.clone(),
        });
        let app = Router::new()
            .fallback(server::handle)
            .layer(DefaultBodyLimit::max(64 * 1024 * 1024))
            .with_state(shared.clone());
        let stop = shutdown.clone();
        tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(stop.cancelled_owned());
            if let Err(e) = serve.await {
                tracing::warn!(error = %e, "fake Bot API stopped");
            }
        });
        FakeTelegram {
            addr,
            shared,
            _stop: Arc::new(StopOnDrop(shutdown)),
        }
    }

    /// `http://127.0.0.1:PORT/`: `telegram.api_url`, or teloxide's `set_api_url`.
    pub fn api_url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// POSTs a JSON `body` to `path` (e.g. `/bot<token>/getMe`) on a fresh HTTP/1.1
    /// connection; returns the status and the JSON answer. For tests of the wire itself.
    pub async fn post_raw(&self, path: &str, body: &str) -> (u16, Value) {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let mut stream = tokio::net::TcpStream::connect(self.addr)
            .await
            .expect("connect to the fake Bot API");
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.addr,
            body.len()
        );
        stream.write_all(request.as_bytes()).await.expect("send");
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.expect("read");
        let status = answer.get(9..12).and_then(|s| s.parse().ok());
        let body = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        let json = serde_json::from_str(body).ok();
        match (status, json) {
            (Some(status), Some(json)) => (status, json),
            _ => panic!("not an HTTP answer with a JSON body: {answer:?}"),
        }
    }

    /// The bot's user id (the number before the token's `:`).
    pub fn bot_id(&self) -> i64 {
        self.shared.lock().bot_id
    }

    fn queue<T>(&self, add: impl FnOnce(&mut State) -> T) -> T {
        let out = add(&mut self.shared.lock());
        self.shared.updates.notify_waiters();
        out
    }

    /// A private text message from `from`; returns its `message_id`.
    pub fn user_text(&self, from: i64, text: &str) -> i64 {
        self.queue(|st| st.user_text(from, text))
    }

    /// A text message from `from` in group `chat_id` (`-100…` ids are supergroups).
    pub fn group_text(&self, from: i64, chat_id: i64, text: &str) -> i64 {
        self.queue(|st| st.group_text(from, chat_id, text))
    }

    /// A private photo: small thumbnails first, `data` as the largest size.
    pub fn user_photo(&self, from: i64, data: Vec<u8>, caption: Option<&str>) -> i64 {
        self.queue(|st| st.user_photo(from, data, caption))
    }

    /// A private document holding `data`.
    pub fn user_document(
        &self,
        from: i64,
        file_name: &str,
        data: Vec<u8>,
        caption: Option<&str>,
    ) -> i64 {
        self.queue(|st| st.user_document(from, file_name, data, caption))
    }

    /// A private voice note (`audio/ogg`).
    pub fn user_voice(&self, from: i64, data: Vec<u8>) -> i64 {
        self.queue(|st| st.user_voice(from, data))
    }

    /// A private audio file (sent as music) of type `mime_type`; returns its `message_id`.
    pub fn user_audio(
        &self,
        from: i64,
        file_name: &str,
        mime_type: &str,
        data: Vec<u8>,
        caption: Option<&str>,
    ) -> i64 {
        self.queue(|st| st.user_audio(from, file_name, mime_type, data, caption))
    }

    /// A private document whose update claims `file_size` with no bytes behind it (getFile
    /// answers `file is too big` above [`DOWNLOAD_LIMIT`]; a download finds nothing).
    pub fn user_document_claiming_size(&self, from: i64, file_name: &str, file_size: u64) -> i64 {
        self.queue(|st| st.user_document_claiming_size(from, file_name, file_size))
    }

    /// An `edited_message` update: `from`'s private message `message_id` now reads `text`.
    pub fn edited_text(&self, from: i64, message_id: i64, text: &str) {
        self.queue(|st| st.edited_text(from, message_id, text));
    }

    /// A `message_reaction` update: `from` changed their reaction on message `message_id` of
    /// chat `chat_id` from `old` to `new` (emojis), as Telegram sends it (only to a bot that
    /// asked for `message_reaction` in `allowed_updates`).
    pub fn user_reaction(
        &self,
        from: i64,
        chat_id: i64,
        message_id: i64,
        old: &[&str],
        new: &[&str],
    ) {
        self.queue(|st| reactions::user_reaction(st, from, chat_id, message_id, old, new));
    }

    /// The bot's own reaction emojis on message `message_id` of chat `chat_id` now.
    pub fn bot_reactions(&self, chat_id: i64, message_id: i64) -> Vec<String> {
        self.shared
            .lock()
            .bot_reactions
            .get(&(chat_id, message_id))
            .cloned()
            .unwrap_or_default()
    }

    /// Queues any update (an `update_id` is added to objects without one). Chats named by
    /// its `message`, `edited_message`, `channel_post`… become known to the bot.
    pub fn push_raw_update(&self, update: Value) {
        self.queue(|st| {
            for kind in [
                "message",
                "edited_message",
                "channel_post",
                "edited_channel_post",
            ] {
                let chat = update.get(kind).and_then(|m| m.get("chat"));
                if let Some(id) = chat.and_then(|c| c.get("id")).and_then(Value::as_i64) {
                    let json = chat.cloned().unwrap_or_default();
                    st.chat_or_insert(id, || json);
                }
            }
            st.push_raw(update);
        });
    }

    /// `from` presses the button carrying `data` on message `message_id` in chat `chat_id`
    /// (a `callback_query` update); returns the query id. Panics when there is no such button.
    pub fn press(&self, from: i64, chat_id: i64, message_id: i64, data: &str) -> String {
        self.queue(|st| st.press(from, chat_id, message_id, data))
    }

    /// The button press `id` and how the bot answered it.
    pub fn pressed(&self, id: &str) -> Option<Press> {
        let st = self.shared.lock();
        st.presses.iter().find(|p| p.id == id).cloned()
    }

    /// The inline keyboard message `message_id` of chat `chat_id` shows now: each button's
    /// `(text, callback_data)`, row by row (empty when it has none).
    pub fn buttons(&self, chat_id: i64, message_id: i64) -> Vec<(String, String)> {
        let st = self.shared.lock();
        let Some(message) = st
            .chats
            .get(&chat_id)
            .and_then(|c| c.messages.iter().find(|m| m.id == message_id))
        else {
            return Vec::new();
        };
        message.json["reply_markup"]["inline_keyboard"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_array)
            .flatten()
            .map(|b| {
                let text = b["text"].as_str().unwrap_or_default().to_owned();
                let data = b["callback_data"].as_str().unwrap_or_default().to_owned();
                (text, data)
            })
            .collect()
    }

    /// How many updates are queued and not yet confirmed by an offset.
    pub fn pending_updates(&self) -> usize {
        self.shared.lock().queue.len()
    }

    /// Every request so far, in the order they were answered (a long poll when it returned).
    pub fn calls(&self) -> Vec<Call> {
        self.shared.lock().calls.clone()
    }

    /// The calls of `method` (case-insensitive).
    pub fn calls_of(&self, method: &str) -> Vec<Call> {
        let method = method.to_ascii_lowercase();
        let st = self.shared.lock();
        st.calls
            .iter()
            .filter(|c| c.method == method)
            .cloned()
            .collect()
    }

    /// How many calls are logged (a start for [`Self::wait_for_call_since`]).
    pub fn call_count(&self) -> usize {
        self.shared.lock().calls.len()
    }

    /// The first logged call of `method` matching `pred`, waiting up to `timeout` for it;
    /// panics with the call log on timeout.
    pub async fn wait_for_call(
        &self,
        method: &str,
        pred: impl Fn(&Call) -> bool,
        timeout: Duration,
    ) -> Call {
        self.wait_for_call_since(0, method, pred, timeout).await
    }

    /// Like [`Self::wait_for_call`], among the calls logged from index `since` on.
    pub async fn wait_for_call_since(
        &self,
        since: usize,
        method: &str,
        pred: impl Fn(&Call) -> bool,
        timeout: Duration,
    ) -> Call {
        let method = method.to_ascii_lowercase();
        let found = self
            .wait_until(timeout, |st| {
                let calls = st.calls.get(since..).unwrap_or_default();
                calls
                    .iter()
                    .find(|c| c.method == method && pred(c))
                    .cloned()
            })
            .await;
        found.unwrap_or_else(|| {
            panic!(
                "no matching {method} call within {timeout:?}; calls:\n{}",
                self.call_log()
            )
        })
    }

    /// Returns once a regular getUpdates (not a drop of pending updates) arrived after the
    /// last drop; panics with the call log on timeout.
    pub async fn wait_polling(&self, timeout: Duration) {
        let polling = self
            .wait_until(timeout, |st| st.polling.then_some(()))
            .await;
        if polling.is_none() {
            panic!(
                "the bot did not start polling within {timeout:?}; calls:\n{}",
                self.call_log()
            );
        }
    }

    /// Ends the getUpdates being held now with an empty answer, as Telegram does when the
    /// poll's `timeout` passes with nothing to deliver (so a test need not wait the bot's
    /// whole long poll). No effect between polls: the next poll is held as usual.
    pub fn time_out_poll(&self) {
        {
            let mut st = self.shared.lock();
            st.timed_out_generation = st.poll_generation;
        }
        self.shared.updates.notify_waiters();
    }

    /// Forgets that the bot was polling, so that [`Self::wait_polling`] waits for a new
    /// process: call it after stopping the bot and before starting it again.
    pub fn reset_polling(&self) {
        self.shared.lock().polling = false;
    }

    /// Evaluates `check` whenever something happens until it yields, or `timeout` passes.
    async fn wait_until<T>(
        &self,
        timeout: Duration,
        mut check: impl FnMut(&State) -> Option<T>,
    ) -> Option<T> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.shared.activity.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(found) = check(&self.shared.lock()) {
                return Some(found);
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return check(&self.shared.lock());
            }
        }
    }

    /// The call log, one [`Call::summary`] a line.
    pub fn call_log(&self) -> String {
        let st = self.shared.lock();
        let lines: Vec<String> = st.calls.iter().map(Call::summary).collect();
        lines.join("\n")
    }

    /// The bot's messages in `chat_id` as the chat shows them now (deleted ones flagged), in
    /// send order.
    pub fn messages(&self, chat_id: i64) -> Vec<SentMessage> {
        self.shared.lock().sent_messages(chat_id)
    }

    /// getMe says `has_topics_enabled`: the owner turned on topics for the bot in @BotFather.
    pub fn enable_topics(&self) {
        self.shared.lock().topics_enabled = true;
    }

    /// The owner opens topic `name` in their chat with the bot (a `forum_topic_created` service
    /// message update); returns its `message_thread_id`.
    pub fn user_opens_topic(&self, from: i64, name: &str) -> i64 {
        self.queue(|st| st.user_opens_topic(from, name))
    }

    /// A private text message from `from` in topic `thread`; returns its `message_id`.
    pub fn user_text_in_topic(&self, from: i64, thread: i64, text: &str) -> i64 {
        self.queue(|st| st.user_text_in_topic(from, thread, text))
    }

    /// A forum topic service message `kind` (`forum_topic_edited`, `forum_topic_closed`,
    /// `forum_topic_reopened`) with `payload` in topic `thread`; returns its `message_id`.
    pub fn user_topic_service(&self, from: i64, thread: i64, kind: &str, payload: Value) -> i64 {
        self.queue(|st| st.user_topic_service(from, thread, kind, payload))
    }

    /// The owner deletes topic `thread` of chat `chat_id`: its messages go, and sends into it
    /// answer 400 `message thread not found`.
    pub fn delete_topic(&self, chat_id: i64, thread: i64) {
        self.shared.lock().delete_topic(chat_id, thread);
    }

    /// The name topic `thread` of chat `chat_id` has now (`None`: no such topic).
    pub fn topic_name(&self, chat_id: i64, thread: i64) -> Option<String> {
        self.shared.lock().topic_name(chat_id, thread)
    }

    /// The bot's messages in topic `thread` of `chat_id` (live ones), in send order.
    pub fn messages_in_topic(&self, chat_id: i64, thread: i64) -> Vec<SentMessage> {
        let mut messages = self.messages(chat_id);
        messages.retain(|m| m.thread_id == Some(thread) && m.message_id != thread && !m.deleted);
        messages
    }

    /// From now on sendMessageDraft answers 404 `Not Found: method not found`, like a Bot API
    /// older than 9.3.
    pub fn lack_drafts(&self) {
        self.shared.lock().drafts_missing = true;
    }

    /// The commands of the last successful setMyCommands (`[{"command", "description"}]`).
    pub fn commands(&self) -> Option<Value> {
        self.shared.lock().commands.clone()
    }

    /// The next `times` calls of `method` (case-insensitive; [`DOWNLOAD`] for downloads)
    /// fail with `failure` instead of being performed.
    pub fn inject(&self, method: &str, failure: Failure, times: u32) {
        self.add_injection(method, None, failure, times);
    }

    /// Like [`Self::inject`], only for calls whose parameters satisfy `pred`. Injections are
    /// tried in the order they were added; the first that matches a call is used.
    pub fn inject_when(
        &self,
        method: &str,
        pred: impl Fn(&Value) -> bool + Send + Sync + 'static,
        failure: Failure,
        times: u32,
    ) {
        self.add_injection(method, Some(Arc::new(pred)), failure, times);
    }

    /// The next call of `method` whose parameters satisfy `pred` waits, once it arrived, until
    /// the returned handle releases it; then it is performed as usual.
    pub fn hold_when(
        &self,
        method: &str,
        pred: impl Fn(&Value) -> bool + Send + Sync + 'static,
    ) -> Held {
        let (hold, held) = hold::Hold::new(method, Arc::new(pred));
        self.shared.holds().push(hold);
        held
    }

    /// Every call of `method` fails with `failure` for `period` from now (a Bot API outage:
    /// e.g. `Failure::Api { code: 503, … }` or `Failure::Page(502)`).
    pub fn fail_for(&self, method: &str, failure: Failure, period: std::time::Duration) {
        self.shared.injections().push(Injection {
            method: method.to_ascii_lowercase(),
            when: None,
            failure,
            remaining: u32::MAX,
            until: Some(std::time::Instant::now() + period),
        });
    }

    fn add_injection(
        &self,
        method: &str,
        when: Option<model::Predicate>,
        failure: Failure,
        times: u32,
    ) {
        if times == 0 {
            return;
        }
        let injection = Injection {
            method: method.to_ascii_lowercase(),
            when,
            failure,
            remaining: times,
            until: None,
        };
        self.shared.injections().push(injection);
    }
}
