//! The intake loop: kernel-tg's own long polling of `getUpdates`. Nothing the owner sends is
//! lost: an update is confirmed (the next `getUpdates` offset passes it) only once it is
//! handled — its turn accepted by agentd (or refused as busy), its command dispatched, or
//! dropped by the allow-list ([`ledger`]). Pending updates are taken at start, not dropped: the
//! owner's messages sent while Kernel was down become one late turn ([`backlog`]). Messages that
//! belong together become one turn ([`batch`]); turns reach agentd one after another, retried
//! while agentd is away ([`handover`]).

pub(crate) mod backlog;
pub(crate) mod batch;
mod handover;
mod held;
pub(crate) mod ledger;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::Utc;
use teloxide::Bot;
use teloxide::payloads::GetUpdatesSetters;
use teloxide::prelude::Requester;
use teloxide::types::{AllowedUpdate, Message, Update, UpdateKind};
use tokio::sync::{Notify, mpsc};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::admission;
use crate::bundle::{Bundle, Part};
use crate::command_call::perform;
use crate::handle::App;
use crate::incoming::{self, Incoming};
use backlog::Skipped;
use batch::Coalescer;
use held::Held;
use ledger::Ledger;

/// How long one getUpdates waits for news (below the HTTP client's 17 s timeout).
const LONG_POLL: Duration = Duration::from_secs(10);
/// Pause before polling again while only updates already taken came back (a turn is still
/// waiting for agentd, so its update cannot be confirmed yet). Never after an empty answer.
const HELD_PAUSE: Duration = Duration::from_secs(1);
/// Pause after a failed getUpdates.
const ERROR_PAUSE: Duration = Duration::from_secs(1);
/// How long shutdown waits for the turn being handed over.
const HANDOVER_GRACE: Duration = Duration::from_secs(5);
/// Most getUpdates pages read as the start-up backlog (10,000 updates; they make one bounded
/// turn).
const MAX_BACKLOG_PAGES: usize = 100;
/// Telegram's largest getUpdates page.
const PAGE: u8 = 100;

/// How intake behaves (`[telegram]`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings {
    /// How long a message waits for agentd before the owner is told it was not taken.
    pub intake_wait: Duration,
    /// Backlog messages older than this are not run.
    pub max_backlog_age: Duration,
}

/// The ledger the loop and the hand-over share; `changed` wakes the loop to confirm.
#[derive(Debug, Default)]
pub(crate) struct Confirm {
    ledger: Mutex<Ledger>,
    changed: Notify,
}

impl Confirm {
    /// Marks `updates` handled and wakes the loop.
    pub(crate) fn handled(&self, updates: &[i32]) {
        {
            let mut ledger = lock(&self.ledger);
            for id in updates {
                ledger.handled(*id);
            }
        }
        self.changed.notify_one();
    }

    fn see(&self, id: i32) -> bool {
        lock(&self.ledger).see(id)
    }

    fn offset(&self) -> Option<i32> {
        lock(&self.ledger).offset()
    }
}

/// Polls until `shutdown`; `ready` is called once the start-up backlog is taken.
pub(crate) async fn run(
    app: App,
    settings: Settings,
    shutdown: CancellationToken,
    tasks: &TaskTracker,
    ready: impl FnOnce(),
) {
    let bot = app.telegram().bot().clone();
    // A webhook left set would make every getUpdates fail with 409 (pending updates stay).
    if let Err(e) = bot.delete_webhook().await {
        tracing::warn!(error = %crate::telegram::describe(e), "deleteWebhook failed");
    }
    let confirm = Arc::new(Confirm::default());
    let held = Arc::new(Held::default());
    let (turns, handing) = handover::spawn(
        app.clone(),
        confirm.clone(),
        held.clone(),
        settings,
        shutdown.clone(),
        tasks,
    );
    let mut intake = Loop {
        app,
        confirm,
        turns,
        held,
        tasks: tasks.clone(),
        coalescer: Coalescer::default(),
        settings,
    };
    intake.backlog(&shutdown).await;
    tracing::info!(owner = intake.app.owner().0, "kernel-tg polling Telegram");
    ready();
    intake.poll(&shutdown).await;
    let Loop {
        app,
        confirm,
        turns,
        ..
    } = intake;
    drop(turns);
    // A turn still being handed over finishes (or, stopped mid-retry, stays with Telegram);
    // then what was handled is confirmed, so that the next start does not take it again.
    if tokio::time::timeout(HANDOVER_GRACE, handing).await.is_err() {
        tracing::warn!("a turn still being handed over was left to Telegram");
    }
    if let Some(offset) = confirm.offset()
        && let Err(e) = get(app.telegram().bot().clone(), Some(offset), 0, 1).await
    {
        tracing::warn!(error = %crate::telegram::describe(e), "the last offset was not confirmed");
    }
}

struct Loop {
    app: App,
    confirm: Arc<Confirm>,
    turns: mpsc::Sender<Bundle>,
    /// The messages handed over and not yet handled (their edits wait there).
    held: Arc<Held>,
    tasks: TaskTracker,
    coalescer: Coalescer,
    settings: Settings,
}

impl Loop {
    /// Takes what Telegram kept while kernel-tg was down: every page at once (earlier pages are
    /// confirmed by reading the next; the last only once handled), as one late turn.
    async fn backlog(&mut self, shutdown: &CancellationToken) {
        let Some(updates) = self.backlog_pages(shutdown).await else {
            return;
        };
        if updates.is_empty() {
            return;
        }
        tracing::info!(
            updates = updates.len(),
            "taking the updates kept while Kernel was down"
        );
        let now = Utc::now();
        let mut skipped = Skipped::default();
        let mut left_out = Vec::new();
        for update in updates {
            self.backlog_update(&update, now, &mut skipped, &mut left_out)
                .await;
        }
        if let Some(mut bundle) = self.coalescer.flush() {
            bundle.left_out.append(&mut left_out);
            self.send(bundle).await;
        }
        self.tell_skipped(&skipped, &left_out);
    }

    /// Every page of the backlog, up to [`MAX_BACKLOG_PAGES`] (a failed read ends it early);
    /// `None` at shutdown.
    async fn backlog_pages(&mut self, shutdown: &CancellationToken) -> Option<Vec<Update>> {
        let mut updates = Vec::new();
        let mut offset = None;
        for _ in 0..MAX_BACKLOG_PAGES {
            let page = tokio::select! {
                page = self.get(offset, 0) => page,
                () = shutdown.cancelled() => return None,
            };
            match page {
                Ok(page) => {
                    let full = page.len() == usize::from(PAGE);
                    offset = page.last().map(|u| u.id.0 as i32 + 1).or(offset);
                    updates.extend(page);
                    if !full {
                        break;
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %crate::telegram::describe(e), "getUpdates failed at start");
                    break;
                }
            }
        }
        Some(updates)
    }

    /// One update of the backlog: the owner's message joins the late turn, unless it is too old
    /// or a command (`skipped`) or of a kind Kernel cannot take (`left_out`); anything else is
    /// handled at once.
    async fn backlog_update(
        &mut self,
        update: &Update,
        now: chrono::DateTime<Utc>,
        skipped: &mut Skipped,
        left_out: &mut Vec<String>,
    ) {
        let id = update.id.0 as i32;
        if !self.confirm.see(id) {
            return;
        }
        if matches!(update.kind, UpdateKind::EditedMessage(_)) {
            // An edit of a message of the backlog replaces it there; of an earlier one, it is
            // an edit like any other.
            self.living_update(update);
            self.confirm.handled(&[id]);
            return;
        }
        let Some(message) = admission::admit(update, self.app.owner()) else {
            // Stale button presses and everything not the owner's: nothing to do.
            self.confirm.handled(&[id]);
            return;
        };
        if Skipped::too_old(message.date, now, self.settings.max_backlog_age) {
            skipped.old += 1;
            self.confirm.handled(&[id]);
            return;
        }
        match incoming::classify(message, self.app.username(), self.app.texts()) {
            Incoming::Command(_) => {
                skipped.command(message.text().unwrap_or_default());
                self.confirm.handled(&[id]);
            }
            Incoming::Unsupported(kind) => {
                left_out.push(self.app.texts().left_unsupported(kind));
                self.confirm.handled(&[id]);
            }
            Incoming::Turn(input) => {
                crate::reactions::acknowledge(&self.app, message.id);
                let mut part = part(message, input, self.app.form().topics);
                part.late = true;
                if let Some(bundle) = self.coalescer.add(id, part) {
                    self.send(bundle).await;
                }
            }
        }
    }

    /// Tells the owner what the backlog did not run (`skipped`) or could not take (`left_out`).
    fn tell_skipped(&self, skipped: &Skipped, left_out: &[String]) {
        let texts = self.app.texts();
        let mut notice = skipped.notice(texts, self.settings.max_backlog_age);
        if !left_out.is_empty() {
            let more = texts.left_out(left_out);
            notice = Some(match notice {
                Some(n) => format!("{n}\n\n{more}"),
                None => more,
            });
        }
        if let Some(html) = notice {
            let app = self.app.clone();
            self.tasks.spawn(async move { app.say(&html, None).await });
        }
    }

    /// Long polling until `shutdown`; a handled update is confirmed at once (the running poll
    /// is replaced by one with the new offset).
    async fn poll(&mut self, shutdown: &CancellationToken) {
        let mut asked = self.confirm.offset();
        let mut call = self.get(asked, LONG_POLL.as_secs() as u32);
        let mut pause_until: Option<Instant> = None;
        loop {
            let deadline = self.coalescer.deadline();
            let changed = self.confirm.changed.notified();
            tokio::select! {
                result = &mut call, if pause_until.is_none() => {
                    match result {
                        Ok(updates) => {
                            // An empty answer is a long poll that timed out: poll again at once.
                            // Only an answer of updates already taken (still held) pauses.
                            let held = !updates.is_empty();
                            let fresh = self.batch(updates).await;
                            if held && !fresh && self.confirm.offset() == asked {
                                pause_until = Some(Instant::now() + HELD_PAUSE);
                            }
                        }
                        Err(e) => {
                            tracing::warn!(error = %crate::telegram::describe(e), "getUpdates failed; retrying");
                            pause_until = Some(Instant::now() + ERROR_PAUSE);
                        }
                    }
                    asked = self.confirm.offset();
                    call = self.get(asked, LONG_POLL.as_secs() as u32);
                }
                () = sleep_until(pause_until), if pause_until.is_some() => {
                    pause_until = None;
                    asked = self.confirm.offset();
                    call = self.get(asked, LONG_POLL.as_secs() as u32);
                }
                () = changed => {
                    // Something was handled: confirm it now rather than after the long poll.
                    let offset = self.confirm.offset();
                    if offset != asked {
                        pause_until = None;
                        asked = offset;
                        call = self.get(asked, LONG_POLL.as_secs() as u32);
                    }
                }
                () = sleep_until(deadline), if deadline.is_some() => {
                    if let Some(bundle) = self.coalescer.due(Instant::now()) {
                        self.send(bundle).await;
                    }
                }
                () = shutdown.cancelled() => {
                    tracing::info!("stopping: no new updates are taken");
                    return;
                }
            }
        }
    }

    /// Handles one getUpdates answer; returns whether it held anything new.
    async fn batch(&mut self, updates: Vec<Update>) -> bool {
        let mut fresh = false;
        for update in updates {
            let id = update.id.0 as i32;
            if !self.confirm.see(id) {
                continue;
            }
            fresh = true;
            self.update(id, &update).await;
        }
        if let Some(bundle) = self.coalescer.end_batch(Instant::now()) {
            self.send(bundle).await;
        }
        fresh
    }

    async fn update(&mut self, id: i32, update: &Update) {
        if matches!(update.kind, UpdateKind::CallbackQuery(_)) {
            if let Some(press) = admission::admit_press(update, self.app.owner()) {
                self.tasks
                    .spawn(crate::callback::handle(self.app.clone(), press.clone()));
            }
            self.confirm.handled(&[id]);
            return;
        }
        if self.living_update(update) {
            self.confirm.handled(&[id]);
            return;
        }
        let Some(message) = admission::admit(update, self.app.owner()) else {
            self.confirm.handled(&[id]);
            return;
        };
        if message.is_topic_message && !self.app.topic_availability().on() {
            // Only a bot with topics gets topic messages: learnt without a request.
            self.app.topic_availability().saw_topic_message();
        }
        if crate::topics::is_service(message) {
            tracing::debug!(update_id = id, "a forum topic service message");
            if let Some(thread) = crate::topics::topic_of(message, self.app.form().topics) {
                crate::topics::record_name(&self.app, thread, message).await;
            }
            self.confirm.handled(&[id]);
            return;
        }
        let message_id = message.id;
        match incoming::classify(message, self.app.username(), self.app.texts()) {
            Incoming::Command(parsed) => {
                // What came before goes first.
                if let Some(bundle) = self.coalescer.flush() {
                    self.send(bundle).await;
                }
                // A command sent in a topic is answered there; the commands about the running
                // turn act on the topic's session.
                let thread = crate::topics::topic_of(message, self.app.form().topics);
                let app = self.app.in_topic(thread);
                let sent = crate::command_call::Sent {
                    message_id: i64::from(message_id.0),
                    key: crate::edits::key(&self.app, message_id),
                    thread,
                    session: None,
                    outside: incoming::carries_outside_content(message),
                    replied_to: message.reply_to_message().map(|m| i64::from(m.id.0)),
                };
                self.tasks.spawn(async move {
                    if matches!(parsed, Ok(crate::command::Command::New))
                        && app.form().topics
                        && crate::topics::new_session(&app, thread, message_id).await
                    {
                        return;
                    }
                    let (html, buttons) = match parsed {
                        // `/retry` in a topic runs that topic's last message, answered there.
                        Ok(command @ crate::command::Command::Retry(_))
                            if let Some(thread) = thread =>
                        {
                            tracing::info!(command = "retry", thread, "command in a topic");
                            match crate::topics::session(&app, thread).await {
                                Ok(session) => {
                                    let sent = crate::command_call::Sent {
                                        session: Some(session),
                                        ..sent
                                    };
                                    perform(command, app.agentd(), app.texts(), sent).await
                                }
                                Err(refused) => (
                                    refused.unwrap_or_else(|| {
                                        app.texts().agentd_unavailable().to_owned()
                                    }),
                                    None,
                                ),
                            }
                        }
                        Ok(command) => {
                            tracing::info!(command = command.kind().name(), ?thread, "command");
                            perform(command, app.agentd(), app.texts(), sent).await
                        }
                        Err(e) => (app.texts().command_error(&e), None),
                    };
                    match buttons {
                        Some(buttons) => app.say_with_buttons(&html, message_id, buttons).await,
                        None => app.say(&html, Some(message_id)).await,
                    }
                });
                self.confirm.handled(&[id]);
            }
            Incoming::Unsupported(kind) => {
                let texts = self.app.texts();
                let group = message.media_group_id().map(|g| g.0.as_str());
                if !self
                    .coalescer
                    .left_out(id, group, texts.left_unsupported(kind))
                {
                    let app = self.app.clone();
                    self.tasks.spawn(async move {
                        app.say(&app.texts().unsupported_kind(kind), Some(message_id))
                            .await;
                    });
                    self.confirm.handled(&[id]);
                }
            }
            Incoming::Turn(input) => {
                crate::reactions::acknowledge(&self.app, message_id);
                if let Some(bundle) = self
                    .coalescer
                    .add(id, part(message, input, self.app.form().topics))
                {
                    self.send(bundle).await;
                }
            }
        }
    }

    /// An edit or a reaction (handled in a task of its own; an edit of a message still
    /// gathered here takes effect at once); false for any other update.
    fn living_update(&mut self, update: &Update) -> bool {
        match &update.kind {
            UpdateKind::EditedMessage(_) => {
                if let Some(message) = admission::admit_edit(update, self.app.owner()) {
                    let checked = crate::edits::check(&self.app, message);
                    if let crate::edits::Checked::Text(text) = &checked
                        && (self.coalescer.replace_text(message.id.0, text)
                            || self.held.edit(message.id.0, text))
                    {
                        tracing::info!(message = message.id.0, "a waiting message was edited");
                        return true;
                    }
                    // An edit in a topic is answered there (agentd finds the message's session).
                    let app = self
                        .app
                        .in_topic(crate::topics::topic_of(message, self.app.form().topics));
                    self.tasks
                        .spawn(crate::edits::handle(app, message.clone(), checked));
                }
                true
            }
            UpdateKind::MessageReaction(reaction) => {
                if crate::reactions::admit(reaction, self.app.owner()) {
                    let app = self.app.clone();
                    self.tasks
                        .spawn(crate::reactions::handle(app, reaction.clone()));
                } else {
                    tracing::debug!(
                        update_id = update.id.0,
                        "dropped: a reaction not by the owner in the owner's chat"
                    );
                }
                true
            }
            _ => false,
        }
    }

    async fn send(&self, bundle: Bundle) {
        self.held.hold(bundle.parts.iter().map(|p| p.message_id));
        tracing::debug!(
            messages = bundle.parts.len(),
            thread = ?bundle.thread(),
            "messages taken for a turn"
        );
        if self.turns.send(bundle).await.is_err() {
            tracing::error!("the turn hand-over stopped; the messages stay with Telegram");
        }
    }

    /// One getUpdates (see [`get`]).
    fn get(&self, offset: Option<i32>, timeout: u32) -> Polled {
        get(self.app.telegram().bot().clone(), offset, timeout, PAGE)
    }
}

type Polled = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<Vec<Update>, teloxide::RequestError>> + Send>,
>;

/// One getUpdates: `offset` confirms what is below it; `timeout` in seconds.
fn get(bot: Bot, offset: Option<i32>, timeout: u32, limit: u8) -> Polled {
    Box::pin(async move {
        let mut request = bot
            .get_updates()
            .limit(limit)
            .timeout(timeout)
            .allowed_updates(vec![
                AllowedUpdate::Message,
                AllowedUpdate::EditedMessage,
                AllowedUpdate::CallbackQuery,
                AllowedUpdate::MessageReaction,
            ]);
        if let Some(offset) = offset {
            request = request.offset(offset);
        }
        request.await
    })
}

/// The part of a turn `message` is.
fn part(message: &Message, input: incoming::TurnInput, topics: bool) -> Part {
    Part {
        chat_id: message.chat.id.0,
        message_id: message.id.0,
        date: message.date,
        media_group: message.media_group_id().map(|g| g.0.clone()),
        input,
        late: false,
        thread: crate::topics::topic_of(message, topics),
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
