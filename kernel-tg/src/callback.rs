//! A button press (an admitted callback query, see `admission::admit_press`): the Stop button
//! cancels its own turn (the same `Cancel` as `/cancel`, for that turn only; one too old to
//! name its turn: the turn of the topic its message is in, else the main chat's), an option answers
//! the pending question (`Answer`), an approval button answers its approval (`Approve`; one
//! agentd no longer has pending — answered, expired, forged — gets a toast and changes nothing),
//! a cut-off answer's button runs its message again (`RerunTurn`; its button is removed once it
//! ran or turned out stale), `/memory`'s and `/history <words>`' previous / next buttons show that page in their message
//! (a history search no longer kept gets a toast),
//! a budget limit's Continue button lifts the limits of its period and runs the refused message
//! once (`GrantBudgetOverride`; a stale one — another period, a message run already, a forged
//! id — changes nothing; both buttons are removed once granted); a cut-off answer's button over
//! a budget limit is refused with a toast and kept; a proposed merge of memories' merge / keep
//! (`DecideMemoryProposal`; a stale or forged one changes nothing; the buttons are removed once
//! decided); a watch notification's pause / delete (`ControlSchedule` by id; a watch gone
//! already gets a toast; the buttons are removed once done). Every press is answered (`answerCallbackQuery`): a stale one — its
//! turn ended, its question closed, its message run again already — with a short toast. The
//! question's buttons are
//! removed by `delivery` when agentd says the question closed.

use kernel_proto::v1 as pb;
use kernel_proto::words::ProposalOutcome;
use teloxide::types::{CallbackQuery, InlineKeyboardMarkup, MessageId};

use std::borrow::Cow;

use crate::agentd::is_transport_failure;
use crate::buttons::{self, ApprovalPress, Press};
use crate::handle::App;

/// The topic of the message whose button was pressed (`None`: the main chat): an offer made
/// in a topic acts on that topic's session and answers there.
fn press_topic(app: &App, press: &CallbackQuery) -> Option<i64> {
    let message = press.message.as_ref()?.regular_message()?;
    crate::topics::topic_of(message, app.form().topics)
}

/// Handles one admitted press.
pub(crate) async fn handle(app: App, press: CallbackQuery) {
    let texts = app.texts();
    let parsed = press.data.as_deref().and_then(buttons::parse);
    let toast: Option<Cow<'static, str>> = match parsed {
        None => Some(texts.question_stale().into()),
        Some(Press::Rerun { turn_id }) => {
            let message = press.message.as_ref().map(|m| m.id());
            rerun(&app, &turn_id, message).await
        }
        Some(Press::MemoryPage { page }) => {
            let message = press.message.as_ref().map(|m| m.id());
            memory_page(&app, page, false, message).await.map(Cow::from)
        }
        Some(Press::MemoryAllPage { page }) => {
            let message = press.message.as_ref().map(|m| m.id());
            memory_page(&app, page, true, message).await.map(Cow::from)
        }
        Some(Press::HistoryPage { search, page }) => {
            let message = press.message.as_ref().map(|m| m.id());
            history_page(&app, search, page, message)
                .await
                .map(Cow::from)
        }
        Some(Press::Budget { period, refusal }) => {
            let message = press.message.as_ref().map(|m| m.id());
            budget(&app, (&period, &refusal), message).await
        }
        Some(Press::AnswerEdit { message }) => {
            let offer = press.message.as_ref().map(|m| m.id());
            let app = app.in_topic(press_topic(&app, &press));
            Some(crate::edits::answer(&app, message, offer).await.into())
        }
        Some(Press::TryAgain { session, model }) => {
            let offer = press.message.as_ref().map(|m| m.id());
            let app = app.in_topic(press_topic(&app, &press));
            Some(
                crate::reactions::try_again(&app, session, model, offer)
                    .await
                    .into(),
            )
        }
        Some(Press::MemoryProposal { proposal, merge }) => {
            let message = press.message.as_ref().map(|m| m.id());
            memory_proposal(&app, proposal, merge, message)
                .await
                .map(Cow::from)
        }
        Some(Press::Watch { watch, delete }) => {
            let message = press.message.as_ref().map(|m| m.id());
            watch_press(&app, watch, delete, message)
                .await
                .map(Cow::from)
        }
        Some(parsed) => match call(&app, parsed, press_topic(&app, &press)).await {
            Ok(toast) => toast.map(Cow::from),
            Err(status) => Some(unreachable(&app, &status).into()),
        },
    };
    if let Err(e) = app
        .telegram()
        .answer_callback(&press.id.0, toast.as_deref())
        .await
    {
        tracing::debug!(error = %e, "answerCallbackQuery failed");
    }
}

/// Shows page `page` of `/memory` (`all`: of `/memory all`) in the pressed `message` (with its
/// buttons). The toast to show: none, or that agentd is away.
async fn memory_page(
    app: &App,
    page: u32,
    all: bool,
    message: Option<MessageId>,
) -> Option<&'static str> {
    let shown = match app.agentd().client().await {
        Ok(mut client) => crate::memory_page::page(&mut client, app.texts(), page, all).await,
        Err(e) => Err(tonic::Status::unavailable(e.to_string())),
    };
    show_in_place(app, shown, message).await
}

/// Shows page `page` of the kept `/history <words>` search `search` in the pressed `message`.
/// The toast to show: none, that the search is no longer kept, or that agentd is away.
async fn history_page(
    app: &App,
    search: u64,
    page: u32,
    message: Option<MessageId>,
) -> Option<&'static str> {
    let texts = app.texts();
    let shown = match app.agentd().client().await {
        Ok(mut client) => crate::command_call::history_page(&mut client, texts, search, page).await,
        Err(e) => Err(tonic::Status::unavailable(e.to_string())),
    };
    show_in_place(app, shown, message).await
}

/// Replaces the pressed `message` with a page `shown` as HTML and buttons (none: the buttons
/// go); sends it instead when there is no message or the edit fails. The toast: none, that what
/// the button named is gone (`NOT_FOUND`), or that agentd is away.
async fn show_in_place(
    app: &App,
    shown: Result<(String, Option<InlineKeyboardMarkup>), tonic::Status>,
    message: Option<MessageId>,
) -> Option<&'static str> {
    let texts = app.texts();
    let (html, buttons) = match shown {
        Ok(shown) => shown,
        Err(status) if status.code() == tonic::Code::NotFound => {
            return Some(texts.resume_stale());
        }
        Err(status) => {
            tracing::warn!(code = ?status.code(), "a page could not be read");
            if is_transport_failure(&status) {
                app.agentd().lost();
            }
            return Some(texts.agentd_unavailable());
        }
    };
    let Some(id) = message else {
        app.say(&html, None).await;
        return None;
    };
    let buttons = buttons.unwrap_or_else(|| InlineKeyboardMarkup::new(Vec::<Vec<_>>::new()));
    if let Err(e) = app
        .telegram()
        .edit_html_with_buttons(id, &html, &buttons)
        .await
    {
        tracing::warn!(error = %e, "a page could not be shown in place; sending it");
        app.say(&html, None).await;
    }
    None
}

/// The most characters a press's toast shows (Bot API `answerCallbackQuery`).
const TOAST_CHARS: usize = 200;

/// agentd's refusal of what a press asked (`InvalidArgument`, already in the owner's language:
/// e.g. an image the current provider cannot take) as the press's toast.
fn refusal_toast(status: &tonic::Status) -> Option<Cow<'static, str>> {
    (status.code() == tonic::Code::InvalidArgument)
        .then(|| Cow::Owned(status.message().chars().take(TOAST_CHARS).collect()))
}

/// Runs cut-off turn `turn_id`'s message again; removes the button from `message` once it ran
/// or turned out stale. The toast to show.
async fn rerun(app: &App, turn_id: &str, message: Option<MessageId>) -> Option<Cow<'static, str>> {
    let texts = app.texts();
    let request = pb::RerunTurnRequest {
        turn_id: turn_id.to_owned(),
    };
    let reply = match app.agentd().client().await {
        Ok(mut client) => client.rerun_turn(request).await,
        Err(e) => Err(tonic::Status::unavailable(e.to_string())),
    };
    let (toast, done) = match reply {
        Ok(reply) if reply.get_ref().busy => (texts.rerun_busy().into(), false),
        Ok(reply) => {
            tracing::info!(turn = %reply.get_ref().turn_id, "a cut-off turn runs again");
            (texts.rerun_started().into(), true)
        }
        Err(status) if status.code() == tonic::Code::NotFound => (texts.rerun_stale().into(), true),
        Err(status) if status.code() == tonic::Code::FailedPrecondition => {
            tracing::info!("a cut-off turn was not run again: a budget limit is reached");
            (texts.rerun_over_budget().into(), false)
        }
        Err(status) if let Some(toast) = refusal_toast(&status) => {
            tracing::info!("a cut-off turn was not run again: agentd refused its message");
            (toast, false)
        }
        Err(status) => (unreachable(app, &status).into(), false),
    };
    if done
        && let Some(id) = message
        && let Err(e) = app.telegram().set_buttons(id, None).await
    {
        tracing::debug!(error = %e, "the rerun button could not be removed");
    }
    Some(toast)
}

/// Lifts the budget limits for `period` and runs the refused message `refusal`; removes the
/// buttons from `message` once granted.
async fn budget(
    app: &App,
    (period, refusal): (&str, &str),
    message: Option<MessageId>,
) -> Option<Cow<'static, str>> {
    let texts = app.texts();
    let request = pb::GrantBudgetOverrideRequest {
        period: period.to_owned(),
        refusal: refusal.to_owned(),
    };
    let reply = match app.agentd().client().await {
        Ok(mut client) => client.grant_budget_override(request).await,
        Err(e) => Err(tonic::Status::unavailable(e.to_string())),
    };
    match reply {
        Ok(reply) if reply.get_ref().granted => {
            let runs = reply.get_ref().runs;
            tracing::info!(period, runs, "budget override granted");
            if let Some(id) = message
                && let Err(e) = app.telegram().set_buttons(id, None).await
            {
                tracing::debug!(error = %e, "the budget buttons could not be removed");
            }
            Some(Cow::from(if runs {
                texts.budget_granted_running()
            } else {
                texts.budget_granted()
            }))
        }
        Ok(_) => {
            tracing::info!(period, "a stale budget override press");
            Some(texts.budget_stale().into())
        }
        Err(status) if let Some(toast) = refusal_toast(&status) => {
            tracing::info!(period, "a refused message was not run: agentd refused it");
            Some(toast)
        }
        Err(status) => Some(unreachable(app, &status).into()),
    }
}

/// Merges (`merge`) or keeps the memories of proposal `proposal`; removes the buttons from
/// `message` once decided. The toast to show.
async fn memory_proposal(
    app: &App,
    proposal: i64,
    merge: bool,
    message: Option<MessageId>,
) -> Option<&'static str> {
    let texts = app.texts();
    let request = pb::DecideMemoryProposalRequest {
        proposal_id: proposal,
        merge,
    };
    let reply = match app.agentd().client().await {
        Ok(mut client) => client.decide_memory_proposal(request).await,
        Err(e) => Err(tonic::Status::unavailable(e.to_string())),
    };
    let toast = match reply {
        Ok(reply) => {
            let outcome = reply.into_inner().outcome;
            tracing::info!(proposal, %outcome, "memory proposal decided");
            match ProposalOutcome::parse(&outcome) {
                Some(ProposalOutcome::Merged) => texts.memory_merged(),
                Some(ProposalOutcome::Kept) => texts.memory_kept(),
                // A stale or forged press leaves the message as it is.
                Some(ProposalOutcome::Stale) | None => {
                    return Some(texts.memory_proposal_stale());
                }
            }
        }
        Err(status) => {
            return Some(unreachable(app, &status));
        }
    };
    if let Some(id) = message
        && let Err(e) = app.telegram().set_buttons(id, None).await
    {
        tracing::debug!(error = %e, "the proposal's buttons could not be removed");
    }
    Some(toast)
}

/// Pauses or deletes (`delete`) watch `watch`; removes the buttons from `message` once done
/// (or once the watch turned out gone). The toast to show.
async fn watch_press(
    app: &App,
    watch: i64,
    delete: bool,
    message: Option<MessageId>,
) -> Option<&'static str> {
    use kernel_proto::words::ScheduleAction;
    let texts = app.texts();
    let action = if delete {
        ScheduleAction::Delete
    } else {
        ScheduleAction::Pause
    };
    let request = pb::ControlScheduleRequest {
        number: 0,
        id: watch,
        action: action.as_str().to_owned(),
    };
    let reply = match app.agentd().client().await {
        Ok(mut client) => client.control_schedule(request).await,
        Err(e) => Err(tonic::Status::unavailable(e.to_string())),
    };
    let toast = match reply {
        Ok(reply) if !reply.get_ref().found => texts.watch_gone(),
        Ok(_) => {
            tracing::info!(watch, delete, "watch button pressed");
            if delete {
                texts.watch_deleted()
            } else {
                texts.schedule_paused()
            }
        }
        Err(status) => {
            return Some(unreachable(app, &status));
        }
    };
    if let Some(id) = message
        && let Err(e) = app.telegram().set_buttons(id, None).await
    {
        tracing::debug!(error = %e, "the watch's buttons could not be removed");
    }
    Some(toast)
}

/// A press whose RPC failed: logged, agentd marked lost when the connection is gone; the
/// toast to show.
fn unreachable(app: &App, status: &tonic::Status) -> &'static str {
    tracing::warn!(code = ?status.code(), "a button press could not reach kernel-agentd");
    if is_transport_failure(status) {
        app.agentd().lost();
    }
    app.texts().agentd_unavailable()
}

/// Runs the press's RPC (the pressed message is in topic `topic`; `None`: the main chat, or
/// not known); the toast to show (`None`: just stop the spinner).
async fn call(
    app: &App,
    press: Press,
    topic: Option<i64>,
) -> Result<Option<&'static str>, tonic::Status> {
    let texts = app.texts();
    let mut client = app
        .agentd()
        .client()
        .await
        .map_err(|e| tonic::Status::unavailable(e.to_string()))?;
    Ok(match press {
        Press::Stop { turn_id } => {
            // A button too old to carry its turn's id stops the turn of the chat or topic its
            // message is in, never every running turn.
            let session_id = match (&turn_id, topic) {
                (None, Some(thread)) => crate::topics::session(app, thread).await.ok(),
                _ => None,
            };
            let request = pb::CancelRequest {
                clear_queue: false,
                main_only: turn_id.is_none() && session_id.is_none(),
                turn_id,
                session_id,
            };
            let reply = client.cancel(request).await?.into_inner();
            tracing::info!(cancelled = reply.cancelled, "Stop button pressed");
            Some(if reply.cancelled {
                texts.stop_done()
            } else {
                texts.stop_stale()
            })
        }
        Press::Option { question_id, index } => {
            let request = pb::AnswerRequest {
                question_id,
                option: Some(index),
                text: String::new(),
            };
            let reply = client.answer(request).await?.into_inner();
            tracing::info!(accepted = reply.accepted, "answer button pressed");
            Some(if reply.accepted {
                texts.question_answered()
            } else {
                texts.question_stale()
            })
        }
        Press::Approve {
            approval_id,
            decision,
        } => {
            use pb::ApprovalDecision as D;
            let decision = match decision {
                ApprovalPress::Once => D::AllowOnce,
                ApprovalPress::Session => D::AllowSession,
                ApprovalPress::Deny => D::Deny,
            };
            let request = pb::ApproveRequest {
                approval_id,
                decision: decision.into(),
            };
            match client.approve(request).await {
                Ok(_) => {
                    tracing::info!(?decision, "approval button pressed");
                    Some(texts.approval_recorded())
                }
                Err(status) if status.code() == tonic::Code::NotFound => {
                    tracing::info!("a press on an approval no longer pending");
                    Some(texts.approval_stale())
                }
                Err(status) => return Err(status),
            }
        }
        Press::Resume { session_id } => {
            let request = pb::ResumeSessionByIdRequest { session_id };
            match client.resume_session_by_id(request).await {
                Ok(_) => Some(texts.resumed_toast()),
                Err(status) if status.code() == tonic::Code::NotFound => Some(texts.resume_stale()),
                Err(status) => return Err(status),
            }
        }
        Press::Rerun { .. }
        | Press::MemoryPage { .. }
        | Press::MemoryAllPage { .. }
        | Press::HistoryPage { .. }
        | Press::Budget { .. }
        | Press::AnswerEdit { .. }
        | Press::TryAgain { .. }
        | Press::MemoryProposal { .. }
        | Press::Watch { .. } => None,
    })
}
