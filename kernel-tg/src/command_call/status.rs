//! What Kernel reports about itself: `/status`, `/usage` (with the spend report) and `/doctor`.

use kernel_proto::v1 as pb;
use kernel_proto::words::BudgetPeriod;
use tonic::Status;

use super::sessions::session_entry;
use crate::agentd::Client;
use crate::texts::{
    CooldownEntry, EmbeddingsEntry, McpEntry, MemoryAutoView, RunningEntry, SandboxShown,
    SandboxView, StatusView, Texts, UsageTotalsView, UsageView,
};

/// `/status`: Kernel's state, the context fill of the session and the model retries. Inside a
/// topic (`topic`: its session) the session and the turn shown are the topic's; in the main
/// chat every running turn is listed with its session when turns of other sessions run.
pub(super) async fn status(
    client: &mut Client,
    texts: Texts,
    topic: Option<pb::SessionInfo>,
) -> Result<String, Status> {
    let mut status = client
        .get_status(pb::GetStatusRequest {})
        .await?
        .into_inner();
    let elsewhere = match &topic {
        Some(session) => {
            status.running_turn = status
                .running_turns
                .iter()
                .find(|t| t.session_id == session.id)
                .cloned();
            status.current_session = Some(session.clone());
            false
        }
        None => {
            let current = status.current_session.as_ref().map(|s| s.id);
            status.running_turns.len() > 1
                || status
                    .running_turns
                    .iter()
                    .any(|t| Some(t.session_id) != current)
        }
    };
    let mut text = status_text(&status, texts);
    if elsewhere {
        text.push('\n');
        text.push_str(running_turns(texts, &status.running_turns).trim_end());
    }
    text.push('\n');
    text.push_str(&texts.context_fill(
        status.context_tokens,
        status.context_budget_tokens,
        status.has_summary,
    ));
    if let Some(r) = &status.model_retries
        && let Some(line) = texts.model_retries(
            r.count,
            r.last_at.as_deref(),
            &r.last_provider,
            &r.last_reason,
        )
    {
        text.push('\n');
        text.push_str(&line);
    }
    Ok(text)
}

/// The running turns of every session.
fn running_turns(texts: Texts, turns: &[pb::RunningTurn]) -> String {
    let entries: Vec<_> = turns
        .iter()
        .map(|t| RunningEntry {
            session_id: t.session_id,
            started_at: &t.started_at,
            running_tool: t.running_tool.as_deref(),
        })
        .collect();
    texts.running_turns(&entries)
}

/// `/usage`: tokens and cost today, this session and the last 30 days, then the spend report.
pub(super) async fn usage(client: &mut Client, texts: Texts) -> Result<String, Status> {
    let u = client.get_usage(pb::GetUsageRequest {}).await?.into_inner();
    let mut report = texts.usage_report(&UsageView {
        today: usage_totals(u.today),
        session: usage_totals(u.session),
        last_30_days: usage_totals(u.last_30_days),
    });
    report.push_str(&texts.spend_report(&spend_view(&u)));
    Ok(report)
}

/// `/doctor`: agentd's check table under a verdict.
pub(super) async fn doctor(client: &mut Client, texts: Texts) -> Result<String, Status> {
    let d = client.doctor(pb::DoctorRequest {}).await?.into_inner();
    Ok(texts.doctor_report(&d.text, d.failed))
}

fn status_text(status: &pb::GetStatusResponse, texts: Texts) -> String {
    let mcp: Vec<_> = status
        .mcp_servers
        .iter()
        .map(|s| McpEntry {
            name: &s.name,
            state: &s.state,
            tool_count: s.tool_count,
            detail: s.detail.as_deref(),
        })
        .collect();
    let cooldowns: Vec<_> = status
        .cooldowns
        .iter()
        .map(|c| CooldownEntry {
            provider: &c.provider,
            until: &c.until,
            failures: c.failures,
        })
        .collect();
    let turn = status.running_turn.as_ref();
    let mut html = texts.status(&StatusView {
        version: &status.version,
        uptime_seconds: status.uptime_seconds,
        session: status.current_session.as_ref().map(session_entry),
        provider: &status.provider,
        model: &status.model,
        turn_started_at: turn.map(|t| t.started_at.as_str()),
        running_tool: turn.and_then(|t| t.running_tool.as_deref()),
        running_cli: status.running_cli.as_deref(),
        last_error: status.last_error.as_deref(),
        fts5_available: status.fts5_available,
        mcp_servers: &mcp,
        undelivered: status.undelivered,
        oldest_undelivered_seconds: status.oldest_undelivered_seconds,
        cooldowns: &cooldowns,
        memory_auto: status.memory_auto.as_ref().map(|m| MemoryAutoView {
            enabled: m.enabled,
            last_run: m.last_run.as_deref(),
            added: m.added,
            refreshed: m.refreshed,
            outcome: &m.outcome,
        }),
        embeddings: status.embeddings.as_ref().map(|e| EmbeddingsEntry {
            model: &e.model,
            with_vectors: e.with_vectors,
            memories: e.memories,
            last_error: e.last_error.as_deref(),
        }),
    });
    if let Some(c) = &status.consolidation {
        let last = c.last_run.as_ref();
        html.push_str(&texts.consolidation_line(&crate::texts::ConsolidationView {
            enabled: c.enabled,
            at: last.map(|r| r.at.as_str()),
            outcome: last.map_or("", |r| r.outcome.as_str()),
            merged: last.map_or(0, |r| r.merged),
            retired: last.map_or(0, |r| r.retired),
            superseded: last.map_or(0, |r| r.superseded),
            proposed: last.map_or(0, |r| r.proposed),
            undone: last.is_some_and(|r| r.undone),
        }));
    }
    html.push_str(&texts.history_index_line(status.history_indexed, status.history_messages));
    html.push_str(&texts.sandbox_lines(&sandbox_views(status)));
    html.push_str(&texts.queue_lines(&status.queued_next));
    html
}

fn sandbox_views(status: &pb::GetStatusResponse) -> Vec<SandboxView<'_>> {
    status
        .cli_sandboxes
        .iter()
        .map(|s| SandboxView {
            cli: &s.cli,
            state: match s.state() {
                pb::CliSandboxState::Sandboxed => SandboxShown::Sandboxed,
                pb::CliSandboxState::Off => SandboxShown::Off,
                pb::CliSandboxState::Unavailable => SandboxShown::Unavailable,
                pb::CliSandboxState::Unknown | pb::CliSandboxState::Unspecified => {
                    SandboxShown::Unknown
                }
            },
            workspace_writes: s.workspace_writes,
            tmp_writes: s.tmp_writes,
            network: s.network,
            detail: &s.detail,
        })
        .collect()
}

fn spend_view(u: &pb::GetUsageResponse) -> crate::texts::SpendView {
    let costs = |lines: &[pb::CostLine]| {
        lines
            .iter()
            .map(|l| crate::texts::CostLineView {
                provider: l.provider.clone(),
                model: l.model.clone(),
                purpose: l.purpose.clone(),
                calls: l.calls,
                cost_usd: l.cost_usd,
            })
            .collect()
    };
    crate::texts::SpendView {
        budgets: u
            .budgets
            .iter()
            .map(|b| crate::texts::BudgetLineView {
                monthly: match BudgetPeriod::parse(&b.period) {
                    Some(BudgetPeriod::Monthly) => true,
                    Some(BudgetPeriod::Daily) | None => false,
                },
                provider: b.provider.clone(),
                spent_usd: b.spent_usd,
                limit_usd: b.limit_usd,
                left_usd: b.left_usd,
            })
            .collect(),
        override_today: u.override_today,
        override_month: u.override_month,
        today_by_model: costs(&u.today_by_model),
        month_by_model: costs(&u.month_by_model),
        today_by_purpose: costs(&u.today_by_purpose),
        month_by_purpose: costs(&u.month_by_purpose),
    }
}

fn usage_totals(t: Option<pb::UsageTotals>) -> UsageTotalsView {
    let t = t.unwrap_or_default();
    UsageTotalsView {
        calls: t.calls,
        input: t.input_tokens,
        output: t.output_tokens,
        cache_read: t.cache_read_tokens,
        cache_write: t.cache_write_tokens,
        cost_usd: t.cost_usd,
        unpriced_calls: t.unpriced_calls,
    }
}
