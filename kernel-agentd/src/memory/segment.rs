//! Word segmentation for memory search: jieba (search mode) for both the indexed text and the
//! queries, and FTS5 query building in which every term is a quoted string token — user text is
//! never interpreted as FTS5 query syntax.
//!
//! The dictionary is jieba's own, cut to its 60,000 most frequent words
//! (`data/jieba-dict-60k.txt`, see `data/README.md`; ~98% of the full dictionary's search-mode
//! words on Chinese prose, the rest fall to jieba's HMM for unknown words), compiled at build
//! time into an FST embedded in the binary ([`dict`]): read-only, file-backed pages, nothing
//! built on the heap, nothing to load or release. [`cut`] segments over it exactly as jieba-rs
//! does over its heap trie (`same_cuts` proves it on the project's sets). Index and queries use
//! the same dictionary; when it changes, [`SEGMENTER`] changes and the index is rebuilt at
//! start-up.

use std::collections::HashSet;

mod cut;
mod dict;
mod hmm;
#[cfg(test)]
mod same_cuts;

/// Names the dictionary the index was built with: a different value rebuilds the index.
/// (The static segmenter cuts as the jieba-rs one did, so the name is unchanged.)
pub const SEGMENTER: &str = "jieba-search/dict-60k-v1";

/// Kept for callers that prepared the segmenter before using it: the dictionary is static data
/// now, so there is nothing to load and this returns at once.
pub async fn ready() {}

/// At most this many characters of a query are segmented (recall queries are whole messages).
pub const MAX_QUERY_CHARS: usize = 2_000;
/// At most this many distinct terms of a query are used.
pub const MAX_QUERY_TERMS: usize = 32;

/// Words too common to narrow a search (space-separated); dropped from queries that have other
/// terms.
const STOPWORDS: &str = "的 了 是 我 你 他 她 它 们 我们 你们 他们 吗 呢 吧 啊 呀 和 与 跟 在 也 就 都 而 \
    及 或 把 被 这 那 这个 那个 一个 有 没有 不 要 会 能 很 还 又 请 帮 帮我 什么 怎么 怎么样 a \
    an the is are was were be to of and or in on at for with it this that i you me my do does what how";

/// The words of `text` in jieba's search mode, lower-cased, without pure punctuation/space.
fn words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    cut::cut_for_search(text, |w| {
        let w = w.trim();
        if w.chars().any(char::is_alphanumeric) {
            words.push(w.to_lowercase());
        }
    });
    words
}

/// What the FTS5 index stores for a memory: its words separated by spaces.
pub fn index_terms(text: &str) -> String {
    words(text).join(" ")
}

/// The distinct search terms of `query` in order (the first [`MAX_QUERY_CHARS`] characters,
/// at most [`MAX_QUERY_TERMS`] terms); stopwords are dropped unless nothing else remains.
pub fn query_terms(query: &str) -> Vec<String> {
    let query = kernel_common::text::head(query, MAX_QUERY_CHARS);
    let mut seen = HashSet::new();
    let all: Vec<String> = words(query)
        .into_iter()
        .filter(|w| seen.insert(w.clone()))
        .collect();
    let content: Vec<String> = all.iter().filter(|w| !is_stopword(w)).cloned().collect();
    let mut terms = if content.is_empty() { all } else { content };
    terms.truncate(MAX_QUERY_TERMS);
    terms
}

fn is_stopword(word: &str) -> bool {
    STOPWORDS.split_whitespace().any(|s| s == word)
}

/// How the terms of an FTS5 query are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    And,
    Or,
}

/// An FTS5 query over `terms`: each term a quoted string (inner `"` doubled), joined by
/// `AND`/`OR`. Quoted strings are never operators, column filters, prefixes or `NEAR` groups.
pub fn match_expr(terms: &[String], how: Combine) -> String {
    let op = match how {
        Combine::And => " AND ",
        Combine::Or => " OR ",
    };
    terms
        .iter()
        .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(op)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chinese_is_segmented_into_words() {
        let terms = index_terms("北京明天的天气怎么样");
        let words: Vec<&str> = terms.split(' ').collect();
        assert!(
            words.contains(&"天气") && words.contains(&"北京"),
            "{terms}"
        );
        assert_eq!(query_terms("北京天气"), ["北京", "天气"]);
    }

    #[test]
    fn queries_drop_punctuation_stopwords_and_duplicates() {
        assert_eq!(query_terms("北京的天气，北京！"), ["北京", "天气"]);
        assert_eq!(query_terms("The Cat"), ["cat"]);
        assert_eq!(query_terms("the"), ["the"]);
        assert!(query_terms("\"*( :").is_empty());
    }

    #[test]
    fn queries_are_bounded() {
        let long: String = (0..5_000).map(|i| format!("w{i} ")).collect();
        assert!(query_terms(&long).len() <= MAX_QUERY_TERMS);
        assert!(query_terms(&"天".repeat(100_000)).len() <= MAX_QUERY_TERMS);
    }

    #[test]
    fn every_term_is_a_quoted_string() {
        let terms = vec!["near(".to_string(), "a\"b".to_string(), "or".to_string()];
        assert_eq!(
            match_expr(&terms, Combine::And),
            r#""near(" AND "a""b" AND "or""#
        );
        assert_eq!(match_expr(&terms[2..], Combine::Or), r#""or""#);
    }
}
