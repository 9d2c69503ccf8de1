//! The `skill_read(name, file?)` tool: a skill's SKILL.md body and the list of its other files,
//! or one of those files. Names and paths the model gives are checked by [`Skills::read`].

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{SideEffects, Skills};
use crate::tools::{RegistryError, Risk, Tool, ToolContext, ToolOutput, ToolRegistry};

/// The tool's name.
pub(crate) const TOOL_NAME: &str = "skill_read";

const DESCRIPTION: &str = "Read a skill listed under 技能（按需读取） in the system prompt. Without `file`: returns the skill's instructions (its SKILL.md without front matter) and lists the skill's other files. With `file`: returns that file (a relative path from the list). Read a skill before doing what it describes.";

/// Registers `skill_read` on `registry`, replacing an earlier one (a registry shared across
/// agent restarts must reach the new agent's skills).
pub(crate) fn register_tool(registry: &ToolRegistry, skills: &Skills) -> Result<(), RegistryError> {
    let tool = Arc::new(SkillReadTool::new(skills.clone()));
    registry.unregister(TOOL_NAME);
    registry.register(tool)
}

/// `skill_read` input.
#[derive(Debug, Deserialize, JsonSchema)]
struct ReadInput {
    /// The skill's name, as listed in the index.
    name: String,
    /// A file of the skill, as a relative path from the list skill_read(name) returns; omit it
    /// for the skill's instructions.
    #[serde(default)]
    file: Option<String>,
}

#[derive(Debug)]
struct SkillReadTool {
    skills: Skills,
    schema: Value,
}

impl SkillReadTool {
    fn new(skills: Skills) -> Self {
        let mut schema = schemars::schema_for!(ReadInput);
        schema.remove("$schema");
        schema.remove("title");
        Self {
            skills,
            schema: schema.to_value(),
        }
    }
}

#[async_trait::async_trait]
impl Tool for SkillReadTool {
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

    /// Reading a skill whose `side_effects` is not `read-only` is what "running" it means here:
    /// its instructions are what the model then carries out.
    fn risk(&self, input: &Value) -> Option<Risk> {
        let input: ReadInput = serde_json::from_value(input.clone()).ok()?;
        let effects = self.skills.cached_side_effects(&input.name)?;
        (effects != SideEffects::ReadOnly).then(|| Risk {
            action: format!("{TOOL_NAME}:{}", input.name),
            text: format!(
                "use the skill \"{}\" (side effects: {})",
                input.name,
                effects.as_str()
            ),
        })
    }

    async fn call(&self, input: Value, _ctx: ToolContext) -> ToolOutput {
        let input: ReadInput = match serde_json::from_value(input) {
            Ok(input) => input,
            Err(e) => return ToolOutput::error(format!("invalid input for {TOOL_NAME}: {e}")),
        };
        match self.skills.read(&input.name, input.file.as_deref()).await {
            Ok(text) => ToolOutput::ok(text),
            Err(e) => {
                tracing::info!(skill = %input.name, error = %e, "skill_read refused");
                ToolOutput::error(e.to_string())
            }
        }
    }
}
