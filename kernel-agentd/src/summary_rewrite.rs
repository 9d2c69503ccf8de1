//! The summary rewriter (`[summary]`, off by default): after rounds fold into a session's
//! rule-based summary, a cheap model (the `[titles]` endpoint or a `[providers.<name>]` entry)
//! rewrites it into the same fixed structure — goal / constraints / decisions / open items /
//! facts — in the background, never on a turn's path.
//!
//! The turn loop's [`FoldHook`] queues the session and wakes the one tracked worker task (it
//! never waits for it). The worker reads the stored summary, skips it when fewer than
//! `min_new_rounds` rounds were folded since its last rewrite, sends the rendered summary,
//! reads the answer strictly (`answer`: the same parts, a size bound, every artifact path kept)
//! and stores it only if the session's summary is still the one it read (compare-and-swap).
//! A provider error, a stall (`timeout_secs`) or an unusable answer is logged once and the
//! rule-based summary stays. Later folds start from the stored (possibly rewritten) summary.
//! Shutdown cancels the worker, and an open call with it. Disabled, no model call at all.

mod answer;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kernel_common::config::SummaryRewriteConfig;
use kernel_common::{Config, Redactor};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::error::ApiError;
use crate::llm::titles::TitlesClient;
use crate::store::{Store, StoreError};
use crate::turn::{FoldHook, SessionSummary};
use crate::usage::Purpose;

/// How one rewrite ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// The rewrite was stored.
    Stored,
    /// Nothing to do (no summary, or too few new rounds).
    Skipped,
    /// The summary changed while the model wrote; the rewrite was dropped.
    Changed,
    /// The call failed or its answer was refused; the rule-based summary stays.
    Failed,
}

/// The summary rewriter. A cheap `Clone` handle.
#[derive(Debug, Clone)]
pub(crate) struct SummaryRewriter {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    store: Store,
    /// Set only when rewriting is enabled.
    client: Option<TitlesClient>,
    config: SummaryRewriteConfig,
    redactor: Redactor,
    /// Sessions whose summary folded since the worker last looked.
    pending: Mutex<BTreeSet<i64>>,
    wake: Notify,
    /// Over a `[budget]` limit no rewrite call is made.
    budget: crate::budget::Budget,
}

impl SummaryRewriter {
    /// The rewriter for `config`; when enabled, its worker is spawned on `tasks` and stops when
    /// `cancel` is cancelled.
    pub(crate) fn start(
        config: &Config,
        store: Store,
        http: &reqwest::Client,
        tasks: &TaskTracker,
        cancel: CancellationToken,
        budget: crate::budget::Budget,
    ) -> Result<SummaryRewriter, ApiError> {
        let settings = config.summary_rewrite.clone();
        let client = TitlesClient::for_background(
            settings.endpoint.as_ref().filter(|_| settings.enabled),
            http,
            Arc::new(budget.ledger().clone()),
        )
        .map_err(ApiError::internal)?;
        let rewriter = SummaryRewriter {
            inner: Arc::new(Inner {
                store,
                client,
                config: settings,
                redactor: config.redactor(),
                pending: Mutex::new(BTreeSet::new()),
                wake: Notify::new(),
                budget,
            }),
        };
        if rewriter.inner.client.is_some() {
            let worker = rewriter.clone();
            tasks.spawn(async move { worker.work(cancel).await });
            tracing::info!(
                min_new_rounds = rewriter.inner.config.min_new_rounds,
                "summary rewrite on"
            );
        }
        Ok(rewriter)
    }

    /// The turn loop's hook: queues the session whose summary folded and wakes the worker
    /// (nothing when disabled).
    pub(crate) fn fold_hook(&self) -> FoldHook {
        if self.inner.client.is_none() {
            return FoldHook::default();
        }
        let rewriter = self.clone();
        FoldHook::new(move |session_id| {
            lock(&rewriter.inner.pending).insert(session_id);
            rewriter.inner.wake.notify_one();
        })
    }

    async fn work(self, cancel: CancellationToken) {
        loop {
            tokio::select! {
                () = cancel.cancelled() => return,
                () = self.inner.wake.notified() => {}
            }
            loop {
                let next = lock(&self.inner.pending).pop_first();
                let Some(session_id) = next else { break };
                tokio::select! {
                    () = cancel.cancelled() => return,
                    result = self.rewrite(session_id) => match result {
                        Ok(outcome) => tracing::debug!(session = session_id, ?outcome,
                            "summary rewrite: done"),
                        Err(e) => tracing::warn!(session = session_id, error = %e,
                            "summary rewrite: the store failed; the rule-based summary stays"),
                    },
                }
            }
        }
    }

    /// One rewrite of `session_id`'s stored summary.
    async fn rewrite(&self, session_id: i64) -> Result<Outcome, StoreError> {
        let inner = &self.inner;
        let Some(client) = &inner.client else {
            return Ok(Outcome::Skipped);
        };
        let Some(read) = inner.store.load_summary(session_id).await? else {
            return Ok(Outcome::Skipped);
        };
        let summary = SessionSummary::from_json(&read.summary);
        let new_rounds = summary
            .rounds
            .saturating_sub(summary.rewritten_at.unwrap_or(0));
        if summary.is_empty() || new_rounds < inner.config.min_new_rounds {
            return Ok(Outcome::Skipped);
        }
        if inner.budget.over().await.is_some() {
            tracing::info!(
                session = session_id,
                "summary rewrite: over a budget limit; no model call"
            );
            return Ok(Outcome::Skipped);
        }
        let rendered = inner.redactor.redact(&summary.render());
        let paths = summary.artifact_paths();
        let timeout = inner.config.timeout;
        let started = tokio::time::Instant::now();
        let answer = match client
            .complete(
                Purpose::Summary,
                answer::SYSTEM,
                answer::prompt(&rendered, &paths),
                timeout,
            )
            .await
        {
            Ok(answer) => answer,
            Err(e) => {
                let e = e.redacted(&inner.redactor);
                tracing::warn!(session = session_id, rounds = summary.rounds, error = %e,
                    "summary rewrite: the call failed; the rule-based summary stays");
                return Ok(Outcome::Failed);
            }
        };
        let rewritten = match answer::read(&answer, &summary) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(session = session_id, rounds = summary.rounds,
                    answer_chars = answer.chars().count(), reason = %e.0,
                    "summary rewrite: the answer was refused; the rule-based summary stays");
                tracing::debug!(session = session_id, answer = %inner.redactor.redact(&answer),
                    "summary rewrite: the refused answer");
                return Ok(Outcome::Failed);
            }
        };
        if !inner
            .store
            .replace_summary_if(session_id, &read, &rewritten.to_json())
            .await?
        {
            tracing::info!(
                session = session_id,
                "summary rewrite: the summary changed meanwhile; the rewrite was dropped"
            );
            return Ok(Outcome::Changed);
        }
        tracing::info!(
            session = session_id,
            rounds = summary.rounds,
            chars_before = rendered.chars().count(),
            chars_after = rewritten.render().chars().count(),
            paths = paths.len(),
            ms = elapsed_ms(started.elapsed()),
            "summary rewrite: stored"
        );
        Ok(Outcome::Stored)
    }
}

fn elapsed_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
