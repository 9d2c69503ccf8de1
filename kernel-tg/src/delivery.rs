//! The one path from agentd to the owner for a turn's progress and outcome: kernel-tg
//! subscribes to agentd's outbox on start and after every reconnect, shows the running turn —
//! as live drafts (`telegram.live_preview`, when the Bot API has `sendMessageDraft`) or in its
//! placeholder — and delivers every pending item in order — acknowledging each part after
//! Telegram accepted it (`delivery::item`).
//!
//! kernel-tg keeps nothing: agentd stores the placeholder's id (`SetPlaceholder`) and how far an
//! item got (`Ack`), so a restarted kernel-tg resumes where the last one stopped. An ack agentd
//! missed is kept in memory across the resubscription and sent first, so a part is sent twice
//! only when kernel-tg died between Telegram's OK and the ack.

mod approvals;
mod draft;
mod item;
mod narration;
mod progress;
mod stop_offer;

use std::collections::VecDeque;
use std::time::Duration;

use futures::StreamExt;
use kernel_proto::v1 as pb;
use pb::chat_event::Event;
use pb::delivery_event::Event as Delivery;
use teloxide::types::MessageId;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use tonic::Streaming;

use crate::agentd::is_transport_failure;
use crate::buttons;
use crate::handle::App;
use draft::Draft;
use narration::Narration;
use progress::{Progress, Surface};

/// First pause before subscribing again.
const FIRST_PAUSE: Duration = Duration::from_millis(200);
/// Longest pause before subscribing again.
const MAX_PAUSE: Duration = Duration::from_secs(2);
/// How often a drafted turn's text is rendered again while it streams (a progress line renders
/// at once); drafts themselves go out at most once a second.
const RENDER_EVERY: Duration = Duration::from_millis(300);
/// Finished turns remembered, so that their late progress events are ignored.
const FINISHED_KEPT: usize = 16;

/// Subscribes, follows and delivers until `shutdown`; resubscribes with backoff after every
/// break. `first_try` is told once the first subscription attempt is over (either way).
pub(crate) async fn run(app: App, shutdown: CancellationToken, first_try: oneshot::Sender<()>) {
    let mut courier = Courier::new(app.clone());
    let mut pause = FIRST_PAUSE;
    let mut first_try = Some(first_try);
    loop {
        let subscribed = tokio::select! {
            () = shutdown.cancelled() => break,
            s = subscribe(&app) => s,
        };
        if let Some(tx) = first_try.take() {
            let _ = tx.send(());
        }
        if let Some(events) = subscribed {
            pause = FIRST_PAUSE;
            let end = courier.follow(events, &shutdown).await;
            courier.stop_showing(end == End::Broken).await;
            if end == End::Shutdown {
                break;
            }
        }
        if shutdown
            .run_until_cancelled(tokio::time::sleep(pause))
            .await
            .is_none()
        {
            break;
        }
        pause = (pause * 2).min(MAX_PAUSE);
    }
    courier.stop_showing(false).await;
    tracing::info!("delivery stopped");
}

/// Opens a subscription from the start of the queue.
async fn subscribe(app: &App) -> Option<Streaming<pb::DeliveryEvent>> {
    let mut client = match app.agentd().client().await {
        Ok(client) => client,
        Err(e) => {
            tracing::debug!(error = %e, "cannot subscribe yet: kernel-agentd unreachable");
            app.agentd().lost();
            return None;
        }
    };
    match client
        .subscribe(pb::SubscribeRequest { after_seq: 0 })
        .await
    {
        Ok(response) => {
            tracing::info!("subscribed to kernel-agentd's outbox");
            Some(response.into_inner())
        }
        Err(status) => {
            tracing::warn!(code = ?status.code(), message = status.message(), "Subscribe failed");
            if is_transport_failure(&status) {
                app.agentd().lost();
            }
            None
        }
    }
}

/// Why following a subscription stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// kernel-tg is stopping.
    Shutdown,
    /// The stream broke or ended (agentd went away) or an ack could not be recorded.
    Broken,
}

/// The running turn on display.
struct Shown {
    turn_id: String,
    /// The topic it is shown in (`None`: the main chat).
    thread: Option<i64>,
    reply_to: Option<MessageId>,
    placeholder: Option<MessageId>,
    /// Shown as drafts (else in the placeholder).
    drafting: bool,
    draft: Draft,
    /// When the draft was last rendered (`None`: it must be rendered at the next event).
    rendered: Option<tokio::time::Instant>,
    progress: Progress,
    narration: Narration,
    /// Questions shown with buttons, until they close: (question id, message).
    questions: Vec<(String, MessageId)>,
    /// A drafted turn's Stop button, offered once it runs a while.
    stop_offer: Option<stop_offer::StopOffer>,
}

/// Follows subscriptions one after another; owns the running turns' display.
struct Courier {
    /// Bound to the owner's main chat.
    base: App,
    /// Bound to the topic of the event being handled.
    app: App,
    /// The turn whose event is being handled.
    shown: Option<Shown>,
    /// Other running turns on display, each in its own topic (turns of parallel sessions).
    parked: Vec<Shown>,
    finished: VecDeque<String>,
    approvals: approvals::Approvals,
    /// An ack agentd missed, sent first when its item is replayed.
    unacked: item::Unacked,
}

impl Courier {
    fn new(app: App) -> Self {
        Self {
            base: app.clone(),
            app,
            shown: None,
            parked: Vec::new(),
            finished: VecDeque::new(),
            approvals: approvals::Approvals::default(),
            unacked: item::Unacked::default(),
        }
    }

    async fn follow(
        &mut self,
        mut events: Streaming<pb::DeliveryEvent>,
        shutdown: &CancellationToken,
    ) -> End {
        loop {
            let next = tokio::select! {
                () = shutdown.cancelled() => return End::Shutdown,
                next = events.next() => next,
            };
            match next {
                Some(Ok(pb::DeliveryEvent {
                    event: Some(Delivery::Live(live)),
                })) => self.live(live).await,
                Some(Ok(pb::DeliveryEvent {
                    event: Some(Delivery::Item(item)),
                })) => {
                    if let Err(end) = self.item(item, shutdown).await {
                        return end;
                    }
                }
                Some(Ok(pb::DeliveryEvent {
                    event: Some(Delivery::ApprovalRequested(req)),
                })) => self.approvals.requested(&self.app, req).await,
                Some(Ok(pb::DeliveryEvent {
                    event: Some(Delivery::ApprovalClosed(closed)),
                })) => self.approvals.closed(&self.app, closed).await,
                Some(Ok(_)) => {}
                Some(Err(status)) => {
                    tracing::warn!(code = ?status.code(), "the outbox subscription broke");
                    if is_transport_failure(&status) {
                        self.app.agentd().lost();
                    }
                    return End::Broken;
                }
                None => {
                    tracing::warn!("the outbox subscription ended");
                    self.app.agentd().lost();
                    return End::Broken;
                }
            }
        }
    }

    /// Shows a progress event of the running turn (the first one opens its display).
    async fn live(&mut self, live: pb::LiveTurn) {
        let Some(event) = live.event.and_then(|e| e.event) else {
            return;
        };
        if self.finished.contains(&live.turn_id) {
            return;
        }
        self.focus(
            &live.turn_id,
            live.thread_id,
            matches!(event, Event::Started(_)),
        );
        let is_shown = self
            .shown
            .as_ref()
            .is_some_and(|s| s.turn_id == live.turn_id);
        match event {
            Event::Started(_) if is_shown => {}
            Event::Started(_) => {
                let reply_to = live.reply_to_message_id.and_then(message_id);
                let placeholder = live.placeholder_message_id.and_then(message_id);
                self.start_showing(live.turn_id, reply_to, placeholder)
                    .await;
            }
            Event::Question(question) if is_shown => self.ask(question).await,
            Event::QuestionClosed(closed) if is_shown => {
                self.close_question(&closed.question_id).await;
            }
            // The turn ended without an item (agentd could not store it): say why.
            Event::Failed(failed) if is_shown => self.show_failure(failed).await,
            other if is_shown => self.show_step(other).await,
            _ => {}
        }
    }

    /// Makes turn `turn_id`'s display the one events go to (`started`: its first event, in
    /// topic `thread`). A turn of another topic on display stays on display beside it (parked);
    /// in the same chat or topic a new turn ends the one before, as without topics.
    fn focus(&mut self, turn_id: &str, thread: Option<i64>, started: bool) {
        if self.shown.as_ref().is_some_and(|s| s.turn_id == turn_id) {
            return;
        }
        let at = self.parked.iter().position(|s| s.turn_id == turn_id);
        let thread = match at {
            Some(at) => {
                let found = self.parked.remove(at);
                let thread = found.thread;
                if let Some(current) = self.shown.replace(found) {
                    self.parked.push(current);
                }
                thread
            }
            None if started => {
                if let Some(current) = self.shown.take_if(|s| s.thread != thread) {
                    self.parked.push(current);
                }
                // A parked turn of the same topic is over (its outcome is on its way).
                thread
            }
            None => return,
        };
        self.app = self.base.in_topic(thread);
    }

    /// Opens the display of a turn that started (ending the one shown before, if any).
    async fn start_showing(
        &mut self,
        turn_id: String,
        reply_to: Option<MessageId>,
        mut placeholder: Option<MessageId>,
    ) {
        self.end_current().await;
        // The one switch between the two ways of showing a turn: drafts when wanted,
        // possible and no placeholder exists yet; else the placeholder (with its Stop
        // button) and its edits.
        let drafting = placeholder.is_none()
            && self.app.form().live_preview
            && self.app.telegram().drafts_usable();
        let texts = self.app.texts();
        let progress = if drafting {
            Progress::start(
                self.app.telegram().clone(),
                Surface::Draft(draft_id(&turn_id)),
                String::new(),
                None,
            )
        } else {
            self.placeholder_progress(&turn_id, reply_to, &mut placeholder)
                .await
        };
        let stop_offer = drafting.then(|| {
            stop_offer::StopOffer::start(self.app.telegram().clone(), &turn_id, reply_to, texts)
        });
        self.shown = Some(Shown {
            stop_offer,
            thread: self.app.topic(),
            turn_id,
            reply_to,
            placeholder,
            drafting,
            draft: Draft::new(),
            rendered: None,
            progress,
            narration: Narration::new(texts),
            questions: Vec::new(),
        });
    }

    /// A turn's progress shown in its placeholder with a Stop button: the client's placeholder
    /// (sent before a download) gets the button now that the turn has an id; without one, a
    /// placeholder is sent (and recorded in `placeholder`).
    async fn placeholder_progress(
        &self,
        turn_id: &str,
        reply_to: Option<MessageId>,
        placeholder: &mut Option<MessageId>,
    ) -> Progress {
        let texts = self.app.texts();
        let telegram = self.app.telegram().clone();
        let stop = buttons::stop(turn_id, texts);
        match *placeholder {
            Some(id) => {
                if let Err(e) = telegram.set_buttons(id, Some(stop.clone())).await {
                    tracing::debug!(error = %e, "the Stop button could not be added");
                }
            }
            None => *placeholder = self.send_placeholder(turn_id, reply_to).await,
        }
        let shown = texts.placeholder().to_owned();
        Progress::start(
            telegram,
            Surface::Placeholder(*placeholder),
            shown,
            Some(stop),
        )
    }

    /// Removes the buttons of the shown turn's question `question_id`, which closed.
    async fn close_question(&mut self, question_id: &str) {
        let Some(shown) = self.shown.as_mut() else {
            return;
        };
        let Some(at) = shown.questions.iter().position(|(id, _)| id == question_id) else {
            return;
        };
        let (_, message) = shown.questions.remove(at);
        if let Err(e) = self.app.telegram().set_buttons(message, None).await {
            tracing::warn!(error = %e, "a question's buttons could not be removed");
        }
    }

    /// Ends the shown turn's display with why it failed (in its placeholder, else a message).
    async fn show_failure(&mut self, failed: pb::TurnFailed) {
        let Some(shown) = self.shown.take() else {
            return;
        };
        shown.progress.finish().await;
        withdraw(shown.stop_offer).await;
        self.remember(shown.turn_id);
        let html = self
            .app
            .texts()
            .turn_failure(&failed.reason, &failed.args, &failed.message);
        item::show(&self.app, shown.placeholder, &html, shown.reply_to).await;
    }

    /// Shows one more step of the shown turn: a progress line, or the streamed text of a draft
    /// (moved to the placeholder once the Bot API turns out to lack drafts).
    async fn show_step(&mut self, event: Event) {
        let Some(mut shown) = self.shown.take() else {
            return;
        };
        if shown.drafting && !self.app.telegram().drafts_usable() {
            shown.drafting = false;
            withdraw(shown.stop_offer.take()).await;
            self.show_in_placeholder(&mut shown).await;
        }
        let step = shown.narration.after(&event);
        if !shown.drafting {
            if let Some(html) = step {
                shown.progress.show(html);
            }
        } else {
            match (&event, step) {
                (Event::TextDelta(delta), _) => shown.draft.text(&delta.text),
                (_, Some(html)) => {
                    shown.draft.step(html);
                    shown.rendered = None;
                }
                (_, None) => {}
            }
            // Rendering the whole text at every delta would cost quadratic time.
            let due = shown.rendered.is_none_or(|at| at.elapsed() >= RENDER_EVERY);
            if due && let Some(html) = shown.draft.html() {
                shown.progress.show(html);
                shown.rendered = Some(tokio::time::Instant::now());
            }
        }
        self.shown = Some(shown);
    }

    /// Shows the running turn's question (with a button per option) in reply to the owner's
    /// message.
    async fn ask(&mut self, question: pb::Question) {
        let Some(shown) = self.shown.as_mut() else {
            return;
        };
        let texts = self.app.texts();
        let html = texts.question(&question.text, !question.options.is_empty());
        let telegram = self.app.telegram();
        let sent = match buttons::options(&question.question_id, &question.options) {
            Some(keyboard) => telegram
                .send_with_buttons(&html, shown.reply_to, keyboard)
                .await
                .map(Some),
            None => telegram
                .send_html(&html, shown.reply_to)
                .await
                .map(|_| None),
        };
        match sent {
            Ok(Some(id)) => shown.questions.push((question.question_id, id)),
            Ok(None) => {}
            Err(e) => tracing::warn!(error = %e, "the question could not be shown"),
        }
    }

    /// Moves a drafted turn to the placeholder path (the Bot API turned out to lack drafts): the
    /// placeholder, sent and recorded unless agentd had one, and its edits.
    async fn show_in_placeholder(&self, shown: &mut Shown) {
        if shown.placeholder.is_none() {
            shown.placeholder = self.send_placeholder(&shown.turn_id, shown.reply_to).await;
        }
        let texts = self.app.texts();
        let progress = Progress::start(
            self.app.telegram().clone(),
            Surface::Placeholder(shown.placeholder),
            texts.placeholder().to_owned(),
            Some(buttons::stop(&shown.turn_id, texts)),
        );
        std::mem::replace(&mut shown.progress, progress)
            .finish()
            .await;
    }

    /// Sends the placeholder of a turn that has none yet and tells agentd its id.
    async fn send_placeholder(
        &self,
        turn_id: &str,
        reply_to: Option<MessageId>,
    ) -> Option<MessageId> {
        let texts = self.app.texts();
        let stop = buttons::stop(turn_id, texts);
        let id = match self
            .app
            .telegram()
            .send_with_buttons(texts.placeholder(), reply_to, stop)
            .await
        {
            Ok(id) => id,
            Err(e) => {
                tracing::warn!(error = %e, "the placeholder could not be sent; the turn goes on");
                return None;
            }
        };
        let request = pb::SetPlaceholderRequest {
            turn_id: turn_id.to_owned(),
            message_id: i64::from(id.0),
        };
        let recorded = match self.app.agentd().client().await {
            Ok(mut client) => client
                .set_placeholder(request)
                .await
                .map(|_| ())
                .map_err(|s| s.to_string()),
            Err(e) => Err(e.to_string()),
        };
        if let Err(e) = recorded {
            tracing::warn!(error = %e, "the placeholder could not be recorded by kernel-agentd");
        }
        Some(id)
    }

    /// Delivers an item; `Err` when following must stop.
    async fn item(
        &mut self,
        item: pb::OutboxItem,
        shutdown: &CancellationToken,
    ) -> Result<(), End> {
        let mut placeholder = item.placeholder_message_id.and_then(message_id);
        let mut done = self.shown.take_if(|s| s.turn_id == item.turn_id);
        if done.is_none()
            && let Some(at) = self.parked.iter().position(|s| s.turn_id == item.turn_id)
        {
            done = Some(self.parked.remove(at));
        }
        if let Some(shown) = done {
            shown.progress.finish().await;
            withdraw(shown.stop_offer).await;
            placeholder = placeholder.or(shown.placeholder);
        }
        let turn_id = item.turn_id.clone();
        let mut app = self.base.in_topic(item.thread_id);
        if item.thread_id.is_some() {
            let note = app.texts().topic_deleted_note(item.thread_name.as_deref());
            app = app.with_gone_note(note);
        }
        item::deliver(&app, item, placeholder, shutdown, &self.unacked).await?;
        self.remember(turn_id);
        Ok(())
    }

    fn remember(&mut self, turn_id: String) {
        if self.finished.len() == FINISHED_KEPT {
            self.finished.pop_front();
        }
        self.finished.push_back(turn_id);
    }

    /// Ends the display of the turn events went to last (a new turn of its chat or topic
    /// started: it is over).
    async fn end_current(&mut self) {
        if let Some(shown) = self.shown.take() {
            shown.progress.finish().await;
            withdraw(shown.stop_offer).await;
        }
    }

    /// Ends the running turns' display; `interrupted` (agentd went away mid-turn) tells the
    /// owner in the placeholder. The turn is forgotten: a later subscription shows it again
    /// if it still runs.
    async fn stop_showing(&mut self, interrupted: bool) {
        // Every turn on display ends (when agentd went away, each told so in its own topic).
        let mut all: Vec<Shown> = self.shown.take().into_iter().collect();
        all.append(&mut self.parked);
        for shown in all {
            shown.progress.finish().await;
            withdraw(shown.stop_offer).await;
            if interrupted {
                let app = self.base.in_topic(shown.thread);
                let html = app.texts().turn_interrupted();
                item::show(&app, shown.placeholder, html, shown.reply_to).await;
            }
        }
    }
}

/// Withdraws a drafted turn's Stop offer, if any.
async fn withdraw(offer: Option<stop_offer::StopOffer>) {
    if let Some(offer) = offer {
        offer.finish().await;
    }
}

/// The non-zero draft id of turn `turn_id` (the same in every kernel-tg process).
fn draft_id(turn_id: &str) -> i64 {
    // FNV-1a, folded into Telegram's positive 31-bit range.
    let hash = turn_id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    i64::try_from(hash % 0x7fff_ffff).unwrap_or(0) + 1
}

/// A Telegram message id from agentd's copy (`None` when out of range).
fn message_id(id: i64) -> Option<MessageId> {
    i32::try_from(id).ok().map(MessageId)
}
