//! Where an extracted item came from: the owner, or outside content — a tool's result (an MCP
//! server, a CLI's output, a document a tool read), or a document, forwarded message or
//! background job's result in the owner's own message (`outside`). The model may say so itself
//! (`"source": "tool <name>"` or another label of the transcript); otherwise an item whose words
//! are in outside content but not in what the owner said is marked as from it. Never is outside
//! content stored as the owner's word.

use super::extract::Item;
use super::outside::tool_label;
use super::transcript::Transcript;
use crate::memory::segment;

/// Share of an item's words that must be in a tool's result for the item to come from it.
const FROM_TOOL_SHARE: f32 = 0.5;

/// The label of the outside content `item` came from in `transcript` (`tool <name>`,
/// `document <name>`, …), `None` when it came from the owner.
pub(super) fn origin(item: &Item, transcript: &Transcript) -> Option<String> {
    if let Some(said) = item.source.as_deref().map(str::trim) {
        let as_tool = tool_label(said.strip_prefix("tool").map(str::trim).unwrap_or(said));
        if let Some((label, _)) = transcript
            .outside
            .iter()
            .find(|(l, _)| l == said || *l == as_tool)
        {
            return Some(label.clone());
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
        .outside
        .iter()
        .map(|(label, text)| (label, share(text)))
        .filter(|&(_, s)| s >= FROM_TOOL_SHARE && s > owner)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(label, _)| label.clone())
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
            outside: vec![
                (
                    "tool mcp_docs__search".into(),
                    "项目代号是蓝鲸，预算三百万".into(),
                ),
                ("forwarded from Alice".into(), "服务器在东京机房".into()),
            ],
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
        assert_eq!(
            origin(&item("服务器在东京机房", None), &t).as_deref(),
            Some("forwarded from Alice")
        );
        let said = item("服务器在东京", Some("forwarded from Alice"));
        assert_eq!(origin(&said, &t).as_deref(), Some("forwarded from Alice"));
    }
}
