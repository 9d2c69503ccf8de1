//! Splitting behaviour at Telegram's limit: exact boundaries, formatting closed and reopened
//! across cuts, grapheme clusters and surrogate pairs never cut, the plain fallback's URLs, a
//! table's header repeated in each chunk that continues it.

use crate::{invariants, telegram_html};

use kernel_render::{
    Chunk, MAX_CHUNK_UTF16, MIN_LIMIT_UTF16, render, render_with_limit, utf16_len,
};
use proptest::prelude::*;

use invariants::checked_render;

fn split(markdown: &str) -> Vec<kernel_render::Chunk> {
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
    use kernel_render::MAX_PLAIN_URL;
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

/// A GFM table of `rows` body rows: a right-aligned number, a name and a centred status.
fn long_table(rows: usize) -> String {
    let mut markdown = String::from("| # | name | status |\n|--:|------|:------:|\n");
    for row in 0..rows {
        let status = ["ok", "late", "失败"][row % 3];
        markdown.push_str(&format!(
            "| {row} | item number {row} of the list | {status} |\n"
        ));
    }
    markdown
}

/// The visible text of each chunk, validated.
fn visible(chunks: &[Chunk]) -> Vec<String> {
    chunks
        .iter()
        .map(|chunk| telegram_html::parse(&chunk.html).unwrap())
        .collect()
}

/// Checks the chunks of a document holding one table whose header lines are `header` (row and
/// rule, each with its newline): every chunk that continues the table opens its `pre` with the
/// header (in its HTML and its plain text), and the table's rows, header aside, appear exactly
/// once across the chunks, in order. Returns how many chunks repeated the header.
fn check_table_chunks(chunks: &[Chunk], header: &str, open: &str, rows: &[&str]) -> usize {
    let mut seen = Vec::new();
    let mut repeats = 0;
    let texts = visible(chunks);
    for (index, (chunk, text)) in chunks.iter().zip(&texts).enumerate() {
        let mut lines: Vec<&str> = text.lines().collect();
        let starts_in_table = rows.iter().any(|row| lines.first() == Some(row));
        let repeated = !header.is_empty() && text.starts_with(header) && index > 0;
        assert!(
            header.is_empty() || !starts_in_table,
            "chunk {index} starts without the header"
        );
        if repeated {
            repeats += 1;
            let escaped = header.replace('&', "&amp;").replace('<', "&lt;");
            assert!(chunk.html.starts_with(&format!("{open}{escaped}")));
            assert!(
                chunk.plain.starts_with(header),
                "plain twin of chunk {index}"
            );
            lines.drain(..2);
        }
        seen.extend(lines.into_iter().filter(|line| rows.contains(line)));
    }
    assert_eq!(seen, rows, "every row exactly once, in order");
    repeats
}

/// The header lines and body rows of the table that `markdown` renders to unsplit. A table
/// shown without a header (its header was blank) has an empty header and its rows after the
/// last blank line.
fn table_lines(markdown: &str) -> (String, Vec<String>) {
    let whole = visible(&render_with_limit(markdown, usize::MAX)).concat();
    let lines: Vec<&str> = whole.lines().collect();
    let rule = lines
        .iter()
        .position(|line| line.starts_with("--") && line.chars().all(|c| c == '-' || c == '+'));
    let (header, first_row) = match rule {
        Some(rule) => (format!("{}\n{}\n", lines[rule - 1], lines[rule]), rule + 1),
        None => {
            let blank = lines.iter().rposition(|line| line.trim().is_empty());
            (String::new(), blank.map_or(0, |blank| blank + 1))
        }
    };
    let rows = lines[first_row..]
        .iter()
        .take_while(|line| !line.trim().is_empty())
        .map(|line| line.to_string())
        .collect();
    (header, rows)
}

#[test]
fn a_long_table_repeats_its_header_in_every_continuation() {
    let markdown = long_table(200);
    let (header, rows) = table_lines(&markdown);
    assert_eq!(rows.len(), 200);
    assert!(header.starts_with("  # | name"), "{header:?}");
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    let chunks = split(&markdown);
    assert!(chunks.len() >= 2, "{} chunks", chunks.len());
    let repeats = check_table_chunks(&chunks, &header, "<pre>", &rows);
    assert_eq!(repeats, chunks.len() - 1);
    for chunk in &chunks {
        assert!(chunk.html.starts_with(&format!("<pre>{header}")));
        assert!(chunk.html.ends_with("</pre>"), "rows are never cut");
    }
}

#[test]
fn a_table_with_a_blank_header_shows_its_rows_without_header_or_rule() {
    let mut markdown = String::from("| | |\n|---|---|\n");
    for row in 0..80 {
        markdown.push_str(&format!("| key {row} | value number {row} |\n"));
    }
    let (header, rows) = table_lines(&markdown);
    assert_eq!(header, "");
    assert_eq!(rows.len(), 80);
    assert_eq!(rows[0], "key 0  | value number 0");
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    let chunks = checked_render(&markdown, 600);
    assert!(chunks.len() >= 2, "{} chunks", chunks.len());
    assert_eq!(check_table_chunks(&chunks, &header, "<pre>", &rows), 0);
    assert!(chunks.iter().all(|chunk| !chunk.plain.contains("--")));
}

#[test]
fn a_table_in_a_quote_among_paragraphs_repeats_its_header_only_in_the_table() {
    let words = "some words before the table ".repeat(6);
    let quoted: String = long_table(60).lines().map(|l| format!("> {l}\n")).collect();
    let markdown = format!(
        "{words}\n\n{quoted}\n{words}\n\n```\n{}```\n",
        long_table(30)
    );
    let (header, rows) = table_lines(&markdown);
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    for limit in [256, 300, 700, 1500] {
        let chunks = checked_render(&markdown, limit);
        let repeats = check_table_chunks(&chunks, &header, "<blockquote><pre>", &rows);
        assert!(repeats >= 1, "limit {limit}: {} chunks", chunks.len());
        let code_header = chunks
            .iter()
            .map(|c| c.plain.matches("| # | name | status |").count())
            .sum::<usize>();
        assert_eq!(
            code_header, 1,
            "limit {limit}: a code block's first line is not repeated"
        );
    }
}

#[test]
fn a_header_too_wide_to_repeat_with_a_row_is_shown_once() {
    let wide = "w".repeat(240);
    let mut markdown = format!("| n | {wide} |\n|---|---|\n");
    for row in 0..100 {
        markdown.push_str(&format!("| {row} | x |\n"));
    }
    let (header, rows) = table_lines(&markdown);
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    let chunks = checked_render(&markdown, MIN_LIMIT_UTF16);
    assert!(chunks.len() >= 3);
    for chunk in &chunks[1..] {
        assert!(
            !chunk.plain.contains(&wide),
            "header repeated: {:?}",
            chunk.plain
        );
    }
    let texts = visible(&chunks);
    let shown: Vec<&str> = texts.iter().flat_map(|t| t.lines()).collect();
    assert_eq!(
        shown.iter().filter(|l| rows.contains(l)).count(),
        rows.len()
    );
    let chunks = checked_render(&markdown, 1000);
    assert_eq!(check_table_chunks(&chunks, &header, "<pre>", &rows), 1);
}

#[test]
fn a_code_block_shaped_like_a_table_is_not_given_a_header() {
    let mut code = String::from("name | value\n-----+------\n");
    for row in 0..400 {
        code.push_str(&format!("key{row} | {row}\n"));
    }
    let chunks = split(&format!("```\n{code}```"));
    assert!(chunks.len() >= 2);
    for chunk in &chunks[1..] {
        assert!(chunk.html.starts_with("<pre>key"), "{}", &chunk.html[..40]);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_tables_split_with_their_header(
        cells in prop::collection::vec(prop::collection::vec("[a-z中👍 ]{0,6}", 1..5), 2..150),
        before in "[a-z ]{0,300}",
        limit in 256usize..1500,
    ) {
        let columns = cells[0].len();
        let line = |row: &[String]| format!("| {} |\n", row.join(" | "));
        let mut markdown = format!("{before}\n\n{}", line(&cells[0]));
        markdown.push_str(&format!("|{}\n", "---|".repeat(columns)));
        for (index, row) in cells[1..].iter().enumerate() {
            markdown.push_str(&line(&[format!("r{index}"), row.join(" ")]));
        }
        let (header, rows) = table_lines(&markdown);
        let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
        let chunks = checked_render(&markdown, limit);
        check_table_chunks(&chunks, &header, "<pre>", &rows);
    }
}
