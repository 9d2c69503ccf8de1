//! Domain → proto conversions for the RPC replies.

use kernel_proto::v1 as pb;
use kernel_proto::words::SkillSideEffects;

use crate::agent;
use crate::models::{ProviderListing, Selection};
use crate::sessions::SessionInfo;
use crate::skills::{SideEffects, SkillInfo};

/// A session for the wire.
pub(super) fn session_info(s: SessionInfo) -> pb::SessionInfo {
    pb::SessionInfo {
        number: s.number,
        id: s.id,
        title: s.title,
        date: s.date,
        current: s.current,
        thread_id: s.topic.as_ref().map(|t| t.thread_id),
        thread_name: s.topic.and_then(|t| t.name),
    }
}

/// A skill for the wire.
pub(super) fn skill_info(s: SkillInfo) -> pb::SkillInfo {
    pb::SkillInfo {
        name: s.name,
        description: s.description,
        side_effects: side_effects_word(s.side_effects).as_str().to_owned(),
    }
}

/// A skill's side-effect level as the wire word.
fn side_effects_word(level: SideEffects) -> SkillSideEffects {
    match level {
        SideEffects::ReadOnly => SkillSideEffects::ReadOnly,
        SideEffects::LocalWrite => SkillSideEffects::LocalWrite,
        SideEffects::MessageSend => SkillSideEffects::MessageSend,
        SideEffects::ProcessControl => SkillSideEffects::ProcessControl,
    }
}

/// `ListProviders`' reply.
pub(super) fn providers(
    list: Vec<ProviderListing>,
    current: Selection,
) -> pb::ListProvidersResponse {
    pb::ListProvidersResponse {
        providers: list
            .into_iter()
            .map(|p| pb::ProviderInfo {
                name: p.name,
                r#type: p.kind.as_str().to_owned(),
                models: p.models,
                default_model: p.default_model,
                available: p.available,
                current: p.current,
                cooldown_until: p.cooldown.map(|c| rfc3339(c.until)),
            })
            .collect(),
        current_provider: current.provider,
        current_model: current.model,
    }
}

/// A running turn as `GetStatus` shows it.
fn running_turn(r: crate::turn::RunningTurn) -> pb::RunningTurn {
    pb::RunningTurn {
        started_at: r
            .started_at
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        running_tool: r.running_tool,
        session_id: r.session_id,
        turn_id: r.turn_id.unwrap_or_default(),
    }
}

/// `GetStatus`' reply.
pub(super) fn status(s: agent::Status) -> pb::GetStatusResponse {
    pb::GetStatusResponse {
        version: s.version.to_string(),
        uptime_seconds: s.uptime.as_secs(),
        database_path: s.database_path,
        fts5_available: s.fts5_available,
        current_session: s.current_session.map(session_info),
        provider: s.provider,
        model: s.model,
        running_turn: s.turn.running_turn.map(running_turn),
        running_turns: s.turn.running_turns.into_iter().map(running_turn).collect(),
        running_cli: s.turn.running_cli.map(|c| c.to_string()),
        last_error: s.turn.last_error,
        mcp_servers: s
            .mcp_servers
            .into_iter()
            .map(|m| pb::McpServerStatus {
                name: m.name,
                state: m.state.as_str().to_owned(),
                tool_count: m.tool_count,
                detail: m.detail,
            })
            .collect(),
        undelivered: s.outbox.count,
        oldest_undelivered_seconds: s
            .outbox
            .oldest
            .map(|t| u64::try_from((chrono::Utc::now() - t).num_seconds()).unwrap_or(0)),
        cooldowns: s
            .cooldowns
            .into_iter()
            .map(|(provider, c)| pb::ProviderCooldown {
                provider,
                until: rfc3339(c.until),
                failures: c.failures,
            })
            .collect(),
        memory_auto: Some(memory_auto(s.memory_auto)),
        consolidation: Some(consolidation(s.consolidation)),
        embeddings: s.embeddings.map(|(e, memories)| pb::EmbeddingsStatus {
            model: e.model,
            with_vectors: e.with_vectors,
            memories,
            last_error: e.last_error,
        }),
        // Filled in by `GetStatus` from the `/next` queue.
        queued_next: Vec::new(),
        context_tokens: s.context.estimated_tokens,
        context_budget_tokens: s.context.budget_tokens,
        has_summary: s.context.has_summary,
        model_retries: Some(model_retries(s.retries)),
        cli_sandboxes: s.cli_sandboxes.iter().map(cli_sandbox).collect(),
        // Filled by `rpc::budget`.
        budgets: Vec::new(),
        spent_today_usd: 0.0,
        spent_month_usd: 0.0,
        today_by_purpose: Vec::new(),
        month_by_purpose: Vec::new(),
        override_today: false,
        override_month: false,
        history_indexed: s.history_index.done,
        history_messages: s.history_index.total,
    }
}

/// Retries of model calls for the wire.
fn model_retries((count, last): (u64, Option<crate::llm::retry::LastRetry>)) -> pb::ModelRetries {
    pb::ModelRetries {
        count,
        last_at: last.as_ref().map(|l| rfc3339(l.at)),
        last_provider: last
            .as_ref()
            .map(|l| l.provider.clone())
            .unwrap_or_default(),
        last_reason: last.map(|l| l.reason.code().to_owned()).unwrap_or_default(),
    }
}

/// One CLI's sandbox for the wire.
fn cli_sandbox(s: &kernel_common::config::sandbox::CliSandbox) -> pb::CliSandbox {
    use kernel_common::config::sandbox::{Confinement, SandboxState};
    let state = match s.state() {
        SandboxState::On => pb::CliSandboxState::Sandboxed,
        SandboxState::Off => pb::CliSandboxState::Off,
        SandboxState::Unavailable => pb::CliSandboxState::Unavailable,
        SandboxState::Unknown => pb::CliSandboxState::Unknown,
    };
    let mut out = pb::CliSandbox {
        cli: s.cli.clone(),
        state: state.into(),
        ..Default::default()
    };
    match &s.confinement {
        Confinement::Sandboxed {
            workspace_writes,
            tmp_writes,
            network,
            ..
        } => {
            out.workspace_writes = *workspace_writes;
            out.tmp_writes = *tmp_writes;
            out.network = *network;
            out.detail = s.missing.join(", ");
        }
        Confinement::Unsandboxed { reason } | Confinement::Unknown { reason } => {
            out.detail = reason.clone();
        }
    }
    out
}

/// The consolidation job's state for the wire.
fn consolidation(c: crate::consolidation::ConsolidationStatus) -> pb::ConsolidationStatus {
    pb::ConsolidationStatus {
        enabled: c.enabled,
        last_run: c.last.map(|r| pb::ConsolidationRun {
            id: r.id,
            at: rfc3339(r.at),
            outcome: r.outcome,
            merged: r.merged,
            retired: r.retired,
            superseded: r.superseded,
            proposed: r.proposed,
            undone: r.undone,
        }),
    }
}

/// The auto-memory job's state for the wire.
fn memory_auto(m: crate::memory_auto::AutoStatus) -> pb::MemoryAutoStatus {
    pb::MemoryAutoStatus {
        enabled: m.enabled,
        last_run: m.last.map(|r| rfc3339(r.at)),
        added: m.last.map_or(0, |r| r.added),
        refreshed: m.last.map_or(0, |r| r.refreshed),
        outcome: m
            .last
            .map(|r| r.outcome.word().as_str().to_owned())
            .unwrap_or_default(),
    }
}

/// `GetUsage`' reply.
pub(super) fn usage_report(r: crate::usage::UsageReport) -> pb::GetUsageResponse {
    let totals = |t: crate::usage::UsageTotals| pb::UsageTotals {
        calls: t.calls,
        input_tokens: t.usage.input_tokens,
        output_tokens: t.usage.output_tokens,
        cache_read_tokens: t.usage.cache_read_tokens,
        cache_write_tokens: t.usage.cache_write_tokens,
        cost_usd: t.cost_usd,
        unpriced_calls: t.unpriced_calls,
    };
    pb::GetUsageResponse {
        today: Some(totals(r.today)),
        session: Some(totals(r.session)),
        last_30_days: Some(totals(r.last_30_days)),
        ..Default::default()
    }
}

fn rfc3339(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}
