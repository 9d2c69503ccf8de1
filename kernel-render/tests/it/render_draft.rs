//! Live previews of unfinished replies (`render::draft`): every prefix of every corpus document,
//! and of generated Markdown-ish documents with progress lines between their segments, is one
//! message of valid Telegram HTML (strict validator, 1..=4096 visible units) holding the tail
//! of the text so far.

use std::path::Path;

use crate::{markdownish, telegram_html};

use kernel_render::{DraftPart, draft};
use proptest::prelude::*;

/// The draft of `parts` must be valid and fit; `None` only when nothing visible was given.
fn checked(parts: &[DraftPart<'_>]) -> Option<String> {
    let html = draft(parts);
    if let Some(html) = &html
        && let Err(e) = telegram_html::validate(html)
    {
        panic!("invalid draft ({e}) of {parts:?}:\n{html}");
    }
    html
}

fn corpus() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/corpus");
    let mut docs: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|f| {
            let name = f.file_name().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(f.path()).unwrap())
        })
        .collect();
    docs.sort();
    docs
}

/// Every char boundary of short documents, about 300 evenly spaced ones of long ones.
fn cuts(doc: &str) -> Vec<usize> {
    let boundaries: Vec<usize> = doc
        .char_indices()
        .map(|(i, _)| i)
        .chain([doc.len()])
        .collect();
    let step = (boundaries.len() / 300).max(1);
    boundaries.into_iter().step_by(step).collect()
}

#[test]
fn every_prefix_of_the_corpus_drafts_to_valid_html() {
    let docs = corpus();
    assert!(docs.len() > 20);
    for (name, doc) in &docs {
        for cut in cuts(doc) {
            let prefix = &doc[..cut];
            let html = checked(&[DraftPart::Markdown(prefix)]);
            assert_eq!(
                html.is_some(),
                !prefix.trim().is_empty(),
                "{name} cut at {cut}"
            );
        }
    }
}

#[test]
fn cuts_inside_a_fence_a_table_and_a_link_are_closed_safely() {
    let fence = checked(&[DraftPart::Markdown("Run:\n\n```sh\necho '<x>' &&")]).unwrap();
    assert!(fence.ends_with("&amp;&amp;</code></pre>"), "{fence}");
    assert!(fence.contains("&lt;x&gt;"), "{fence}");
    checked(&[DraftPart::Markdown("| a | b |\n|---|--")]).unwrap();
    checked(&[DraftPart::Markdown("| a | b |\n|---|---|\n| 1 | **2")]).unwrap();
    let link = checked(&[DraftPart::Markdown("See [the docs](https://exa")]).unwrap();
    assert!(
        !link.contains("<a "),
        "an unfinished link stays text: {link}"
    );
    checked(&[DraftPart::Markdown("*emphasis that never ends and `code")]).unwrap();
}

#[test]
fn a_long_reply_keeps_its_tail_within_one_message() {
    let doc = (1..=800)
        .map(|n| format!("Paragraph {n} says something useful.\n\n"))
        .collect::<String>();
    let html = checked(&[
        DraftPart::Markdown(&doc),
        DraftPart::Html("🔧 <code>search</code>…"),
    ])
    .unwrap();
    assert!(html.ends_with("Paragraph 800 says something useful.\n\n🔧 <code>search</code>…"));
    assert!(!html.contains("Paragraph 1 "));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn any_prefix_with_progress_lines_drafts_to_valid_html(
        first in markdownish::document(120),
        second in markdownish::document(120),
        cut in 0.0f64..=1.0,
    ) {
        let at = second.floor_char_boundary((second.len() as f64 * cut) as usize);
        let parts = [
            DraftPart::Markdown(&first),
            DraftPart::Html("🔧 正在使用 <code>memory_search</code>…"),
            DraftPart::Markdown(&second[..at]),
        ];
        prop_assert!(checked(&parts).is_some());
    }
}
