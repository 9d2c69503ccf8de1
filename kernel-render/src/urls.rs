//! Bare URLs kept as written. CommonMark has no bare-URL autolinks, so `*`, `_` and `~` inside
//! a URL in running text can open emphasis (`https://x.dev/_next/app_page_.js` would lose its
//! underscores to italics). Before parsing, those characters are backslash-escaped inside
//! bare `http(s)://` URLs that are not in code, raw HTML, links or images. The text stays the
//! URL as written; Telegram links URLs in text by itself.

use std::borrow::Cow;
use std::ops::Range;

use pulldown_cmark::{Event, Options, Parser, Tag};

/// `source` with emphasis characters inside bare URLs escaped.
pub(crate) fn protect_bare_urls(source: &str, options: Options) -> Cow<'_, str> {
    let candidates: Vec<Range<usize>> = find_urls(source)
        .into_iter()
        .filter(|url| source[url.clone()].contains(['*', '_', '~']))
        .collect();
    if candidates.is_empty() {
        return Cow::Borrowed(source);
    }
    let protected = protected_ranges(source, options);
    let mut out = String::with_capacity(source.len() + 16);
    let mut copied = 0;
    for url in candidates {
        if protected
            .iter()
            .any(|p| p.start < url.end && url.start < p.end)
        {
            continue;
        }
        out.push_str(&source[copied..url.start]);
        let mut previous = None;
        for c in source[url.clone()].chars() {
            if matches!(c, '*' | '_' | '~') && previous != Some('\\') {
                out.push('\\');
            }
            out.push(c);
            previous = Some(c);
        }
        copied = url.end;
    }
    out.push_str(&source[copied..]);
    Cow::Owned(out)
}

/// Byte ranges of `http://` and `https://` URLs that start at a word boundary, ending at
/// whitespace, `<`, `>`, a backtick or a double quote, without trailing punctuation.
fn find_urls(source: &str) -> Vec<Range<usize>> {
    let mut urls = Vec::new();
    let mut from = 0;
    while let Some(found) = source[from..].find("http") {
        let start = from + found;
        let rest = &source[start..];
        let scheme = if rest.starts_with("https://") {
            8
        } else if rest.starts_with("http://") {
            7
        } else {
            from = start + 4;
            continue;
        };
        let at_boundary = source[..start]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric());
        let end = rest
            .find(|c: char| c.is_whitespace() || matches!(c, '<' | '>' | '`' | '"'))
            .map_or(source.len(), |i| start + i);
        let end = trim_trailing(source, start + scheme, end);
        if at_boundary && end > start + scheme {
            urls.push(start..end);
        }
        from = end.max(start + scheme);
    }
    urls
}

/// Drops trailing punctuation (and unbalanced closing parentheses), as GFM autolinks do.
fn trim_trailing(source: &str, body: usize, mut end: usize) -> usize {
    loop {
        let url = &source[body..end];
        match url.chars().next_back() {
            Some(c @ ('?' | '!' | '.' | ',' | ':' | ';' | '*' | '_' | '~' | '\'')) => {
                end -= c.len_utf8();
            }
            Some(')') if url.matches(')').count() > url.matches('(').count() => end -= 1,
            _ => return end,
        }
    }
}

/// Source ranges where a URL is not bare text: code, math, raw HTML, links and images.
fn protected_ranges(source: &str, options: Options) -> Vec<Range<usize>> {
    Parser::new_ext(source, options)
        .into_offset_iter()
        .filter(|(event, _)| {
            matches!(
                event,
                Event::Code(_)
                    | Event::Html(_)
                    | Event::InlineHtml(_)
                    | Event::InlineMath(_)
                    | Event::DisplayMath(_)
                    | Event::Start(
                        Tag::CodeBlock(_)
                            | Tag::HtmlBlock
                            | Tag::Link { .. }
                            | Tag::Image { .. }
                            | Tag::MetadataBlock(_)
                    )
            )
        })
        .map(|(_, range)| range)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn protect(source: &str) -> String {
        protect_bare_urls(source, Options::ENABLE_STRIKETHROUGH).into_owned()
    }

    #[test]
    fn escapes_emphasis_characters_in_bare_urls() {
        assert_eq!(
            protect("see https://x.dev/_next/app_page_.js, ok"),
            "see https://x.dev/\\_next/app\\_page\\_.js, ok"
        );
        assert_eq!(
            protect("(https://x.org/~a/*b*)."),
            "(https://x.org/\\~a/\\*b*)."
        );
    }

    #[test]
    fn leaves_code_links_and_plain_text_alone() {
        for source in [
            "no urls _here_",
            "`https://x.dev/_a_`",
            "```\nhttps://x.dev/_a_\n```",
            "[t](https://x.dev/_a_)",
            "<https://x.dev/_a_>",
            "https://x.dev/plain",
            "xhttps://x.dev/_a_",
        ] {
            assert_eq!(protect(source), source);
        }
    }
}
