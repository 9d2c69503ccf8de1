//! Bot texts that are already Telegram HTML (command replies from `Texts`) through the same
//! split as answers: the HTML is read back into a [`Doc`] (tags `b`/`strong`, `i`/`em`, `s`,
//! `code`, `pre`, `blockquote`, `a href`; the entities `Texts` writes), so a long listing becomes
//! several valid chunks, each with a plain twin.
//!
//! A text that fits in one message is sent exactly as written. Anything that is not one of the
//! tags above is kept as text (escaped again on output), so a chunk is always valid HTML.

use std::rc::Rc;

use super::doc::{Doc, Style, Styles};
use super::{Chunk, MIN_LIMIT_UTF16, split, utf16_len};

/// Splits Telegram HTML into chunks of at most `limit` visible UTF-16 units (at least
/// [`MIN_LIMIT_UTF16`]). Zero chunks when it shows nothing but whitespace.
pub(crate) fn chunks(html: &str, limit: usize) -> Vec<Chunk> {
    let limit = limit.max(MIN_LIMIT_UTF16);
    let doc = read(html);
    if !doc.has_visible(0..doc.text.len()) {
        return Vec::new();
    }
    if utf16_len(&doc.text) <= limit {
        let plain = doc.text.trim().to_owned();
        return vec![Chunk {
            html: html.trim().to_owned(),
            plain,
        }];
    }
    split::pieces(&doc, limit)
        .iter()
        .map(|piece| {
            let ranges = piece.ranges();
            Chunk {
                html: super::emit::html(&doc, &ranges),
                plain: super::emit::plain(&doc, &ranges),
            }
        })
        .collect()
}

/// The document `html` shows: its text with entities decoded, styled by its open tags.
fn read(html: &str) -> Doc {
    let mut doc = Doc::default();
    let mut open: Vec<(String, Style)> = Vec::new();
    let mut styles: Styles = Styles::from([]);
    let mut text = String::new();
    let mut rest = html;
    while let Some(c) = rest.chars().next() {
        if c == '<'
            && let Some((tag, after)) = tag(rest)
        {
            match tag {
                Tag::Open(name, style) => {
                    doc.push(&text, &styles, false);
                    text.clear();
                    open.push((name, style));
                    styles = open.iter().map(|(_, s)| s.clone()).collect();
                }
                Tag::Close(name) if open.iter().any(|(n, _)| *n == name) => {
                    doc.push(&text, &styles, false);
                    text.clear();
                    while let Some((n, _)) = open.pop() {
                        if n == name {
                            break;
                        }
                    }
                    styles = open.iter().map(|(_, s)| s.clone()).collect();
                }
                Tag::Close(_) => text.push_str(&rest[..rest.len() - after.len()]),
            }
            rest = after;
            continue;
        }
        if c == '&'
            && let Some((decoded, after)) = entity(rest)
        {
            text.push(decoded);
            rest = after;
            continue;
        }
        text.push(c);
        rest = &rest[c.len_utf8()..];
    }
    doc.push(&text, &styles, false);
    doc
}

enum Tag {
    Open(String, Style),
    Close(String),
}

/// The tag at the start of `s` (which starts with `<`) and the text after it, when it is one
/// this reader knows.
fn tag(s: &str) -> Option<(Tag, &str)> {
    let end = s.find('>')?;
    let inner = &s[1..end];
    let after = &s[end + 1..];
    if let Some(name) = inner.strip_prefix('/') {
        let name = name.trim().to_ascii_lowercase();
        return known(&name).then_some((Tag::Close(name), after));
    }
    let (name, attributes) = inner.split_once(char::is_whitespace).unwrap_or((inner, ""));
    let name = name.to_ascii_lowercase();
    let style = match name.as_str() {
        "b" | "strong" => Style::Bold,
        "i" | "em" => Style::Italic,
        "s" | "strike" | "del" => Style::Strike,
        "code" => Style::Code,
        "pre" => Style::Pre(None),
        "blockquote" => Style::Quote,
        "a" => Style::Link(Rc::from(href(attributes)?)),
        _ => return None,
    };
    Some((Tag::Open(name, style), after))
}

fn known(name: &str) -> bool {
    matches!(
        name,
        "b" | "strong" | "i" | "em" | "s" | "strike" | "del" | "code" | "pre" | "blockquote" | "a"
    )
}

/// The decoded `href="…"` of a link's attributes.
fn href(attributes: &str) -> Option<String> {
    let value = attributes.trim().strip_prefix("href=\"")?;
    let value = &value[..value.find('"')?];
    let mut out = String::new();
    let mut rest = value;
    while let Some(c) = rest.chars().next() {
        if c == '&'
            && let Some((decoded, after)) = entity(rest)
        {
            out.push(decoded);
            rest = after;
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    Some(out)
}

/// The entity at the start of `s` (which starts with `&`) and the text after it.
fn entity(s: &str) -> Option<(char, &str)> {
    let end = s[..s.len().min(12)].find(';')?;
    let name = &s[1..end];
    let decoded = match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        _ => {
            let number = name.strip_prefix('#')?;
            let code = match number.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => number.parse().ok()?,
            };
            char::from_u32(code)?
        }
    };
    Some((decoded, &s[end + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_text_is_sent_as_written() {
        let html = "<b>状态</b>\n模型：<code>a&amp;b</code> &quot;x&quot;";
        let chunks = chunks(html, 4096);
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].html, html);
        assert_eq!(chunks[0].plain, "状态\n模型：a&b \"x\"");
    }

    #[test]
    fn a_long_listing_is_split_at_lines_with_tags_closed_and_reopened() {
        let mut html = String::from("<b>Memories</b>\n");
        for n in 1..=200 {
            html.push_str(&format!(
                "#{n} 2025-01-01 <code>x &lt; y</code> memory text\n"
            ));
        }
        html.push_str("\n/forget #n to delete");
        let chunks = chunks(&html, 1000);
        assert!(chunks.len() > 3, "{}", chunks.len());
        for chunk in &chunks {
            assert!(utf16_len(&chunk.plain) <= 1000);
            assert_eq!(
                chunk.html.matches("<code>").count(),
                chunk.html.matches("</code>").count()
            );
            assert!(!chunk.plain.contains("&lt;"), "{}", chunk.plain);
        }
        assert!(chunks[0].html.starts_with("<b>Memories</b>\n#1 "));
        assert!(chunks[1].plain.starts_with('#'), "{}", chunks[1].plain);
        let joined: Vec<_> = chunks.iter().map(|c| c.plain.as_str()).collect();
        assert!(
            joined
                .join("\n")
                .contains("#200 2025-01-01 x < y memory text")
        );
    }

    #[test]
    fn unknown_tags_and_stray_ampersands_stay_text() {
        let html = format!("{} <cake> & </b> done", "word ".repeat(80));
        let chunks = chunks(&html, 256);
        let plain: String = chunks.iter().map(|c| c.plain.clone()).collect();
        assert!(plain.contains("<cake> & </b> done"), "{plain}");
        assert!(
            chunks
                .iter()
                .any(|c| c.html.contains("&lt;cake&gt; &amp; &lt;/b&gt;"))
        );
    }

    #[test]
    fn links_and_numeric_entities_are_read() {
        let doc = read("<a href=\"https://e.com/?a=1&amp;b=2\">e</a> &#20320;&#x597D;");
        assert_eq!(doc.text, "e 你好");
        assert!(
            matches!(&doc.spans[0].styles[..], [Style::Link(url)] if &**url == "https://e.com/?a=1&b=2")
        );
    }
}
