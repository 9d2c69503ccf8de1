//! Performs a parsed [`Command`]: calls its RPC on kernel-agentd and renders what came back as
//! Telegram HTML with [`Texts`] (not an "answer": that word is the model's). The proto → `texts` view mapping lives here and in the
//! submodules, one per command group (an edge module).

use tonic::Status;

use crate::agentd::{Agentd, Client, is_transport_failure, refused};
use crate::command::Command;
use crate::memory_page;
use crate::texts::Texts;
use teloxide::types::InlineKeyboardMarkup;

mod background;
mod history_search;
pub(crate) use history_search::page as history_page;
mod memory;
mod sessions;
mod setup;
mod status;
mod turn_control;

/// The owner's message a command came in.
#[derive(Debug, Clone)]
pub(crate) struct Sent {
    /// Its id: what a `/steer`, `/next` or `/retry` turn's answer replies to.
    pub(crate) message_id: i64,
    /// Its idempotency key ("tg:<chat>:<message>"): a `/next` item carries it, so an edit of the
    /// message while it waits replaces the item's text.
    pub(crate) key: String,
    /// The topic it was sent in (`None`: the main chat).
    pub(crate) thread: Option<i64>,
    /// The session of that topic, when the command acts on it (`None`: the current session).
    pub(crate) session: Option<i64>,
    /// It carries content from outside the owner (it replies to a forward or a document; a
    /// forward itself is never a command): a `/steer` keeps that mark.
    pub(crate) outside: bool,
    /// The chat message it replies to: agentd marks a `/steer` replying to a message that
    /// carried outside content.
    pub(crate) replied_to: Option<i64>,
}

/// The HTML sent back for `command` (sent as `sent`), with the buttons to go with it
/// (`/memory`'s previous / next page). Inside a topic, the commands about the running turn
/// (`/cancel`, `/steer`, `/next`, `/status`) act on the topic's session.
pub(crate) async fn perform(
    command: Command,
    agentd: &Agentd,
    texts: Texts,
    sent: Sent,
) -> (String, Option<InlineKeyboardMarkup>) {
    if let Command::HistorySearch(words) = command {
        let mut client = match agentd.client().await {
            Ok(client) => client,
            Err(e) => {
                tracing::warn!(error = %e, "kernel-agentd unavailable for a command");
                agentd.lost();
                return (texts.agentd_unavailable().to_owned(), None);
            }
        };
        return match history_search::search(&mut client, texts, &words).await {
            Ok(found) => found,
            Err(status) => (failed(agentd, texts, &status), None),
        };
    }
    if let Command::Memory | Command::MemoryPage(_) | Command::MemoryAll(_) = command {
        let (n, all) = match command {
            Command::MemoryPage(n) => (n, false),
            Command::MemoryAll(n) => (n, true),
            _ => (1, false),
        };
        let mut client = match agentd.client().await {
            Ok(client) => client,
            Err(e) => {
                tracing::warn!(error = %e, "kernel-agentd unavailable for a command");
                agentd.lost();
                return (texts.agentd_unavailable().to_owned(), None);
            }
        };
        return match memory_page::page(&mut client, texts, n, all).await {
            Ok(page) => page,
            Err(status) => (failed(agentd, texts, &status), None),
        };
    }
    (perform_text(command, agentd, texts, sent).await, None)
}

/// What a command's failed RPC tells the owner.
fn failed(agentd: &Agentd, texts: Texts, status: &Status) -> String {
    if is_transport_failure(status) {
        tracing::warn!(code = ?status.code(), "kernel-agentd went away during a command");
        agentd.lost();
        texts.agentd_unavailable().to_owned()
    } else {
        tracing::info!(code = ?status.code(), "kernel-agentd refused a command");
        refused(status, texts)
    }
}

/// The HTML sent back for a command without buttons.
async fn perform_text(command: Command, agentd: &Agentd, texts: Texts, sent: Sent) -> String {
    if matches!(command, Command::Start | Command::Help) {
        return texts.help();
    }
    let mut client = match agentd.client().await {
        Ok(client) => client,
        Err(e) => {
            tracing::warn!(error = %e, "kernel-agentd unavailable for a command");
            agentd.lost();
            return texts.agentd_unavailable().to_owned();
        }
    };
    match call(command, &mut client, texts, sent).await {
        Ok(html) => html,
        Err(status) => failed(agentd, texts, &status),
    }
}

/// The session of topic `thread` (bound the first time the topic is seen); `None` in the main
/// chat.
async fn topic_session(
    client: &mut Client,
    thread: Option<i64>,
) -> Result<Option<kernel_proto::v1::SessionInfo>, Status> {
    let Some(thread_id) = thread else {
        return Ok(None);
    };
    let request = kernel_proto::v1::TopicSessionRequest {
        thread_id,
        name: None,
    };
    let reply = client.topic_session(request).await?.into_inner();
    Ok(reply.session)
}

/// Calls `command`'s RPC and renders what came back, one command group per module.
async fn call(
    command: Command,
    client: &mut Client,
    texts: Texts,
    sent: Sent,
) -> Result<String, Status> {
    match command {
        Command::Start | Command::Help => Ok(texts.help()),
        Command::Cancel => {
            let topic = topic_session(client, sent.thread).await?;
            turn_control::cancel(client, texts, false, topic.map(|s| s.id)).await
        }
        Command::CancelAll => turn_control::cancel(client, texts, true, None).await,
        Command::Steer(text) => {
            let topic = topic_session(client, sent.thread).await?;
            let to = turn_control::To {
                session: topic.map(|s| s.id),
                sent,
            };
            turn_control::steer(client, texts, text, to).await
        }
        Command::Next(text) => {
            let topic = topic_session(client, sent.thread).await?;
            let to = turn_control::To {
                session: topic.map(|s| s.id),
                sent,
            };
            turn_control::next(client, texts, text, to).await
        }
        Command::Status => {
            let topic = topic_session(client, sent.thread).await?;
            status::status(client, texts, topic).await
        }
        Command::Usage => status::usage(client, texts).await,
        Command::Doctor => status::doctor(client, texts).await,
        Command::New => sessions::new(client, texts).await,
        Command::History => sessions::history(client, texts).await,
        Command::Resume(number) => sessions::resume(client, texts, number, sent.thread).await,
        Command::Retitle(number) => sessions::retitle(client, texts, number, sent.thread).await,
        Command::DelHistory(numbers) => sessions::delete(client, texts, numbers).await,
        Command::Compact => sessions::compact(client, texts).await,
        Command::Retry(model) => turn_control::retry(client, texts, model, sent).await,
        Command::Provider(name) => setup::provider(name, client, texts).await,
        Command::Model(name) => setup::model(name, client, texts).await,
        Command::Skills => setup::skills(client, texts).await,
        Command::Web => setup::web(client, texts).await,
        Command::Remember(text) => memory::remember(client, texts, text).await,
        Command::Memory | Command::MemoryPage(_) => {
            Ok(memory_page::page(client, texts, 1, false).await?.0)
        }
        Command::MemoryAll(n) => Ok(memory_page::page(client, texts, n, true).await?.0),
        Command::MemoryUndo => memory::undo(client, texts).await,
        Command::MemorySearch(query) => memory::search(client, texts, query).await,
        Command::HistorySearch(words) => Ok(history_search::search(client, texts, &words).await?.0),
        Command::Forget(numbers) => memory::forget(client, texts, numbers).await,
        Command::Notes(date) => memory::notes(client, texts, date).await,
        Command::Tasks => background::tasks(client, texts).await,
        Command::TasksDelete(numbers) => background::delete_tasks(client, texts, numbers).await,
        Command::TasksPause(number, paused) => {
            background::pause_task(client, texts, number, paused).await
        }
        Command::Jobs => background::jobs(client, texts).await,
        Command::JobsCancel(number) => background::cancel_job(client, texts, number).await,
    }
}
