//! `Progress`: while a turn runs, keeps Telegram's "typing…" alive and edits the placeholder to
//! show what is happening, at most once per [`MIN_EDIT_INTERVAL`].

use std::time::Duration;

use teloxide::types::{InlineKeyboardMarkup, MessageId};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::telegram::Telegram;

/// Shortest time between two edits of the placeholder.
pub const MIN_EDIT_INTERVAL: Duration = Duration::from_millis(1500);
/// How often "typing…" is renewed (Telegram shows it for about five seconds).
pub const TYPING_EVERY: Duration = Duration::from_secs(4);

/// The running progress display of one turn.
pub struct Progress {
    wanted: watch::Sender<String>,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl Progress {
    /// Starts typing now and shows `shown` (the placeholder's current HTML) until told otherwise;
    /// without a placeholder it only keeps typing. The placeholder's `buttons` (the Stop
    /// button) stay on through every edit.
    pub fn start(
        telegram: Telegram,
        placeholder: Option<MessageId>,
        shown: String,
        buttons: Option<InlineKeyboardMarkup>,
    ) -> Self {
        let (wanted, rx) = watch::channel(shown.clone());
        let stop = CancellationToken::new();
        let shown = Shown {
            placeholder,
            html: shown,
            buttons,
        };
        let task = tokio::spawn(run(telegram, shown, rx, stop.clone()));
        Self { wanted, stop, task }
    }

    /// Asks for `html` to be shown (the latest wish wins; edits are throttled).
    pub fn show(&self, html: String) {
        self.wanted.send_replace(html);
    }

    /// Stops typing and editing; returns once no edit is in flight any more.
    pub async fn finish(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }
}

/// The placeholder and what it shows.
struct Shown {
    placeholder: Option<MessageId>,
    html: String,
    buttons: Option<InlineKeyboardMarkup>,
}

impl Shown {
    async fn edit(&self, telegram: &Telegram, id: MessageId, html: &str) -> Result<(), String> {
        let edited = match &self.buttons {
            Some(buttons) => telegram.edit_html_with_buttons(id, html, buttons).await,
            None => telegram.edit_html(id, html).await,
        };
        edited.map_err(|e| e.to_string())
    }
}

async fn run(
    telegram: Telegram,
    mut shown: Shown,
    mut wanted: watch::Receiver<String>,
    stop: CancellationToken,
) {
    let mut typing = tokio::time::interval(TYPING_EVERY);
    // The first "typing…" is always sent, even for a turn that ends at once.
    typing.tick().await;
    if let Err(e) = telegram.typing().await {
        tracing::debug!(error = %e, "typing action failed");
    }
    let mut last_edit = Instant::now();
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = typing.tick() => {
                if let Err(e) = stop.run_until_cancelled(telegram.typing()).await.unwrap_or(Ok(())) {
                    tracing::debug!(error = %e, "typing action failed");
                }
            }
            changed = wanted.changed() => {
                if changed.is_err() {
                    return;
                }
                let due = last_edit + MIN_EDIT_INTERVAL;
                if stop.run_until_cancelled(tokio::time::sleep_until(due)).await.is_none() {
                    return;
                }
                let html = wanted.borrow_and_update().clone();
                let Some(placeholder) = shown.placeholder.filter(|_| html != shown.html) else {
                    continue;
                };
                match stop.run_until_cancelled(shown.edit(&telegram, placeholder, &html)).await {
                    None => return,
                    Some(Err(e)) => tracing::debug!(error = %e, "progress edit failed"),
                    Some(Ok(())) => shown.html = html,
                }
                last_edit = Instant::now();
            }
        }
    }
}
