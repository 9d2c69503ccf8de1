//! The owner's notice of a proposed merge of memories that include the owner's own: the
//! memories as they are and the merged text, in the owner's language (the buttons are the
//! adapter's).

use kernel_common::config::Locale;

/// Most characters of one memory quoted in the notice.
const MAX_QUOTED_CHARS: usize = 200;

/// The notice's Markdown.
pub(super) fn proposal(memories: &[(i64, String)], merged: &str, locale: Locale) -> String {
    let (head, into) = match locale {
        Locale::Zh => (
            "整理记忆时发现这几条说的是同一件事，其中有你自己记下的，所以先问你：",
            "合并成：",
        ),
        Locale::En => (
            "While tidying memory I found these say the same thing, and some are yours, so I ask first:",
            "Merged into:",
        ),
    };
    let mut out = format!("{head}\n\n");
    for (_, text) in memories {
        let text = text.replace('\n', " ");
        let text = kernel_common::text::truncate(&text, MAX_QUOTED_CHARS);
        out.push_str(&format!("- {text}\n"));
    }
    out.push_str(&format!("\n{into}\n> {}", merged.trim().replace('\n', " ")));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_the_memories_and_the_merged_text_in_the_owners_language() {
        let memories = [
            (1, "主人喜欢乌龙茶".to_owned()),
            (2, "主人爱喝乌龙".to_owned()),
        ];
        let zh = proposal(&memories, "主人喜欢喝乌龙茶", Locale::Zh);
        assert!(
            zh.contains("- 主人喜欢乌龙茶\n- 主人爱喝乌龙") && zh.ends_with("> 主人喜欢喝乌龙茶")
        );
        assert!(proposal(&memories, "x", Locale::En).starts_with("While tidying memory"));
    }
}
