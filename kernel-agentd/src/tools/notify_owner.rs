//! `notify_owner(text)`: the one tool a watch's turn has beyond the read-only ones, and the
//! only way a watch speaks. It is never registered (an owner or task turn is not offered it, and
//! a call there is an unknown tool); the watch runner offers its [`spec`] and keeps what each
//! call passes in a [`Notifications`] of the run: at most one message a run, later calls folded
//! into it.

use serde_json::{Value, json};

use super::ToolOutput;
use crate::conversation::ToolSpec;

/// The tool's name.
pub const NAME: &str = "notify_owner";
/// The most characters one run tells the owner (the rest is cut).
pub const MAX_CHARS: usize = 3000;

/// What the model is offered.
pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME.to_owned(),
        description: "Tell the owner something this watch found, now worth their attention. \
            Only what the instruction asks to be told, and never what an earlier notification \
            already said. The owner gets one message per run: call it at most once, with \
            everything in it. If there is nothing new, do not call it."
            .to_owned(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "text": {
                    "type": "string",
                    "description": "The message for the owner (Markdown, short, in the owner's language)."
                }
            },
            "required": ["text"]
        }),
    }
}

/// What one watch run passed to `notify_owner`.
#[derive(Debug, Default)]
pub struct Notifications {
    texts: Vec<String>,
}

impl Notifications {
    /// Takes one call's `input`; the result the model gets.
    pub fn take(&mut self, input: &Value) -> ToolOutput {
        let text = input
            .get("text")
            .and_then(Value::as_str)
            .map(str::trim)
            .unwrap_or("");
        if text.is_empty() {
            return ToolOutput::error("notify_owner needs a non-empty text");
        }
        self.texts.push(text.to_owned());
        if self.texts.len() == 1 {
            ToolOutput::ok(
                json!({"ok": true, "note": "the owner gets this when the run ends"}).to_string(),
            )
        } else {
            ToolOutput::ok(
                json!({"ok": true, "note": "added to this run's one message; do not call notify_owner again"})
                    .to_string(),
            )
        }
    }

    /// The one message of the run (every call's text, in order), cut to [`MAX_CHARS`];
    /// `None` when it was not called.
    pub fn message(&self) -> Option<String> {
        if self.texts.is_empty() {
            return None;
        }
        let joined = self.texts.join("\n\n");
        Some(kernel_common::text::truncate(&joined, MAX_CHARS).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_of_calls_is_one_message_and_no_call_is_none() {
        let mut n = Notifications::default();
        assert_eq!(n.message(), None);
        assert!(n.take(&json!({"text": "  "})).is_error);
        assert!(!n.take(&json!({"text": "2.0 is out"})).is_error);
        let folded = n.take(&json!({"text": "and 2.0.1"}));
        assert!(folded.content.contains("do not call"), "{folded:?}");
        assert_eq!(n.message().as_deref(), Some("2.0 is out\n\nand 2.0.1"));
        let mut long = Notifications::default();
        long.take(&json!({"text": "x".repeat(MAX_CHARS * 2)}));
        assert!(long.message().unwrap().chars().count() <= MAX_CHARS + 1);
    }
}
