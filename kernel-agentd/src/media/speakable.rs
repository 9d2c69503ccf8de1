//! The spoken version of an answer: Markdown reduced to what reads well aloud.
//!
//! Formatting marks go; code blocks, tables, images, raw HTML and URLs are left out (nobody wants
//! a hex string read to them; the text message has them); each paragraph, heading and list item
//! becomes a line. The result is capped at `max_chars`, cut at a sentence end where one is near,
//! and then says the rest is in the text message.

use std::sync::LazyLock;

use kernel_common::config::Locale;
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use regex::Regex;

use super::texts::rest_in_text;

/// A URL in running text.
static URL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\b(?:https?|ftp)://\S+").expect("valid regex"));

/// Characters that end a sentence (a cut prefers to land right after one).
const SENTENCE_ENDS: &[char] = &['。', '！', '？', '；', '.', '!', '?', ';', '\n'];

/// The text to speak for `markdown`, at most `max_chars` characters; `None` when nothing is
/// left to say (e.g. the answer was only code).
pub(crate) fn speakable(markdown: &str, max_chars: usize, locale: Locale) -> Option<String> {
    let plain = plain_text(markdown);
    let plain = plain.trim();
    if plain.is_empty() || max_chars == 0 {
        return None;
    }
    Some(cap(plain, max_chars, locale))
}

/// `markdown` as plain lines, without code blocks, tables, images, HTML and URLs.
pub(crate) fn plain_text(markdown: &str) -> String {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES;
    let mut out = String::new();
    let mut skipping = 0usize;
    // Where each open link's text starts, with its URL (autolinks read out the URL: dropped).
    let mut links: Vec<(usize, String)> = Vec::new();
    for event in Parser::new_ext(markdown, options) {
        match event {
            Event::Start(tag) if skipped(&tag) => skipping += 1,
            Event::End(end) if skipped_end(end) => skipping = skipping.saturating_sub(1),
            _ if skipping > 0 => {}
            Event::Start(Tag::Link { dest_url, .. }) => links.push((out.len(), dest_url.into())),
            Event::End(TagEnd::Link) => {
                if let Some((start, url)) = links.pop()
                    && out[start..].trim() == url.trim()
                {
                    out.truncate(start);
                }
            }
            Event::Text(text) | Event::Code(text) | Event::InlineMath(text) => out.push_str(&text),
            Event::SoftBreak => out.push(' '),
            Event::HardBreak => out.push('\n'),
            Event::End(
                TagEnd::Paragraph | TagEnd::Heading(_) | TagEnd::Item | TagEnd::BlockQuote(_),
            ) => out.push('\n'),
            _ => {}
        }
    }
    let out = URL.replace_all(&out, "");
    out.lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Blocks that are never read aloud.
fn skipped(tag: &Tag<'_>) -> bool {
    matches!(
        tag,
        Tag::CodeBlock(_)
            | Tag::Table(_)
            | Tag::Image { .. }
            | Tag::HtmlBlock
            | Tag::MetadataBlock(_)
            | Tag::FootnoteDefinition(_)
    )
}

fn skipped_end(end: TagEnd) -> bool {
    matches!(
        end,
        TagEnd::CodeBlock
            | TagEnd::Table
            | TagEnd::Image
            | TagEnd::HtmlBlock
            | TagEnd::MetadataBlock(_)
            | TagEnd::FootnoteDefinition
    )
}

/// `text` cut to `max_chars` characters: at a sentence end in the last half when there is one,
/// then `…` and the "rest is in the text" note (left out when it does not fit).
fn cap(text: &str, max_chars: usize, locale: Locale) -> String {
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let note = rest_in_text(locale);
    let reserve = note.chars().count() + 2;
    let (budget, note) = if max_chars > reserve * 2 {
        (max_chars - reserve, Some(note))
    } else {
        (max_chars.saturating_sub(1), None)
    };
    let head = kernel_common::text::head(text, budget);
    let sentence = head
        .char_indices()
        .filter(|(_, c)| SENTENCE_ENDS.contains(c))
        .map(|(i, c)| i + c.len_utf8())
        .next_back()
        .filter(|&i| head[..i].chars().count() * 2 >= budget);
    let mut out = match sentence {
        Some(i) => head[..i].trim_end().to_owned(),
        None => format!("{}{}", head.trim_end(), kernel_common::text::ELLIPSIS),
    };
    if let Some(note) = note {
        out.push('\n');
        out.push_str(note);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting_goes_code_and_tables_are_left_out() {
        let md = "# 标题\n\n这是 **重点** 和 `x` 变量。\n\n```rust\nfn main() {}\n```\n\n\
                  | a | b |\n|---|---|\n| 1 | 2 |\n\n- 第一项\n- 第二项\n\n> 引用 *斜体*\n";
        assert_eq!(
            plain_text(md),
            "标题\n这是 重点 和 x 变量。\n第一项\n第二项\n引用 斜体"
        );
    }

    #[test]
    fn links_keep_their_words_urls_go() {
        assert_eq!(
            plain_text("See [the docs](https://x.dev/a) or <https://x.dev/b>."),
            "See the docs or ."
        );
        assert_eq!(
            plain_text("Visit https://example.com/page now"),
            "Visit now"
        );
        assert_eq!(plain_text("![diagram](d.png) after"), "after");
        assert_eq!(plain_text("<div>html</div>\n\ntext"), "text");
    }

    #[test]
    fn only_code_leaves_nothing_to_say() {
        assert_eq!(speakable("```\nls -la\n```", 100, Locale::Zh), None);
        assert_eq!(speakable("  ", 100, Locale::Zh), None);
        assert_eq!(
            speakable("好的。", 100, Locale::Zh).as_deref(),
            Some("好的。")
        );
    }

    #[test]
    fn long_answers_are_cut_at_a_sentence_and_point_to_the_text() {
        let text = "第一句话。".repeat(100);
        let spoken = speakable(&text, 60, Locale::Zh).unwrap();
        assert!(spoken.chars().count() <= 60, "{spoken}");
        assert!(spoken.ends_with("。\n其余内容请看文字消息。"), "{spoken}");
        let words = "word ".repeat(100);
        let spoken = speakable(&words, 80, Locale::En).unwrap();
        assert!(spoken.chars().count() <= 80, "{spoken}");
        assert!(spoken.contains("…\nThe rest is in the text message."));
    }

    #[test]
    fn a_tiny_cap_still_holds() {
        let spoken = speakable(&"长".repeat(50), 5, Locale::Zh).unwrap();
        assert_eq!(spoken, "长长长长…");
        assert!(
            speakable("abc", 3, Locale::En).unwrap() == "abc",
            "fits exactly"
        );
    }
}
