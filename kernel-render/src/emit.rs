//! Turning pieces of the document into Telegram HTML (tags opened and closed around each span,
//! so formatting cut by a chunk boundary is closed before it and reopened after it) and into the
//! plain-text fallback. A chunk is one or more ranges shown one after another (a table's
//! repeated header, then the chunk's own text).

use std::ops::Range;

use super::doc::{Doc, Style};

/// Telegram HTML for `ranges` of `doc`, in order; every tag opened in it is closed in it, and
/// formatting that continues from one range into the next stays open.
pub(crate) fn html(doc: &Doc, ranges: &[Range<usize>]) -> String {
    let bytes: usize = ranges.iter().map(Range::len).sum();
    let mut out = String::with_capacity(bytes + bytes / 8 + 32);
    let mut open: &[Style] = &[];
    for range in ranges {
        open = html_range(doc, range.clone(), open, &mut out);
    }
    for style in open.iter().rev() {
        close_tag(style, &mut out);
    }
    out
}

/// Appends `range` of `doc` to `out`, starting with `open` styles open; returns the styles left
/// open.
fn html_range<'a>(
    doc: &'a Doc,
    range: Range<usize>,
    mut open: &'a [Style],
    out: &mut String,
) -> &'a [Style] {
    let first = doc.span_at(range.start);
    for span in doc.spans.get(first..).unwrap_or_default() {
        if span.start >= range.end {
            break;
        }
        let from = span.start.max(range.start);
        let to = span.end.min(range.end);
        if span.glue || from >= to {
            continue;
        }
        let common = open
            .iter()
            .zip(span.styles.iter())
            .take_while(|(a, b)| a == b)
            .count();
        for style in open[common..].iter().rev() {
            close_tag(style, out);
        }
        for style in &span.styles[common..] {
            open_tag(style, out);
        }
        escape(&doc.text[from..to], out);
        open = &span.styles;
    }
    open
}

/// The plain-text fallback for `ranges` of `doc`, in order: their text, link URLs included.
pub(crate) fn plain(doc: &Doc, ranges: &[Range<usize>]) -> String {
    ranges
        .iter()
        .map(|range| &doc.text[range.clone()])
        .collect()
}

fn open_tag(style: &Style, out: &mut String) {
    match style {
        Style::Quote => out.push_str("<blockquote>"),
        Style::Pre(None) => out.push_str("<pre>"),
        Style::Pre(Some(language)) => {
            out.push_str("<pre><code class=\"language-");
            escape_attribute(language, out);
            out.push_str("\">");
        }
        Style::Bold => out.push_str("<b>"),
        Style::Italic => out.push_str("<i>"),
        Style::Strike => out.push_str("<s>"),
        Style::Link(href) => {
            out.push_str("<a href=\"");
            escape_attribute(href, out);
            out.push_str("\">");
        }
        Style::Code => out.push_str("<code>"),
    }
}

fn close_tag(style: &Style, out: &mut String) {
    out.push_str(match style {
        Style::Quote => "</blockquote>",
        Style::Pre(None) => "</pre>",
        Style::Pre(Some(_)) => "</code></pre>",
        Style::Bold => "</b>",
        Style::Italic => "</i>",
        Style::Strike => "</s>",
        Style::Link(_) => "</a>",
        Style::Code => "</code>",
    });
}

/// Escapes text content: `&`, `<` and `>`.
fn escape(text: &str, out: &mut String) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
}

/// Escapes an attribute value: text escaping plus `"`.
fn escape_attribute(text: &str, out: &mut String) {
    for c in text.chars() {
        match c {
            '"' => out.push_str("&quot;"),
            c => escape(c.encode_utf8(&mut [0; 4]), out),
        }
    }
}
