//! The `history_search(query, after?, before?, limit?)` tool: read-only, the owner's past
//! conversation by words and time, each hit with its session, who said it, the local time and
//! its neighbours (bounded excerpts, so a result stays well under the tool-output cap).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{History, HistoryError, HistoryHit, HistoryQuery, Neighbour};
use crate::conversation::Role;
use crate::tools::{RegistryError, Tool, ToolContext, ToolOutput, ToolRegistry};

/// The tool's name.
pub const TOOL_NAME: &str = "history_search";

const DESCRIPTION: &str = "Search everything the owner and you said in past conversations (all sessions; Chinese or English, any text is searched as plain words) when the owner asks about something said before that is neither in the current session nor in the recalled memories: \"what did we decide about …\", \"when did I say …\", \"what was that command …\". Optional after/before (local dates YYYY-MM-DD, whole days inclusive, or date-times YYYY-MM-DD HH:MM) limit the time; an empty query with a range lists what was said then (e.g. \"what did we talk about last Tuesday\": use the current local time from the message). Returns {\"hits\": [{\"session\", \"title\", \"who\", \"time\", \"text\", \"before\", \"after\"}]}, best match first (limit 1-50, default 10); before/after are the neighbouring messages.";

/// `history_search` input.
#[derive(Debug, Deserialize, JsonSchema)]
struct Input {
    /// Words to look for; may be empty when after/before are given.
    #[serde(default)]
    query: String,
    /// Only messages at or after this local date (YYYY-MM-DD) or date-time (YYYY-MM-DD HH:MM).
    #[serde(default)]
    after: Option<String>,
    /// Only messages before the end of this local date, or before this local date-time.
    #[serde(default)]
    before: Option<String>,
    /// Most hits to return (1-50).
    #[serde(default = "default_limit")]
    limit: i64,
}

fn default_limit() -> i64 {
    super::DEFAULT_LIMIT as i64
}

/// Registers `history_search` on `registry`, replacing an earlier one.
pub fn register_tool(registry: &ToolRegistry, history: &History) -> Result<(), RegistryError> {
    let mut schema = schemars::schema_for!(Input);
    schema.remove("$schema");
    schema.remove("title");
    registry.unregister(TOOL_NAME);
    registry.register(Arc::new(HistorySearch {
        history: history.clone(),
        schema: schema.to_value(),
    }))
}

#[derive(Debug)]
struct HistorySearch {
    history: History,
    schema: Value,
}

#[async_trait::async_trait]
impl Tool for HistorySearch {
    fn name(&self) -> &str {
        TOOL_NAME
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        self.schema.clone()
    }

    fn read_only(&self) -> bool {
        true
    }

    async fn call(&self, input: Value, ctx: ToolContext) -> ToolOutput {
        let input: Input = match serde_json::from_value(input) {
            Ok(i) => i,
            Err(e) => return ToolOutput::error(format!("invalid input for {TOOL_NAME}: {e}")),
        };
        let query = HistoryQuery {
            query: &input.query,
            after: input.after.as_deref(),
            before: input.before.as_deref(),
            limit: usize::try_from(input.limit.max(1)).unwrap_or(super::MAX_LIMIT),
        };
        let found = tokio::select! {
            found = self.history.search(&query) => found,
            () = ctx.cancel.cancelled() => return ToolOutput::error("cancelled"),
        };
        match found {
            Ok(hits) => ToolOutput::ok(render(&self.history, &hits).to_string()),
            Err(HistoryError::Store(e)) => {
                tracing::error!(tool = TOOL_NAME, error = %e, "history search failed");
                ToolOutput::error("the conversation index failed; try again later")
            }
            Err(refused) => ToolOutput::error(refused.to_string()),
        }
    }
}

/// The hits as the model reads them.
pub(super) fn render(history: &History, hits: &[HistoryHit]) -> Value {
    let who = |role: Role| match role {
        Role::User => "owner",
        Role::Assistant => "kernel",
    };
    let around = |n: &Option<Neighbour>| {
        n.as_ref().map_or(Value::Null, |n| {
            json!(format!("{}: {}", who(n.role), n.text))
        })
    };
    let list: Vec<Value> = hits
        .iter()
        .map(|h| {
            json!({
                "session": h.session_id,
                "title": h.session_title,
                "who": who(h.role),
                "time": history.local_time(h.at),
                "text": h.text,
                "before": around(&h.before),
                "after": around(&h.after),
            })
        })
        .collect();
    json!({ "hits": list })
}
