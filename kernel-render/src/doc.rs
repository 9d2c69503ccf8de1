//! The rendered document: one string of visible text plus the styled spans that tile it, shared
//! by the splitter and the HTML / plain-text emitters.

use std::ops::Range;
use std::rc::Rc;

/// A formatting that Telegram's HTML parse mode can express. A span's styles are ordered from
/// the outermost element to the innermost, and are always valid nestings for Telegram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Style {
    /// `<blockquote>`; never nested.
    Quote,
    /// `<pre>`, or `<pre><code class="language-…">` with a language; contains no other style.
    Pre(Option<Rc<str>>),
    Bold,
    Italic,
    Strike,
    /// `<a href>` with an allowed, validated href; never contains `Code` or another link.
    Link(Rc<str>),
    /// Inline `<code>`; innermost, contains nothing.
    Code,
}

/// A span's styles, outermost first. Spans share them by reference.
pub(crate) type Styles = Rc<[Style]>;

/// A run of the document's text with one set of styles.
#[derive(Debug, Clone)]
pub(crate) struct Span {
    pub start: usize,
    pub end: usize,
    pub styles: Styles,
    /// Text only the plain fallback shows (a link's URL after its text). Glue always directly
    /// follows a non-whitespace character and is never cut from it.
    pub glue: bool,
}

/// A table's `pre` block with body rows: its header lines, repeated at the start of a chunk
/// that begins among the rows.
#[derive(Debug, Clone)]
pub(crate) struct TableMark {
    /// The header row and the rule under it, with the newline that ends the rule.
    pub header: Range<usize>,
    /// The table's end (the end of its last row).
    pub end: usize,
}

/// The whole reply as styled text. `spans` tile `text` exactly, in order.
#[derive(Debug, Default)]
pub(crate) struct Doc {
    pub text: String,
    pub spans: Vec<Span>,
    /// Ascending positions that should not end a chunk (right after a heading).
    pub keep_with_next: Vec<usize>,
    /// The tables with body rows, in document order.
    pub tables: Vec<TableMark>,
}

impl Doc {
    /// A document of one unstyled run of text.
    pub(crate) fn plain(text: &str) -> Self {
        let mut doc = Doc::default();
        doc.push(text, &Styles::from([]), false);
        doc
    }

    /// Appends `text` with `styles`, merging it into the previous span when they match.
    pub(crate) fn push(&mut self, text: &str, styles: &Styles, glue: bool) {
        if text.is_empty() {
            return;
        }
        let start = self.text.len();
        self.text.push_str(text);
        let end = self.text.len();
        if let Some(last) = self.spans.last_mut()
            && last.glue == glue
            && (Rc::ptr_eq(&last.styles, styles) || last.styles == *styles)
        {
            last.end = end;
            return;
        }
        self.spans.push(Span {
            start,
            end,
            styles: styles.clone(),
            glue,
        });
    }

    /// The index of the span holding byte `pos` (the last span when `pos` is the end).
    pub(crate) fn span_at(&self, pos: usize) -> usize {
        self.spans
            .partition_point(|span| span.end <= pos)
            .min(self.spans.len().saturating_sub(1))
    }

    /// Whether byte `pos` is inside a code block.
    pub(crate) fn in_pre(&self, pos: usize) -> bool {
        self.spans.get(self.span_at(pos)).is_some_and(|span| {
            span.styles
                .iter()
                .any(|style| matches!(style, Style::Pre(_)))
        })
    }

    /// The table (with body rows) whose text holds byte `pos`, if any.
    pub(crate) fn table_at(&self, pos: usize) -> Option<&TableMark> {
        let index = self.tables.partition_point(|table| table.end <= pos);
        self.tables
            .get(index)
            .filter(|table| table.header.start <= pos)
    }

    /// Whether byte `pos` is plain-only glue.
    pub(crate) fn is_glue(&self, pos: usize) -> bool {
        self.spans
            .get(self.span_at(pos))
            .is_some_and(|span| span.glue && span.start <= pos && pos < span.end)
    }

    /// Whether `range` holds a character the HTML shows that is not whitespace.
    pub(crate) fn has_visible(&self, range: std::ops::Range<usize>) -> bool {
        let first = self.span_at(range.start);
        self.spans[first.min(self.spans.len())..]
            .iter()
            .take_while(|span| span.start < range.end)
            .filter(|span| !span.glue)
            .any(|span| {
                let from = span.start.max(range.start);
                let to = span.end.min(range.end);
                from < to && self.text[from..to].chars().any(|c| !c.is_whitespace())
            })
    }
}
