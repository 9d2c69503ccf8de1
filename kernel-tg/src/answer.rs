//! Answers a parsed [`Command`]: calls its RPC on kernel-agentd and renders the reply as
//! Telegram HTML with [`Texts`]. The proto → `texts` view mapping lives here (an edge module).

use kernel_proto::v1 as pb;
use tonic::Status;

use crate::agentd::{Agentd, Client, is_transport_failure, refused};
use crate::command::Command;
use crate::memory_page;
use crate::texts::{
    CooldownEntry, EmbeddingsEntry, JobEntry, McpEntry, MemoryAutoView, MemoryEntry, ProviderEntry,
    SandboxShown, SandboxView, ScheduleEntry, SessionEntry, SkillEntry, StatusView, Texts,
    UsageTotalsView, UsageView,
};
use teloxide::types::InlineKeyboardMarkup;

/// Most hits `/memory <words>` lists.
const SEARCH_HITS: u32 = 20;

/// The HTML reply to `command`, sent as message `message_id` (what a `/steer` or `/next` turn's
/// answer replies to), with the buttons to go with it (`/memory`'s previous / next page).
pub(crate) async fn answer(
    command: Command,
    agentd: &Agentd,
    texts: Texts,
    message_id: i64,
) -> (String, Option<InlineKeyboardMarkup>) {
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
    (answer_text(command, agentd, texts, message_id).await, None)
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

/// The HTML reply to a command without buttons.
async fn answer_text(command: Command, agentd: &Agentd, texts: Texts, message_id: i64) -> String {
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
    match call(command, &mut client, texts, message_id).await {
        Ok(html) => html,
        Err(status) => failed(agentd, texts, &status),
    }
}

async fn call(
    command: Command,
    client: &mut Client,
    texts: Texts,
    message_id: i64,
) -> Result<String, Status> {
    Ok(match command {
        Command::Start | Command::Help => texts.help(),
        Command::Cancel | Command::CancelAll => {
            let clear_queue = command == Command::CancelAll;
            let request = pb::CancelRequest {
                clear_queue,
                turn_id: None,
            };
            let reply = client.cancel(request).await?.into_inner();
            let said = if reply.cancelled {
                texts.cancelled(reply.killed_cli.as_deref())
            } else {
                texts.nothing_to_cancel().to_owned()
            };
            if clear_queue {
                texts.queue_cleared(&said, reply.cleared)
            } else {
                texts.cancelled_with_queue(&said, reply.queued)
            }
        }
        Command::Steer(text) => {
            let request = pb::SteerRequest {
                text,
                deliver_to_owner: Some(pb::OwnerDelivery {
                    reply_to_message_id: Some(message_id),
                    placeholder_message_id: None,
                }),
            };
            let reply = client.steer(request).await?.into_inner();
            if reply.steered {
                texts.steered().to_owned()
            } else {
                texts.steer_started().to_owned()
            }
        }
        Command::Next(text) => {
            let request = pb::QueueNextRequest {
                text,
                reply_to_message_id: Some(message_id),
            };
            let reply = client.queue_next(request).await?.into_inner();
            texts.queued_next(reply.position)
        }
        Command::Status => {
            let status = client
                .get_status(pb::GetStatusRequest {})
                .await?
                .into_inner();
            let mut text = status_text(&status, texts);
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
            text
        }
        Command::Compact => {
            let c = client.compact(pb::CompactRequest {}).await?.into_inner();
            texts.compacted(c.tokens_before, c.tokens_after, c.summary_rounds)
        }
        Command::Web => match client.create_web_login(pb::CreateWebLoginRequest {}).await {
            Ok(reply) => {
                let reply = reply.into_inner();
                texts.web_login_link(&reply.url, reply.expires_in_secs.div_ceil(60))
            }
            Err(status) if status.code() == tonic::Code::FailedPrecondition => {
                texts.web_not_configured().to_owned()
            }
            Err(status) => return Err(status),
        },
        Command::Doctor => {
            let d = client.doctor(pb::DoctorRequest {}).await?.into_inner();
            texts.doctor_report(&d.text, d.failed)
        }
        Command::Usage => {
            let u = client.get_usage(pb::GetUsageRequest {}).await?.into_inner();
            let mut report = texts.usage_report(&UsageView {
                today: usage_totals(u.today),
                session: usage_totals(u.session),
                last_30_days: usage_totals(u.last_30_days),
            });
            report.push_str(&texts.spend_report(&spend_view(&u)));
            report
        }
        Command::New => {
            client.new_session(pb::NewSessionRequest {}).await?;
            texts.new_session().to_owned()
        }
        Command::History => {
            let list = client
                .list_sessions(pb::ListSessionsRequest {})
                .await?
                .into_inner();
            let entries: Vec<_> = list.sessions.iter().map(session_entry).collect();
            texts.history(&entries)
        }
        Command::Resume(number) => {
            let reply = client
                .resume_session(pb::ResumeSessionRequest { number })
                .await?;
            let session = reply.into_inner().session.unwrap_or_default();
            texts.resumed(&session_entry(&session))
        }
        Command::Retitle(number) => {
            let reply = client
                .retitle_session(pb::RetitleSessionRequest { number })
                .await?;
            texts.retitled(&reply.into_inner().session.unwrap_or_default().title)
        }
        Command::DelHistory(numbers) => {
            let reply = client
                .delete_sessions(pb::DeleteSessionsRequest { numbers })
                .await?;
            texts.sessions_deleted(reply.into_inner().deleted as usize)
        }
        Command::Provider(name) => provider(name, client, texts).await?,
        Command::Model(name) => model(name, client, texts).await?,
        Command::Remember(text) => {
            client
                .add_memory(pb::AddMemoryRequest { text: text.clone() })
                .await?;
            texts.remembered(&text)
        }
        Command::Memory | Command::MemoryPage(_) => {
            memory_page::page(client, texts, 1, false).await?.0
        }
        Command::MemoryAll(n) => memory_page::page(client, texts, n, true).await?.0,
        Command::MemoryUndo => {
            let request = pb::UndoConsolidationRequest { run_id: 0 };
            let reply = client.undo_consolidation(request).await?.into_inner();
            texts.memory_undone(reply.undone, reply.restored)
        }
        Command::MemorySearch(query) => {
            let request = pb::SearchMemoriesRequest {
                query: query.clone(),
                limit: SEARCH_HITS,
                numbered: true,
            };
            let found = client.search_memories(request).await?.into_inner();
            let entries: Vec<_> = found.memories.iter().map(memory_entry).collect();
            texts.memory_hits(&query, &entries)
        }
        Command::Forget(numbers) => {
            let reply = client
                .delete_memories(pb::DeleteMemoriesRequest {
                    numbers,
                    ..Default::default()
                })
                .await?;
            texts.memories_deleted(reply.into_inner().deleted as usize)
        }
        Command::Tasks => {
            let list = client
                .list_schedules(pb::ListSchedulesRequest {})
                .await?
                .into_inner();
            let entries: Vec<_> = list
                .schedules
                .iter()
                .map(|s| ScheduleEntry {
                    number: s.number,
                    next_fire: &s.next_fire,
                    mode: &s.mode,
                    message: &s.message,
                    cron: &s.cron,
                    model: &s.model,
                })
                .collect();
            texts.schedules(&entries)
        }
        Command::TasksDelete(numbers) => {
            let reply = client
                .delete_schedules(pb::DeleteSchedulesRequest { numbers })
                .await?;
            texts.schedules_deleted(reply.into_inner().deleted as usize)
        }
        Command::Jobs => {
            let list = client.list_jobs(pb::ListJobsRequest {}).await?.into_inner();
            let entries: Vec<_> = list
                .jobs
                .iter()
                .map(|j| JobEntry {
                    number: j.number,
                    status: &j.status,
                    started: &j.started,
                    cli: &j.cli,
                    task: &j.task,
                    exit_code: j.exit_code,
                })
                .collect();
            texts.jobs(&entries)
        }
        Command::JobsCancel(number) => {
            let reply = client.cancel_job(pb::CancelJobRequest { number }).await?;
            texts.job_cancelled(reply.into_inner().cancelled)
        }
        Command::Skills => {
            let list = client
                .list_skills(pb::ListSkillsRequest {})
                .await?
                .into_inner();
            let entries: Vec<_> = list
                .skills
                .iter()
                .map(|s| SkillEntry {
                    name: &s.name,
                    description: &s.description,
                    side_effects: &s.side_effects,
                })
                .collect();
            texts.skills(&entries)
        }
        Command::Notes(date) => {
            let reply = client
                .get_notes(pb::GetNotesRequest {
                    date: date.unwrap_or_default(),
                })
                .await?
                .into_inner();
            // Rendered like an answer (one piece here; `say` splits the reply when long).
            let html = reply.text.as_deref().map(|markdown| {
                kernel_render::render_with_limit(markdown, usize::MAX)
                    .into_iter()
                    .map(|chunk| chunk.html)
                    .collect::<Vec<_>>()
                    .join("\n")
            });
            texts.notes(&reply.date, html.as_deref())
        }
    })
}

async fn provider(
    name: Option<String>,
    client: &mut Client,
    texts: Texts,
) -> Result<String, Status> {
    if let Some(name) = name {
        let reply = client
            .select_provider(pb::SelectProviderRequest { name })
            .await?
            .into_inner();
        return Ok(texts.switched(&reply.provider, &reply.model));
    }
    let list = client
        .list_providers(pb::ListProvidersRequest {})
        .await?
        .into_inner();
    let entries: Vec<_> = list.providers.iter().map(provider_entry).collect();
    Ok(texts.providers(&entries, &list.current_provider, &list.current_model))
}

async fn model(name: Option<String>, client: &mut Client, texts: Texts) -> Result<String, Status> {
    if let Some(model) = name {
        let reply = client
            .select_model(pb::SelectModelRequest { model })
            .await?
            .into_inner();
        return Ok(texts.switched(&reply.provider, &reply.model));
    }
    let list = client
        .list_providers(pb::ListProvidersRequest {})
        .await?
        .into_inner();
    let models = list
        .providers
        .iter()
        .find(|p| p.name == list.current_provider)
        .map(|p| p.models.clone())
        .unwrap_or_default();
    Ok(texts.models(&list.current_provider, &models, &list.current_model))
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
                monthly: b.period == "monthly",
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

fn session_entry(s: &pb::SessionInfo) -> SessionEntry<'_> {
    SessionEntry {
        number: s.number,
        date: &s.date,
        title: &s.title,
        current: s.current,
    }
}

fn memory_entry(m: &pb::MemoryInfo) -> MemoryEntry<'_> {
    MemoryEntry {
        number: m.number,
        date: &m.date,
        text: &m.text,
        auto: m.auto,
        origin: &m.origin,
    }
}

fn provider_entry(p: &pb::ProviderInfo) -> ProviderEntry<'_> {
    ProviderEntry {
        name: &p.name,
        models: &p.models,
        default_model: &p.default_model,
        available: p.available,
        current: p.current,
        cooldown_until: p.cooldown_until.as_deref(),
    }
}
