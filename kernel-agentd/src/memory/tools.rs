//! The `memory_*` tools, exactly as the seed plan has them: `memory_add(text) -> {id}`,
//! `memory_search(query, limit=5)` and `memory_list(limit=200) -> [{id, text, created_at}]`,
//! `memory_delete(id) -> {ok}`. Input schemas are generated from the argument types; limits
//! are clamped, never refused.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::{DEFAULT_SEARCH_LIMIT, MAX_LIST_LIMIT, Memories, MemoryRow};
use crate::tools::{RegistryError, Tool, ToolContext, ToolOutput, ToolRegistry};

/// The memory tools' names.
pub const TOOL_NAMES: [&str; 4] = [
    "memory_add",
    "memory_search",
    "memory_list",
    "memory_delete",
];

/// Registers the memory tools on `registry`, replacing earlier ones of the same names (a
/// registry shared across agent restarts must reach the new agent's store).
pub fn register_tools(
    registry: &ToolRegistry,
    memories: &Arc<Memories>,
) -> Result<(), RegistryError> {
    let tools: [Arc<dyn Tool>; 4] = [
        Arc::new(MemoryTool::<AddInput>::new(memories)),
        Arc::new(MemoryTool::<SearchInput>::new(memories)),
        Arc::new(MemoryTool::<ListInput>::new(memories)),
        Arc::new(MemoryTool::<DeleteInput>::new(memories)),
    ];
    for tool in tools {
        registry.unregister(tool.name());
        registry.register(tool)?;
    }
    Ok(())
}

/// `memory_add` input.
#[derive(Debug, Deserialize, JsonSchema)]
struct AddInput {
    /// The fact to remember: one self-contained sentence in the owner's language.
    text: String,
}

/// `memory_search` input.
#[derive(Debug, Deserialize, JsonSchema)]
struct SearchInput {
    /// Words to look for (Chinese or English); any text is searched as plain words.
    query: String,
    /// Most results to return (1-50).
    #[serde(default = "default_search_limit")]
    limit: i64,
    /// Only memories saved on or after this local date (YYYY-MM-DD).
    #[serde(default)]
    since: Option<String>,
    /// Only memories saved on or before this local date (YYYY-MM-DD).
    #[serde(default)]
    until: Option<String>,
}

fn default_search_limit() -> i64 {
    DEFAULT_SEARCH_LIMIT as i64
}

/// `memory_list` input.
#[derive(Debug, Deserialize, JsonSchema)]
struct ListInput {
    /// Most memories to return, newest first (1-200).
    #[serde(default = "default_list_limit")]
    limit: i64,
}

fn default_list_limit() -> i64 {
    MAX_LIST_LIMIT as i64
}

/// `memory_delete` input.
#[derive(Debug, Deserialize, JsonSchema)]
struct DeleteInput {
    /// The id of the memory to delete.
    id: i64,
}

/// One memory tool: `I` is its input type and says what it does.
struct MemoryTool<I> {
    memories: Arc<Memories>,
    schema: Value,
    _input: std::marker::PhantomData<fn() -> I>,
}

impl<I: Action> std::fmt::Debug for MemoryTool<I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryTool")
            .field("name", &I::NAME)
            .finish()
    }
}

impl<I: JsonSchema> MemoryTool<I> {
    fn new(memories: &Arc<Memories>) -> Self {
        let mut schema = schemars::schema_for!(I);
        schema.remove("$schema");
        schema.remove("title");
        Self {
            memories: memories.clone(),
            schema: schema.to_value(),
            _input: std::marker::PhantomData,
        }
    }
}

/// What each input type's tool is called, tells the model, and does.
#[async_trait::async_trait]
trait Action: DeserializeOwned + JsonSchema + Send + 'static {
    const NAME: &'static str;
    const DESCRIPTION: &'static str;
    /// Only reads memories (runs concurrently with other read-only calls).
    const READ_ONLY: bool = false;
    async fn run(self, memories: &Memories) -> ToolOutput;
}

#[async_trait::async_trait]
impl<I: Action> Tool for MemoryTool<I> {
    fn name(&self) -> &str {
        I::NAME
    }

    fn description(&self) -> &str {
        I::DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        self.schema.clone()
    }

    fn read_only(&self) -> bool {
        I::READ_ONLY
    }

    async fn call(&self, input: Value, _ctx: ToolContext) -> ToolOutput {
        match serde_json::from_value::<I>(input) {
            Ok(input) => input.run(&self.memories).await,
            Err(e) => ToolOutput::error(format!("invalid input for {}: {e}", I::NAME)),
        }
    }
}

#[async_trait::async_trait]
impl Action for AddInput {
    const NAME: &'static str = "memory_add";
    const DESCRIPTION: &'static str = "Save one durable fact to long-term memory so it can be recalled in later conversations: the owner's preferences, personal details, standing instructions, ongoing projects, or anything the owner asks you to remember. Write one self-contained sentence in the owner's language. Do not save secrets (passwords, keys, tokens), one-off small talk, or memories already shown under 长期记忆（自动召回）. Returns {\"id\": <id>}; a text already remembered keeps its id.";

    async fn run(self, memories: &Memories) -> ToolOutput {
        match memories.add(&self.text).await {
            Ok(row) => ToolOutput::ok(json!({ "id": row.id }).to_string()),
            Err(e) => failed("memory_add", e),
        }
    }
}

#[async_trait::async_trait]
impl Action for SearchInput {
    const NAME: &'static str = "memory_search";
    const READ_ONLY: bool = true;
    const DESCRIPTION: &'static str = "Search long-term memory (Chinese or English; by words, and by meaning when available) when the memories recalled automatically into the message are not enough, e.g. the owner refers to something said long ago. Optional since/until (local dates YYYY-MM-DD, inclusive) keep only memories saved in that range, e.g. for \"last month\" use the current local time from the message. Returns [{\"id\", \"text\", \"created_at\"}], best match first (limit 1-50, default 5).";

    async fn run(self, memories: &Memories) -> ToolOutput {
        let range = match super::hybrid::DateRange::local(
            self.since.as_deref(),
            self.until.as_deref(),
            memories.timezone(),
        ) {
            Ok(range) => range,
            Err(e) => return ToolOutput::error(e),
        };
        match memories
            .search_between(&self.query, clamp(self.limit), range)
            .await
        {
            Ok(found) => listed(memories, &found.memories),
            Err(e) => failed("memory_search", e),
        }
    }
}

#[async_trait::async_trait]
impl Action for ListInput {
    const NAME: &'static str = "memory_list";
    const READ_ONLY: bool = true;
    const DESCRIPTION: &'static str = "List long-term memories, newest first, e.g. when the owner asks what you remember about them. Returns [{\"id\", \"text\", \"created_at\"}] (limit 1-200, default 200).";

    async fn run(self, memories: &Memories) -> ToolOutput {
        match memories.list(clamp(self.limit)).await {
            Ok(rows) => listed(memories, &rows),
            Err(e) => failed("memory_list", e),
        }
    }
}

#[async_trait::async_trait]
impl Action for DeleteInput {
    const NAME: &'static str = "memory_delete";
    const DESCRIPTION: &'static str = "Delete one long-term memory by id (the [id] of a recalled memory, or an id from memory_search / memory_list), when the owner asks you to forget something or a memory is wrong or outdated. Returns {\"ok\": true} if it existed, {\"ok\": false} if there is no such memory.";

    async fn run(self, memories: &Memories) -> ToolOutput {
        match memories.delete(&[self.id]).await {
            Ok(deleted) => ToolOutput::ok(json!({ "ok": deleted > 0 }).to_string()),
            Err(e) => failed("memory_delete", e),
        }
    }
}

/// A model-given limit as a count (the callee clamps it to its range).
fn clamp(limit: i64) -> usize {
    usize::try_from(limit.max(0)).unwrap_or(usize::MAX)
}

/// `[{id, text, created_at}]`, with `"origin": "tool <name>"` (not the owner's word) for a
/// memory from outside content.
fn listed(memories: &Memories, rows: &[MemoryRow]) -> ToolOutput {
    let list: Vec<Value> = rows
        .iter()
        .map(|m| {
            let mut v = json!({ "id": m.id, "text": m.text, "created_at": memories.local_time(m.created_at) });
            if let Some(origin) = &m.origin {
                v["origin"] = json!(format!("{origin} (not the owner's word)"));
            }
            v
        })
        .collect();
    ToolOutput::ok(Value::from(list).to_string())
}

/// A refusal the model can act on, or a generic failure (details only in the log).
fn failed(tool: &str, e: super::MemoryError) -> ToolOutput {
    match e {
        super::MemoryError::Store(e) => {
            tracing::error!(tool, error = %e, "memory tool failed");
            ToolOutput::error("the memory database failed; try again later")
        }
        refused => ToolOutput::error(refused.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_come_from_the_argument_types() {
        let search = schemars::schema_for!(SearchInput).to_value();
        assert_eq!(search["type"], "object");
        assert_eq!(search["required"], json!(["query"]));
        assert_eq!(search["properties"]["limit"]["default"], 5);
        let list = schemars::schema_for!(ListInput).to_value();
        assert_eq!(list["properties"]["limit"]["default"], 200);
        let delete = schemars::schema_for!(DeleteInput).to_value();
        assert_eq!(delete["required"], json!(["id"]));
        assert_eq!(delete["properties"]["id"]["type"], "integer");
    }

    #[test]
    fn limits_never_go_negative() {
        assert_eq!(clamp(-3), 0);
        assert_eq!(clamp(7), 7);
    }
}
