//! `Progress`: while a turn runs, keeps Telegram's "typing…" alive and shows what is happening
//! on its [`Surface`]: edits of the placeholder, at most once per [`MIN_EDIT_INTERVAL`], or a
//! live draft (`sendMessageDraft`), at most once per [`MIN_DRAFT_INTERVAL`]; only changes are
//! sent. A placeholder's buttons (the Stop button) stay on through every edit.

use std::time::Duration;

use teloxide::types::{InlineKeyboardMarkup, MessageId};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::telegram::{DraftError, Telegram};

/// Shortest time between two edits of the placeholder.
pub(crate) const MIN_EDIT_INTERVAL: Duration = Duration::from_millis(1500);
/// Shortest time between two drafts.
pub(crate) const MIN_DRAFT_INTERVAL: Duration = Duration::from_secs(1);
/// How often "typing…" is renewed (Telegram shows it for about five seconds).
pub(crate) const TYPING_EVERY: Duration = Duration::from_secs(4);

/// Where a turn's progress shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Surface {
    /// Edits of the placeholder message (none: only typing).
    Placeholder(Option<MessageId>),
    /// Telegram drafts with this non-zero id.
    Draft(i64),
}

impl Surface {
    /// The shortest time between two updates.
    fn interval(self) -> Duration {
        match self {
            Surface::Placeholder(_) => MIN_EDIT_INTERVAL,
            Surface::Draft(_) => MIN_DRAFT_INTERVAL,
        }
    }

    /// Shows `html` (without a placeholder: nothing to do), keeping a placeholder's `buttons`.
    async fn show(
        self,
        telegram: &Telegram,
        html: &str,
        buttons: Option<&InlineKeyboardMarkup>,
    ) -> Result<(), DraftError> {
        match (self, buttons) {
            (Surface::Placeholder(None), _) => Ok(()),
            (Surface::Placeholder(Some(id)), Some(buttons)) => {
                Ok(telegram.edit_html_with_buttons(id, html, buttons).await?)
            }
            (Surface::Placeholder(Some(id)), None) => Ok(telegram.edit_html(id, html).await?),
            (Surface::Draft(draft_id), _) => telegram.send_draft(draft_id, html).await,
        }
    }
}

/// The running progress display of one turn.
pub(crate) struct Progress {
    wanted: watch::Sender<String>,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl Progress {
    /// Starts typing now and shows `shown` (what `surface` shows already: the placeholder's
    /// HTML, or nothing for a draft) until told otherwise; without a placeholder it only keeps
    /// typing. A placeholder's `buttons` (the Stop button) stay on through every edit.
    pub(crate) fn start(
        telegram: Telegram,
        surface: Surface,
        shown: String,
        buttons: Option<InlineKeyboardMarkup>,
    ) -> Self {
        let (wanted, rx) = watch::channel(shown.clone());
        let stop = CancellationToken::new();
        let task = tokio::spawn(run(telegram, surface, shown, buttons, rx, stop.clone()));
        Self { wanted, stop, task }
    }

    /// Asks for `html` to be shown (the latest wish wins; edits are throttled).
    pub(crate) fn show(&self, html: String) {
        self.wanted.send_replace(html);
    }

    /// Stops typing and editing; returns once no edit is in flight any more.
    pub(crate) async fn finish(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }
}

async fn run(
    telegram: Telegram,
    surface: Surface,
    mut shown: String,
    buttons: Option<InlineKeyboardMarkup>,
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
                let due = last_edit + surface.interval();
                if stop.run_until_cancelled(tokio::time::sleep_until(due)).await.is_none() {
                    return;
                }
                let html = wanted.borrow_and_update().clone();
                if html == shown || html.is_empty() {
                    continue;
                }
                match stop.run_until_cancelled(surface.show(&telegram, &html, buttons.as_ref())).await {
                    None => return,
                    // The Bot API lacks drafts: the caller moves the turn to a placeholder.
                    Some(Err(DraftError::Unsupported)) => return,
                    Some(Err(e)) => tracing::debug!(error = %e, "progress update failed"),
                    Some(Ok(())) => shown = html,
                }
                last_edit = Instant::now();
            }
        }
    }
}
