//! Cutting text for people and logs, under one rule: a cut is marked with a single `…` (never
//! `...`), placed right after the kept characters; text that fits is returned unchanged.
//! Lengths count characters (`char`s), never bytes, so a cut never splits a character.

use std::borrow::Cow;

/// The mark of a cut.
pub const ELLIPSIS: char = '…';

/// The first `n` characters of `s` (all of it when shorter), unmarked: for cuts the reader is
/// told about otherwise, or that are not shown to anyone.
pub fn head(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((at, _)) => &s[..at],
        None => s,
    }
}

/// `s` cut after `keep` characters, marked with `…` when anything was cut (so at most
/// `keep + 1` characters).
pub fn truncate(s: &str, keep: usize) -> Cow<'_, str> {
    let kept = head(s, keep);
    if kept.len() == s.len() {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(format!("{kept}{ELLIPSIS}"))
    }
}

/// `s` in at most `max` (≥ 1) characters, the `…` of a cut included.
pub fn fit(s: &str, max: usize) -> Cow<'_, str> {
    if head(s, max).len() == s.len() {
        Cow::Borrowed(s)
    } else {
        truncate(s, max.saturating_sub(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_counts_characters() {
        assert_eq!(head("你好世界", 2), "你好");
        assert_eq!(head("ab", 5), "ab");
        assert_eq!(head("ab", 0), "");
    }

    #[test]
    fn truncate_keeps_n_characters_and_marks_the_cut() {
        assert_eq!(truncate("你好世界", 2), "你好…");
        assert_eq!(truncate("你好", 2), "你好");
        assert!(matches!(truncate("abc", 3), Cow::Borrowed("abc")));
        assert_eq!(truncate("abc", 0), "…");
    }

    #[test]
    fn fit_stays_within_max_with_the_mark() {
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abcd", 4), "abcd");
        assert_eq!(fit("长长长长长", 3).chars().count(), 3);
    }
}
