//! Near-duplicate detection for memories: texts are normalised (lowercase; only letters and
//! digits kept, so punctuation and spaces, ASCII or full-width, do not count) and compared by the
//! Dice coefficient of their character bigrams, which works the same for Chinese (no word
//! boundaries) and for other languages.

use std::collections::HashSet;

/// Texts at least this similar are the same memory.
pub(crate) const THRESHOLD: f64 = 0.7;

/// `text` lowercased with everything but letters and digits removed.
pub(crate) fn normalise(text: &str) -> Vec<char> {
    text.chars()
        .flat_map(char::to_lowercase)
        .filter(|c| c.is_alphanumeric())
        .collect()
}

fn bigrams(chars: &[char]) -> HashSet<(char, char)> {
    match chars {
        [] => HashSet::new(),
        [c] => HashSet::from([(*c, '\0')]),
        _ => chars.windows(2).map(|w| (w[0], w[1])).collect(),
    }
}

/// The Dice coefficient (0–1) of the two texts' normalised character bigrams.
pub(crate) fn similarity(a: &str, b: &str) -> f64 {
    let (a, b) = (normalise(a), normalise(b));
    if a == b {
        return 1.0;
    }
    let (a, b) = (bigrams(&a), bigrams(&b));
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let common = a.intersection(&b).count();
    2.0 * common as f64 / (a.len() + b.len()) as f64
}

/// Whether `a` and `b` say the same thing (similarity at least [`THRESHOLD`]).
pub(crate) fn same(a: &str, b: &str) -> bool {
    similarity(a, b) >= THRESHOLD
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_duplicates_in_chinese_and_english() {
        assert!(same("主人喜欢喝乌龙茶", "主人喜欢喝乌龙茶。"));
        assert!(same("主人喜欢喝乌龙茶", "主人很喜欢喝乌龙茶"));
        assert!(same(
            "The owner's cat is named Miso.",
            "the owner’s cat is named Miso"
        ));
        assert!(!same("主人喜欢喝乌龙茶", "主人明天去上海出差"));
        assert!(!same(
            "The owner's cat is named Miso",
            "The owner works in Berlin"
        ));
        assert!(!same("", "x"));
    }
}
