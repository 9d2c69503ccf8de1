//! Where an extracted item came from: the owner, or a tool's result (an MCP server, a CLI's
//! output, a document a tool read). The model may say so itself (`"source": "tool <name>"`, for
//! a tool that is in the transcript); otherwise an item whose words are in a tool's result but
//! not in what the owner said is marked as from that tool. Never is outside content stored as
//! the owner's word.

use super::extract::Item;
use super::transcript::Transcript;
use crate::memory::segment;

/// Share of an item's words that must be in a tool's result for the item to come from it.
const FROM_TOOL_SHARE: f32 = 0.5;

/// The label stored with an item from `tool`.
pub(super) fn tool_label(tool: &str) -> String {
    format!("tool {tool}")
}

/// `Some("tool <name>")` when `item` came from a tool's result in `transcript`, `None` when it
/// came from the owner.
pub(super) fn origin(item: &Item, transcript: &Transcript) -> Option<String> {
    if let Some(said) = item.source.as_deref().map(str::trim) {
        let named = said.strip_prefix("tool").map(str::trim).unwrap_or(said);
        if let Some((tool, _)) = transcript.tools.iter().find(|(t, _)| t == named) {
            return Some(tool_label(tool));
        }
    }
    let terms = segment::query_terms(&item.text);
    if terms.is_empty() {
        return None;
    }
    let share = |text: &str| {
        let found = terms.iter().filter(|t| text.contains(t.as_str())).count();
        found as f32 / terms.len() as f32
    };
    let owner = share(&transcript.owner);
    transcript
        .tools
        .iter()
        .map(|(tool, text)| (tool, share(text)))
        .filter(|&(_, s)| s >= FROM_TOOL_SHARE && s > owner)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(tool, _)| tool_label(tool))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(text: &str, source: Option<&str>) -> Item {
        Item {
            text: text.into(),
            importance: 4,
            source: source.map(str::to_owned),
        }
    }

    fn transcript() -> Transcript {
        Transcript {
            text: String::new(),
            owner: "我喜欢喝乌龙茶\n查一下项目资料\n".into(),
            tools: vec![(
                "mcp_docs__search".into(),
                "项目代号是蓝鲸，预算三百万".into(),
            )],
        }
    }

    #[test]
    fn facts_only_a_tool_returned_are_marked_as_from_it() {
        let t = transcript();
        assert_eq!(
            origin(&item("项目代号是蓝鲸", None), &t).as_deref(),
            Some("tool mcp_docs__search")
        );
        assert_eq!(origin(&item("主人喜欢喝乌龙茶", None), &t), None);
        // The model's own label counts when it names a tool of the transcript.
        let said = item("预算很多", Some("tool mcp_docs__search"));
        assert_eq!(origin(&said, &t).as_deref(), Some("tool mcp_docs__search"));
        let unknown = item("主人喜欢喝乌龙茶", Some("tool nothing"));
        assert_eq!(origin(&unknown, &t), None);
    }
}
