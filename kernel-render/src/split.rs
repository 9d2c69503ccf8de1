//! Where a long reply is cut. Each chunk takes as much as fits in the limit (counted in UTF-16
//! units, for the HTML's visible text and for the plain text alike), ending at the best boundary
//! available: between blocks, then between lines, then after a sentence's end (`。！？；`, or
//! `.!?;` followed by a space), then after clause punctuation (`，、：`), each if that fills at
//! least half the limit; then the latest block, line or word boundary (CJK text breaks between
//! characters), and only then inside a word at a grapheme boundary. In code, a line that starts unindented counts as a
//! block boundary; a heading's end counts only as a word boundary, so a heading stays with its
//! section. Whitespace at a cut is dropped, except a code line's indentation at a chunk start.
//!
//! In a table, only the ends of body rows are line boundaries; a cut inside a row or inside the
//! header (header row and rule) ranks below any word boundary, so rows stay whole whenever one
//! fits. A chunk that starts among a table's rows repeats the table's header lines first
//! (counted in the limit), unless the header and that first row together do not fit.

use std::ops::Range;

use unicode_segmentation::UnicodeSegmentation;

use super::doc::Doc;
use super::text::cjk_break;
use super::utf16_len;

/// How good a cut is, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    /// Before a blank line: between paragraphs, list blocks, code blocks.
    Block = 0,
    /// Before a newline.
    Line = 1,
    /// After a sentence's end: `。！？；` (full-width `！？；` too), or `.!?;` before a space.
    Sentence = 2,
    /// After clause punctuation: `，、：` (and full-width `，：`).
    Clause = 3,
    /// Before a space, or between CJK characters.
    Word = 4,
    /// A word boundary inside a table row, or any boundary inside a table's header.
    Cell = 5,
    /// Between grapheme clusters inside a word.
    Grapheme = 6,
    /// Between characters inside a grapheme cluster (only for clusters longer than the limit).
    Char = 7,
}

/// The latest cut of each class seen so far: (byte position, UTF-16 units before it).
type Best = [Option<(usize, usize)>; 8];

/// Characters that end a sentence wherever they stand (CJK text has no space after them).
const CJK_SENTENCE_ENDS: [char; 5] = ['。', '！', '？', '；', '｡'];
/// Characters that end a sentence when a space follows.
const ASCII_SENTENCE_ENDS: [char; 4] = ['.', '!', '?', ';'];
/// Clause punctuation a cut may follow.
const CLAUSE_ENDS: [char; 5] = ['，', '、', '：', '､', '︰'];

/// One chunk's worth of the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Piece {
    /// A table's header lines to show first, when the chunk starts among the table's rows.
    pub header: Option<Range<usize>>,
    /// The chunk's own text.
    pub body: Range<usize>,
}

impl Piece {
    /// The ranges of `doc.text` the chunk shows, in order.
    pub(crate) fn ranges(&self) -> Vec<Range<usize>> {
        self.header.iter().chain([&self.body]).cloned().collect()
    }
}

/// The pieces of `doc.text` to send as chunks, in order. Each body starts and ends at a
/// non-whitespace character (a code line may start with its indentation) and has visible text;
/// each piece, header included, fits in `limit`.
pub(crate) fn pieces(doc: &Doc, limit: usize) -> Vec<Piece> {
    let boundaries = grapheme_boundaries(&doc.text);
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < doc.text.len() {
        let start = skip_leading(doc, pos);
        if start >= doc.text.len() {
            break;
        }
        let header = repeated_header(doc, start, limit);
        let header_units = header
            .as_ref()
            .map_or(0, |range| utf16_len(&doc.text[range.clone()]));
        let end = choose_end(doc, &boundaries, start, limit - header_units);
        let trimmed = start + doc.text[start..end].trim_end().len();
        if doc.has_visible(start..trimmed) {
            out.push(Piece {
                header,
                body: start..trimmed,
            });
        }
        pos = end.max(start + 1);
        while pos < doc.text.len() && !doc.text.is_char_boundary(pos) {
            pos += 1;
        }
    }
    out
}

/// The header to repeat before a chunk starting at `start`: the header of the table whose body
/// rows `start` begins a line of, if the header and that row fit in `limit` together. (Counts
/// hold for the HTML and the plain text alike: tables hold no glue.)
fn repeated_header(doc: &Doc, start: usize, limit: usize) -> Option<Range<usize>> {
    let header = doc.table_at(start)?.header.clone();
    if start < header.end || !doc.text[..start].ends_with('\n') {
        return None;
    }
    let row_end = doc.text[start..]
        .find('\n')
        .map_or(doc.text.len(), |index| start + index);
    let fits = utf16_len(&doc.text[header.clone()]) + utf16_len(&doc.text[start..row_end]) <= limit;
    fits.then_some(header)
}

/// `bits[i]` is true when byte `i` starts a grapheme cluster (or is the end of the text).
fn grapheme_boundaries(text: &str) -> Vec<bool> {
    let mut bits = vec![false; text.len() + 1];
    for (index, _) in text.grapheme_indices(true) {
        bits[index] = true;
    }
    bits[text.len()] = true;
    bits
}

/// Skips the whitespace at a cut; inside a code block only newlines, keeping indentation.
fn skip_leading(doc: &Doc, mut pos: usize) -> usize {
    while let Some(c) = doc.text[pos..].chars().next() {
        if !c.is_whitespace() || doc.is_glue(pos) || (c != '\n' && doc.in_pre(pos)) {
            break;
        }
        pos += c.len_utf8();
    }
    pos
}

/// The end of the chunk that starts at `start`.
fn choose_end(doc: &Doc, boundaries: &[bool], start: usize, limit: usize) -> usize {
    let text = &doc.text;
    let (mut html, mut plain) = (0usize, 0usize);
    let mut best: Best = [None; 8];
    let mut span = doc.span_at(start);
    let mut prev: Option<char> = None;
    for (offset, c) in text[start..].char_indices() {
        let pos = start + offset;
        while doc.spans[span].end <= pos {
            span += 1;
        }
        let glue = doc.spans[span].glue;
        if let (Some(before), false) = (prev, glue) {
            let class = classify(doc, boundaries, pos, before, c);
            let units = html.max(plain);
            best[class as usize] = Some((pos, units));
            if class != Class::Char {
                best[Class::Char as usize] = Some((pos, units));
            }
        }
        let units = c.len_utf16();
        plain += units;
        if !glue {
            html += units;
        }
        if html > limit || plain > limit {
            return pick(&best, limit).unwrap_or_else(|| forced_end(doc, pos));
        }
        prev = Some(c);
    }
    text.len()
}

/// The class of a cut at `pos`, between `before` and `c`.
fn classify(doc: &Doc, boundaries: &[bool], pos: usize, before: char, c: char) -> Class {
    let class = classify_text(doc, boundaries, pos, before, c);
    if !matches!(
        class,
        Class::Block | Class::Line | Class::Sentence | Class::Clause | Class::Word
    ) {
        return class;
    }
    match doc.table_at(pos) {
        Some(table) if pos < table.header.end || class >= Class::Sentence => Class::Cell,
        Some(_) => Class::Line,
        None => class,
    }
}

/// The class of a cut at `pos` by the text around it alone.
fn classify_text(doc: &Doc, boundaries: &[bool], pos: usize, before: char, c: char) -> Class {
    let text = &doc.text;
    if !boundaries[pos] {
        return Class::Char;
    }
    if c.is_whitespace() && !before.is_whitespace() {
        let run = text[pos..]
            .char_indices()
            .find(|(_, c)| !c.is_whitespace())
            .map_or(text.len() - pos, |(index, _)| index);
        let newlines = text[pos..pos + run].matches('\n').count();
        let unindented = text[..pos + run].ends_with('\n');
        return match newlines {
            0 if ASCII_SENTENCE_ENDS.contains(&before) && !doc.in_pre(pos) => Class::Sentence,
            0 => Class::Word,
            _ if doc.keep_with_next.binary_search(&pos).is_ok() => Class::Word,
            1 if unindented && doc.in_pre(pos) => Class::Block,
            1 => Class::Line,
            _ => Class::Block,
        };
    }
    // Code keeps the plain word rules: punctuation there is not prose.
    if cjk_break(before, c) && !doc.in_pre(pos) {
        if CJK_SENTENCE_ENDS.contains(&before) {
            return Class::Sentence;
        }
        if CLAUSE_ENDS.contains(&before) {
            return Class::Clause;
        }
    }
    if cjk_break(before, c) {
        Class::Word
    } else {
        Class::Grapheme
    }
}

/// The best recorded cut: a block, line, sentence or clause boundary (in that order) that fills at
/// least half the limit, else the latest block, line or word boundary, else the latest cell,
/// grapheme or character boundary.
fn pick(best: &Best, limit: usize) -> Option<usize> {
    let half = limit / 2;
    for class in [Class::Block, Class::Line, Class::Sentence, Class::Clause] {
        if let Some((pos, units)) = best[class as usize]
            && units >= half
        {
            return Some(pos);
        }
    }
    let soft = [
        Class::Block,
        Class::Line,
        Class::Sentence,
        Class::Clause,
        Class::Word,
    ]
    .iter()
    .filter_map(|class| best[*class as usize])
    .max_by_key(|(pos, _)| *pos);
    soft.or(best[Class::Cell as usize])
        .or(best[Class::Grapheme as usize])
        .or(best[Class::Char as usize])
        .map(|(pos, _)| pos)
}

/// No cut fitted (only possible with glue longer than the limit, which the limits rule out):
/// end after the glue that follows `pos`, so the splitter still makes progress.
fn forced_end(doc: &Doc, pos: usize) -> usize {
    let mut end = pos;
    while let Some(c) = doc.text[end..].chars().next() {
        end += c.len_utf8();
        if !doc.is_glue(end) {
            break;
        }
    }
    end
}

#[cfg(test)]
mod tests {
    use super::super::doc::TableMark;
    use super::*;

    #[test]
    fn picks_a_half_full_block_boundary_over_a_later_word() {
        let mut best: Best = [None; 8];
        best[Class::Block as usize] = Some((60, 60));
        best[Class::Word as usize] = Some((99, 99));
        assert_eq!(pick(&best, 100), Some(60));
        best[Class::Block as usize] = Some((10, 10));
        assert_eq!(pick(&best, 100), Some(99));
        best[Class::Word as usize] = None;
        best[Class::Grapheme as usize] = Some((100, 100));
        assert_eq!(pick(&best, 100), Some(10));
    }

    #[test]
    fn whitespace_runs_classify_by_newlines() {
        let mut doc = Doc::plain("a b\nc\n\nd中文");
        let bits = grapheme_boundaries(&doc.text);
        assert_eq!(classify(&doc, &bits, 1, 'a', ' '), Class::Word);
        assert_eq!(classify(&doc, &bits, 3, 'b', '\n'), Class::Line);
        assert_eq!(classify(&doc, &bits, 5, 'c', '\n'), Class::Block);
        assert_eq!(classify(&doc, &bits, 11, '中', '文'), Class::Word);
        doc.keep_with_next.push(5);
        assert_eq!(classify(&doc, &bits, 5, 'c', '\n'), Class::Word);
    }

    #[test]
    fn sentence_and_clause_ends_classify_between_line_and_word() {
        let doc = Doc::plain("好。再见，明天！Yes. No, ok");
        let bits = grapheme_boundaries(&doc.text);
        let at = |needle: &str| doc.text.find(needle).unwrap();
        let class = |pos: usize| {
            let before = doc.text[..pos].chars().next_back().unwrap();
            let c = doc.text[pos..].chars().next().unwrap();
            classify(&doc, &bits, pos, before, c)
        };
        assert_eq!(class(at("再")), Class::Sentence, "after 。");
        assert_eq!(class(at("明")), Class::Clause, "after ，");
        assert_eq!(class(at("见")), Class::Word, "between ideographs");
        assert_eq!(class(at("Yes")), Class::Sentence, "after ！");
        assert_eq!(class(at(" No")), Class::Sentence, "a space after .");
        assert_eq!(
            class(at(" ok")),
            Class::Word,
            "a comma then a space is a word cut"
        );
        let code = Doc {
            spans: vec![super::super::doc::Span {
                start: 0,
                end: "a. b".len(),
                styles: std::rc::Rc::from([super::super::doc::Style::Pre(None)]),
                glue: false,
            }],
            text: "a. b".into(),
            ..Doc::default()
        };
        let bits = grapheme_boundaries(&code.text);
        assert_eq!(
            classify(&code, &bits, 2, '.', ' '),
            Class::Word,
            "code is not prose"
        );
    }

    #[test]
    fn a_half_full_sentence_end_beats_a_later_clause_or_word() {
        let mut best: Best = [None; 8];
        best[Class::Sentence as usize] = Some((60, 60));
        best[Class::Clause as usize] = Some((90, 90));
        best[Class::Word as usize] = Some((99, 99));
        assert_eq!(pick(&best, 100), Some(60));
        best[Class::Sentence as usize] = Some((40, 40));
        assert_eq!(pick(&best, 100), Some(90));
        best[Class::Line as usize] = Some((55, 55));
        assert_eq!(pick(&best, 100), Some(55), "a line end still comes first");
    }

    #[test]
    fn table_rows_end_at_lines_and_their_insides_rank_below_words() {
        let mut doc = Doc::plain("a | b\n--+--\n1 | 2\n3 | 4\n\nz");
        doc.tables.push(TableMark {
            header: 0..12,
            end: 23,
        });
        let bits = grapheme_boundaries(&doc.text);
        assert_eq!(classify(&doc, &bits, 1, 'a', ' '), Class::Cell);
        assert_eq!(classify(&doc, &bits, 5, 'b', '\n'), Class::Cell);
        assert_eq!(classify(&doc, &bits, 11, '-', '\n'), Class::Cell);
        assert_eq!(classify(&doc, &bits, 13, '1', ' '), Class::Cell);
        assert_eq!(classify(&doc, &bits, 17, '2', '\n'), Class::Line);
        assert_eq!(classify(&doc, &bits, 23, '4', '\n'), Class::Block);
        assert_eq!(repeated_header(&doc, 18, 256), Some(0..12));
        assert_eq!(repeated_header(&doc, 12, 256), Some(0..12));
        assert_eq!(repeated_header(&doc, 6, 256), None, "inside the header");
        assert_eq!(repeated_header(&doc, 20, 256), None, "not at a row start");
        assert_eq!(
            repeated_header(&doc, 18, 16),
            None,
            "header and row do not fit"
        );
        assert_eq!(repeated_header(&doc, 18, 17), Some(0..12));
    }
}
