//! Prose is split at sentence ends before clause punctuation, words and characters: a long
//! one-paragraph Chinese answer is cut only after `。`, English prose after `. `.

use kernel_render::{MAX_CHUNK_UTF16, MIN_LIMIT_UTF16};
use proptest::prelude::*;

use crate::invariants;
use invariants::checked_render;

const IDEOGRAPHS: &[char] = &[
    '我', '们', '今', '天', '学', '习', '中', '文', '的', '句', '子',
];

/// One Chinese sentence of `len` ideographs with a comma or enumeration mark now and then,
/// ending with `。`.
fn sentence(len: usize, seed: usize) -> String {
    let mut out = String::new();
    for i in 0..len {
        out.push(IDEOGRAPHS[(seed + i * 7) % IDEOGRAPHS.len()]);
        if i % 13 == 12 && i + 1 < len {
            out.push(if i % 2 == 0 { '，' } else { '、' });
        }
    }
    out.push('。');
    out
}

/// A single paragraph of sentences of the given lengths, at least `total` characters long.
fn paragraph(lengths: &[usize], total: usize) -> String {
    let mut out = String::new();
    let mut n = 0;
    while out.chars().count() < total {
        out.push_str(&sentence(lengths[n % lengths.len()], n));
        n += 1;
    }
    out
}

fn assert_cut_after_sentences(text: &str, limit: usize) {
    let chunks = checked_render(text, limit);
    assert!(
        chunks.len() > 1,
        "{} chars in one chunk",
        text.chars().count()
    );
    for (index, chunk) in chunks.iter().enumerate() {
        assert!(
            chunk.plain.ends_with('。'),
            "chunk {index} of {} ends mid-sentence: …{}",
            chunks.len(),
            chunk
                .plain
                .chars()
                .rev()
                .take(20)
                .collect::<String>()
                .chars()
                .rev()
                .collect::<String>()
        );
    }
    let joined: String = chunks.iter().map(|c| c.plain.as_str()).collect();
    assert_eq!(joined, text, "nothing lost or repeated");
}

#[test]
fn a_one_paragraph_chinese_answer_of_12000_characters_splits_only_after_full_stops() {
    let text = paragraph(&[37, 120, 64, 9, 250, 88], 12_000);
    assert_cut_after_sentences(&text, MAX_CHUNK_UTF16);
}

#[test]
fn a_clause_mark_beats_a_cut_between_characters() {
    // One sentence longer than the limit: the cut falls after a clause mark, not mid-clause.
    let text = sentence(6_000, 3);
    let chunks = checked_render(&text, MAX_CHUNK_UTF16);
    assert_eq!(chunks.len(), 2);
    assert!(
        chunks[0].plain.ends_with(['，', '、']),
        "{}",
        chunks[0].plain.chars().rev().take(4).collect::<String>()
    );
}

#[test]
fn english_prose_splits_after_a_sentence_not_inside_one() {
    let text = "This is a sentence that goes on for a while, with commas, and words. "
        .repeat(200)
        .trim_end()
        .to_owned();
    let chunks = checked_render(&text, MAX_CHUNK_UTF16);
    assert!(chunks.len() > 1);
    for chunk in &chunks {
        assert!(chunk.plain.ends_with("words."), "{}", chunk.plain);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever the sentence lengths (each shorter than half the smallest limit), every chunk
    /// ends with a full stop.
    #[test]
    fn chinese_paragraphs_split_only_after_full_stops(
        lengths in prop::collection::vec(1usize..100, 1..12),
        limit in MIN_LIMIT_UTF16..1_200usize,
        total in 1_500usize..4_000,
    ) {
        let text = paragraph(&lengths, total);
        assert_cut_after_sentences(&text, limit);
    }
}
