//! Watches: a `watch` schedule runs, at each firing, a bounded turn on the cheap model
//! ([`turn`]) with its message as the instruction, and the owner hears only what that turn
//! passed to `notify_owner` — one message, through the outbox, stored with the run's record and
//! the deletion of its pending task run in one transaction. A run that did not call it sends
//! nothing.
//!
//! Each run's prompt carries the watch's last few notifications and run outcomes (not its
//! history), so it does not say the same thing twice; its summary (what it told, or the model's
//! own line) is kept with the watch (`store::watch_runs`) for `/tasks`. Over a `[budget]` limit a
//! due watch makes no model call and the owner is told once a day (like a skipped task).
//!
//! The model: the watch's own `provider/model`, else the `[titles]` endpoint, else the current
//! model. A watch is recurring (a cron expression) and fires no more often than
//! `[watch] min_interval_minutes`.

pub(crate) mod turn;

use chrono::{DateTime, TimeDelta, Utc};
use chrono_tz::Tz;
use kernel_common::config::{Locale, ProviderConfig, TitlesConfig};
use kernel_common::text::truncate;
use kernel_proto::words::WatchOutcome;

use super::task_runs::Ended;
use super::{Schedules, When, when};
use crate::outbox::{ItemBody, NewItem};
use crate::store::schedules::ScheduleRow;
use crate::store::task_runs::TaskRun;
use crate::store::watch_runs::{NewWatchRun, WatchRun};
use turn::{TurnEnd, WatchModel, WatchTurn};

/// Earlier notifications a run sees.
const RECENT_NOTIFICATIONS: u32 = 3;
/// Earlier run outcomes a run sees.
const RECENT_RUNS: u32 = 5;
/// The most characters of a run's summary kept.
const MAX_SUMMARY_CHARS: usize = 300;
/// Occurrences of a cron expression looked at for its shortest gap.
const CADENCE_SAMPLES: usize = 200;

/// What the watch's model is told (model-facing, so English).
const SYSTEM: &str = "You are Kernel's watch: a short check that runs on a schedule for the \
owner and stays silent unless something is worth telling. Carry out the instruction with the \
read-only tools you have. Tell the owner only what the instruction asks to be told, by calling \
notify_owner once with one short message. Never tell what an earlier notification (listed \
below) already said: if nothing is new, do not call notify_owner. Then answer with one short \
line saying what you found (the owner does not see it; the next run does).";

/// The model a watch runs on when it names none: the `[titles]` endpoint as a streaming
/// provider (`None` without `[titles]` or when it cannot be built).
pub(super) fn cheap_model(endpoint: Option<&TitlesConfig>) -> Option<WatchModel> {
    let t = endpoint.filter(|t| t.api_key.is_some())?;
    let cfg = ProviderConfig {
        name: t.provider.clone(),
        kind: t.kind,
        api_base: t.api_base.clone(),
        api_key: t.api_key.clone(),
        max_tokens: Some(t.max_tokens),
        default_model: t.model.clone(),
        models: vec![t.model.clone()],
        headers: t.headers.clone(),
        stream_idle_timeout: std::time::Duration::from_secs(120),
        first_byte_timeout: std::time::Duration::from_secs(300),
        retry: t.retry,
        context: Default::default(),
        thinking: None,
        images: Default::default(),
    };
    let built = crate::http::client()
        .map_err(|e| e.to_string())
        .and_then(|http| crate::llm::build(&cfg, &http).map_err(|e| e.to_string()));
    match built {
        Ok(provider) => Some(WatchModel {
            name: t.provider.clone(),
            model: t.model.clone(),
            provider,
        }),
        Err(e) => {
            tracing::warn!(error = %e, "the [titles] endpoint cannot serve watches; they run on the current model");
            None
        }
    }
}

/// The shortest gap between two firings of cron `expr` (over its next occurrences).
pub(super) fn shortest_gap(expr: &str, now: DateTime<Utc>, tz: Tz) -> Option<TimeDelta> {
    let cron = When::Cron(expr.to_owned());
    let mut at = cron.next_after(now, tz)?;
    let mut gap: Option<TimeDelta> = None;
    for _ in 0..CADENCE_SAMPLES {
        let Some(next) = cron.next_after(at, tz) else {
            break;
        };
        let d = next - at;
        gap = Some(gap.map_or(d, |g| g.min(d)));
        at = next;
    }
    gap
}

/// A watch's last run and spend today, as listings show them.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct WatchState {
    /// The last run: when (local `YYYY-MM-DD HH:MM`), how it ended, its summary.
    pub last: Option<(String, WatchOutcome, String)>,
    pub runs_today: u32,
    pub spend_today_usd: Option<f64>,
}

impl Schedules {
    /// Runs task run `run` of watch `watch` and stores its end (with what it told the owner).
    pub(super) async fn run_watch(&self, run: &TaskRun, watch: &ScheduleRow) -> Ended {
        let inner = &self.inner;
        let budget = inner.turns.budget();
        if let Some((_, over)) = budget.over().await {
            tracing::info!("watch skipped: a budget limit is reached");
            let item = if budget.first_skip(&format!("schedule:{}", watch.id)).await {
                let what = first_line(&watch.message);
                Some(NewItem {
                    turn_id: String::new(),
                    body: ItemBody::Notice {
                        text: crate::budget::texts::task_skipped(inner.locale, &what, &over),
                    },
                    reply_to: None,
                    placeholder: None,
                    thread_id: None,
                    outside: false,
                })
            } else {
                None
            };
            let end = NewWatchRun {
                outcome: WatchOutcome::Skipped.as_str(),
                summary: "",
                tokens: 0,
                cost_usd: None,
            };
            return self.finish_watch(watch.id, run.id, &end, item).await;
        }
        let model = match self.watch_model(watch.model.as_deref()) {
            Ok(model) => model,
            Err(e) => {
                tracing::warn!(error = %e, "a watch has no model to run on");
                let end = NewWatchRun {
                    outcome: WatchOutcome::Failed.as_str(),
                    summary: &e,
                    tokens: 0,
                    cost_usd: None,
                };
                return self.finish_watch(watch.id, run.id, &end, None).await;
            }
        };
        let prompt = match self.watch_prompt(watch).await {
            Ok(prompt) => prompt,
            Err(e) => {
                tracing::error!(error = %e, "cannot read a watch's earlier runs; it runs later");
                return Ended::Dropped;
            }
        };
        tracing::info!(provider = %model.name, model = %model.model, "watch run started");
        let turn = WatchTurn {
            watch_id: watch.id,
            model: &model,
            tools: inner.turns.tools(),
            approvals: inner.turns.approvals(),
            ledger: budget.ledger(),
            cancel: &inner.root,
            max_steps: inner.watch.max_steps,
            max_tokens: inner.watch.max_tokens_per_run,
        };
        let end = turn.run(SYSTEM, prompt).await;
        if end.interrupted {
            tracing::info!("watch run cut off by shutdown; it runs at the next start");
            return Ended::Interrupted;
        }
        let (outcome, summary) = outcome_of(&end);
        tracing::info!(
            outcome = outcome.as_str(),
            tokens = end.tokens,
            "watch run ended"
        );
        let item = end.notified.as_ref().map(|text| NewItem {
            turn_id: format!("watch-{}-{}", watch.id, run.id),
            body: ItemBody::WatchNotice {
                text: format!("👁 _{}_\n\n{text}", first_line(&watch.message)),
                watch: watch.id,
            },
            reply_to: None,
            placeholder: None,
            thread_id: None,
            // What a watch read on the way is outside content.
            outside: true,
        });
        let record = NewWatchRun {
            outcome: outcome.as_str(),
            summary: &summary,
            tokens: end.tokens,
            cost_usd: end.cost_usd,
        };
        self.finish_watch(watch.id, run.id, &record, item).await
    }

    /// The model of a watch naming `spec` (`None`: the cheap model, else the current one).
    fn watch_model(&self, spec: Option<&str>) -> Result<WatchModel, String> {
        let models = self.inner.turns.models();
        if let Some(spec) = spec {
            match models.named(spec) {
                Ok(m) => {
                    return Ok(WatchModel {
                        name: m.name,
                        model: m.model,
                        provider: m.provider,
                    });
                }
                Err(reason) => {
                    tracing::warn!(model = spec, %reason, "the watch's model is no longer configured");
                }
            }
        }
        if let Some(cheap) = &self.inner.cheap {
            return Ok(cheap.clone());
        }
        let m = models.current().map_err(|e| e.to_string())?;
        Ok(WatchModel {
            name: m.name,
            model: m.model,
            provider: m.provider,
        })
    }

    /// The run's prompt: now, the instruction, the last notifications and run outcomes.
    async fn watch_prompt(&self, watch: &ScheduleRow) -> Result<String, crate::store::StoreError> {
        let inner = &self.inner;
        let store = &inner.store;
        let told = store
            .watch_runs(watch.id, RECENT_NOTIFICATIONS, true)
            .await?;
        let runs = store.watch_runs(watch.id, RECENT_RUNS, false).await?;
        let tz = inner.tz;
        let language = match inner.locale {
            Locale::Zh => "Chinese",
            Locale::En => "English",
        };
        let mut prompt = format!(
            "[watch #{}, now {}] Instruction: {}\n\nWrite any notification in {language}.\n",
            watch.id,
            when::format_local(Utc::now(), tz),
            watch.message
        );
        prompt.push_str("\nEarlier notifications to the owner (newest first):\n");
        push_runs(&mut prompt, &told, tz);
        prompt.push_str("\nLast runs (newest first):\n");
        push_runs(&mut prompt, &runs, tz);
        Ok(prompt)
    }

    /// Stores a run's end, retrying after store errors until shutdown; tells subscribers of
    /// its item.
    async fn finish_watch(
        &self,
        watch: i64,
        run: i64,
        end: &NewWatchRun<'_>,
        item: Option<NewItem>,
    ) -> Ended {
        let inner = &self.inner;
        loop {
            match inner
                .store
                .finish_watch_run(watch, end, item.as_ref(), run)
                .await
            {
                Ok(seq) => {
                    if let (Some(seq), Some(item)) = (seq, item) {
                        inner.outbox.stored(seq, item);
                    }
                    return Ended::Done;
                }
                Err(e) => {
                    tracing::error!(error = %e, "cannot store a watch run's end; retrying");
                    if !self.pause().await {
                        return Ended::Interrupted;
                    }
                }
            }
        }
    }

    /// The last run and today's spend of each watch among `rows`, by id.
    pub(super) async fn watch_states(
        &self,
        rows: &[ScheduleRow],
    ) -> Result<std::collections::HashMap<i64, WatchState>, crate::store::StoreError> {
        let store = &self.inner.store;
        let tz = self.inner.tz;
        let spend: std::collections::HashMap<i64, _> = store
            .watch_spend_since(local_midnight(Utc::now(), tz))
            .await?
            .into_iter()
            .collect();
        let mut states = std::collections::HashMap::new();
        for row in rows.iter().filter(|r| r.mode == "watch") {
            let last = store.watch_runs(row.id, 1, false).await?.into_iter().next();
            let today = spend.get(&row.id).copied().unwrap_or_default();
            states.insert(
                row.id,
                WatchState {
                    last: last.map(|r| {
                        let outcome =
                            WatchOutcome::parse(&r.outcome).unwrap_or(WatchOutcome::Failed);
                        (when::format_local(r.ran_at, tz), outcome, r.summary)
                    }),
                    runs_today: today.runs,
                    spend_today_usd: today.cost_usd,
                },
            );
        }
        Ok(states)
    }
}

/// How a turn ended, and the summary kept with the watch.
fn outcome_of(end: &TurnEnd) -> (WatchOutcome, String) {
    let cut = |s: &str| truncate(s.trim(), MAX_SUMMARY_CHARS).into_owned();
    match (&end.notified, &end.error) {
        (Some(text), _) => (WatchOutcome::Notified, cut(text)),
        (None, Some(error)) => (WatchOutcome::Failed, cut(error)),
        (None, None) if end.final_text.trim().is_empty() => {
            (WatchOutcome::Quiet, "nothing new".to_owned())
        }
        (None, None) => (WatchOutcome::Quiet, cut(&end.final_text)),
    }
}

/// Appends one line per run (`- <local time> <outcome>: <summary>`), or `(none)`.
fn push_runs(out: &mut String, runs: &[WatchRun], tz: Tz) {
    use std::fmt::Write as _;
    if runs.is_empty() {
        out.push_str("(none)\n");
    }
    for r in runs {
        let at = when::format_local(r.ran_at, tz);
        let _ = writeln!(out, "- {at} {}: {}", r.outcome, r.summary);
    }
}

/// The first line of a watch's instruction, at most 80 characters.
fn first_line(message: &str) -> String {
    let line = message.lines().next().unwrap_or("").trim();
    truncate(line, 80).into_owned()
}

/// The last local midnight at or before `now` in `tz`.
fn local_midnight(now: DateTime<Utc>, tz: Tz) -> DateTime<Utc> {
    now.with_timezone(&tz)
        .date_naive()
        .and_hms_opt(0, 0, 0)
        .and_then(|t| t.and_local_timezone(tz).earliest())
        .map_or(now - TimeDelta::days(1), |t| t.with_timezone(&Utc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shortest_gap_of_a_cron_is_its_cadence() {
        let tz: Tz = "Asia/Shanghai".parse().unwrap();
        let now = Utc::now();
        let gap = |e: &str| shortest_gap(e, now, tz).unwrap().num_minutes();
        assert_eq!(gap("* * * * *"), 1);
        assert_eq!(gap("*/3 * * * *"), 3);
        assert_eq!(gap("0,2 9 * * *"), 2);
        assert_eq!(gap("0 * * * *"), 60);
    }

    #[test]
    fn a_run_is_notified_quiet_or_failed() {
        let quiet = TurnEnd::default();
        assert_eq!(
            outcome_of(&quiet),
            (WatchOutcome::Quiet, "nothing new".to_owned())
        );
        let told = TurnEnd {
            notified: Some("2.0 is out".into()),
            error: Some("boom".into()),
            ..TurnEnd::default()
        };
        assert_eq!(
            outcome_of(&told),
            (WatchOutcome::Notified, "2.0 is out".to_owned())
        );
        let failed = TurnEnd {
            error: Some("the provider said 500".into()),
            ..TurnEnd::default()
        };
        assert_eq!(outcome_of(&failed).0, WatchOutcome::Failed);
    }
}
