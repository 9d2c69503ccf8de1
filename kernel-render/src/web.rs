//! Markdown → HTML for the web console ([`render_web`]), from the same parse as the Telegram
//! renderer (the same clean-up, bare-URL protection and pulldown-cmark options), but laid out
//! as a document: paragraphs, headings, lists, quotes, tables as `<table>`, code blocks as
//! `<pre><code class="language-…">`, links with `rel="noopener noreferrer"` to allowed targets
//! only, images only from Kernel itself (a same-origin path), and raw HTML always as escaped
//! text.
//!
//! Every element written is closed by the event that ends it (a stack of closers), so the
//! output is balanced for any input; the tags and attributes it can write are the fixed set
//! [`TAGS`].

use pulldown_cmark::{Alignment, CodeBlockKind, Event, Parser, Tag};

use super::build::{alert_label, language, options};
use super::link;
use super::text::sanitize;
use super::urls::protect_bare_urls;

/// Every tag [`render_web`] may write.
pub const TAGS: &[&str] = &[
    "p",
    "h3",
    "h4",
    "h5",
    "h6",
    "blockquote",
    "pre",
    "code",
    "ul",
    "ol",
    "li",
    "input",
    "div",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "em",
    "strong",
    "del",
    "sup",
    "sub",
    "a",
    "img",
    "br",
    "hr",
    "span",
];

/// Longest image path taken from Kernel itself.
const MAX_SRC: usize = 2048;

/// The whole reply as HTML for a browser; empty for a blank reply.
pub fn render_web(markdown: &str) -> String {
    let source = sanitize(markdown);
    let parsed = protect_bare_urls(&source, options());
    let mut w = Writer::default();
    for event in Parser::new_ext(&parsed, options()) {
        w.event(event);
    }
    while let Some(closer) = w.closers.pop() {
        w.out.push_str(&closer);
    }
    w.out
}

/// An image being read: where it shows (if anywhere) and its alt text so far.
#[derive(Debug)]
struct Image {
    src: Option<String>,
    href: Option<String>,
    alt: String,
    depth: usize,
}

#[derive(Debug, Default)]
struct Writer {
    out: String,
    /// What each open element's end writes, innermost last.
    closers: Vec<String>,
    /// The column alignments of the open table, and the cell being written.
    aligns: Vec<Alignment>,
    cell: usize,
    in_head: bool,
    image: Option<Image>,
}

impl Writer {
    fn event(&mut self, event: Event<'_>) {
        if let Some(image) = &mut self.image {
            match event {
                Event::Start(_) => image.depth += 1,
                Event::End(_) if image.depth > 0 => image.depth -= 1,
                Event::End(_) => self.end_image(),
                Event::Text(t) | Event::Code(t) | Event::Html(t) | Event::InlineHtml(t) => {
                    image.alt.push_str(&t)
                }
                Event::SoftBreak | Event::HardBreak => image.alt.push(' '),
                _ => {}
            }
            return;
        }
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(_) => {
                if let Some(closer) = self.closers.pop() {
                    self.out.push_str(&closer);
                }
            }
            Event::Text(text) => escape(&text, &mut self.out),
            Event::Code(code) => self.wrapped("<code>", &code, "</code>"),
            Event::Html(html) | Event::InlineHtml(html) => escape(&html, &mut self.out),
            Event::InlineMath(math) => self.wrapped("<code class=\"math\">$", &math, "$</code>"),
            Event::DisplayMath(math) => self.wrapped("<code class=\"math\">$$", &math, "$$</code>"),
            Event::FootnoteReference(label) => self.wrapped("<sup>[", &label, "]</sup>"),
            Event::SoftBreak => self.out.push('\n'),
            Event::HardBreak => self.out.push_str("<br>"),
            Event::Rule => self.out.push_str("<hr>"),
            Event::TaskListMarker(checked) => self.out.push_str(if checked {
                "<input type=\"checkbox\" disabled checked> "
            } else {
                "<input type=\"checkbox\" disabled> "
            }),
        }
    }

    fn wrapped(&mut self, open: &str, text: &str, close: &str) {
        self.out.push_str(open);
        escape(text, &mut self.out);
        self.out.push_str(close);
    }

    fn open(&mut self, open: &str, close: &str) {
        self.out.push_str(open);
        self.closers.push(close.to_owned());
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.open("<p>", "</p>"),
            Tag::Heading { level, .. } => {
                let n = (level as usize + 2).min(6);
                self.open(&format!("<h{n}>"), &format!("</h{n}>"));
            }
            Tag::BlockQuote(kind) => {
                self.open("<blockquote>", "</blockquote>");
                if let Some(kind) = kind {
                    self.out.push_str("<p class=\"alert\"><strong>");
                    self.out.push_str(alert_label(kind));
                    self.out.push_str("</strong></p>");
                }
            }
            Tag::CodeBlock(kind) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => language(&info),
                    CodeBlockKind::Indented => None,
                };
                match lang {
                    Some(lang) => {
                        let mut open = String::from("<pre><code class=\"language-");
                        escape(&lang, &mut open);
                        open.push_str("\">");
                        self.open(&open, "</code></pre>");
                    }
                    None => self.open("<pre><code>", "</code></pre>"),
                }
            }
            Tag::HtmlBlock => self.open("<div class=\"raw\">", "</div>"),
            Tag::List(Some(1)) => self.open("<ol>", "</ol>"),
            Tag::List(Some(n)) => self.open(&format!("<ol start=\"{n}\">"), "</ol>"),
            Tag::List(None) => self.open("<ul>", "</ul>"),
            Tag::Item => self.open("<li>", "</li>"),
            Tag::FootnoteDefinition(label) => {
                self.open("<div class=\"footnote\">", "</div>");
                self.wrapped("<sup>", &label, "</sup> ");
            }
            Tag::Table(aligns) => {
                self.aligns = aligns;
                self.open("<div class=\"table\"><table>", "</tbody></table></div>");
            }
            Tag::TableHead => {
                self.in_head = true;
                self.cell = 0;
                self.open("<thead><tr>", "</tr></thead><tbody>");
            }
            Tag::TableRow => {
                self.in_head = false;
                self.cell = 0;
                self.open("<tr>", "</tr>");
            }
            Tag::TableCell => {
                let name = if self.in_head { "th" } else { "td" };
                let class = match self.aligns.get(self.cell) {
                    Some(Alignment::Right) => " class=\"right\"",
                    Some(Alignment::Center) => " class=\"center\"",
                    _ => "",
                };
                self.cell += 1;
                self.open(&format!("<{name}{class}>"), &format!("</{name}>"));
            }
            Tag::Emphasis => self.open("<em>", "</em>"),
            Tag::Strong => self.open("<strong>", "</strong>"),
            Tag::Strikethrough => self.open("<del>", "</del>"),
            Tag::Superscript => self.open("<sup>", "</sup>"),
            Tag::Subscript => self.open("<sub>", "</sub>"),
            Tag::Link {
                link_type,
                dest_url,
                ..
            } => match link::href(link_type, &dest_url) {
                Some(href) => {
                    let mut open = String::from("<a href=\"");
                    escape(&href, &mut open);
                    open.push_str("\" rel=\"noopener noreferrer\" target=\"_blank\">");
                    self.open(&open, "</a>");
                }
                None => self.open("<span>", "</span>"),
            },
            Tag::Image {
                link_type,
                dest_url,
                ..
            } => {
                self.image = Some(Image {
                    src: local_src(&dest_url),
                    href: link::href(link_type, &dest_url),
                    alt: String::new(),
                    depth: 0,
                });
            }
            // Not enabled in the options; kept balanced all the same.
            _ => self.open("<div>", "</div>"),
        }
    }

    /// Writes the image just read: shown when it is Kernel's own, else a link to it (an allowed
    /// target) or its alt text.
    fn end_image(&mut self) {
        let Some(image) = self.image.take() else {
            return;
        };
        match (image.src, image.href) {
            (Some(src), _) => {
                self.out.push_str("<img src=\"");
                escape(&src, &mut self.out);
                self.out.push_str("\" alt=\"");
                escape(&image.alt, &mut self.out);
                self.out.push_str("\">");
            }
            (None, Some(href)) => {
                self.out.push_str("<a href=\"");
                escape(&href, &mut self.out);
                self.out
                    .push_str("\" rel=\"noopener noreferrer\" target=\"_blank\">");
                let alt = if image.alt.trim().is_empty() {
                    href.clone()
                } else {
                    image.alt
                };
                escape(&alt, &mut self.out);
                self.out.push_str("</a>");
            }
            (None, None) => escape(&image.alt, &mut self.out),
        }
    }
}

/// `dest` when it is a path on Kernel itself (`/…`, not `//…`), of safe characters only.
pub fn local_src(dest: &str) -> Option<String> {
    let dest = dest.trim();
    let ok = dest.len() <= MAX_SRC
        && dest.starts_with('/')
        && !dest.starts_with("//")
        && !dest.contains("..")
        && dest.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '/' | '-' | '_' | '.' | '~' | '?' | '=' | '&' | '%')
        });
    ok.then(|| dest.to_owned())
}

/// Escapes text and attribute values: `& < > " '`.
fn escape(text: &str, out: &mut String) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_code_and_script_render_as_a_document() {
        let html = render_web(
            "Here:\n\n| a | b |\n|---|--:|\n| 1 | <b>2</b> |\n\n```rust\nfn main() {}\n```\n\n<script>alert(1)</script>\n",
        );
        assert!(html.contains("<table><thead><tr><th>a</th><th class=\"right\">b</th></tr></thead><tbody><tr><td>1</td>"), "{html}");
        assert!(html.contains("&lt;b&gt;2&lt;/b&gt;"), "{html}");
        assert!(
            html.contains("<pre><code class=\"language-rust\">fn main() {}\n</code></pre>"),
            "{html}"
        );
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{html}"
        );
        assert!(!html.contains("<script"), "{html}");
    }

    #[test]
    fn links_are_safe_and_images_only_from_kernel() {
        let html = render_web(
            "[x](https://e.com/?a=1&b=\"2\") [j](javascript:alert(1)) ![cat](/media/cat.png) ![far](https://e.com/a.png) ![bad](//e.com/a.png)",
        );
        assert!(
            html.contains("<a href=\"https://e.com/?a=1&amp;b=&quot;2&quot;\" rel=\"noopener noreferrer\" target=\"_blank\">x</a>"),
            "{html}"
        );
        assert!(html.contains("<span>j</span>"), "{html}");
        assert!(
            html.contains("<img src=\"/media/cat.png\" alt=\"cat\">"),
            "{html}"
        );
        assert!(html.contains("<a href=\"https://e.com/a.png\" rel=\"noopener noreferrer\" target=\"_blank\">far</a>"), "{html}");
        assert!(!html.contains("<img src=\"//"), "{html}");
    }

    #[test]
    fn lists_quotes_and_headings() {
        let html = render_web("# Title\n\n- a\n- [x] b\n\n3. c\n\n> q\n");
        assert!(html.starts_with("<h3>Title</h3>"), "{html}");
        assert!(
            html.contains("<ul>\n<li>a</li>") || html.contains("<ul><li>a</li>"),
            "{html}"
        );
        assert!(
            html.contains("<input type=\"checkbox\" disabled checked> b"),
            "{html}"
        );
        assert!(html.contains("<ol start=\"3\"><li>c</li></ol>"), "{html}");
        assert!(html.contains("<blockquote><p>q</p></blockquote>"), "{html}");
        assert_eq!(render_web("  \n"), "");
    }
}
