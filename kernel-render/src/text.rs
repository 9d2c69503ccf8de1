//! Character-level facts the renderer needs: input clean-up, display width (CJK and emoji
//! count as 2 columns) and where CJK text may break between characters.

use std::borrow::Cow;

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// Normalises line endings to `\n` and drops characters Telegram would reject or strip:
/// C0/C1 controls other than tab and newline, and byte-order marks.
pub(crate) fn sanitize(input: &str) -> Cow<'_, str> {
    let clean = |c: char| c == '\n' || c == '\t' || !(c.is_control() || c == '\u{feff}');
    if input.chars().all(clean) {
        return Cow::Borrowed(input);
    }
    let mut out = String::with_capacity(input.len());
    let mut chars = input.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' {
            if chars.peek() != Some(&'\n') {
                out.push('\n');
            }
        } else if clean(c) {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Columns `s` takes in a monospace font: per grapheme cluster 0, 1 or 2 (wide CJK and emoji,
/// ZWJ sequences and flags included, take 2).
pub(crate) fn display_width(s: &str) -> usize {
    s.graphemes(true).map(grapheme_width).sum()
}

fn grapheme_width(grapheme: &str) -> usize {
    if grapheme.contains('\u{fe0f}') {
        return 2;
    }
    grapheme.width().min(2)
}

/// Whether `c` is a CJK ideograph, kana, hangul syllable or CJK/full-width punctuation: text
/// written without spaces, where a line may break between any two characters.
pub(crate) fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x2E80..=0x2FDF      // radicals
        | 0x3000..=0x303F    // CJK symbols and punctuation
        | 0x3040..=0x31FF    // kana, bopomofo, hangul compatibility jamo
        | 0x3400..=0x4DBF    // extension A
        | 0x4E00..=0x9FFF    // unified ideographs
        | 0xAC00..=0xD7AF    // hangul syllables
        | 0xF900..=0xFAFF    // compatibility ideographs
        | 0xFF00..=0xFFEF    // half- and full-width forms
        | 0x20000..=0x3FFFF) // extensions B and later
}

/// Whether text may break between `before` and `after` because of CJK rules: one side is CJK,
/// and the break does not leave closing punctuation at a line start or opening punctuation at a
/// line end.
pub(crate) fn cjk_break(before: char, after: char) -> bool {
    (is_cjk(before) || is_cjk(after)) && !closes(after) && !opens(before)
}

fn closes(c: char) -> bool {
    matches!(
        c,
        '。' | '，'
            | '、'
            | '．'
            | '！'
            | '？'
            | '；'
            | '：'
            | '）'
            | '」'
            | '』'
            | '】'
            | '》'
            | '〉'
            | '〕'
            | '…'
            | '・'
            | 'ー'
            | '々'
            | '〜'
            | '.'
            | ','
            | '!'
            | '?'
            | ';'
            | ':'
            | ')'
            | ']'
            | '}'
            | '%'
    )
}

fn opens(c: char) -> bool {
    matches!(
        c,
        '（' | '「' | '『' | '【' | '《' | '〈' | '〔' | '(' | '[' | '{'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_count_cjk_and_emoji_as_two() {
        assert_eq!(display_width("abc"), 3);
        assert_eq!(display_width("中文"), 4);
        assert_eq!(display_width("👍"), 2);
        assert_eq!(display_width("👨‍👩‍👧"), 2);
        assert_eq!(display_width("❤️"), 2);
        assert_eq!(display_width("🇯🇵"), 2);
        assert_eq!(display_width("e\u{301}"), 1);
    }

    #[test]
    fn sanitize_normalises_newlines_and_drops_controls() {
        assert_eq!(sanitize("a\r\nb\rc\u{0}d\u{7}\te"), "a\nb\ncd\te");
        assert_eq!(sanitize("\u{feff}x"), "x");
        assert!(matches!(sanitize("plain\ttext\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn cjk_breaks_respect_punctuation() {
        assert!(cjk_break('中', '文'));
        assert!(!cjk_break('中', '。'));
        assert!(!cjk_break('「', '中'));
        assert!(cjk_break('a', '中'));
        assert!(!cjk_break('a', 'b'));
    }
}
