//! The internal conversation model: messages, content blocks, tool specs, usage, and what a model
//! call was for (its ledger purpose).
//!
//! Providers convert to and from their wire formats at the edge (`llm::claude`, `llm::openai`);
//! the store persists `Message` as JSON; nothing else knows about wire formats.

use serde::{Deserialize, Serialize};

/// Who said it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
}

/// One message of a conversation. Tool results travel in `User` messages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<Block>,
}

impl Message {
    /// A user message with one text block.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: vec![Block::text(text)],
        }
    }

    /// An assistant message with one text block.
    pub fn assistant_text(text: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: vec![Block::text(text)],
        }
    }

    /// The concatenated text blocks.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|b| match b {
                Block::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The tool calls in this message, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = ToolCall<'_>> {
        self.content.iter().filter_map(|b| match b {
            Block::ToolCall { id, name, input } => Some(ToolCall { id, name, input }),
            _ => None,
        })
    }
}

/// A borrowed view of a tool call block.
#[derive(Debug, Clone, Copy)]
pub struct ToolCall<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub input: &'a serde_json::Value,
}

/// A content block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    /// Plain text (Markdown from the assistant).
    Text { text: String },
    /// An image for the model to see. Stored history replaces it with a text placeholder.
    Image {
        mime_type: String,
        #[serde(with = "base64_bytes")]
        data: Vec<u8>,
    },
    /// The model asks for a tool.
    ToolCall {
        id: String,
        name: String,
        input: serde_json::Value,
    },
    /// A tool's answer to the call with `call_id`.
    ToolResult {
        call_id: String,
        content: String,
        is_error: bool,
    },
    /// Opaque provider reasoning (Anthropic `thinking`/`redacted_thinking` with signature,
    /// OpenAI-compatible `reasoning_content`), round-tripped to the same provider kind only.
    Reasoning {
        provider: String,
        data: serde_json::Value,
    },
}

impl Block {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Matches `^[a-zA-Z0-9_-]{1,64}$`.
    pub name: String,
    pub description: String,
    /// JSON Schema of the input object.
    pub input_schema: serde_json::Value,
}

/// Token usage of one or more model calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, o: Self) {
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
        self.cache_read_tokens += o.cache_read_tokens;
        self.cache_write_tokens += o.cache_write_tokens;
    }
}

mod base64_bytes {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&STANDARD.encode(v))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = String::deserialize(d)?;
        STANDARD.decode(s).map_err(serde::de::Error::custom)
    }
}

/// What a model call was for (the ledger's `purpose` column, and the split `/usage` shows).
/// Every call of a model is recorded with one, so every call counts toward the budgets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Purpose {
    /// A turn for the owner's message (`owner`).
    Owner,
    /// A turn Kernel started itself: a scheduled task, a background job's result (`task`).
    Task,
    /// A watch's run (`watch`): a bounded turn on the cheap model.
    Watch,
    /// A turn's call served by a fail-over provider after its own failed (`failover`).
    Failover,
    /// A session title (`title`).
    Title,
    /// Auto memory's extraction (`memory`).
    Memory,
    /// A session summary rewrite (`summary`).
    Summary,
    /// Memory consolidation (`consolidation`).
    Consolidation,
}

impl Purpose {
    /// Every purpose, in the order `/usage` lists them.
    pub const ALL: [Purpose; 8] = [
        Purpose::Owner,
        Purpose::Task,
        Purpose::Watch,
        Purpose::Failover,
        Purpose::Title,
        Purpose::Memory,
        Purpose::Summary,
        Purpose::Consolidation,
    ];

    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        use kernel_proto::words::UsagePurpose as W;
        match self {
            Purpose::Owner => W::Owner,
            Purpose::Task => W::Task,
            Purpose::Watch => W::Watch,
            Purpose::Failover => W::Failover,
            Purpose::Title => W::Title,
            Purpose::Memory => W::Memory,
            Purpose::Summary => W::Summary,
            Purpose::Consolidation => W::Consolidation,
        }
        .as_str()
    }
}
