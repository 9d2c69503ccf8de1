//! The bilingual lexicon of conversation search: the other language's words for a query term,
//! so that "doctor" also looks for 医生, and 牙医 for "dentist", without `[embeddings]`.
//!
//! Two sorted tab-separated files made mechanically from ECDICT (`data/make_lexicon.py`, see
//! `data/README.md`): English word → Chinese translations (an inflected form points at its
//! lemma, `=word`), Chinese word → English words. Both are embedded in the binary and searched
//! in place by bisection over their lines: read-only, file-backed pages touched only by a
//! search, nothing built on the heap. The Chinese translations are cut by the index's own
//! segmenter, so what is looked for is what the index holds.

use std::cmp::Ordering;

use crate::memory::segment;

/// English → Chinese: `word\tzh,zh,…` or `form\t=lemma`, sorted by bytes.
static EN_ZH: &str = include_str!("../../data/lexicon-en-zh.tsv");
/// Chinese → English: `词\tword,word,…`, sorted by bytes.
static ZH_EN: &str = include_str!("../../data/lexicon-zh-en.tsv");

/// At most this many other-language terms are added for one query term.
pub const MAX_PER_TERM: usize = 4;

/// The value of `key` in the sorted `table` (lines `key\tvalue`), by bisection over bytes.
fn lookup(table: &'static str, key: &str) -> Option<&'static str> {
    let bytes = table.as_bytes();
    let (mut lo, mut hi) = (0, bytes.len());
    // Invariant: the line holding `key`, if any, starts in [lo, hi).
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        // The start of the line that holds `mid`.
        let start = bytes[..mid]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1)
            .max(lo);
        let end = bytes[start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| start + i);
        let line = &table[start..end];
        let (k, value) = line.split_once('\t').unwrap_or((line, ""));
        match k.as_bytes().cmp(key.as_bytes()) {
            Ordering::Equal => return Some(value),
            Ordering::Less => lo = end + 1,
            Ordering::Greater => hi = start,
        }
    }
    None
}

/// The other language's search terms for one query `term` (already lower-cased and segmented
/// as the index is), at most [`MAX_PER_TERM`], without `term` itself. An English word gives
/// its Chinese translations as the index cuts them; a Chinese word its English words.
pub fn other_terms(term: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |t: String| {
        if t != term && !out.contains(&t) && out.len() < MAX_PER_TERM {
            out.push(t);
        }
    };
    if term.bytes().all(|b| b.is_ascii_lowercase()) {
        let Some(mut value) = lookup(EN_ZH, term) else {
            return Vec::new();
        };
        if let Some(lemma) = value.strip_prefix('=') {
            value = lookup(EN_ZH, lemma).unwrap_or_default();
        }
        for zh in value.split(',').filter(|z| !z.is_empty()) {
            // The translation as the index cuts it.
            for t in segment::query_terms(zh) {
                add(t);
            }
        }
    } else if let Some(value) = lookup(ZH_EN, term) {
        for en in value.split(',').filter(|e| !e.is_empty()) {
            add(en.to_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both tables are sorted by bytes with distinct keys and well-formed lines: bisection
    /// finds every key.
    #[test]
    fn the_tables_are_sorted_and_every_key_is_found() {
        for table in [EN_ZH, ZH_EN] {
            let mut last: Option<&str> = None;
            let mut n = 0;
            for line in table.lines() {
                let (key, value) = line.split_once('\t').expect("key\\tvalue");
                assert!(!key.is_empty() && !value.is_empty(), "{line:?}");
                if let Some(last) = last {
                    assert!(last.as_bytes() < key.as_bytes(), "{last:?} before {key:?}");
                }
                last = Some(key);
                n += 1;
                if n % 97 == 0 {
                    assert_eq!(lookup(table, key), Some(value), "{key:?}");
                }
            }
            assert!(n > 10_000, "{n} lines");
            assert_eq!(lookup(table, ""), None);
            assert_eq!(lookup(table, "\u{10FFFF}"), None);
        }
        // A lemma a form points at is in the table.
        for line in EN_ZH.lines() {
            if let Some((form, lemma)) = line.split_once("\t=") {
                assert!(lookup(EN_ZH, lemma).is_some(), "{form} -> {lemma}");
            }
        }
    }

    #[test]
    fn english_words_give_chinese_terms_and_back() {
        assert!(other_terms("doctor").contains(&"医生".to_owned()));
        // An inflected form reads as its lemma.
        assert_eq!(other_terms("meetings"), other_terms("meeting"));
        assert!(other_terms("meeting").contains(&"会议".to_owned()));
        assert!(other_terms("牙医").contains(&"dentist".to_owned()));
        assert!(other_terms("书").contains(&"book".to_owned()));
    }

    #[test]
    fn unknown_words_and_odd_input_give_nothing_and_never_panic() {
        for term in [
            "",
            "qwxzv",
            "192",
            "a\tb",
            "\"",
            "ß",
            "😀",
            "dentist\n",
            "🙂牙医",
        ] {
            let out = other_terms(term);
            assert!(out.len() <= MAX_PER_TERM, "{term:?}: {out:?}");
            assert!(!out.iter().any(|t| t == term));
        }
        assert!(other_terms("qwxzv").is_empty());
    }
}
