//! What of a stored message the conversation index keeps: its text blocks (the owner's words,
//! captions, voice transcripts, document names as stored; Kernel's answers), never tool calls,
//! tool results, images or reasoning; and bounded excerpts of it around a hit.

use crate::conversation::Block;

/// The searchable text of a message's JSON blocks (`messages.content`): its non-empty text
/// blocks joined by blank lines; `None` when there is none (a tool round) or the JSON is bad.
pub fn searchable(content: &str) -> Option<String> {
    let blocks: Vec<Block> = serde_json::from_str(content).ok()?;
    let texts: Vec<&str> = blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text { text } if !text.trim().is_empty() => Some(text.trim()),
            _ => None,
        })
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n\n"))
}

/// At most `max` characters of `text` around the first of `terms` it contains (ASCII
/// case-insensitively), `…` marking what was cut; the start of `text` when no term is in it.
pub fn excerpt(text: &str, terms: &[String], max: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= max {
        return text.to_owned();
    }
    let lower: Vec<char> = chars.iter().map(|c| c.to_ascii_lowercase()).collect();
    let hit = terms
        .iter()
        .filter_map(|t| find(&lower, &t.chars().collect::<Vec<_>>()))
        .min()
        .unwrap_or(0);
    let start = hit.saturating_sub(max / 3).min(chars.len() - max);
    let end = start + max;
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.extend(&chars[start..end]);
    if end < chars.len() {
        out.push('…');
    }
    out
}

fn find(haystack: &[char], needle: &[char]) -> Option<usize> {
    if needle.is_empty() || needle.len() > haystack.len() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_text_blocks_are_searchable() {
        let content = r#"[{"type":"text","text":" 杭州的酒店 "},{"type":"tool_call","id":"c","name":"x","input":{}},{"type":"text","text":"ok"}]"#;
        assert_eq!(searchable(content).as_deref(), Some("杭州的酒店\n\nok"));
        let tool_only =
            r#"[{"type":"tool_result","call_id":"c","content":"secret","is_error":false}]"#;
        assert_eq!(searchable(tool_only), None);
        assert_eq!(searchable("not json"), None);
    }

    #[test]
    fn excerpts_are_bounded_around_the_hit() {
        let text = format!("{}dentist on Friday{}", "a".repeat(500), "b".repeat(500));
        let cut = excerpt(&text, &["dentist".into()], 100);
        assert!(cut.contains("dentist"), "{cut}");
        assert!(cut.chars().count() <= 102);
        assert!(cut.starts_with('…') && cut.ends_with('…'));
        assert_eq!(excerpt("short", &[], 100), "short");
        let head = excerpt(&"x".repeat(300), &["nothing".into()], 10);
        assert_eq!(head, format!("{}…", "x".repeat(10)));
    }
}
