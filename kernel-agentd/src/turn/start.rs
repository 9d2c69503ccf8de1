//! Entering a turn: `chat` / `chat_for_owner` check the input and take the gate in the turn's
//! lane (a busy refusal, or waiting behind a Kernel turn, a concluding one, or for a free slot
//! when `max_parallel_turns` run), `run_for_kernel*` start Kernel's own
//! turns once the gate is free, `record_for_kernel` stores a round Kernel told the owner outside
//! a turn, and `start` spawns the `run::Turn`.

use super::*;

impl Turns {
    /// Starts a turn for `input` and returns its events. Bad input — or an image larger than the
    /// current provider takes — is refused before the gate (in the owner's language); while
    /// another turn runs, the events are a single `Busy`.
    pub async fn chat(&self, input: UserInput) -> Result<TurnEvents, ApiError> {
        self.chat_for_owner(input, None, IntakeKeys::default())
            .await
    }

    /// [`Turns::chat`] for an owner turn when `delivery` is set: its progress is shown to
    /// `Subscribe` clients and its outcome is queued in the outbox before the last event.
    /// `keys` are the idempotency keys of the owner messages it carries: when a turn took any of
    /// them, the events are a single `AlreadyTaken` (checked once the gate is entered, so a
    /// request refused as busy stores nothing).
    pub async fn chat_for_owner(
        &self,
        input: UserInput,
        delivery: Option<OwnerDelivery>,
        keys: IntakeKeys,
    ) -> Result<TurnEvents, ApiError> {
        self.chat_in(None, input, delivery, keys).await
    }

    /// [`Turns::chat_for_owner`] in session `session_id`'s own lane (a Telegram topic, a `Chat`
    /// naming its session: it runs beside the turns of other sessions); `None`: the main lane,
    /// in the current session. An unknown session is `NOT_FOUND`.
    pub async fn chat_in(
        &self,
        session_id: Option<i64>,
        input: UserInput,
        delivery: Option<OwnerDelivery>,
        keys: IntakeKeys,
    ) -> Result<TurnEvents, ApiError> {
        let inner = &self.inner;
        // The question this message may answer is in the named session, else in the current
        // one; with no current session yet none can be pending, and a message refused below
        // must not create one.
        let asked_in = match session_id {
            Some(_) => Some(self.lane(session_id).await?),
            None => inner.sessions.current_id().map(gate::Lane::main),
        };
        let input = self.mark_reply_to_outside(input).await?;
        if let Some(lane) = asked_in
            && let Some(id) = self.reply_to_question(lane, &input).await
        {
            // A message while the model waits for the owner's reply is that reply.
            let (tx, rx) = mpsc::unbounded_channel();
            let _ = tx.send(TurnEvent::Answered { id });
            return Ok(rx);
        }
        let media = &inner.media;
        let input = input.accept(media.locale(), media.stt_configured())?;
        let input = self.fits_provider(input).await?;
        if let Some(refused) = self.refuse_over_budget(delivery, Some(&input)).await? {
            return Ok(refused);
        }
        let lane = self.lane(session_id).await?;
        match self.try_start(lane, input, delivery, keys).await? {
            Ok(events) => Ok(events),
            Err(Busy { first_in_window }) => {
                tracing::info!(first_in_window, "chat refused: a turn is running");
                Ok(single(TurnEvent::Busy { first_in_window }))
            }
        }
    }

    /// `input` marked as outside content when it replies to a message Kernel sent that carried
    /// some (an answer of an outside-content turn, a job's output): the words it answers may be
    /// a stranger's, so risky actions still wait for the owner's tap.
    pub(super) async fn mark_reply_to_outside(
        &self,
        mut input: UserInput,
    ) -> Result<UserInput, ApiError> {
        if !input.outside_content
            && !input.replied_to.is_empty()
            && self
                .inner
                .store
                .carried_outside(&input.replied_to)
                .await
                .map_err(ApiError::internal)?
        {
            tracing::info!("a reply to outside content: the turn is outside content");
            input.outside_content = true;
        }
        Ok(input)
    }

    /// `input` with its images scaled down to what the current provider takes, or refused (in
    /// the owner's language) when one cannot be decoded — also for a message that runs later
    /// (re-run, Continue), the provider may have changed meanwhile.
    pub(super) async fn fits_provider(
        &self,
        input: input::Accepted,
    ) -> Result<input::Accepted, ApiError> {
        let media = &self.inner.media;
        match self.inner.models.images(None) {
            Some((kind, limits)) => media::fit_for_provider(input, kind, limits)
                .await
                .map_err(|r| r.into_error(media.locale())),
            None => Ok(input),
        }
    }

    /// The lane of a turn in `session_id` (checked to exist), or the main lane in the current
    /// session.
    pub(super) async fn lane(&self, session_id: Option<i64>) -> Result<gate::Lane, ApiError> {
        let sessions = &self.inner.sessions;
        match session_id {
            Some(id) => match sessions.by_id(id).await? {
                Some(row) => Ok(gate::Lane::session(row.id)),
                None => Err(ApiError::NotFound(format!("no session with id {id}"))),
            },
            None => Ok(gate::Lane::main(sessions.current().await?.id)),
        }
    }

    /// Starts an accepted owner turn in `lane` unless another turn runs there. A turn Kernel
    /// started (a scheduled task) does not make the owner wait for a refusal: the owner's
    /// message runs right after it; nor does a turn whose answer is already on its way to the
    /// owner (a quick reply to it must not be refused as busy), nor a full gate
    /// (`max_parallel_turns` running in other lanes): the message waits for a free slot.
    pub(super) async fn try_start(
        &self,
        lane: gate::Lane,
        input: input::Accepted,
        delivery: Option<OwnerDelivery>,
        keys: IntakeKeys,
    ) -> Result<Result<TurnEvents, Busy>, ApiError> {
        let inner = &self.inner;
        let cancel = inner.root.child_token();
        let permit = match inner.gate.try_enter(lane, cancel.clone()) {
            Ok(permit) => permit,
            Err(refused) if refused == Refused::Full || inner.gate.worth_waiting_for(lane) => {
                tracing::info!(
                    session = lane.session_id,
                    full = refused == Refused::Full,
                    "the owner's message waits (for a free slot, or a Kernel or concluding turn)"
                );
                if refused == Refused::Full
                    && let Some(d) = &delivery
                {
                    self.tell_waiting_for_slot(d).await;
                }
                match inner
                    .gate
                    .enter_when_free(lane, cancel.clone(), Origin::Owner)
                    .await
                {
                    Some(permit) => permit,
                    None => return Ok(Ok(single(TurnEvent::Cancelled))),
                }
            }
            Err(Refused::Busy(busy)) => return Ok(Err(busy)),
            Err(Refused::Full) => unreachable!("a full gate is waited for"),
        };
        // Under the gate, an earlier turn with these keys has stored them (or never will).
        if !keys.is_empty()
            && let Some(taken) = inner
                .store
                .taken_keys(keys.as_slice())
                .await
                .map_err(ApiError::internal)?
        {
            tracing::info!(turn = %taken.turn_id, keys = taken.keys.len(), "chat refused: its messages were taken before");
            return Ok(Ok(single(TurnEvent::AlreadyTaken {
                keys: taken.keys,
                turn_id: taken.turn_id,
            })));
        }
        self.start(permit, cancel, input, delivery, keys, None)
            .await
            .map(Ok)
    }

    /// Runs a turn Kernel starts on its own (a scheduled task) with `prompt`: it waits for the
    /// running turn to end instead of being refused, and its outcome reaches the owner through
    /// the outbox like an owner turn's (with no message to reply to). `None` when shutdown
    /// came first.
    pub async fn run_for_kernel(&self, prompt: String) -> Result<Option<TurnEvents>, ApiError> {
        self.kernel_turn(prompt, false, None, std::future::ready(true), None)
            .await
    }

    /// [`Turns::run_for_kernel`] for a prompt holding content from outside the owner (a
    /// background job's output): with `approvals.mode = "untrusted"` its risky actions ask.
    /// In `session` when it lives in a Telegram topic (the turn's answer goes there).
    pub async fn run_for_kernel_outside(
        &self,
        prompt: String,
        session: Option<i64>,
    ) -> Result<Option<TurnEvents>, ApiError> {
        self.kernel_turn(prompt, true, None, std::future::ready(true), session)
            .await
    }

    /// [`Turns::run_for_kernel`] on `model` (`provider/model`, a scheduled task's; `None` or
    /// one no longer configured: the current model), asking `wanted` once the gate is free
    /// (before the turn starts) whether the turn is still wanted (a scheduled task's run may
    /// have been deleted with its schedule while it waited); `None` also when it is not.
    pub async fn run_for_kernel_if(
        &self,
        prompt: String,
        model: Option<&str>,
        wanted: impl Future<Output = bool> + Send,
        session: Option<i64>,
    ) -> Result<Option<TurnEvents>, ApiError> {
        let model = model.and_then(|spec| match self.inner.models.named(spec) {
            Ok(model) => Some(model),
            Err(reason) => {
                tracing::warn!(model = spec, %reason, "the task's model is no longer configured; it runs on the current one");
                None
            }
        });
        self.kernel_turn(prompt, false, model, wanted, session)
            .await
    }

    /// Where a Kernel turn for `session` runs: in that session's lane, answering in its topic,
    /// when it lives in a Telegram topic; else in the main lane (the current session, the main
    /// chat), as before topics.
    async fn kernel_lane(
        &self,
        session: Option<i64>,
    ) -> Result<(gate::Lane, Option<i64>), ApiError> {
        if let Some(id) = session
            && let Some(thread) = self.inner.sessions.topic_of(id).await?
            && let Ok(lane) = self.lane(Some(id)).await
        {
            return Ok((lane, Some(thread)));
        }
        Ok((self.lane(None).await?, None))
    }

    pub(super) async fn kernel_turn(
        &self,
        prompt: String,
        outside_content: bool,
        model: Option<CurrentModel>,
        wanted: impl Future<Output = bool> + Send,
        session: Option<i64>,
    ) -> Result<Option<TurnEvents>, ApiError> {
        let inner = &self.inner;
        let input = UserInput {
            text: prompt,
            attachments: Vec::new(),
            want_voice_reply: false,
            outside_content,
            replied_to: Vec::new(),
        }
        .accept(inner.media.locale(), false)?;
        let cancel = inner.root.child_token();
        let (lane, thread_id) = self.kernel_lane(session).await?;
        let Some(permit) = inner
            .gate
            .enter_when_free(lane, cancel.clone(), Origin::Kernel)
            .await
        else {
            return Ok(None);
        };
        if !wanted.await {
            return Ok(None);
        }
        let delivery = Some(OwnerDelivery {
            thread_id,
            ..OwnerDelivery::default()
        });
        self.start(
            permit,
            cancel,
            input,
            delivery,
            IntakeKeys::default(),
            model,
        )
        .await
        .map(Some)
    }

    /// Stores `user` and `assistant` as one round of session `session` (`None`, or one no
    /// longer there: the current session), with no model call, before that session's next
    /// turn starts: once no turn runs in it (waiting for the gate like a Kernel turn), or by
    /// that next turn if it is admitted first. What Kernel told the owner outside a turn (a
    /// background job's result) is thus in the next turn's context of the session it belongs
    /// to, whatever runs elsewhere. `false` when shutdown came first (the next turn in the
    /// session still stores it).
    pub async fn record_for_kernel(
        &self,
        user: String,
        assistant: String,
        session: Option<i64>,
    ) -> Result<bool, ApiError> {
        let inner = &self.inner;
        let session_id = match session {
            Some(id) if inner.sessions.by_id(id).await?.is_some() => id,
            _ => inner.sessions.current().await?.id,
        };
        self.pending_rounds().push(PendingRound {
            session_id,
            messages: vec![Message::user_text(user), Message::assistant_text(assistant)],
        });
        let Some(_permit) = inner
            .gate
            .enter_when_free(
                gate::Lane::session(session_id),
                inner.root.child_token(),
                Origin::Kernel,
            )
            .await
        else {
            return Ok(false);
        };
        self.store_pending_rounds(session_id).await?;
        Ok(true)
    }

    pub(super) fn pending_rounds(&self) -> std::sync::MutexGuard<'_, Vec<PendingRound>> {
        self.inner
            .pending_rounds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Stores the rounds [`Turns::record_for_kernel`] left pending for session `session_id`;
    /// the caller holds the gate of a lane in that session.
    pub(super) async fn store_pending_rounds(&self, session_id: i64) -> Result<(), ApiError> {
        let rounds: Vec<Message> = {
            let mut pending = self.pending_rounds();
            let (mine, others) = std::mem::take(&mut *pending)
                .into_iter()
                .partition::<Vec<_>, _>(|r| r.session_id == session_id);
            *pending = others;
            mine.into_iter().flat_map(|r| r.messages).collect()
        };
        if rounds.is_empty() {
            return Ok(());
        }
        self.inner
            .store
            .append_messages(session_id, &rounds)
            .await
            .map_err(ApiError::internal)?;
        tracing::info!(
            session = session_id,
            messages = rounds.len(),
            "rounds Kernel recorded outside a turn stored"
        );
        Ok(())
    }

    /// Whether a turn runs now (in any lane).
    pub fn is_running(&self) -> bool {
        self.inner.gate.running_origin(Scope::All).is_some()
    }

    /// Runs an accepted `input` as the turn `permit` admitted (stopped by `cancel`), on `model`
    /// (`None`: the current model).
    pub(super) async fn start(
        &self,
        permit: gate::Permit,
        cancel: CancellationToken,
        input: input::Accepted,
        delivery: Option<OwnerDelivery>,
        keys: IntakeKeys,
        model: Option<CurrentModel>,
    ) -> Result<TurnEvents, ApiError> {
        let inner = &self.inner;
        // The main lane's turn runs in the session current when it was admitted.
        let session_id = match permit.lane() {
            Some(lane) => lane.session_id,
            None => inner.sessions.current().await?.id,
        };
        if let Err(e) = self.store_pending_rounds(session_id).await {
            tracing::error!(error = %e, "cannot store the rounds Kernel recorded outside a turn");
        }
        let model = match model {
            Some(model) => model,
            None => inner.models.current()?,
        };
        let (tx, rx) = mpsc::unbounded_channel();
        let turn = run::Turn::new(run::TurnSetup {
            turns: self.clone(),
            permit,
            events: tx,
            cancel,
            session_id,
            model,
            input,
            delivery,
            keys,
        });
        let span = tracing::info_span!("turn", session = session_id, turn = %turn.id());
        inner.tasks.spawn(turn.run().instrument(span));
        Ok(rx)
    }
}

impl Turns {
    /// Tells the owner (through the outbox, where the message came from) that the message waits
    /// because `max_parallel_turns` turns run; it starts by itself once a slot is free.
    async fn tell_waiting_for_slot(&self, d: &OwnerDelivery) {
        let inner = &self.inner;
        let item = crate::outbox::NewItem {
            turn_id: String::new(),
            body: crate::outbox::ItemBody::Notice {
                text: waiting_for_slot(inner.media.locale(), inner.gate.max_parallel()),
            },
            reply_to: d.reply_to,
            placeholder: None,
            thread_id: d.thread_id,
            outside: false,
        };
        if let Err(e) = inner.outbox.queue(item).await {
            tracing::warn!(error = %e, "cannot tell the owner a message waits for a slot");
        }
    }
}

/// The owner's message waits for one of `max` parallel slots.
fn waiting_for_slot(locale: kernel_common::config::Locale, max: usize) -> String {
    match locale {
        kernel_common::config::Locale::Zh => {
            format!(
                "已有 {max} 个对话同时在运行（`max_parallel_turns`），这条消息会在有空位时自动开始。"
            )
        }
        kernel_common::config::Locale::En => format!(
            "{max} conversations are already running (`max_parallel_turns`); this message starts by itself as soon as one ends."
        ),
    }
}

#[cfg(test)]
mod waiting_tests {
    use super::waiting_for_slot;
    use kernel_common::config::Locale;

    #[test]
    fn the_wait_for_a_slot_is_said_in_both_languages_with_the_cap() {
        assert!(waiting_for_slot(Locale::Zh, 2).contains("2 个对话"));
        assert!(waiting_for_slot(Locale::En, 3).starts_with("3 conversations"));
    }
}
