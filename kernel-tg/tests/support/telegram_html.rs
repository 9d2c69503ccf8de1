//! A strict validator for Telegram's HTML parse mode, stricter than Telegram itself: only the
//! tags and attributes the Bot API documents for what the renderer emits (`b i u s code pre a
//! blockquote tg-spoiler`, `a href`, `pre > code class="language-…"`, `blockquote
//! expandable`), lower-case and double-quoted; proper nesting that also follows Telegram's
//! entity rules (nothing inside `code`/`pre`, no nested quotes or links, no code in a link);
//! no empty elements; only `&lt; &gt; &amp; &quot;` and numeric character references; raw `<`,
//! `>` and `&` never in text. It returns the visible text, whose length it also checks.
#![allow(dead_code)]

/// Telegram's limit on a message's visible text, in UTF-16 code units.
pub(super) const LIMIT: usize = 4096;

/// Validates one message's HTML with the standard limit; returns its visible text.
pub(super) fn validate(html: &str) -> Result<String, String> {
    validate_with_limit(html, LIMIT)
}

/// Validates one message's HTML; the visible text must be 1..=`limit` UTF-16 units and not
/// only whitespace.
pub(super) fn validate_with_limit(html: &str, limit: usize) -> Result<String, String> {
    let text = parse(html)?;
    let units = text.encode_utf16().count();
    if units > limit {
        return Err(format!(
            "visible text is {units} UTF-16 units, over {limit}"
        ));
    }
    if text.trim().is_empty() {
        return Err("visible text is empty or whitespace-only".to_owned());
    }
    Ok(text)
}

/// The visible text of well-formed HTML (no length checks).
pub(super) fn parse(html: &str) -> Result<String, String> {
    let mut parser = Parser {
        html,
        pos: 0,
        text: String::new(),
        stack: Vec::new(),
    };
    parser.run()?;
    Ok(parser.text)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    B,
    I,
    U,
    S,
    Spoiler,
    Code,
    Pre,
    A,
    Quote,
}

impl Tag {
    fn from_name(name: &str) -> Option<Tag> {
        Some(match name {
            "b" => Tag::B,
            "i" => Tag::I,
            "u" => Tag::U,
            "s" => Tag::S,
            "tg-spoiler" => Tag::Spoiler,
            "code" => Tag::Code,
            "pre" => Tag::Pre,
            "a" => Tag::A,
            "blockquote" => Tag::Quote,
            _ => return None,
        })
    }

    fn is_inline_style(self) -> bool {
        matches!(self, Tag::B | Tag::I | Tag::U | Tag::S | Tag::Spoiler)
    }
}

#[derive(Debug)]
struct Open {
    tag: Tag,
    name: String,
    /// Visible text length when the element opened (to reject empty elements).
    text_at_open: usize,
    /// `code class="language-…"` directly inside `pre`.
    pre_code: bool,
}

struct Parser<'a> {
    html: &'a str,
    pos: usize,
    text: String,
    stack: Vec<Open>,
}

impl Parser<'_> {
    fn run(&mut self) -> Result<(), String> {
        while let Some(c) = self.peek() {
            match c {
                '<' => self.tag()?,
                '&' => {
                    let c = self.entity()?;
                    self.visible(c)?;
                }
                '>' => return Err(self.err("raw '>' in text")),
                c => {
                    self.pos += c.len_utf8();
                    self.visible(c)?;
                }
            }
        }
        match self.stack.last() {
            Some(open) => Err(format!("<{}> is never closed", open.name)),
            None => Ok(()),
        }
    }

    fn peek(&self) -> Option<char> {
        self.html[self.pos..].chars().next()
    }

    fn err(&self, what: &str) -> String {
        let from = self.html.floor_char_boundary(self.pos.saturating_sub(30));
        let to = self
            .html
            .ceil_char_boundary((self.pos + 30).min(self.html.len()));
        format!("{what} at byte {}: …{}…", self.pos, &self.html[from..to])
    }

    /// Records a visible character; a `pre` holding `code` may hold nothing else.
    fn visible(&mut self, c: char) -> Result<(), String> {
        if let Some(open) = self.stack.last()
            && open.tag == Tag::Pre
            && self.has_pre_code_child()
        {
            return Err(self.err("text in <pre> beside its <code>"));
        }
        self.text.push(c);
        Ok(())
    }

    fn has_pre_code_child(&self) -> bool {
        // Set when a `pre > code` closed: the pre's text length moved past its opening.
        self.stack
            .last()
            .is_some_and(|open| open.tag == Tag::Pre && open.pre_code)
    }

    fn entity(&mut self) -> Result<char, String> {
        let rest = &self.html[self.pos..];
        let end = rest
            .char_indices()
            .take(12)
            .find(|(_, c)| *c == ';')
            .map(|(i, _)| i)
            .ok_or_else(|| self.err("'&' that starts no entity"))?;
        let name = &rest[1..end];
        let c = match name {
            "lt" => '<',
            "gt" => '>',
            "amp" => '&',
            "quot" => '"',
            _ => {
                let code = if let Some(hex) = name.strip_prefix("#x").or(name.strip_prefix("#X")) {
                    u32::from_str_radix(hex, 16).ok()
                } else if let Some(dec) = name.strip_prefix('#') {
                    dec.parse::<u32>().ok()
                } else {
                    None
                };
                code.filter(|c| *c != 0)
                    .and_then(char::from_u32)
                    .ok_or_else(|| self.err("unsupported entity"))?
            }
        };
        self.pos += end + 1;
        Ok(c)
    }

    fn tag(&mut self) -> Result<(), String> {
        let rest = &self.html[self.pos..];
        let end = rest.find('>').ok_or_else(|| self.err("unterminated tag"))?;
        let inner = &rest[1..end];
        if inner.contains('<') {
            return Err(self.err("'<' inside a tag"));
        }
        let start = self.pos;
        self.pos += end + 1;
        if let Some(name) = inner.strip_prefix('/') {
            return self.close(name, start);
        }
        let (name, attributes) = inner.split_once(' ').unwrap_or((inner, ""));
        let tag = Tag::from_name(name).ok_or_else(|| format!("unsupported tag <{name}>"))?;
        let attributes = parse_attributes(attributes)?;
        self.open(tag, name, &attributes)
    }

    fn open(
        &mut self,
        tag: Tag,
        name: &str,
        attributes: &[(String, Option<String>)],
    ) -> Result<(), String> {
        let parent = self.stack.last();
        let inside = |t: Tag| self.stack.iter().any(|open| open.tag == t);
        let mut pre_code = false;
        match tag {
            Tag::Code if parent.is_some_and(|p| p.tag == Tag::Pre) => {
                let pre = parent.expect("checked");
                if self.text.len() != pre.text_at_open || pre.pre_code {
                    return Err(self.err("<code> in <pre> must be its only content"));
                }
                check_language(attributes)?;
                pre_code = true;
            }
            _ if inside(Tag::Code) || inside(Tag::Pre) => {
                return Err(self.err("a tag inside <code> or <pre>"));
            }
            Tag::Quote if !self.stack.is_empty() => {
                return Err(self.err("<blockquote> inside another element"));
            }
            Tag::Pre if self.stack.iter().any(|open| open.tag != Tag::Quote) => {
                return Err(self.err("<pre> inside an inline element"));
            }
            Tag::A if inside(Tag::A) => return Err(self.err("<a> inside <a>")),
            Tag::Code if inside(Tag::A) => return Err(self.err("<code> inside <a>")),
            t if t.is_inline_style() && inside(t) => {
                return Err(self.err("an element nested in itself"));
            }
            _ => {}
        }
        match tag {
            Tag::A => check_href(attributes)?,
            Tag::Quote => check_quote(attributes)?,
            Tag::Code if pre_code => {}
            _ if !attributes.is_empty() => return Err(format!("<{name}> takes no attributes")),
            _ => {}
        }
        self.stack.push(Open {
            tag,
            name: name.to_owned(),
            text_at_open: self.text.len(),
            pre_code,
        });
        Ok(())
    }

    fn close(&mut self, name: &str, start: usize) -> Result<(), String> {
        let open = self
            .stack
            .pop()
            .ok_or_else(|| format!("</{name}> at byte {start} closes nothing"))?;
        if open.name != name {
            return Err(format!("</{name}> at byte {start} closes <{}>", open.name));
        }
        if self.text.len() == open.text_at_open {
            return Err(format!("empty <{name}> at byte {start}"));
        }
        if open.pre_code
            && let Some(pre) = self.stack.last_mut()
        {
            // The pre may now only close.
            pre.pre_code = true;
        }
        Ok(())
    }
}

fn parse_attributes(source: &str) -> Result<Vec<(String, Option<String>)>, String> {
    let mut out = Vec::new();
    let mut rest = source;
    while !rest.is_empty() {
        let name_end = rest.find(['=', ' ']).unwrap_or(rest.len());
        let name = &rest[..name_end];
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_lowercase() || c == '-') {
            return Err(format!("bad attribute name in {source:?}"));
        }
        rest = &rest[name_end..];
        let value = if let Some(after) = rest.strip_prefix("=\"") {
            let close = after
                .find('"')
                .ok_or_else(|| format!("unterminated attribute value in {source:?}"))?;
            let value = decode_attribute(&after[..close])?;
            rest = &after[close + 1..];
            Some(value)
        } else if rest.starts_with('=') {
            return Err(format!("attribute value not double-quoted in {source:?}"));
        } else {
            None
        };
        if out.iter().any(|(n, _): &(String, _)| n == name) {
            return Err(format!("repeated attribute {name}"));
        }
        out.push((name.to_owned(), value));
        rest = match rest.strip_prefix(' ') {
            Some(next) if !next.is_empty() => next,
            Some(_) => return Err(format!("trailing space in {source:?}")),
            None if rest.is_empty() => rest,
            None => return Err(format!("junk after attribute in {source:?}")),
        };
    }
    Ok(out)
}

fn decode_attribute(raw: &str) -> Result<String, String> {
    let mut parser = Parser {
        html: raw,
        pos: 0,
        text: String::new(),
        stack: Vec::new(),
    };
    if raw.contains('<') {
        return Err(format!("raw '<' in attribute {raw:?}"));
    }
    parser.run()?;
    Ok(parser.text)
}

fn check_href(attributes: &[(String, Option<String>)]) -> Result<(), String> {
    let [(name, Some(href))] = attributes else {
        return Err(format!("<a> needs exactly href=\"…\", got {attributes:?}"));
    };
    if name != "href" {
        return Err(format!("<a> takes only href, got {name}"));
    }
    let lower = href.to_ascii_lowercase();
    let allowed = ["http://", "https://", "tg://", "mailto:"];
    if !allowed.iter().any(|scheme| lower.starts_with(scheme))
        || href.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(format!("href not allowed: {href:?}"));
    }
    Ok(())
}

fn check_language(attributes: &[(String, Option<String>)]) -> Result<(), String> {
    match attributes {
        [] => Ok(()),
        [(name, Some(class))] if name == "class" => {
            let language = class
                .strip_prefix("language-")
                .ok_or_else(|| format!("code class must be language-…, got {class:?}"))?;
            if language.is_empty() || language.chars().any(|c| c.is_whitespace() || c == '"') {
                return Err(format!("bad language {language:?}"));
            }
            Ok(())
        }
        _ => Err(format!(
            "<code> in <pre> takes only class, got {attributes:?}"
        )),
    }
}

fn check_quote(attributes: &[(String, Option<String>)]) -> Result<(), String> {
    match attributes {
        [] => Ok(()),
        [(name, None)] if name == "expandable" => Ok(()),
        _ => Err(format!(
            "<blockquote> takes only expandable, got {attributes:?}"
        )),
    }
}
