//! Turning a range of the document into Telegram HTML (tags opened and closed around each span,
//! so formatting cut by a chunk boundary is closed before it and reopened after it) and into the
//! plain-text fallback.

use std::ops::Range;

use super::doc::{Doc, Style};

/// Telegram HTML for `range` of `doc`; every tag opened in it is closed in it.
pub(crate) fn html(doc: &Doc, range: Range<usize>) -> String {
    let mut out = String::with_capacity(range.len() + range.len() / 8 + 32);
    let mut open: &[Style] = &[];
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
            close_tag(style, &mut out);
        }
        for style in &span.styles[common..] {
            open_tag(style, &mut out);
        }
        escape(&doc.text[from..to], &mut out);
        open = &span.styles;
    }
    for style in open.iter().rev() {
        close_tag(style, &mut out);
    }
    out
}

/// The plain-text fallback for `range` of `doc`: its text, link URLs included.
pub(crate) fn plain(doc: &Doc, range: Range<usize>) -> String {
    doc.text[range].to_owned()
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
