//! The `schedule_*` tools: `schedule_add(when, message, mode, model)` (echoes the next fire time in
//! local time, so the model can confirm it), `schedule_list` and `schedule_delete(id)`.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Mode, ScheduleError, ScheduleInfo, Schedules};
use crate::tools::{RegistryError, Risk, Tool, ToolContext, ToolOutput, ToolRegistry};

/// Registers the schedule tools on `registry` (replacing earlier ones of the same names).
pub(crate) fn register_tools(
    registry: &ToolRegistry,
    schedules: &Schedules,
) -> Result<(), RegistryError> {
    let tools: [Arc<dyn Tool>; 3] = [
        Arc::new(ScheduleTool::new(Kind::Add, schedules)),
        Arc::new(ScheduleTool::new(Kind::List, schedules)),
        Arc::new(ScheduleTool::new(Kind::Delete, schedules)),
    ];
    for tool in tools {
        registry.unregister(tool.name());
        registry.register(tool)?;
    }
    Ok(())
}

/// `schedule_add` input.
#[derive(Debug, Deserialize, JsonSchema)]
struct AddInput {
    /// When, in the owner's time zone: a local date-time "YYYY-MM-DD HH:MM", a delay as an
    /// ISO 8601 duration ("PT20M" = in 20 minutes, "P1DT2H"), or a 5-field cron expression
    /// "minute hour day-of-month month day-of-week" for recurring ones ("0 8 * * 1-5").
    when: String,
    /// For "remind": the exact text to send. For "task": the instruction to carry out then.
    /// For "watch": what to check and when to tell the owner.
    message: String,
    /// "remind" (default): send the message as is, no model call. "task": run a turn with the
    /// message as its prompt and send the answer (all tools available). "watch" (cron only):
    /// each time, a short check on a cheap model with read-only tools that tells the owner only
    /// when something is worth it (e.g. "tell me when 2.0 is released").
    #[serde(default)]
    mode: Option<String>,
    /// Only for "task" and "watch": the "provider/model" (or "provider" for its default model)
    /// it runs on, e.g. a cheaper model for a routine report. Default: the current model (a
    /// watch: the cheap [titles] model).
    #[serde(default)]
    model: Option<String>,
}

/// `schedule_delete` input.
#[derive(Debug, Deserialize, JsonSchema)]
struct DeleteInput {
    /// The id of the schedule (from schedule_list or schedule_add).
    id: i64,
}

/// `schedule_list` input (none).
#[derive(Debug, Deserialize, JsonSchema)]
struct ListInput {}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Add,
    List,
    Delete,
}

#[derive(Debug)]
struct ScheduleTool {
    kind: Kind,
    schedules: Schedules,
    schema: Value,
}

impl ScheduleTool {
    fn new(kind: Kind, schedules: &Schedules) -> Self {
        let mut schema = match kind {
            Kind::Add => schemars::schema_for!(AddInput),
            Kind::List => schemars::schema_for!(ListInput),
            Kind::Delete => schemars::schema_for!(DeleteInput),
        };
        schema.remove("$schema");
        schema.remove("title");
        Self {
            kind,
            schedules: schedules.clone(),
            schema: schema.to_value(),
        }
    }
}

#[async_trait::async_trait]
impl Tool for ScheduleTool {
    fn name(&self) -> &str {
        match self.kind {
            Kind::Add => "schedule_add",
            Kind::List => "schedule_list",
            Kind::Delete => "schedule_delete",
        }
    }

    fn description(&self) -> &str {
        match self.kind {
            Kind::Add => {
                "Schedule a reminder or a task for the owner, e.g. \"remind me tomorrow at 9 to pay the rent\" or \"every weekday at 8:00 give me the weather\". Times are in the owner's time zone (the current local time is in the message). mode \"remind\" sends the message text as is at that time; mode \"task\" runs a turn with the message as its prompt and sends the answer; mode \"watch\" (a cron expression, not more often than every few minutes) runs a cheap check each time and tells the owner only when something is worth telling, e.g. \"check the release page every hour and tell me when 2.0 is out\"; a task or watch may name the \"provider/model\" it runs on (model), e.g. a cheaper one for routine work. Returns {\"id\", \"next_fire\" (local time), \"recurring\"}: confirm the time to the owner."
            }
            Kind::List => {
                "List the owner's reminders, scheduled tasks and watches, next due first. Returns [{\"id\", \"next_fire\" (local time), \"mode\", \"message\", \"cron\", \"paused\", \"last_run\" (a watch's)}]."
            }
            Kind::Delete => {
                "Delete one reminder or scheduled task by id (from schedule_list), when the owner cancels it. Returns {\"ok\": true} if it existed."
            }
        }
    }

    fn input_schema(&self) -> Value {
        self.schema.clone()
    }

    /// Only `schedule_add` with mode "task" is risky: it runs a turn later, with every tool.
    fn risk(&self, input: &Value) -> Option<Risk> {
        if self.kind != Kind::Add {
            return None;
        }
        let input: AddInput = serde_json::from_value(input.clone()).ok()?;
        (input.mode.as_deref().map(str::trim) == Some("task")).then(|| Risk {
            action: "schedule_add".to_owned(),
            text: format!("scheduled task at {}:\n{}", input.when, input.message),
        })
    }

    async fn call(&self, input: Value, ctx: ToolContext) -> ToolOutput {
        let name = self.name().to_owned();
        let invalid =
            |e: serde_json::Error| ToolOutput::error(format!("invalid input for {name}: {e}"));
        match self.kind {
            Kind::Add => {
                let input: AddInput = match serde_json::from_value(input) {
                    Ok(i) => i,
                    Err(e) => return invalid(e),
                };
                let added = match Mode::parse(input.mode.as_deref().unwrap_or("")) {
                    Ok(mode) => {
                        let model = input.model.as_deref();
                        self.schedules
                            .add(
                                &input.when,
                                &input.message,
                                mode,
                                model,
                                Some(ctx.session_id),
                            )
                            .await
                    }
                    Err(e) => Err(e),
                };
                match added {
                    Ok(info) => ToolOutput::ok(
                        json!({
                            "id": info.id,
                            "next_fire": info.next_local,
                            "recurring": info.cron.is_some(),
                            "model": info.model,
                        })
                        .to_string(),
                    ),
                    Err(e) => failed(&name, e),
                }
            }
            Kind::List => match self.schedules.list().await {
                Ok(list) => ToolOutput::ok(
                    Value::from(list.iter().map(listed).collect::<Vec<_>>()).to_string(),
                ),
                Err(e) => failed(&name, e.into()),
            },
            Kind::Delete => {
                let input: DeleteInput = match serde_json::from_value(input) {
                    Ok(i) => i,
                    Err(e) => return invalid(e),
                };
                match self.schedules.delete(&[input.id]).await {
                    Ok(deleted) => ToolOutput::ok(json!({ "ok": deleted > 0 }).to_string()),
                    Err(e) => failed(&name, e.into()),
                }
            }
        }
    }
}

fn listed(info: &ScheduleInfo) -> Value {
    json!({
        "id": info.id,
        "next_fire": info.next_local,
        "mode": info.mode.as_str(),
        "message": info.message,
        "cron": info.cron,
        "model": info.model,
        "paused": info.paused,
        "last_run": info.watch.last.as_ref().map(|(at, outcome, summary)| json!({
            "at": at,
            "outcome": outcome.as_str(),
            "summary": summary,
        })),
    })
}

/// A refusal the model can act on, or a generic failure (details only in the log).
fn failed(tool: &str, e: ScheduleError) -> ToolOutput {
    match e {
        ScheduleError::Store(e) => {
            tracing::error!(tool, error = %e, "schedule tool failed");
            ToolOutput::error("the schedule database failed; try again later")
        }
        refused => ToolOutput::error(refused.to_string()),
    }
}
