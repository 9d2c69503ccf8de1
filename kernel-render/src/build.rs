//! Markdown → [`Doc`]: walks pulldown-cmark's events (GFM tables, strikethrough, task lists,
//! footnotes, alerts) and lays the reply out as chat text with Telegram-expressible styles.
//!
//! Headings become bold lines; emphasis, strong and strikethrough become italic, bold and
//! strikethrough; code spans `code`; code blocks `pre` (with the language); links and images
//! links with allowed targets only; lists "• " / "1. " / "☐ " / "☑ " lines indented by depth;
//! block quotes a blockquote (nested quotes flattened into it); tables an aligned `pre`; rules
//! a line of "—"; raw HTML, math and footnotes readable text. Blocks are separated by a blank
//! line, list items and a nested list's items by a newline.

mod lists;

use std::rc::Rc;

use pulldown_cmark::{
    BlockQuoteKind, CodeBlockKind, Event, LinkType, Options, Parser, Tag, TagEnd,
};

use super::doc::{Doc, Style, Styles, TableMark};
use super::link;
use super::table::{Layout, Table};
use super::text::sanitize;
use super::urls::protect_bare_urls;
use super::{MAX_PLAIN_URL, utf16_len};
use lists::Lists;

/// What a horizontal rule becomes.
const RULE: &str = "——————————";

/// Parses `markdown` into a document. A reply that is not blank always yields visible text: if
/// the Markdown renders to nothing (say, an empty link), its source is shown as plain text.
pub(crate) fn build(markdown: &str) -> Doc {
    let source = sanitize(markdown);
    let parsed = protect_bare_urls(&source, options());
    let mut builder = Builder::default();
    for event in Parser::new_ext(&parsed, options()) {
        builder.event(event);
    }
    let doc = builder.doc;
    if !doc.has_visible(0..doc.text.len()) && !source.trim().is_empty() {
        return Doc::plain(source.trim());
    }
    doc
}

pub(crate) fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_GFM
}

/// What separates the next block from what came before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sep {
    /// A blank line.
    Blank,
    /// A line break (list items of a tight list, a nested list, a quote's alert label).
    Line,
}

/// A link or image being rendered.
#[derive(Debug)]
struct LinkFrame {
    href: Option<Rc<str>>,
    dest: String,
    text_start: usize,
}

#[derive(Debug, Default)]
struct Builder {
    doc: Doc,
    /// Inline styles from the event stack; `None` for frames that add nothing (a repeated
    /// style, a link without an allowed target).
    inline: Vec<Option<Style>>,
    quote_depth: usize,
    /// Id of the outermost open quote; ids tell adjacent quotes apart.
    quote: Option<u32>,
    quotes_seen: u32,
    /// The quote the last written block was in.
    last_quote: Option<u32>,
    /// Inside a code block: its language and the code so far.
    code: Option<(Option<Rc<str>>, String)>,
    /// Inside a raw HTML block: its text so far.
    html_block: Option<String>,
    table: Option<Table>,
    links: Vec<LinkFrame>,
    lists: Lists,
    /// A block's first line has been started (separator and prefix written).
    in_block: bool,
    sep: Option<Sep>,
    /// Text to write at the start of the next block's first line (a footnote label).
    lead: Option<String>,
    cached: Option<Styles>,
}

impl Builder {
    fn event(&mut self, event: Event<'_>) {
        if self.table.is_some() {
            return self.table_event(event);
        }
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => self.text(&text),
            Event::Code(code) => self.code_span(&code),
            Event::Html(html) => match &mut self.html_block {
                Some(block) => block.push_str(&html),
                None => self.write(&html),
            },
            Event::InlineHtml(html) => self.write(&html),
            Event::InlineMath(math) => self.write(&format!("${math}$")),
            Event::DisplayMath(math) => self.write(&format!("$${math}$$")),
            Event::FootnoteReference(label) => self.write(&format!("[{label}]")),
            Event::SoftBreak | Event::HardBreak => self.line_break(),
            Event::Rule => {
                self.end_block();
                self.write(RULE);
                self.end_block();
            }
            Event::TaskListMarker(checked) => {
                let done = self.lists.task_marker(checked);
                if !done {
                    self.write(if checked { "☑ " } else { "☐ " });
                }
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => {
                self.end_block();
                self.lists.paragraph_started();
            }
            Tag::Heading { .. } => {
                self.end_block();
                self.push_inline(Style::Bold);
            }
            Tag::BlockQuote(kind) => self.start_quote(kind),
            Tag::CodeBlock(kind) => {
                let language = match kind {
                    CodeBlockKind::Fenced(info) => language(&info),
                    CodeBlockKind::Indented => None,
                };
                self.end_block();
                self.code = Some((language, String::new()));
            }
            Tag::HtmlBlock => {
                self.end_block();
                self.html_block = Some(String::new());
            }
            Tag::List(first) => {
                self.end_block();
                self.lists.start_list(first);
            }
            Tag::Item => {
                self.end_block();
                self.lists.start_item();
            }
            Tag::FootnoteDefinition(label) => {
                self.end_block();
                self.lead = Some(format!("[{label}] "));
            }
            Tag::Table(aligns) => {
                self.end_block();
                self.table = Some(Table::new(aligns));
            }
            Tag::Emphasis => self.push_inline(Style::Italic),
            Tag::Strong => self.push_inline(Style::Bold),
            Tag::Strikethrough => self.push_inline(Style::Strike),
            Tag::Link {
                link_type,
                dest_url,
                ..
            }
            | Tag::Image {
                link_type,
                dest_url,
                ..
            } => self.start_link(link_type, &dest_url),
            Tag::TableHead
            | Tag::TableRow
            | Tag::TableCell
            | Tag::Superscript
            | Tag::Subscript
            | Tag::DefinitionList
            | Tag::MetadataBlock(_) => self.push_frame(None),
            Tag::DefinitionListTitle | Tag::DefinitionListDefinition => {
                self.end_block();
                self.push_frame(None);
            }
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => self.end_block(),
            TagEnd::Heading(_) => {
                self.pop_inline();
                self.end_block();
                self.doc.keep_with_next.push(self.doc.text.len());
            }
            TagEnd::DefinitionListTitle | TagEnd::DefinitionListDefinition => {
                self.pop_inline();
                self.end_block();
            }
            TagEnd::BlockQuote(_) => self.end_quote(),
            TagEnd::CodeBlock => self.end_code(),
            TagEnd::HtmlBlock => {
                let html = self.html_block.take().unwrap_or_default();
                self.write_lines(html.trim_end_matches('\n'));
                self.end_block();
            }
            TagEnd::List(_) => {
                self.end_block();
                self.lists.end_list();
            }
            TagEnd::Item => {
                if let Some(marker) = self.lists.pending_marker() {
                    self.write(marker.trim_end());
                }
                self.end_block();
                self.lists.end_item();
            }
            TagEnd::FootnoteDefinition => {
                self.end_block();
                self.lead = None;
            }
            TagEnd::Link | TagEnd::Image => self.end_link(),
            TagEnd::Table
            | TagEnd::TableHead
            | TagEnd::TableRow
            | TagEnd::TableCell
            | TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Superscript
            | TagEnd::Subscript
            | TagEnd::DefinitionList
            | TagEnd::MetadataBlock(_) => self.pop_inline(),
        }
    }

    /// Events inside a table: everything becomes cell text until the table ends.
    fn table_event(&mut self, event: Event<'_>) {
        let Some(table) = &mut self.table else { return };
        match event {
            Event::Start(Tag::TableHead | Tag::TableRow) => table.start_row(),
            Event::End(TagEnd::TableHead) => table.end_header(),
            Event::Start(Tag::TableCell) => table.start_cell(),
            Event::End(TagEnd::TableCell) => table.end_cell(),
            Event::End(TagEnd::Table) => {
                let layout = table.layout();
                self.table = None;
                if !layout.text.trim().is_empty() {
                    let start = self.write_pre(None, &layout.text);
                    self.mark_table(start, &layout);
                }
            }
            Event::Text(text)
            | Event::Code(text)
            | Event::Html(text)
            | Event::InlineHtml(text)
            | Event::InlineMath(text)
            | Event::DisplayMath(text) => table.push(&text),
            Event::FootnoteReference(label) => table.push(&format!("[{label}]")),
            Event::SoftBreak | Event::HardBreak => table.push(" "),
            Event::TaskListMarker(checked) => table.push(if checked { "☑ " } else { "☐ " }),
            Event::Start(_) | Event::End(_) | Event::Rule => {}
        }
    }

    fn text(&mut self, text: &str) {
        match &mut self.code {
            Some((_, code)) => code.push_str(text),
            None => self.write(text),
        }
    }

    fn code_span(&mut self, code: &str) {
        if self.in_link() {
            return self.write(code);
        }
        self.push_frame(Some(Style::Code));
        self.write(code);
        self.pop_inline();
    }

    fn start_quote(&mut self, kind: Option<BlockQuoteKind>) {
        self.end_block();
        if self.quote_depth == 0 {
            self.quotes_seen += 1;
            self.quote = Some(self.quotes_seen);
            self.cached = None;
        }
        self.quote_depth += 1;
        if let Some(kind) = kind {
            self.push_frame(Some(Style::Bold));
            self.write(alert_label(kind));
            self.pop_inline();
            self.end_block();
            self.sep = Some(Sep::Line);
        }
    }

    fn end_quote(&mut self) {
        self.end_block();
        self.quote_depth = self.quote_depth.saturating_sub(1);
        if self.quote_depth == 0 {
            self.quote = None;
            self.cached = None;
        }
    }

    fn end_code(&mut self) {
        let Some((language, code)) = self.code.take() else {
            return;
        };
        let code = code.trim_start_matches('\n').trim_end();
        if !code.is_empty() {
            self.write_pre(language, code);
        }
    }

    /// Writes a whole `pre` block (a code block or a table); returns where its text starts.
    fn write_pre(&mut self, language: Option<Rc<str>>, code: &str) -> usize {
        self.begin_block(false);
        let mut styles: Vec<Style> = self.quote.iter().map(|_| Style::Quote).collect();
        styles.push(Style::Pre(language));
        let start = self.doc.text.len();
        self.doc.push(code, &Styles::from(styles), false);
        self.end_block();
        start
    }

    /// Records the header of the table written at `start`, so the splitter keeps its rows whole
    /// and a chunk starting among them repeats the header.
    fn mark_table(&mut self, start: usize, layout: &Layout) {
        if layout.header_len == 0 {
            return;
        }
        self.doc.tables.push(TableMark {
            header: start..start + layout.header_len,
            end: start + layout.text.len(),
        });
    }

    fn start_link(&mut self, link_type: LinkType, dest: &str) {
        self.begin_line();
        let href = match self.in_link() {
            true => None,
            false => link::href(link_type, dest).map(Rc::from),
        };
        self.links.push(LinkFrame {
            href: href.clone(),
            dest: dest.to_owned(),
            text_start: self.doc.text.len(),
        });
        self.push_frame(href.map(Style::Link));
    }

    fn end_link(&mut self) {
        self.pop_inline();
        let Some(frame) = self.links.pop() else {
            return;
        };
        let shown = &self.doc.text[frame.text_start..];
        if shown.trim().is_empty() {
            self.push_frame(frame.href.map(Style::Link));
            self.write(&frame.dest);
            self.pop_inline();
            return;
        }
        let Some(href) = frame.href else { return };
        let ends_visible = shown
            .chars()
            .next_back()
            .is_some_and(|c| !c.is_whitespace());
        if ends_visible && !link::same_as_text(&href, shown) && utf16_len(&href) <= MAX_PLAIN_URL {
            let styles = self.styles();
            self.doc.push(&format!(" ({href})"), &styles, true);
        }
    }

    fn in_link(&self) -> bool {
        !self.links.is_empty()
    }

    fn push_inline(&mut self, style: Style) {
        let repeated = self.inline.iter().any(|s| s.as_ref() == Some(&style));
        self.push_frame((!repeated).then_some(style));
    }

    fn push_frame(&mut self, style: Option<Style>) {
        if style.is_some() {
            self.cached = None;
        }
        self.inline.push(style);
    }

    fn pop_inline(&mut self) {
        if let Some(Some(_)) = self.inline.pop() {
            self.cached = None;
        }
    }

    /// The styles of inline text written now.
    fn styles(&mut self) -> Styles {
        if let Some(styles) = &self.cached {
            return styles.clone();
        }
        let quote = self.quote.iter().map(|_| Style::Quote);
        let styles: Styles = quote.chain(self.inline.iter().flatten().cloned()).collect();
        self.cached = Some(styles.clone());
        styles
    }

    /// The styles of separators and list prefixes: the quote, if any.
    fn base_styles(&self) -> Styles {
        self.quote.iter().map(|_| Style::Quote).collect()
    }

    /// Writes inline text, starting the block first if needed. Newlines in `text` (from raw
    /// HTML) are line breaks.
    fn write(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.begin_line();
        let styles = self.styles();
        self.doc.push(text, &styles, false);
    }

    fn write_lines(&mut self, text: &str) {
        for (index, line) in text.split('\n').enumerate() {
            if index > 0 {
                self.line_break();
            }
            self.write(line);
        }
    }

    fn line_break(&mut self) {
        if !self.in_block {
            return;
        }
        let base = self.base_styles();
        self.doc.push("\n", &base, false);
        self.doc.push(&self.lists.continuation(), &base, false);
    }

    /// Starts the current block's first line: separator, list marker or indent, lead text.
    fn begin_line(&mut self) {
        self.begin_block(true);
    }

    fn begin_block(&mut self, indent: bool) {
        if self.in_block {
            return;
        }
        self.in_block = true;
        let sep = self.sep.take().unwrap_or(Sep::Blank);
        let sep = self.lists.separator(sep);
        let base = self.base_styles();
        if !self.doc.text.is_empty() {
            let same_quote = self.quote.is_some() && self.quote == self.last_quote;
            let styles = if same_quote {
                base.clone()
            } else {
                Styles::from([])
            };
            let sep = match sep {
                Sep::Blank => "\n\n",
                Sep::Line => "\n",
            };
            self.doc.push(sep, &styles, false);
        }
        self.doc
            .push(&self.lists.first_line_prefix(indent), &base, false);
        if let Some(lead) = self.lead.take() {
            self.doc.push(&lead, &base, false);
        }
        self.last_quote = self.quote;
    }

    fn end_block(&mut self) {
        self.in_block = false;
    }
}

/// The language of a fenced code block's info string, if it is a plausible language name.
pub(crate) fn language(info: &str) -> Option<Rc<str>> {
    let word = info.split_whitespace().next()?;
    let word = word.split(',').next().unwrap_or(word);
    let ok = word.len() <= 32
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '_' | '.' | '#'));
    (ok && !word.is_empty()).then(|| Rc::from(word.to_ascii_lowercase()))
}

pub(crate) fn alert_label(kind: BlockQuoteKind) -> &'static str {
    match kind {
        BlockQuoteKind::Note => "Note",
        BlockQuoteKind::Tip => "Tip",
        BlockQuoteKind::Important => "Important",
        BlockQuoteKind::Warning => "Warning",
        BlockQuoteKind::Caution => "Caution",
    }
}
