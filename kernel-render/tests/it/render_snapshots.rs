//! Snapshot tests of the Telegram renderer over a corpus of realistic model replies
//! (`tests/it/corpus/*.md`) and generated long ones. Every case is also checked against the
//! renderer's contract (strict HTML validator, limits, text preserved across chunks).
//! Snapshots live in `tests/it/snapshots/`; review changes with `cargo insta review`.

use crate::{invariants, telegram_html};

use std::fmt::Write;

use kernel_render::{Chunk, MAX_CHUNK_UTF16, utf16_len};

use invariants::checked_render;

/// Every chunk in full: its HTML and its plain fallback.
fn show(chunks: &[Chunk]) -> String {
    let mut out = format!("chunks: {}\n", chunks.len());
    for (index, chunk) in chunks.iter().enumerate() {
        let visible = telegram_html::parse(&chunk.html).expect("validated");
        let n = index + 1;
        let (html_len, plain_len) = (utf16_len(&visible), utf16_len(&chunk.plain));
        let _ = write!(
            out,
            "--- {n} html ({html_len} UTF-16) ---\n{}\n",
            chunk.html
        );
        let _ = write!(
            out,
            "--- {n} plain ({plain_len} UTF-16) ---\n{}\n",
            chunk.plain
        );
    }
    out
}

/// For long replies: each chunk's lengths and the first and last 100 characters of its HTML.
fn summary(chunks: &[Chunk]) -> String {
    let mut out = format!("chunks: {}\n", chunks.len());
    for (index, chunk) in chunks.iter().enumerate() {
        let visible = telegram_html::parse(&chunk.html).expect("validated");
        let chars: Vec<char> = chunk.html.chars().collect();
        let head: String = chars.iter().take(100).collect();
        let tail: String = chars[chars.len().saturating_sub(100)..].iter().collect();
        let _ = write!(
            out,
            "--- {} html ({} UTF-16, {} lines), plain ({} UTF-16) ---\n{head}\n[…]\n{tail}\n",
            index + 1,
            utf16_len(&visible),
            chunk.html.lines().count(),
            utf16_len(&chunk.plain),
        );
    }
    out
}

macro_rules! corpus {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            let markdown = include_str!(concat!("corpus/", stringify!($name), ".md"));
            let chunks = checked_render(markdown, MAX_CHUNK_UTF16);
            insta::assert_snapshot!(stringify!($name), show(&chunks));
        }
    )*};
}

corpus!(
    greeting_zh,
    nested_lists,
    table_cjk,
    code_with_html,
    links_special,
    email_autolinks,
    emoji_zwj,
    headings_all_levels,
    task_list,
    blockquote_code,
    latex_ish,
    chinese_no_spaces,
    rust_explanation,
    shell_commands,
    comparison_table,
    raw_html_reply,
    image_markdown,
    footnotes,
    rules_and_emphasis,
    nested_blockquote,
    gfm_alerts,
    ordered_list_start,
    loose_list,
    bare_urls,
    indented_code,
    json_code,
    list_with_code,
    mixed_languages,
    special_characters,
    math_symbols_unicode,
    reference_definition_only,
);

/// A long, varied answer: headings, prose with links, lists, code, a table, quotes.
fn long_reply(min_chars: usize) -> String {
    let mut out = String::from("# Migration guide\n\nThis covers every step, in order.\n\n");
    let mut n = 1;
    while out.chars().count() < min_chars {
        let _ = write!(
            out,
            "## Step {n}\n\n\
             Stop the service and run the migration for **stage {n}**. It rewrites the `messages` \
             table in place; see [the notes](https://example.com/notes?stage={n}&v=2) if `x < y`. \
             Expect a short pause while the index rebuilds, then verify the row counts match.\n\n\
             - check `journalctl -u kernel` for errors\n\
             - keep the backup until step {} finishes\n\n\
             ```sql\nSELECT count(*) FROM messages WHERE session_id < {n} AND role <> 'tool';\n```\n\n\
             > 注意：第 {n} 步完成之前不要删除备份。\n\n",
            n + 1
        );
        n += 1;
    }
    out.push_str("That's all — reply **done** when finished.\n");
    out
}

#[test]
fn long_reply_20k() {
    let markdown = long_reply(20_000);
    let chunks = checked_render(&markdown, MAX_CHUNK_UTF16);
    assert!(chunks.len() >= 5, "{} chunks", chunks.len());
    insta::assert_snapshot!("long_reply_20k", summary(&chunks));
}

#[test]
fn code_block_10k() {
    let mut markdown = String::from("```python\n");
    let mut n = 0;
    while markdown.len() < 10_000 {
        let _ = writeln!(
            markdown,
            "def handler_{n}(event):\n    if event.size < {n} and event.kind != \"<none>\":\n        return {{\"ok\": True, \"n\": {n}}}"
        );
        n += 1;
    }
    markdown.push_str("```\n");
    let chunks = checked_render(&markdown, MAX_CHUNK_UTF16);
    assert_eq!(chunks.len(), 3);
    let source: Vec<&str> = markdown.lines().collect();
    for chunk in &chunks {
        assert!(
            chunk
                .html
                .starts_with("<pre><code class=\"language-python\">")
        );
        assert!(chunk.html.ends_with("</code></pre>"));
        // Cut between lines, indentation kept: first and last lines are whole source lines.
        let first = chunk.plain.lines().next().unwrap_or_default();
        let last = chunk.plain.lines().last().unwrap_or_default();
        assert!(
            source.contains(&first) && source.contains(&last),
            "{first:?} … {last:?}"
        );
    }
    insta::assert_snapshot!("code_block_10k", summary(&chunks));
}

#[test]
fn chinese_without_spaces_fills_chunks() {
    let paragraph = include_str!("corpus/chinese_no_spaces.md").trim();
    let markdown = paragraph.repeat(40);
    let chunks = checked_render(&markdown, MAX_CHUNK_UTF16);
    for chunk in &chunks[..chunks.len() - 1] {
        assert!(
            utf16_len(&chunk.plain) > 4000,
            "over-split: {}",
            utf16_len(&chunk.plain)
        );
    }
    insta::assert_snapshot!("chinese_long", summary(&chunks));
}

#[test]
fn long_table_stays_a_table_in_every_chunk() {
    let mut markdown = String::from("| # | 名前 | status |\n|--:|---|:-:|\n");
    for n in 0..300 {
        let _ = writeln!(
            markdown,
            "| {n} | 項目{n} | {} |",
            ["ok", "⚠️ late", "失败"][n % 3]
        );
    }
    let chunks = checked_render(&markdown, MAX_CHUNK_UTF16);
    assert!(chunks.len() >= 2);
    for chunk in &chunks {
        assert!(chunk.html.starts_with("<pre>") && chunk.html.ends_with("</pre>"));
    }
    insta::assert_snapshot!("long_table", summary(&chunks));
}

#[test]
fn giant_word_is_cut_only_as_a_last_resort() {
    let token = "QUJD".repeat(2500);
    let markdown = format!("Your key is:\n\n{token}\n\nKeep it safe.");
    let chunks = checked_render(&markdown, MAX_CHUNK_UTF16);
    insta::assert_snapshot!("giant_word", summary(&chunks));
}

#[test]
fn blank_replies_render_to_nothing() {
    for blank in ["", " ", "\n\n\t  \n", "\u{feff}\r\n", "\u{3000}"] {
        assert!(
            checked_render(blank, MAX_CHUNK_UTF16).is_empty(),
            "{blank:?}"
        );
    }
}
