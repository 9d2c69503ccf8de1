//! Property tests for the Telegram renderer over arbitrary Markdown-ish text: no panic, every
//! chunk valid per the strict validator and within the limit, visible and plain text preserved
//! across chunks (modulo whitespace at the cuts), zero chunks exactly for blank input.

use crate::{invariants, markdownish};

use kernel_render::{MAX_CHUNK_UTF16, render};
use proptest::prelude::*;

use invariants::checked_render;

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn markdownish_text_renders_within_the_rules(
        markdown in markdownish::document(80),
        limit in 256usize..1200,
    ) {
        checked_render(&markdown, limit);
        checked_render(&markdown, MAX_CHUNK_UTF16);
    }

    #[test]
    fn arbitrary_text_renders_within_the_rules(markdown in "\\PC{0,400}", limit in 256usize..600) {
        checked_render(&markdown, limit);
    }

}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn long_documents_split_within_the_limit(markdown in markdownish::document(600)) {
        let chunks = checked_render(&markdown, MAX_CHUNK_UTF16);
        prop_assert_eq!(chunks, render(&markdown));
    }
}
