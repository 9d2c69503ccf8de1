//! Splitting behaviour at Telegram's limit: exact boundaries, formatting closed and reopened
//! across cuts, grapheme clusters and surrogate pairs never cut, the plain fallback's URLs.

#[path = "support/invariants.rs"]
mod invariants;
#[path = "support/telegram_html.rs"]
mod telegram_html;

use kernel_tg::render::{MAX_CHUNK_UTF16, render, utf16_len};

use invariants::checked_render;

fn split(markdown: &str) -> Vec<kernel_tg::render::Chunk> {
    checked_render(markdown, MAX_CHUNK_UTF16)
}

#[test]
fn exactly_the_limit_fits_and_one_more_splits() {
    assert_eq!(split(&"a".repeat(4096)).len(), 1);
    let words = format!("{} {}", "a".repeat(2000), "b".repeat(2095));
    assert_eq!(split(&words).len(), 1);
    let over = format!("{} {}", "a".repeat(2000), "b".repeat(2096));
    let chunks = split(&over);
    assert_eq!(chunks.len(), 2);
    assert_eq!(
        chunks[0].plain,
        "a".repeat(2000),
        "cut at the space, not in a word"
    );
}

#[test]
fn formatting_is_closed_and_reopened_across_a_cut() {
    let sentence = "the quick brown fox jumps over the lazy dog ";
    let markdown = format!("**{}**", sentence.repeat(150).trim_end());
    let chunks = split(&markdown);
    assert_eq!(chunks.len(), 2);
    for chunk in &chunks {
        assert!(chunk.html.starts_with("<b>") && chunk.html.ends_with("</b>"));
    }

    let link = format!(
        "[{}](https://example.com/?a=1&b=2)",
        sentence.repeat(150).trim_end()
    );
    for chunk in split(&link) {
        assert!(
            chunk
                .html
                .starts_with("<a href=\"https://example.com/?a=1&amp;b=2\">")
        );
        assert!(chunk.html.ends_with("</a>"));
    }

    let quote = format!("> {}", sentence.repeat(150).trim_end());
    for chunk in split(&quote) {
        assert!(chunk.html.starts_with("<blockquote>") && chunk.html.ends_with("</blockquote>"));
    }
}

#[test]
fn emoji_sequences_and_surrogate_pairs_are_never_cut() {
    let family = "👨‍👩‍👧‍👦";
    for chunk in split(&family.repeat(1000)) {
        assert!(
            chunk.plain.replace(family, "").is_empty(),
            "a family was cut"
        );
    }
    let chunks = split(&"😀".repeat(3000));
    assert_eq!(utf16_len(&chunks[0].plain), 4096);
    assert!(chunks.iter().all(|c| c.plain.chars().all(|ch| ch == '😀')));
}

#[test]
fn cjk_text_is_not_over_split() {
    let chunks = split(&"中文".repeat(3000));
    assert_eq!(chunks.len(), 2);
    assert_eq!(utf16_len(&chunks[0].plain), 4096);
}

#[test]
fn a_paragraph_boundary_beats_a_later_word_boundary() {
    let first = "word ".repeat(600);
    let second = "next ".repeat(600);
    let chunks = split(&format!("{}\n\n{}", first.trim_end(), second.trim_end()));
    assert_eq!(chunks[0].plain, first.trim_end());
}

#[test]
fn plain_fallback_shows_link_targets() {
    let chunks = render("Read [the guide](https://example.com/guide) or <https://example.com>.");
    assert_eq!(
        chunks[0].plain,
        "Read the guide (https://example.com/guide) or https://example.com."
    );
    assert_eq!(
        telegram_html::validate(&chunks[0].html).unwrap(),
        "Read the guide or https://example.com."
    );
}

#[test]
fn a_reply_that_renders_to_nothing_is_shown_as_written() {
    let chunks = split("[docs]: https://example.com/docs");
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0].plain, "[docs]: https://example.com/docs");
}

#[test]
fn link_targets_in_the_plain_fallback_fit_the_smallest_limit() {
    use kernel_tg::render::{MAX_PLAIN_URL, MIN_LIMIT_UTF16};
    for emoji in [80, 90, 91, 120] {
        let url = format!("https://example.com/{}", "😀".repeat(emoji));
        let markdown = format!("{} [x]({url})", "word ".repeat(100));
        let chunks = checked_render(&markdown, MIN_LIMIT_UTF16);
        let shown = chunks.iter().any(|c| c.plain.contains(&url));
        assert_eq!(shown, utf16_len(&url) <= MAX_PLAIN_URL, "{emoji} emoji");
        assert!(
            chunks
                .iter()
                .all(|c| utf16_len(&c.plain) <= MIN_LIMIT_UTF16)
        );
    }
}
